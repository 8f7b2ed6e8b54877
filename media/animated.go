package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
)

// Animated GIFs. Their GIF renditions keep the animation: every frame is
// drawn onto the canvas as the GIF's disposal methods say, the canvas
// scaled, and the frame's own palette kept, with the original's delays and
// loop count. An animation has no WebP or AVIF renditions: the encoders
// here make stills, and a still in a srcset that browsers prefer would
// stop the animation without a word; bodies list its GIF renditions
// instead. Decoding an animation holds every frame, so its pixels are its
// frames times its size, bounded by -media-max-pixels and reserved from
// the decoding budget like a still's; the frames are counted from the
// file's blocks before any is decoded, so a GIF of many frames is refused
// as cheaply as a bomb of one.

// gifFrames returns how many frames the GIF data holds, by walking its
// blocks without decoding them.
func gifFrames(data []byte) (int, error) {
	errShort := errors.New("the GIF is truncated")
	if len(data) < 13 {
		return 0, errShort
	}
	p := 13
	if flags := data[10]; flags&0x80 != 0 {
		p += 3 << (flags&7 + 1)
	}
	// skip passes the data sub-blocks at p.
	skip := func() bool {
		for p < len(data) {
			n := int(data[p])
			p += 1 + n
			if n == 0 {
				return true
			}
		}
		return false
	}
	frames := 0
	for p < len(data) {
		switch data[p] {
		case 0x21: // an extension: its label, then sub-blocks
			p += 2
			if !skip() {
				return 0, errShort
			}
		case 0x2c: // an image: its descriptor, colour table, LZW size, data
			if p+10 > len(data) {
				return 0, errShort
			}
			flags := data[p+9]
			p += 10
			if flags&0x80 != 0 {
				p += 3 << (flags&7 + 1)
			}
			p++
			if !skip() {
				return 0, errShort
			}
			frames++
		case 0x3b: // the trailer
			return frames, nil
		default:
			return 0, fmt.Errorf("the GIF has an unknown block 0x%02x", data[p])
		}
	}
	return 0, errShort
}

// transformGIF returns the animated GIF data at width (never wider than
// it is), every frame kept.
func transformGIF(data []byte, width int) ([]byte, error) {
	g, err := gif.DecodeAll(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	w, h := g.Config.Width, g.Config.Height
	width = min(width, w)
	height := max(1, (h*width+w/2)/w)
	out := &gif.GIF{LoopCount: g.LoopCount, Config: image.Config{Width: width, Height: height}}
	canvas := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i, fr := range g.Image {
		var before *image.NRGBA
		if g.Disposal[i] == gif.DisposalPrevious {
			before = image.NewNRGBA(canvas.Rect)
			copy(before.Pix, canvas.Pix)
		}
		draw.Draw(canvas, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
		small := image.NewPaletted(image.Rect(0, 0, width, height), fr.Palette)
		draw.Draw(small, small.Rect, resize(canvas, width, height), image.Point{}, draw.Src)
		out.Image = append(out.Image, small)
		out.Delay = append(out.Delay, g.Delay[i])
		out.Disposal = append(out.Disposal, gif.DisposalNone)
		switch g.Disposal[i] {
		case gif.DisposalBackground:
			draw.Draw(canvas, fr.Bounds(), image.Transparent, image.Point{}, draw.Src)
		case gif.DisposalPrevious:
			canvas = before
		}
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, out); err != nil {
		return nil, fmt.Errorf("encode gif: %w", err)
	}
	return buf.Bytes(), nil
}

// checkFrames decodes every frame of the animated GIF data, and returns
// why one cannot be.
func checkFrames(data []byte) error {
	_, err := gif.DecodeAll(bytes.NewReader(data))
	return err
}
