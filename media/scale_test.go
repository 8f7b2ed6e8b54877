package media

import (
	"image"
	"image/color"
	"testing"
)

// TestScaleKeepsColoursAndSize checks the block average and the kernel
// that follows it: the size asked for, in proportion, and the colours of
// the picture, for each kind of image shrink reads and for one it does not.
func TestScaleKeepsColoursAndSize(t *testing.T) {
	fill := func(set func(x, y int, c color.Color), w, h int) {
		for y := range h {
			for x := range w {
				c := color.NRGBA{200, 40, 90, 255}
				if x >= w/2 {
					c = color.NRGBA{10, 180, 250, 255}
				}
				set(x, y, c)
			}
		}
	}
	const w, h = 1003, 601
	nrgba := image.NewNRGBA(image.Rect(0, 0, w, h))
	fill(nrgba.Set, w, h)
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(rgba.Set, w, h)
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	fill(func(x, y int, c color.Color) {
		r, g, b, _ := c.RGBA()
		yy, cb, cr := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(b>>8))
		ycc.Y[ycc.YOffset(x, y)], ycc.Cb[ycc.COffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = yy, cb, cr
	}, w, h)
	gray := image.NewGray(image.Rect(0, 0, w, h))
	fill(gray.Set, w, h)
	for name, m := range map[string]image.Image{"NRGBA": nrgba, "RGBA": rgba, "YCbCr": ycc, "Gray": gray} {
		t.Run(name, func(t *testing.T) {
			for _, width := range []int{320, 333, 500} {
				s := scale(m, width)
				want := image.Pt(width, (h*width+w/2)/w)
				if s.Bounds().Size() != want {
					t.Fatalf("width %d: size %v, want %v", width, s.Bounds().Size(), want)
				}
				for _, x := range []int{width / 8, width * 7 / 8} {
					got := color.NRGBAModel.Convert(s.At(x, want.Y/2)).(color.NRGBA)
					orig := color.NRGBAModel.Convert(m.At(x*w/width, h/2)).(color.NRGBA)
					if d := diff(got, orig); d > 6 {
						t.Errorf("width %d, x %d: %v, want about %v", width, x, got, orig)
					}
				}
			}
		})
	}
}

func diff(a, b color.NRGBA) int {
	d := 0
	for _, p := range [][2]uint8{{a.R, b.R}, {a.G, b.G}, {a.B, b.B}} {
		d = max(d, abs(int(p[0])-int(p[1])))
	}
	return d
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestPlaceholderIsTiny checks that a placeholder fits in 16×16 pixels
// and MaxPlaceholderBytes whatever the picture's shape, noise included.
func TestPlaceholderIsTiny(t *testing.T) {
	for _, size := range []image.Point{{4000, 3000}, {3, 20000}, {20000, 3}, {10, 10}, {1, 1}} {
		m := image.NewNRGBA(image.Rect(0, 0, size.X, size.Y))
		for i := range m.Pix {
			m.Pix[i] = uint8(i * 7919 % 251)
		}
		url, dominant, err := placeholder(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(url) > MaxPlaceholderBytes || len(dominant) != 7 {
			t.Errorf("%v: placeholder of %d bytes, colour %q", size, len(url), dominant)
		}
	}
}
