package media

import (
	"encoding/binary"
	"image"
	"image/draw"
)

// EXIF orientation: a camera stores a photo as its sensor read it and
// says in the JPEG's EXIF (APP1) segment how to turn it upright, by tag
// 0x0112: 1 upright, 2 mirrored, 3 turned half way, 4 mirrored upside
// down, 5 to 8 the same four turned a quarter. Renditions drop the EXIF
// segment with all other metadata, so they are turned upright when made,
// and the media item records the upright width and height.

// orientation returns the EXIF orientation of the JPEG data, 1 when it
// states none or one out of range.
func orientation(data []byte) int {
	for i := 2; i+4 <= len(data) && data[i] == 0xFF; {
		marker, n := data[i+1], int(binary.BigEndian.Uint16(data[i+2:]))
		if marker == 0xDA || n < 2 || i+2+n > len(data) {
			break // the image data starts: no more metadata
		}
		if seg := data[i+4 : i+2+n]; marker == 0xE1 && len(seg) > 6 && string(seg[:6]) == "Exif\x00\x00" {
			return exifOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// exifOrientation reads tag 0x0112 of the first IFD of the TIFF data.
func exifOrientation(tiff []byte) int {
	if len(tiff) < 8 {
		return 1
	}
	var order binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 1
	}
	ifd := int(order.Uint32(tiff[4:]))
	if ifd < 8 || ifd+2 > len(tiff) {
		return 1
	}
	count := int(order.Uint16(tiff[ifd:]))
	for e := ifd + 2; count > 0 && e+12 <= len(tiff); e, count = e+12, count-1 {
		if order.Uint16(tiff[e:]) == 0x0112 && order.Uint16(tiff[e+2:]) == 3 {
			if o := int(order.Uint16(tiff[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

// orientationOf returns the orientation of data in format: a JPEG's
// EXIF one, 1 for any other format.
func orientationOf(format string, data []byte) int {
	if format != FormatJPEG {
		return 1
	}
	return orientation(data)
}

// upright returns the size of a picture of w×h stored with orientation o
// once turned upright.
func upright(w, h, o int) (int, int) {
	if o >= 5 {
		return h, w
	}
	return w, h
}

// scaleUpright returns m, stored with orientation o, turned upright and
// scaled to width (never wider than it is): it scales first, so only the
// rendition's pixels are moved.
func scaleUpright(m image.Image, o, width int) image.Image {
	if o <= 1 {
		return scale(m, width)
	}
	b := m.Bounds()
	if o >= 5 && width < b.Dy() {
		// A quarter turn: the upright width is the stored height.
		m = resize(m, max(1, (b.Dx()*width+b.Dy()/2)/b.Dy()), width)
	} else if o < 5 {
		m = scale(m, width)
	}
	return orient(m, o)
}

// orient returns m, stored with orientation o (2 to 8), turned upright.
func orient(m image.Image, o int) *image.NRGBA {
	b := m.Bounds()
	src, ok := m.(*image.NRGBA)
	if !ok {
		src = image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(src, src.Rect, m, b.Min, draw.Src)
	}
	w, h := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := upright(w, h, o)
	dst := image.NewNRGBA(image.Rect(0, 0, dw, dh))
	for y := range dh {
		for x := range dw {
			var sx, sy int
			switch o {
			case 2:
				sx, sy = w-1-x, y
			case 3:
				sx, sy = w-1-x, h-1-y
			case 4:
				sx, sy = x, h-1-y
			case 5:
				sx, sy = y, x
			case 6:
				sx, sy = y, h-1-x
			case 7:
				sx, sy = w-1-y, h-1-x
			case 8:
				sx, sy = w-1-y, x
			default:
				sx, sy = x, y
			}
			so := src.PixOffset(src.Rect.Min.X+sx, src.Rect.Min.Y+sy)
			copy(dst.Pix[dst.PixOffset(x, y):dst.PixOffset(x, y)+4], src.Pix[so:so+4])
		}
	}
	return dst
}
