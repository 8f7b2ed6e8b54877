package markdown

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/yuin/goldmark/ast"
)

// Library images: an image whose destination is media:<id> shows the
// image <id> of the media library,
//
//	![A sunset](media:0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a)
//
// as Options.Images gives it: an img with its src, a srcset of its
// renditions and a sizes hint, the original's width and height (so a
// browser reserves its box before it loads) and decoding="async"; lazy as
// every image but a body's first (images.go). Braces after it are read
// and dropped, its own width and height win. One that Options.Images does
// not hold (not in the library, another publication's, deleted) is shown
// as its alt text, as an image from no http or https URL is, or refused
// with Options.RequireImages.

// MediaScheme starts the destination of a library image.
const MediaScheme = "media:"

// MaxLibraryImages is the most media ids a body may name.
const MaxLibraryImages = 100

// LibraryImage is an image of the media library as a body shows it.
type LibraryImage struct {
	// Src is the URL of the rendition browsers without srcset load.
	Src string
	// Srcset lists the renditions' URLs with their width descriptors.
	Srcset string
	// Sizes is the img's sizes hint.
	Sizes string
	// Width and Height are the original's, in pixels.
	Width, Height int
}

// UnknownImageError is a library image that Options.Images does not hold,
// which Render refuses with Options.RequireImages.
type UnknownImageError struct{ ID string }

func (e *UnknownImageError) Error() string {
	return fmt.Sprintf("the image %s%s is not in the media library", MediaScheme, e.ID)
}

// mediaRef matches a media id after the scheme.
var mediaRef = regexp.MustCompile(MediaScheme + `([0-9A-Za-z-]{1,64})`)

// LibraryIDs returns the ids that follow "media:" in src, each once, in
// the order they first appear: every library image of src is among them,
// with those its text only mentions, so a caller reads them all in one
// batch before Render. ok is false when there are more than
// MaxLibraryImages (the first of them are returned).
func LibraryIDs(src string) (ids []string, ok bool) {
	seen := map[string]bool{}
	for _, m := range mediaRef.FindAllStringSubmatch(src, -1) {
		if seen[m[1]] {
			continue
		}
		if len(ids) == MaxLibraryImages {
			return ids, false
		}
		seen[m[1]] = true
		ids = append(ids, m[1])
	}
	return ids, true
}

// libraryID returns the media id an image's destination names, or "".
func libraryID(dest []byte) string {
	if len(dest) <= len(MediaScheme) || string(dest[:len(MediaScheme)]) != MediaScheme {
		return ""
	}
	return string(dest[len(MediaScheme):])
}

// setLibraryImage makes img show li.
func setLibraryImage(img *ast.Image, li LibraryImage) {
	img.Destination = []byte(li.Src)
	img.SetAttributeString("srcset", []byte(li.Srcset))
	img.SetAttributeString("sizes", []byte(li.Sizes))
	img.SetAttributeString("width", []byte(strconv.Itoa(li.Width)))
	img.SetAttributeString("height", []byte(strconv.Itoa(li.Height)))
	img.SetAttributeString("decoding", []byte("async"))
}
