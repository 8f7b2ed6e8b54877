package tests

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/views"
)

// BenchmarkViewBeacons sends beacons of one post from 64 goroutines
// through the beacon's HTTP handler, each from a reader of its own (an
// address of its own), while the counter flushes every second as a server
// does, and reports the beacons a second and the DynamoDB writes a second
// the post got (flushes and popular entries). After the burst the final
// flush makes the post's count exact, which it checks. Run with
// go test -run ^$ -bench ViewBeacons -benchtime 5s ./tests.
func BenchmarkViewBeacons(b *testing.B) {
	store, _ := benchHandler(b)
	ctx := context.Background()
	a, err := store.CreateAuthor(ctx, storage.NewAuthor{Name: "Hot Writer"})
	if err != nil {
		b.Fatal(err)
	}
	p, err := store.CreatePost(ctx, storage.NewPost{AuthorID: a.ID, Title: "On the front page", Slug: "front-page", Categories: []string{"go"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.Publish(ctx, storage.PublishPost{ID: p.ID, At: time.Now().Add(-time.Hour)}); err != nil {
		b.Fatal(err)
	}
	c := views.New(store, views.Options{MaxVisitors: 1 << 24, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	mux := http.NewServeMux()
	mux.Handle(views.BeaconPath, views.Beacon(c))
	flushCtx, writes := storage.WithRequestCounter(ctx)
	runCtx, stop := context.WithCancel(flushCtx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.Run(runCtx)
	}()

	var sent atomic.Int64
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	began := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := sent.Add(1)
			r := httptest.NewRequest(http.MethodPost, "/v/"+p.ID, nil)
			r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:4242", byte(i>>16), byte(i>>8), byte(i))
			r.Header.Set("User-Agent", browser)
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != http.StatusNoContent {
				b.Errorf("beacon: %d", w.Code)
				return
			}
		}
	})
	elapsed := time.Since(began)
	b.StopTimer()
	stop()
	<-stopped
	b.ReportMetric(float64(sent.Load())/elapsed.Seconds(), "beacons/s")
	b.ReportMetric(float64(writes.ByOperation()["UpdateItem"])/elapsed.Seconds(), "writes/s")
	counts, err := store.ViewCounts(ctx, []string{p.ID})
	if err != nil {
		b.Fatal(err)
	}
	if counts[0] != sent.Load() {
		b.Errorf("viewCount %d after the burst, want %d", counts[0], sent.Load())
	}
}
