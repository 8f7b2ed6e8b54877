package media

import (
	"image"
	"image/color"

	"golang.org/x/image/draw"
)

// Scaling down. A resampling kernel over a 12-megapixel photo costs about
// half a second; averaging blocks of f×f pixels first, for the largest f
// that keeps the picture at least as wide as wanted, leaves the kernel a
// ratio under 2 on a picture f² times smaller, for the same result.

// scale returns m scaled to width, its height in proportion (at least 1),
// or m itself when it is not wider.
func scale(m image.Image, width int) image.Image {
	b := m.Bounds()
	if width >= b.Dx() {
		return m
	}
	return resize(m, width, max(1, (b.Dy()*width+b.Dx()/2)/b.Dx()))
}

// resize returns m scaled to width×height, no larger than it is.
func resize(m image.Image, width, height int) image.Image {
	b := m.Bounds()
	if width >= b.Dx() && height >= b.Dy() {
		return m
	}
	width, height = min(width, b.Dx()), min(height, b.Dy())
	if f := min(b.Dx()/width, b.Dy()/height); f >= 2 {
		if small := shrink(m, f); small != nil {
			m, b = small, small.Bounds()
		}
	}
	if b.Dx() == width && b.Dy() == height {
		return m
	}
	dst := image.NewNRGBA(image.Rect(0, 0, width, height))
	draw.BiLinear.Scale(dst, dst.Bounds(), m, b, draw.Src, nil)
	return dst
}

// shrink returns m with every block of f×f pixels averaged into one (the
// last row and column of blocks take the pixels left over), or nil for a
// kind of image it does not read directly.
func shrink(m image.Image, f int) image.Image {
	switch m := m.(type) {
	case *image.YCbCr:
		return shrinkYCbCr(m, f)
	case *image.NRGBA:
		dst := image.NewNRGBA(image.Rect(0, 0, m.Rect.Dx()/f, m.Rect.Dy()/f))
		shrinkPix(dst.Pix, dst.Stride, dst.Rect, m.Pix[m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y):], m.Stride, m.Rect, f)
		return dst
	case *image.RGBA:
		dst := image.NewRGBA(image.Rect(0, 0, m.Rect.Dx()/f, m.Rect.Dy()/f))
		shrinkPix(dst.Pix, dst.Stride, dst.Rect, m.Pix[m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y):], m.Stride, m.Rect, f)
		return dst
	}
	return nil
}

// block returns the source range of destination index i of n blocks of f
// over a source of size total: the last block runs to the end.
func block(i, n, f, total int) (int, int) {
	if i == n-1 {
		return i * f, total
	}
	return i * f, (i + 1) * f
}

// shrinkPix averages the 4-byte pixels of src (of size r, from its first
// pixel) in blocks of f×f into dst.
func shrinkPix(dst []byte, dstStride int, dr image.Rectangle, src []byte, srcStride int, r image.Rectangle, f int) {
	w, h := dr.Dx(), dr.Dy()
	for dy := range h {
		y0, y1 := block(dy, h, f, r.Dy())
		for dx := range w {
			x0, x1 := block(dx, w, f, r.Dx())
			var s [4]int
			for y := y0; y < y1; y++ {
				row := src[y*srcStride+x0*4 : y*srcStride+x1*4]
				for i := 0; i < len(row); i += 4 {
					s[0] += int(row[i])
					s[1] += int(row[i+1])
					s[2] += int(row[i+2])
					s[3] += int(row[i+3])
				}
			}
			n := (y1 - y0) * (x1 - x0)
			o := dy*dstStride + dx*4
			for c := range 4 {
				dst[o+c] = uint8(s[c] / n)
			}
		}
	}
}

// shrinkYCbCr averages m's luma and chroma in blocks of f×f, which is
// averaging its colours, as the conversion to RGB is linear.
func shrinkYCbCr(m *image.YCbCr, f int) *image.NRGBA {
	r := m.Rect
	w, h := r.Dx()/f, r.Dy()/f
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	for dy := range h {
		y0, y1 := block(dy, h, f, r.Dy())
		for dx := range w {
			x0, x1 := block(dx, w, f, r.Dx())
			var sy, scb, scr int
			for y := r.Min.Y + y0; y < r.Min.Y+y1; y++ {
				yi := m.YOffset(r.Min.X+x0, y)
				for x := r.Min.X + x0; x < r.Min.X+x1; x++ {
					ci := m.COffset(x, y)
					sy += int(m.Y[yi])
					scb += int(m.Cb[ci])
					scr += int(m.Cr[ci])
					yi++
				}
			}
			n := (y1 - y0) * (x1 - x0)
			cr, cg, cb := color.YCbCrToRGB(uint8(sy/n), uint8(scb/n), uint8(scr/n))
			o := dst.PixOffset(dx, dy)
			dst.Pix[o], dst.Pix[o+1], dst.Pix[o+2], dst.Pix[o+3] = cr, cg, cb, 0xff
		}
	}
	return dst
}
