package markdown

import (
	"bytes"
	"regexp"
	"strconv"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Images: an image may be followed by attributes in braces, as Pandoc and
// goldmark's heading attributes write them:
//
//	![A diagram](https://example.com/d.png){width=800 height=450}
//
// width and height (whole pixels, 1 to MaxImageSide, quoted or not) become
// the img element's attributes, so a browser reserves the space before
// the image loads; braces holding anything else stay text. Every image but
// the first of a body gets loading="lazy": the first is most likely seen
// at once (the largest paint), the others are fetched as they near the
// screen.

// MaxImageSide is the largest width or height an image may be given.
const MaxImageSide = 10_000

// maxImageAttrs is the most bytes an image's braces may span.
const maxImageAttrs = 64

var imageAttr = regexp.MustCompile(`^\s*(width|height)\s*=\s*("?)([0-9]{1,5})("?)\s*`)

// imageAttrs returns the width and height the braces at the start of b
// give, with the length of the braces; ok is false when b does not start
// with braces holding only those.
func imageAttrs(b []byte) (width, height, n int, ok bool) {
	if len(b) < 2 || b[0] != '{' {
		return 0, 0, 0, false
	}
	end := bytes.IndexByte(b[:min(len(b), maxImageAttrs)], '}')
	if end < 0 {
		return 0, 0, 0, false
	}
	rest := b[1:end]
	for len(bytes.TrimSpace(rest)) > 0 {
		m := imageAttr.FindSubmatch(rest)
		if m == nil || string(m[2]) != string(m[4]) {
			return 0, 0, 0, false
		}
		v, _ := strconv.Atoi(string(m[3]))
		if v < 1 || v > MaxImageSide {
			return 0, 0, 0, false
		}
		if string(m[1]) == "width" {
			width = v
		} else {
			height = v
		}
		rest = rest[len(m[0]):]
	}
	return width, height, end + 1, width > 0 || height > 0
}

// setImageAttributes reads the braces after each image (taking them out
// of the text) and marks every image but the first lazy.
func setImageAttributes(images []*ast.Image, source []byte) {
	for i, img := range images {
		if t, ok := img.NextSibling().(*ast.Text); ok {
			// The braces may span several text nodes that follow each
			// other in the source: read them as one.
			seg := t.Segment
			for n := t.NextSibling(); n != nil && seg.Len() < maxImageAttrs; n = n.NextSibling() {
				nt, ok := n.(*ast.Text)
				if !ok || nt.Segment.Start != seg.Stop {
					break
				}
				seg = text.NewSegment(seg.Start, nt.Segment.Stop)
			}
			if w, h, n, ok := imageAttrs(seg.Value(source)); ok {
				if w > 0 {
					img.SetAttributeString("width", []byte(strconv.Itoa(w)))
				}
				if h > 0 {
					img.SetAttributeString("height", []byte(strconv.Itoa(h)))
				}
				consume(t, t.Segment.Start+n)
			}
		}
		if i > 0 {
			img.SetAttributeString("loading", []byte("lazy"))
		}
	}
}

// consume takes the source before stop out of the text t and the text
// nodes after it, removing those left empty.
func consume(t *ast.Text, stop int) {
	for t != nil && t.Segment.Start < stop {
		next, _ := t.NextSibling().(*ast.Text)
		if t.Segment.Stop <= stop {
			t.Parent().RemoveChild(t.Parent(), t)
		} else {
			t.Segment = t.Segment.WithStart(stop)
		}
		t = next
	}
}
