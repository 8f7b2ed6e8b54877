package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/blogql/blog/storage"
)

// photo returns a w×h JPEG with detail everywhere, as a photo has.
func photo(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x*7 ^ y*13) & 255), 255}
			yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
			img.Y[img.YOffset(x, y)] = yy
			img.Cb[img.COffset(x, y)], img.Cr[img.COffset(x, y)] = cb, cr
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// benchmarkRendition measures making an 800-pixel rendition in format of
// a 4000×3000 JPEG: decoding, scaling and encoding.
func benchmarkRendition(b *testing.B, format string) {
	src := photo(b, 4000, 3000)
	// The first encode compiles the encoder (WebAssembly): once a process.
	if _, err := Transform(src, FormatJPEG, 800, format, DefaultMaxPixels); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Transform(src, FormatJPEG, 800, format, DefaultMaxPixels); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRendition4000x3000JPEGTo800WebP(b *testing.B) { benchmarkRendition(b, FormatWebP) }
func BenchmarkRendition4000x3000JPEGTo800AVIF(b *testing.B) { benchmarkRendition(b, FormatAVIF) }
func BenchmarkRendition4000x3000JPEGTo800JPEG(b *testing.B) { benchmarkRendition(b, FormatJPEG) }

// bomb returns a PNG of 68 bytes whose header states w×h
// pixels.
func bomb(w, h uint32) []byte {
	chunk := func(typ string, data []byte) []byte {
		c := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		c = append(append(c, typ...), data...)
		return binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	out := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0))...)
	out = append(out, chunk("IDAT", []byte{0x78, 0x9c, 0xed, 0xc1, 0x01, 0x0d, 0x00, 0x00, 0x00, 0xc2, 0xa0})...)
	return append(out, chunk("IEND", nil)...)
}

// BenchmarkBombRefusal measures the check of a completed upload on a
// 100-megapixel PNG bomb of 68 bytes: refused from its header.
func BenchmarkBombRefusal(b *testing.B) {
	s := New(nil, nil, Options{})
	data := bomb(10000, 10000)
	up := &storage.Upload{ID: "x", ContentType: "image/png", ByteSize: int64(len(data))}
	b.ReportAllocs()
	for b.Loop() {
		if _, reason, _ := s.check(context.Background(), up, data); reason == "" {
			b.Fatal("bomb accepted")
		}
	}
}
