package markdown

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// rendererCode is the version of this package's rendering: raise it with
// every change of the code that changes what Render returns for some
// Markdown (a new extension, another policy, another HTML shape), so that
// what was rendered before is rendered again.
const rendererCode = 4

// Version returns the version of the renderer Render is with o: the code's
// version and a hash of the options, as "r<code>-<12 hex digits>". Two
// renders of the same Markdown give the same result exactly when their
// versions are equal, so a stored rendering whose version is not the
// current one is rendered again (storage's background re-render).
func (o Options) Version() string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%s\x00%t\x00%s", rendererCode, o.HeadingIDPrefix, o.SiteURL, o.Highlight, o.ImagesVersion))
	return fmt.Sprintf("r%d-%s", rendererCode, hex.EncodeToString(sum[:6]))
}
