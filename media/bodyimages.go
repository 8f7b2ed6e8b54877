package media

import (
	"fmt"
	"strings"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage"
)

// BodyImages returns how bodies show the library's images
// (storage.WithLibraryImages), their renditions' URLs started with
// baseURL (root-relative paths when it is empty), and the version that
// names it. An image's src is its widest rendition in its own format, for
// browsers without srcset; its srcset lists its renditions in WebP, which
// every browser that reads srcset shows (an animation's in GIF); sizes is Sizes; its width and
// height are the original's.
func BodyImages(baseURL string) (storage.LibraryImageFunc, string) {
	s := &Service{opts: Options{BaseURL: strings.TrimSuffix(baseURL, "/")}}
	image := func(m *storage.Media) markdown.LibraryImage {
		ws := WidthsOf(m)
		srcset := FormatWebP
		if m.Frames > 1 {
			srcset = m.Format // an animation has no WebP renditions (animated.go)
		}
		return markdown.LibraryImage{
			Src: s.URL(m, ws[len(ws)-1], m.Format), Srcset: s.Srcset(m, srcset), Sizes: Sizes(m),
			Width: m.Width, Height: m.Height,
		}
	}
	return image, fmt.Sprintf("media %s %v webp", s.opts.BaseURL, Widths)
}
