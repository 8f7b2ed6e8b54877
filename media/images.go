package media

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"path"
	"strings"

	"github.com/gen2brain/avif"
	"github.com/gen2brain/webp"
	xwebp "golang.org/x/image/webp"
)

// The formats the library takes, by the names URLs and the table use.
const (
	FormatJPEG = "jpeg"
	FormatPNG  = "png"
	FormatGIF  = "gif"
	FormatWebP = "webp"
	FormatAVIF = "avif"
)

// contentTypes are the content types of the formats, the only ones an
// upload may declare. SVG is not among them: it is a document that may
// carry scripts, not a picture the server can check and re-encode.
var contentTypes = map[string]string{
	FormatJPEG: "image/jpeg",
	FormatPNG:  "image/png",
	FormatGIF:  "image/gif",
	FormatWebP: "image/webp",
	FormatAVIF: "image/avif",
}

// extensions are the file name extensions each format may have.
var extensions = map[string][]string{
	FormatJPEG: {".jpg", ".jpeg", ".jfif"},
	FormatPNG:  {".png"},
	FormatGIF:  {".gif"},
	FormatWebP: {".webp"},
	FormatAVIF: {".avif"},
}

// formatOfType returns the format of a declared content type, or "".
func formatOfType(contentType string) string {
	ct := strings.ToLower(strings.TrimSpace(contentType))
	for f, t := range contentTypes {
		if t == ct {
			return f
		}
	}
	return ""
}

// formatOfName returns the format a file name's extension claims, or "".
func formatOfName(name string) string {
	ext := strings.ToLower(path.Ext(name))
	for f, exts := range extensions {
		for _, e := range exts {
			if e == ext {
				return f
			}
		}
	}
	return ""
}

// errSVG refuses SVG, found by its bytes or declared.
var errSVG = errors.New("SVG is not accepted: it can carry scripts; upload a PNG or WebP of it")

// sniff returns the format of data by its first bytes, or an error for
// SVG and anything that is none of the formats.
func sniff(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return FormatJPEG, nil
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return FormatPNG, nil
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return FormatGIF, nil
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return FormatWebP, nil
	case len(data) >= 12 && string(data[4:8]) == "ftyp" && (string(data[8:12]) == "avif" || string(data[8:12]) == "avis"):
		return FormatAVIF, nil
	}
	head := strings.ToLower(string(data[:min(len(data), 512)]))
	if strings.Contains(head, "<svg") || strings.HasPrefix(strings.TrimSpace(head), "<?xml") {
		return "", errSVG
	}
	return "", errors.New("the file is not a JPEG, PNG, GIF, WebP or AVIF image")
}

// decodeConfig returns the size data's header states, read without
// decoding the picture.
func decodeConfig(format string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch format {
	case FormatJPEG:
		return jpeg.DecodeConfig(r)
	case FormatPNG:
		return png.DecodeConfig(r)
	case FormatGIF:
		return gif.DecodeConfig(r)
	case FormatWebP:
		return xwebp.DecodeConfig(r)
	case FormatAVIF:
		return avif.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("unknown format %q", format)
}

// decode decodes data of format: its first frame for an animation.
func decode(format string, data []byte) (image.Image, error) {
	r := bytes.NewReader(data)
	switch format {
	case FormatJPEG:
		return jpeg.Decode(r)
	case FormatPNG:
		return png.Decode(r)
	case FormatGIF:
		return gif.Decode(r)
	case FormatWebP:
		return xwebp.Decode(r)
	case FormatAVIF:
		return avif.Decode(r)
	}
	return nil, fmt.Errorf("unknown format %q", format)
}

// encode writes m in format, with no metadata: whatever the original
// carried (EXIF, GPS, comments, text chunks) is not in what is encoded.
func encode(w io.Writer, format string, m image.Image) error {
	switch format {
	case FormatJPEG:
		// The encoder reads *image.RGBA directly, other kinds pixel by
		// pixel; a JPEG's renditions are opaque, so their NRGBA pixels
		// are RGBA ones.
		if n, ok := m.(*image.NRGBA); ok && n.Opaque() {
			m = &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
		}
		return jpeg.Encode(w, m, &jpeg.Options{Quality: 82})
	case FormatPNG:
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, m)
	case FormatGIF:
		return gif.Encode(w, m, nil)
	case FormatWebP:
		return webp.Encode(w, m, webp.Options{Quality: 78, Method: 2})
	case FormatAVIF:
		return avif.Encode(w, m, avif.Options{Quality: 55, Speed: 10})
	}
	return fmt.Errorf("unknown format %q", format)
}

// placeholderSide is the longest side of the tiny placeholder.
const placeholderSide = 16

// MaxPlaceholderBytes bounds a placeholder's data: URL: a PNG of at most
// 16×16 pixels, even incompressible, in base64.
const MaxPlaceholderBytes = 2048

// MaxFilenameBytes is the longest file name of an upload.
const MaxFilenameBytes = 255

// maxHeight is the tallest image taken: WebP's limit, which a rendition
// as tall as its original must not pass.
const maxHeight = 16383

// placeholder returns a tiny version of m, at most placeholderSide pixels
// on its longest side, as a data: URL of a PNG, and its average colour as
// #rrggbb.
func placeholder(m image.Image) (string, string, error) {
	mb := m.Bounds()
	w, h := placeholderSide, max(1, mb.Dy()*placeholderSide/mb.Dx())
	if mb.Dy() > mb.Dx() {
		w, h = max(1, mb.Dx()*placeholderSide/mb.Dy()), placeholderSide
	}
	small := resize(m, w, h)
	var r, g, b, n uint64
	bounds := small.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := color.NRGBAModel.Convert(small.At(x, y)).(color.NRGBA)
			r, g, b, n = r+uint64(c.R), g+uint64(c.G), b+uint64(c.B), n+1
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, small); err != nil {
		return "", "", fmt.Errorf("placeholder: %w", err)
	}
	dominant := fmt.Sprintf("#%02x%02x%02x", r/n, g/n, b/n)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()), dominant, nil
}
