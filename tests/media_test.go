package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	xwebp "golang.org/x/image/webp"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/internal/s3test"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/storage"
)

// The media library over HTTP: uploads presigned by the API and sent with
// a plain HTTP client to the bucket (the embedded store, or the S3 server
// of S3_ENDPOINT), completed, listed, and their renditions fetched.

// mediaServer is the GraphQL server with a media library, and the server
// of its renditions (and of the embedded store's uploads) at base.
type mediaServer struct {
	*server
	base string
	lib  *media.Service
}

// newMediaServer starts the GraphQL server with a media library, its
// options changed by configure when given.
func newMediaServer(t *testing.T, configure ...func(*media.Options)) *mediaServer {
	t.Helper()
	s := newServer(t)
	mux := http.NewServeMux()
	hs := httptest.NewUnstartedServer(mux)
	base := "http://" + hs.Listener.Addr().String()
	// The SDK signs presigned uploads at the real time, so the embedded
	// store checks them against it.
	bucket := s3test.Bucket(t, mux, base, time.Now)
	opts := media.Options{BaseURL: base, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, f := range configure {
		f(&opts)
	}
	lib := media.New(s.store, bucket, opts)
	lib.Register(mux)
	// Bodies show library images with the server's URLs, as the server's
	// store does with -media-url.
	storage.WithLibraryImages(media.BodyImages(base))(s.store)
	hs.Start()
	t.Cleanup(hs.Close)
	s.opts.Media = lib
	s.serve()
	return &mediaServer{server: s, base: base, lib: lib}
}

// testJPEG returns a w×h JPEG of a gradient; extra segments go right
// after its start of image (EXIF, comments).
func testJPEG(t testing.TB, w, h int, extra ...[]byte) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(255 * x / w), uint8(255 * y / h), 80, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	var out []byte
	out = append(out, b[:2]...)
	for _, seg := range extra {
		out = append(out, seg...)
	}
	return append(out, b[2:]...)
}

// jpegSegment returns a JPEG marker segment holding data.
func jpegSegment(marker byte, data []byte) []byte {
	seg := []byte{0xFF, marker, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(data)+2))
	return append(seg, data...)
}

// pngBomb returns a PNG of 68 bytes whose header states w×h
// pixels: decoding it would take w×h×3 bytes.
func pngBomb(w, h uint32) []byte {
	chunk := func(typ string, data []byte) []byte {
		c := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		c = append(c, typ...)
		c = append(c, data...)
		return binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8-bit RGB
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	// A few bytes of a zlib stream of zeros that would inflate to all
	// of it: never read.
	out = append(out, chunk("IDAT", []byte{0x78, 0x9c, 0xed, 0xc1, 0x01, 0x0d, 0x00, 0x00, 0x00, 0xc2, 0xa0})...)
	return append(out, chunk("IEND", nil)...)
}

// upload creates an upload of c for a file of name, content type and
// size, PUTs body to its URL with a plain client, and returns its id and
// the PUT's status.
func (s *mediaServer) upload(t *testing.T, c graphql.Client, name, contentType string, size int, body []byte) (string, int) {
	t.Helper()
	ctx := context.Background()
	res, err := CreateUpload(ctx, c, CreateUploadInput{Filename: name, ContentType: contentType, ByteSize: size})
	if err != nil {
		t.Fatalf("createUpload: %v", err)
	}
	up := res.CreateUpload.Upload
	req, err := http.NewRequest(http.MethodPut, up.Url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range up.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	put, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	put.Body.Close()
	return up.Id, put.StatusCode
}

// get fetches a rendition's URL with the headers given, as a client
// should: a 503 with Retry-After (a rendition not made in time, which a
// loaded machine may take) is asked again after the time it gives, up to
// ten times.
func get(t *testing.T, u string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	for range 10 {
		res, body := getOnce(t, u, h)
		wait, err := strconv.Atoi(res.Header.Get("Retry-After"))
		if res.StatusCode != http.StatusServiceUnavailable || err != nil {
			return res, body
		}
		time.Sleep(time.Duration(wait) * time.Second)
	}
	return getOnce(t, u, h)
}

func getOnce(t *testing.T, u string, h map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

func TestMediaUploadCompleteAndRenditions(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	file := testJPEG(t, 1000, 750)
	id, status := s.upload(t, alice, "sunset.jpg", "image/jpeg", len(file), file)
	equal(t, "PUT status", status, http.StatusOK)

	done, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id, Alt: ptr("A sunset")})
	if err != nil {
		t.Fatalf("completeUpload: %v", err)
	}
	m := done.CompleteUpload.Media
	equal(t, "format", m.Format, ImageFormatJpeg)
	equal(t, "byteSize", m.ByteSize, len(file))
	equal(t, "uploadedBy", m.UploadedBy, "alice")
	equal(t, "alt", m.Image.Alt, "A sunset")
	equal(t, "width", *m.Image.Width, 1000)
	equal(t, "height", *m.Image.Height, 750)
	equal(t, "url", m.Image.Url, s.base+"/media/"+id+"/1000.jpeg")
	equal(t, "srcset", *m.Image.Srcset, strings.Join([]string{
		s.base + "/media/" + id + "/320.jpeg 320w", s.base + "/media/" + id + "/640.jpeg 640w",
		s.base + "/media/" + id + "/960.jpeg 960w", s.base + "/media/" + id + "/1000.jpeg 1000w"}, ", "))
	equal(t, "sizes", *m.Image.Sizes, "(max-width: 1000px) 100vw, 1000px")
	if !strings.HasPrefix(*m.Image.Placeholder, "data:image/png;base64,") || len(*m.Image.Placeholder) > 2000 {
		t.Errorf("placeholder = %.60q…, want a small data: URL of a PNG", *m.Image.Placeholder)
	}
	if !regexp.MustCompile(`^#[0-9a-f]{6}$`).MatchString(*m.Image.DominantColor) {
		t.Errorf("dominantColor = %q", *m.Image.DominantColor)
	}

	lib, err := MediaLibrary(ctx, s.as("bob", auth.RoleAuthor), nil, nil, ptr(ImageFormatWebp))
	if err != nil {
		t.Fatalf("media: %v", err)
	}
	if n := len(lib.Media.Edges); n != 1 || lib.Media.Edges[0].Node.Id != id {
		t.Fatalf("library = %+v, want the one item", lib.Media.Edges)
	}
	webp := *lib.Media.Edges[0].Node.Image.Webp
	if !strings.Contains(webp, "/640.webp 640w") {
		t.Errorf("srcset(format: WEBP) = %q", webp)
	}
	if _, err := MediaLibrary(ctx, s.client, nil, nil, nil); code(err) != "UNAUTHENTICATED" {
		t.Errorf("library for the anonymous: %v, want UNAUTHENTICATED", err)
	}

	u := s.base + "/media/" + id + "/640.webp"
	res, body := get(t, u, nil)
	equal(t, "rendition status", res.StatusCode, http.StatusOK)
	equal(t, "Content-Type", res.Header.Get("Content-Type"), "image/webp")
	equal(t, "Cache-Control", res.Header.Get("Cache-Control"), "public, max-age=31536000, immutable")
	img, err := xwebp.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("rendition is no WebP: %v", err)
	}
	equal(t, "rendition size", img.Bounds().Size(), image.Pt(640, 480))
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	again, body2 := get(t, u, nil)
	equal(t, "ETag again", again.Header.Get("ETag"), etag)
	equal(t, "same bytes again", bytes.Equal(body, body2), true)
	notModified, _ := get(t, u, map[string]string{"If-None-Match": etag})
	equal(t, "status with If-None-Match", notModified.StatusCode, http.StatusNotModified)

	res, body = get(t, s.base+"/media/"+id+"/320.jpeg", nil)
	equal(t, "jpeg status", res.StatusCode, http.StatusOK)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("rendition is no JPEG: %v", err)
	}
	equal(t, "jpeg rendition width", cfg.Width, 320)

	for _, bad := range []string{"1280.webp", "500.webp", "640.bmp", "640.png", "0640.webp"} {
		if res, _ := get(t, s.base+"/media/"+id+"/"+bad, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", bad, res.StatusCode)
		}
	}

	upd, err := UpdateMedia(ctx, alice, UpdateMediaInput{Id: id, Alt: "A red sunset"})
	if err != nil {
		t.Fatalf("updateMedia: %v", err)
	}
	equal(t, "alt updated", upd.UpdateMedia.Media.Image.Alt, "A red sunset")
	if _, err := UpdateMedia(ctx, s.as("bob", auth.RoleAuthor), UpdateMediaInput{Id: id, Alt: "mine"}); code(err) != "FORBIDDEN" {
		t.Errorf("updateMedia by another author: %v, want FORBIDDEN", err)
	}
	if _, err := DeleteMedia(ctx, alice, DeleteMediaInput{Id: id}); err != nil {
		t.Fatalf("deleteMedia: %v", err)
	}
	if res, _ := get(t, u, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("rendition after deleteMedia: %d, want 404", res.StatusCode)
	}
	lib, err = MediaLibrary(ctx, alice, nil, nil, nil)
	if err != nil || len(lib.Media.Edges) != 0 {
		t.Errorf("library after deleteMedia: %+v, %v", lib, err)
	}
}

func TestMediaRefusesBadUploads(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	photo := testJPEG(t, 400, 300)

	t.Run("refused at createUpload", func(t *testing.T) {
		for _, tc := range []struct {
			name, filename, contentType string
			size                        int
			field, says                 string
		}{
			{"a type not taken", "page.html", "text/html", 100, "contentType", "not one of"},
			{"SVG", "logo.svg", "image/svg+xml", 100, "contentType", "SVG"},
			{"an extension of another type", "cat.png", "image/jpeg", 100, "filename", "does not match"},
			{"more bytes than allowed", "big.jpg", "image/jpeg", media.DefaultMaxBytes + 1, "byteSize", "must be from 1"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := CreateUpload(ctx, alice, CreateUploadInput{Filename: tc.filename, ContentType: tc.contentType, ByteSize: tc.size})
				equal(t, "code", code(err), "BAD_USER_INPUT")
				equal(t, "field", extension(err, "field"), any(tc.field))
				if err == nil || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("error %v does not say %q", err, tc.says)
				}
			})
		}
		if _, err := CreateUpload(ctx, s.reader("r1", "", ""), CreateUploadInput{Filename: "a.jpg", ContentType: "image/jpeg", ByteSize: 10}); code(err) != "FORBIDDEN" {
			t.Errorf("createUpload by a reader: %v, want FORBIDDEN", err)
		}
	})

	t.Run("refused at completeUpload, and deleted", func(t *testing.T) {
		for _, tc := range []struct {
			name, filename, contentType string
			body                        []byte
			says                        string
		}{
			{"bytes of another type than declared", "cat.png", "image/png", photo, "is JPEG by its bytes, not PNG"},
			{"a truncated file", "half.jpg", "image/jpeg", photo[:len(photo)/2], "truncated"},
			{"HTML named an image", "page.jpg", "image/jpeg", []byte("<html><script>alert(1)</script></html>"), "not a JPEG"},
			{"SVG named a PNG", "logo.png", "image/png", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "SVG"},
			{"a 100-megapixel PNG bomb", "bomb.png", "image/png", pngBomb(10000, 10000), "100000000 pixels"},
			{"a PNG taller than renditions may be", "tall.png", "image/png", pngBomb(100, 20000), "20000 pixels high"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id, status := s.upload(t, alice, tc.filename, tc.contentType, len(tc.body), tc.body)
				equal(t, "PUT status", status, http.StatusOK)
				_, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})
				equal(t, "code", code(err), "BAD_USER_INPUT")
				if err == nil || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("error %v does not say %q", err, tc.says)
				}
				// Nothing is kept: the upload is gone.
				_, err = CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})
				equal(t, "completing again", code(err), "NOT_FOUND")
			})
		}
	})

	t.Run("more bytes than signed", func(t *testing.T) {
		id, status := s.upload(t, alice, "a.jpg", "image/jpeg", 100, photo)
		// S3 and the embedded store refuse a PUT of another length than
		// signed; s3rver takes it, and completeUpload refuses it.
		if os.Getenv("S3_ENDPOINT") == "" {
			equal(t, "PUT status", status, http.StatusForbidden)
		}
		_, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})
		equal(t, "code", code(err), "BAD_USER_INPUT")
		_, err = CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})
		if status == http.StatusOK {
			equal(t, "completing again", code(err), "NOT_FOUND")
		}
	})

	t.Run("another's upload", func(t *testing.T) {
		id, status := s.upload(t, alice, "a.jpg", "image/jpeg", len(photo), photo)
		equal(t, "PUT status", status, http.StatusOK)
		_, err := CompleteUpload(ctx, s.as("bob", auth.RoleAuthor), CompleteUploadInput{Id: id})
		equal(t, "bob completing alice's upload", code(err), "FORBIDDEN")
		_, err = CompleteUpload(ctx, s.admin, CompleteUploadInput{Id: id})
		equal(t, "an admin completing alice's upload", code(err), "FORBIDDEN")
		if _, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id}); err != nil {
			t.Errorf("alice completing her upload: %v", err)
		}
	})

	lib, err := MediaLibrary(ctx, alice, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "items in the library", len(lib.Media.Edges), 1)
}

// TestMediaStripsMetadata checks that a polyglot, an image whose
// metadata holds a script and GPS data, is served without them: every
// rendition is encoded afresh.
func TestMediaStripsMetadata(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	exif := append([]byte("Exif\x00\x00MM\x00\x2a"), []byte("GPSLatitude 48.8584 GPSLongitude 2.2945")...)
	file := testJPEG(t, 700, 500, jpegSegment(0xE1, exif), jpegSegment(0xFE, []byte("<script>alert(document.cookie)</script>")))
	id, status := s.upload(t, alice, "polyglot.jpg", "image/jpeg", len(file), file)
	equal(t, "PUT status", status, http.StatusOK)
	if _, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id}); err != nil {
		t.Fatalf("completeUpload: %v", err)
	}
	for _, r := range []string{"700.jpeg", "320.jpeg", "640.webp"} {
		res, body := get(t, s.base+"/media/"+id+"/"+r, nil)
		equal(t, r+" status", res.StatusCode, http.StatusOK)
		equal(t, r+" nosniff", res.Header.Get("X-Content-Type-Options"), "nosniff")
		for _, leak := range []string{"<script", "GPS", "Exif"} {
			if bytes.Contains(body, []byte(leak)) {
				t.Errorf("%s holds %q", r, leak)
			}
		}
	}
}

// TestMediaUploadsNeverCompleted checks that an upload not completed
// within a day is gone: completing it is NOT_FOUND once its record has
// expired, and the sweep deletes its object, not a completed one's.
func TestMediaUploadsNeverCompleted(t *testing.T) {
	var later atomic.Bool
	s := newMediaServer(t, func(o *media.Options) {
		o.Now = func() time.Time {
			if later.Load() {
				return time.Now().Add(media.DefaultUploadTTL + time.Hour)
			}
			return time.Now()
		}
	})
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	file := testJPEG(t, 400, 300)
	kept, status := s.upload(t, alice, "kept.jpg", "image/jpeg", len(file), file)
	equal(t, "PUT status", status, http.StatusOK)
	left, status := s.upload(t, alice, "left.jpg", "image/jpeg", len(file), file)
	equal(t, "PUT status", status, http.StatusOK)
	if _, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: kept}); err != nil {
		t.Fatal(err)
	}
	n, err := s.lib.Sweep(ctx)
	if err != nil || n != 0 {
		t.Fatalf("sweep of fresh uploads = %d, %v; want 0", n, err)
	}

	s.clock.Advance(media.DefaultUploadTTL + time.Second)
	later.Store(true)
	_, err = CompleteUpload(ctx, alice, CompleteUploadInput{Id: left})
	equal(t, "completing an expired upload", code(err), "NOT_FOUND")
	n, err = s.lib.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("sweep a day later = %d, %v; want 1", n, err)
	}
	if res, _ := get(t, s.base+"/media/"+kept+"/320.webp", nil); res.StatusCode != http.StatusOK {
		t.Errorf("rendition of the completed upload after the sweep: %d", res.StatusCode)
	}
}
