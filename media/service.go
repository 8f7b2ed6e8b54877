// Package media is the blog's media library: presigned uploads to an S3
// bucket (or to the S3-compatible store embedded in the process), their
// checks when they complete, and the renditions made of them on demand.
// Media bytes never pass through the GraphQL API.
package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// Defaults of Options.
const (
	DefaultMaxBytes         = 20 << 20
	DefaultMaxPixels        = 50_000_000
	DefaultPresignTTL       = 15 * time.Minute
	DefaultUploadTTL        = 24 * time.Hour
	DefaultTransformTimeout = 20 * time.Second
)

// DefaultConcurrency is the renditions made at once when
// Options.Concurrency is zero: one fewer than GOMAXPROCS, at least one.
func DefaultConcurrency() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Widths are the widths renditions may have, besides an original's own
// width when it is narrower than the widest: no other is made, so nobody
// can make the server transform at will.
var Widths = []int{320, 640, 960, 1280, 1920}

// Options configure a Service. Zero fields take their defaults.
type Options struct {
	// MaxBytes is the largest upload, in bytes.
	MaxBytes int64
	// MaxPixels is the most pixels an image may have, read from its
	// header before it is decoded: a decompression bomb goes no further.
	MaxPixels int64
	// PresignTTL is how long a presigned upload URL stays valid.
	PresignTTL time.Duration
	// UploadTTL is how long an upload may stay uncompleted before its
	// record expires and Sweep deletes its object.
	UploadTTL time.Duration
	// TransformTimeout bounds the making of one rendition.
	TransformTimeout time.Duration
	// Concurrency is how many renditions are made at once; zero: one
	// fewer than the cores the process runs on (GOMAXPROCS), at least
	// one, so a core is left to the requests that are not renditions.
	Concurrency int
	// AVIF offers AVIF renditions too.
	AVIF bool
	// BaseURL starts the URLs of renditions: the server's public URL;
	// empty: they are paths (/media/...).
	BaseURL string
	// Quota bounds the library's bytes and files, checked against the
	// declared size when an upload starts and against the actual size, in
	// the transaction that makes the media item, when it completes.
	Quota storage.MediaQuota
	// Publication, when set, is the id of the publication, other than
	// the default, whose library this is: its originals and renditions
	// live under publications/<id>/media/ in the bucket, so a rendition
	// of another publication's is never served from it. Uploads share
	// uploads/ (their records are the publication's), which the default
	// library's Sweep keeps.
	Publication string
	// Logger receives the failures of renditions.
	Logger *slog.Logger
	// Now is the time Sweep compares with the bucket's times of objects;
	// nil: time.Now.
	Now func() time.Time
}

// Service is the media library over a store and a bucket.
type Service struct {
	store  *storage.Store
	bucket *Bucket
	opts   Options
	// workers bounds the renditions made at once, pixels the pixels they
	// decode at once (the memory they take).
	workers *semaphore.Weighted
	pixels  *semaphore.Weighted
	flight  singleflight.Group
	// media is where the library's originals and renditions live in the
	// bucket (Options.Publication).
	media string
}

// New returns the media library of store, kept in bucket.
func New(store *storage.Store, bucket *Bucket, opts Options) *Service {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxPixels <= 0 {
		opts.MaxPixels = DefaultMaxPixels
	}
	if opts.PresignTTL <= 0 {
		opts.PresignTTL = DefaultPresignTTL
	}
	if opts.UploadTTL <= 0 {
		opts.UploadTTL = DefaultUploadTTL
	}
	if opts.TransformTimeout <= 0 {
		opts.TransformTimeout = DefaultTransformTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.BaseURL = strings.TrimSuffix(opts.BaseURL, "/")
	prefix := mediaPrefix
	if opts.Publication != "" {
		prefix = "publications/" + opts.Publication + "/" + mediaPrefix
	}
	return &Service{store: store, bucket: bucket, opts: opts, media: prefix,
		workers: semaphore.NewWeighted(int64(opts.Concurrency)), pixels: semaphore.NewWeighted(2 * opts.MaxPixels)}
}

// The bucket's layout: uploads arrive under uploadPrefix and, once
// checked, the original and its renditions live under mediaPrefix<id>/
// (under publications/<publication>/ for a publication other than the
// default: Options.Publication).
const (
	uploadPrefix = "uploads/"
	mediaPrefix  = "media/"
)

func uploadKey(id string) string                { return uploadPrefix + id }
func (s *Service) originalKey(id string) string { return s.media + id + "/original" }
func (s *Service) renditionKey(id string, w int, f string) string {
	return s.media + id + "/" + strconv.Itoa(w) + "." + f
}

// Upload is a presigned upload handed out: PUT the bytes to URL with
// exactly Headers before ExpiresAt, then complete it by ID.
type Upload struct {
	ID        string
	URL       string
	Headers   http.Header
	ExpiresAt time.Time
}

// CreateUpload records an upload of owner and presigns its PUT: of
// contentType and exactly byteSize bytes. A content type not taken, a file
// name whose extension says another format, or a size out of bounds is a
// *storage.ValidationError.
func (s *Service) CreateUpload(ctx context.Context, owner, filename, contentType string, byteSize int64) (*Upload, error) {
	format := formatOfType(contentType)
	switch {
	case strings.Contains(strings.ToLower(contentType), "svg") || formatOfName(filename) == "" && strings.HasSuffix(strings.ToLower(filename), ".svg"):
		return nil, &storage.ValidationError{Field: "contentType", Reason: errSVG.Error()}
	case format == "":
		return nil, &storage.ValidationError{Field: "contentType", Reason: fmt.Sprintf("%q is not one of image/jpeg, image/png, image/gif, image/webp, image/avif", contentType)}
	case formatOfName(filename) != format:
		return nil, &storage.ValidationError{Field: "filename", Reason: fmt.Sprintf("the extension of %q does not match %s", filename, contentType)}
	case len(filename) > MaxFilenameBytes:
		return nil, &storage.ValidationError{Field: "filename", Reason: fmt.Sprintf("is longer than %d bytes", MaxFilenameBytes)}
	case byteSize < 1 || byteSize > s.opts.MaxBytes:
		return nil, &storage.ValidationError{Field: "byteSize", Reason: fmt.Sprintf("must be from 1 to %d bytes", s.opts.MaxBytes)}
	}
	if err := s.store.CheckMediaQuota(ctx, s.opts.Quota, byteSize); err != nil {
		return nil, err
	}
	id := storage.NewUploadID()
	_, err := s.store.CreateUpload(ctx, storage.Upload{ID: id, Owner: owner, Filename: filename, ContentType: contentTypes[format], ByteSize: byteSize}, s.opts.UploadTTL)
	if err != nil {
		return nil, err
	}
	put, err := s.bucket.PresignPut(ctx, uploadKey(id), contentTypes[format], byteSize, s.opts.PresignTTL)
	if err != nil {
		return nil, err
	}
	return &Upload{ID: id, URL: put.URL, Headers: put.Headers, ExpiresAt: put.Expires}, nil
}

// CheckError is an upload that failed its checks: its object is deleted
// and the upload forgotten.
type CheckError struct{ Reason string }

func (e *CheckError) Error() string { return e.Reason }

// Unwrap makes a CheckError an invalid input (BAD_USER_INPUT).
func (e *CheckError) Unwrap() error { return storage.ErrInvalidInput }

// CompleteUpload checks the upload id of owner (an error wrapping
// auth.ErrForbidden when it is another's) and makes it a media item with
// alt: the object is read (no more than the size declared), its format found by its
// bytes and its pixels counted from its header before anything is decoded,
// then decoded whole. An upload that fails is a *CheckError, its object
// and record deleted. The original is kept, private, beside the
// renditions; only renditions, re-encoded without metadata, are served.
func (s *Service) CompleteUpload(ctx context.Context, owner, id, alt string) (*storage.Media, error) {
	up, err := s.store.Upload(ctx, id)
	if err != nil {
		return nil, err
	}
	if up.Owner != owner {
		return nil, fmt.Errorf("%w: the upload is another's", auth.ErrForbidden)
	}
	// The signed length bounds the PUT on S3; not every S3-compatible
	// server checks it, so the read does too.
	data, err := s.bucket.Get(ctx, uploadKey(id), up.ByteSize)
	switch {
	case errors.Is(err, errNoObject):
		return nil, &storage.ValidationError{Field: "id", Reason: "nothing was uploaded to the upload's URL yet"}
	case errors.Is(err, errTooLarge):
		return nil, s.refuse(ctx, id, fmt.Sprintf("the file is larger than the %d bytes declared", up.ByteSize))
	case err != nil:
		return nil, err
	case int64(len(data)) != up.ByteSize:
		return nil, s.refuse(ctx, id, fmt.Sprintf("the file is %d bytes, not the %d declared", len(data), up.ByteSize))
	}
	m, reason, err := s.check(ctx, up, data)
	switch {
	case err != nil:
		return nil, err
	case reason != "":
		return nil, s.refuse(ctx, id, reason)
	}
	m.Alt = alt
	if err := s.bucket.Put(ctx, s.originalKey(id), contentTypes[m.Format], data); err != nil {
		return nil, err
	}
	done, err := s.store.CompleteUpload(ctx, *m, s.opts.Quota)
	if qe, ok := errors.AsType[*storage.QuotaError](err); ok {
		// Over the quota: nothing is kept, the upload's object and record
		// included (a smaller file needs an upload of its own).
		return nil, errors.Join(s.bucket.Delete(ctx, s.originalKey(id)), s.bucket.Delete(ctx, uploadKey(id)), s.store.DeleteUpload(ctx, id), qe)
	}
	if err != nil {
		return nil, err
	}
	if err := s.bucket.Delete(ctx, uploadKey(id)); err != nil {
		s.opts.Logger.Warn("media: upload left behind", "id", id, "err", err)
	}
	return done, nil
}

// check returns the media item data makes of up, or why it is refused,
// or errBusy when it waited for a worker until ctx ended: it decodes the
// picture under the same bounds as renditions.
func (s *Service) check(ctx context.Context, up *storage.Upload, data []byte) (*storage.Media, string, error) {
	format, err := sniff(data)
	if err != nil {
		return nil, err.Error(), nil
	}
	if declared := formatOfType(up.ContentType); declared != format {
		return nil, fmt.Sprintf("the file is %s by its bytes, not %s as declared", strings.ToUpper(format), strings.ToUpper(declared)), nil
	}
	cfg, err := decodeConfig(format, data)
	if err != nil {
		return nil, fmt.Sprintf("the %s header cannot be read: %v", strings.ToUpper(format), err), nil
	}
	o := orientationOf(format, data)
	width, height := upright(cfg.Width, cfg.Height, o)
	if reason := s.tooManyPixels(image.Config{Width: width, Height: height}); reason != "" {
		return nil, reason, nil
	}
	frames := 1
	if format == FormatGIF {
		if frames, err = gifFrames(data); err != nil {
			return nil, fmt.Sprintf("the image is truncated or corrupt: %v", err), nil
		}
		if px := int64(frames) * int64(cfg.Width) * int64(cfg.Height); px > s.opts.MaxPixels {
			return nil, fmt.Sprintf("the animation is %d frames of %d×%d, %d pixels in all, more than the %d allowed", frames, cfg.Width, cfg.Height, px, s.opts.MaxPixels), nil
		}
	}
	release, err := s.reserve(ctx, int64(frames)*int64(cfg.Width)*int64(cfg.Height))
	if err != nil {
		return nil, "", err
	}
	defer release()
	img, err := decode(format, data)
	if err == nil && frames > 1 {
		// Every frame, as its renditions will.
		err = checkFrames(data)
	}
	if err != nil {
		return nil, fmt.Sprintf("the image is truncated or corrupt: %v", err), nil
	}
	if o > 1 {
		img = scaleUpright(img, o, min(width, 4*placeholderSide))
	}
	ph, dominant, err := placeholder(img)
	if err != nil {
		return nil, "", err
	}
	m := &storage.Media{ID: up.ID, Owner: up.Owner, Filename: up.Filename, Format: format,
		Width: width, Height: height, ByteSize: int64(len(data)), Placeholder: ph, DominantColor: dominant}
	if frames > 1 {
		m.Frames = frames
	}
	return m, "", nil
}

// reserve waits for a worker and for px pixels of the decoding budget
// until ctx ends (errBusy then), and returns what gives them back.
func (s *Service) reserve(ctx context.Context, px int64) (func(), error) {
	px = min(px, 2*s.opts.MaxPixels)
	if err := s.workers.Acquire(ctx, 1); err != nil {
		return nil, errBusy
	}
	if err := s.pixels.Acquire(ctx, px); err != nil {
		s.workers.Release(1)
		return nil, errBusy
	}
	return func() { s.pixels.Release(px); s.workers.Release(1) }, nil
}

// tooManyPixels returns why an image of cfg is refused, or "".
func (s *Service) tooManyPixels(cfg image.Config) string {
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return "the image has no pixels"
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > s.opts.MaxPixels {
		return fmt.Sprintf("the image is %d×%d, %d pixels, more than the %d allowed", cfg.Width, cfg.Height, px, s.opts.MaxPixels)
	}
	if cfg.Height > maxHeight {
		return fmt.Sprintf("the image is %d pixels high, more than the %d allowed", cfg.Height, maxHeight)
	}
	return ""
}

// refuse deletes the upload id's object and record and returns a
// *CheckError of reason.
func (s *Service) refuse(ctx context.Context, id, reason string) error {
	err := errors.Join(s.bucket.Delete(ctx, uploadKey(id)), s.store.DeleteUpload(ctx, id))
	if err != nil {
		return err
	}
	return &CheckError{Reason: reason}
}

// Quota returns the quota of each publication's library.
func (s *Service) Quota() storage.MediaQuota { return s.opts.Quota }

// Delete deletes the media item m, giving its bytes back to the quota,
// and every object of it. An item in use is a *storage.MediaInUseError
// unless force.
func (s *Service) Delete(ctx context.Context, m *storage.Media, force bool) error {
	id := m.ID
	if err := s.store.DeleteMedia(ctx, m, force); err != nil {
		return err
	}
	return s.bucket.List(ctx, s.media+id+"/", func(o Object) error { return s.bucket.Delete(ctx, o.Key) })
}

// Sweep deletes the objects of uploads never completed: those older than
// UploadTTL, whose records TTL removes. It returns how many it deleted.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	cutoff := s.opts.Now().Add(-s.opts.UploadTTL)
	n := 0
	err := s.bucket.List(ctx, uploadPrefix, func(o Object) error {
		if !o.LastModified.Before(cutoff) {
			return nil
		}
		n++
		return s.bucket.Delete(ctx, o.Key)
	})
	return n, err
}

// RunSweeps calls Sweep every interval until ctx is done.
func (s *Service) RunSweeps(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("media: sweep of uploads never completed failed", "err", err)
		} else if n > 0 {
			s.opts.Logger.Info("media: deleted uploads never completed", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// WidthsOf returns the widths of m's renditions, narrowest first: those of
// Widths narrower than m, and m's own width when it is narrower than the
// widest.
func WidthsOf(m *storage.Media) []int {
	var ws []int
	for _, w := range Widths {
		if w < m.Width {
			ws = append(ws, w)
		}
	}
	if m.Width <= Widths[len(Widths)-1] {
		ws = append(ws, m.Width)
	}
	return ws
}

// FormatsOf returns the formats of m's renditions: its own, WebP and,
// when on, AVIF; an animation's own only (animated.go).
func (s *Service) FormatsOf(m *storage.Media) []string {
	fs := []string{m.Format}
	if m.Frames > 1 {
		return fs
	}
	for _, f := range []string{FormatWebP, FormatAVIF} {
		if (f != FormatAVIF || s.opts.AVIF) && !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	return fs
}

// URL returns the URL of m's rendition of width w in format.
func (s *Service) URL(m *storage.Media, w int, format string) string {
	return s.opts.BaseURL + "/media/" + m.ID + "/" + strconv.Itoa(w) + "." + format
}

// Srcset returns the srcset of m in format (its own when empty): every
// width's URL with its w descriptor.
func (s *Service) Srcset(m *storage.Media, format string) string {
	if format == "" {
		format = m.Format
	}
	var b strings.Builder
	for i, w := range WidthsOf(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %dw", s.URL(m, w, format), w)
	}
	return b.String()
}

// Sizes returns a sizes hint for m: the viewport's width up to its widest
// rendition.
func Sizes(m *storage.Media) string {
	ws := WidthsOf(m)
	w := ws[len(ws)-1]
	return fmt.Sprintf("(max-width: %dpx) 100vw, %dpx", w, w)
}
