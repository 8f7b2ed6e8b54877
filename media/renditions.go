package media

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/blogql/blog/storage"
)

// Renditions: GET /media/<id>/<width>.<format>. Each is made once, on its
// first request, and kept in the bucket beside the original; then it is
// served from there. Its URL names its content for good, so it is cached
// for a year, immutable.

// immutable is the caching of a rendition.
const immutable = "public, max-age=31536000, immutable"

// renditionPath matches the file part of a rendition's path.
var renditionPath = regexp.MustCompile(`^([1-9][0-9]{0,4})\.(jpeg|png|gif|webp|avif)$`)

// validID matches the ids of media items.
var validID = regexp.MustCompile(`^[0-9a-f-]{1,64}$`)

// errBusy means a rendition could not be made in time: too many were
// being made, or this one took too long.
var errBusy = errors.New("rendition not made in time")

// Register adds the renditions' route to mux.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /media/{id}/{file}", s.serveRendition)
}

func (s *Service) serveRendition(w http.ResponseWriter, r *http.Request) {
	id, file := r.PathValue("id"), r.PathValue("file")
	parts := renditionPath.FindStringSubmatch(file)
	width := 0
	if parts != nil {
		width, _ = strconv.Atoi(parts[1])
	}
	if !validID.MatchString(id) || parts == nil || !allowedWidth(width) && width > Widths[len(Widths)-1] {
		http.NotFound(w, r)
		return
	}
	format := parts[2]
	data, err := s.rendition(r.Context(), id, width, format)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		http.NotFound(w, r)
		return
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", "5")
		http.Error(w, "busy making renditions, try again", http.StatusServiceUnavailable)
		return
	case err != nil:
		s.opts.Logger.Error("media: rendition", "id", id, "width", width, "format", format, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	sum := md5.Sum(data)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	h := w.Header()
	h.Set("Cache-Control", immutable)
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentTypes[format])
	h.Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// allowedWidth reports whether w is one of Widths.
func allowedWidth(w int) bool { return slices.Contains(Widths, w) }

// rendition returns the rendition of the media item id at width in
// format: from the bucket when it was made, else made now (once, however
// many ask at the same time) and kept. It returns ErrNotFound for no item,
// or a width or format the item has no rendition in.
func (s *Service) rendition(ctx context.Context, id string, width int, format string) ([]byte, error) {
	key := s.renditionKey(id, width, format)
	data, err := s.bucket.Get(ctx, key, s.opts.MaxBytes)
	if !errors.Is(err, errNoObject) {
		return data, err
	}
	m, err := s.store.MediaItem(ctx, id)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(WidthsOf(m), width) || !slices.Contains(s.FormatsOf(m), format) {
		return nil, fmt.Errorf("media %s has no rendition %d.%s: %w", id, width, format, storage.ErrNotFound)
	}
	ch := s.flight.DoChan(key, func() (any, error) {
		// Detached from the request: the first asker's going away
		// does not fail the others, and what is made is kept.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.TransformTimeout)
		defer cancel()
		return s.make(ctx, m, width, format)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.([]byte), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// make makes m's rendition at width in format and keeps it in the
// bucket. It waits for a worker and for the pixels it decodes to be free,
// up to the deadline of ctx (errBusy then); the decoding and encoding
// themselves cannot be stopped, so they hold both until they end, and
// what they make is kept even when ctx ended first.
func (s *Service) make(ctx context.Context, m *storage.Media, width int, format string) ([]byte, error) {
	release, err := s.reserve(ctx, int64(max(1, m.Frames))*int64(m.Width)*int64(m.Height))
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var out []byte
	go func() {
		defer close(done)
		defer release()
		// Kept even when ctx ends first: the work is done by then, and
		// the asker told to try again finds it in the bucket.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keepTimeout)
		defer cancel()
		if out, err = s.transform(ctx, m, width, format); err == nil {
			err = s.bucket.Put(ctx, s.renditionKey(m.ID, width, format), contentTypes[format], out)
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, errBusy
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// keepTimeout bounds the reading of an original and the keeping of its
// rendition once made, which outlive a request that stopped waiting.
const keepTimeout = time.Minute

// transform reads m's original and returns it at width in format.
func (s *Service) transform(ctx context.Context, m *storage.Media, width int, format string) ([]byte, error) {
	data, err := s.bucket.Get(ctx, s.originalKey(m.ID), s.opts.MaxBytes)
	if err != nil {
		return nil, err
	}
	return Transform(data, m.Format, width, format, s.opts.MaxPixels)
}

// Transform decodes data, an image in format from, whose header must
// state at most maxPixels, and returns it turned upright as a JPEG's EXIF
// orientation says, scaled to width (never wider than it is) and encoded
// in format to, without metadata.
func Transform(data []byte, from string, width int, to string, maxPixels int64) ([]byte, error) {
	cfg, err := decodeConfig(from, data)
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > maxPixels {
		return nil, fmt.Errorf("%d pixels: more than %d", px, maxPixels)
	}
	if from == FormatGIF && to == FormatGIF {
		frames, err := gifFrames(data)
		if err != nil {
			return nil, err
		}
		if px := int64(frames) * int64(cfg.Width) * int64(cfg.Height); px > maxPixels {
			return nil, fmt.Errorf("%d frames, %d pixels: more than %d", frames, px, maxPixels)
		}
		if frames > 1 {
			return transformGIF(data, width)
		}
	}
	img, err := decode(from, data)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	var buf bytes.Buffer
	if err := encode(&buf, to, scaleUpright(img, orientationOf(from, data), width)); err != nil {
		return nil, fmt.Errorf("encode %s: %w", to, err)
	}
	return buf.Bytes(), nil
}
