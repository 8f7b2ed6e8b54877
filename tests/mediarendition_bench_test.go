package tests

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/internal/s3test"
	"github.com/blogql/blog/media"
)

// BenchmarkRenditionsBurst measures a page's p99 while 16 requests for
// distinct renditions not yet made (4 large JPEGs at 4 widths, WebP) go
// through the renditions' HTTP handler at once, against its p99 idle.
// Each round uploads 4 fresh 4000×3000 JPEGs first, off the clock.
// workers=cores makes one rendition a core; workers=default, the
// default (-media-workers 0), one fewer than the cores, at least one
// (one on 2 cores), leaving a core to pages.
func BenchmarkRenditionsBurst(b *testing.B) {
	b.Run("workers=cores", func(b *testing.B) { benchRenditionsBurst(b, runtime.GOMAXPROCS(0)) })
	b.Run("workers=default", func(b *testing.B) { benchRenditionsBurst(b, 0) })
}

// benchRenditionsBurst is BenchmarkRenditionsBurst with workers
// renditions made at once (0: the default).
func benchRenditionsBurst(b *testing.B, workers int) {
	store, h := benchHandler(b)
	mux := http.NewServeMux()
	hs := httptest.NewUnstartedServer(mux)
	base := "http://" + hs.Listener.Addr().String()
	bucket := s3test.Bucket(b, mux, base, time.Now)
	lib := media.New(store, bucket, media.Options{Concurrency: workers, BaseURL: base, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	lib.Register(mux)
	hs.Start()
	b.Cleanup(hs.Close)
	photo := largePhoto(b, 4000, 3000)
	page := categoryPager(b, h)
	idle := latencies(200, page)

	var busy []time.Duration
	var made time.Duration
	for b.Loop() {
		b.StopTimer()
		var ids []string
		for range 4 {
			ids = append(ids, benchUpload(b, lib, photo))
		}
		b.StartTimer()
		began := time.Now()
		var wg sync.WaitGroup
		for _, id := range ids {
			for _, w := range []int{320, 640, 960, 1280} {
				wg.Go(func() {
					rec := httptest.NewRecorder()
					mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/media/%s/%d.webp", id, w), nil))
					if rec.Code != http.StatusOK {
						b.Errorf("rendition %s %d: %d", id, w, rec.Code)
					}
				})
			}
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for waiting := true; waiting; {
			busy = append(busy, latencies(1, page)...)
			select {
			case <-done:
				waiting = false
			default:
			}
		}
		made += time.Since(began)
	}
	b.ReportMetric(float64(p99(idle).Microseconds())/1000, "idle-page-p99-ms")
	b.ReportMetric(float64(p99(busy).Microseconds())/1000, "burst-page-p99-ms")
	b.ReportMetric(float64(len(busy))/float64(b.N), "pages/burst")
	b.ReportMetric(float64(made.Milliseconds())/float64(b.N), "burst-ms")
}

// benchUpload puts data in the library through a presigned upload and
// returns its media item's id.
func benchUpload(b *testing.B, lib *media.Service, data []byte) string {
	ctx := context.Background()
	up, err := lib.CreateUpload(ctx, "bench", "p.jpg", "image/jpeg", int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPut, up.URL, bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	for k := range up.Headers {
		req.Header.Set(k, up.Headers.Get(k))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	m, err := lib.CompleteUpload(ctx, "bench", up.ID, "")
	if err != nil {
		b.Fatal(err)
	}
	return m.ID
}

// largePhoto returns a w×h JPEG with detail everywhere, as a photo has.
func largePhoto(b *testing.B, w, h int) []byte {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			yy, cb, cr := color.RGBToYCbCr(uint8(x*255/w), uint8(y*255/h), uint8((x*7^y*13)&255))
			img.Y[img.YOffset(x, y)] = yy
			img.Cb[img.COffset(x, y)], img.Cr[img.COffset(x, y)] = cb, cr
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
