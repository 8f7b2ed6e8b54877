package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
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
// the post got (flushes, moves of past days and popular entries). After
// the burst the final flush makes the post's count exact, which it
// checks. Meanwhile one client reads the category page over and over,
// and the benchmark reports its p99 latency during the burst and, before
// it, idle. The beacons go as fast as they can (unpaced), or at 20,000 a
// second in all (paced: the load, which leaves the page its share
// of the cores). Run with
// go test -run ^$ -bench ViewBeacons -benchtime 5s ./tests.
func BenchmarkViewBeacons(b *testing.B) {
	b.Run("unpaced", func(b *testing.B) { benchBeacons(b, 0) })
	b.Run("paced=20000", func(b *testing.B) { benchBeacons(b, 20000) })
}

// benchBeacons is BenchmarkViewBeacons at rate beacons a second in all,
// or as fast as they go when rate is 0.
func benchBeacons(b *testing.B, rate int) {
	store, h := benchHandler(b)
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

	page := categoryPager(b, h)
	idle := latencies(200, page)

	var sent atomic.Int64
	during := make(chan []time.Duration)
	burst, burstDone := context.WithCancel(ctx)
	go func() {
		var ds []time.Duration
		for burst.Err() == nil {
			ds = append(ds, latencies(1, page)...)
		}
		during <- ds
	}()
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	began := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := sent.Add(1)
			if rate > 0 {
				// The i-th beacon's turn: a pace, not a synchronisation.
				time.Sleep(time.Until(began.Add(time.Duration(i) * time.Second / time.Duration(rate))))
			}
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
	burstDone()
	busy := <-during
	stop()
	<-stopped
	b.ReportMetric(float64(sent.Load())/elapsed.Seconds(), "beacons/s")
	ops := writes.ByOperation()
	b.ReportMetric(float64(ops["UpdateItem"]+ops["TransactWriteItems"])/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(p99(idle).Microseconds())/1000, "idle-page-p99-ms")
	b.ReportMetric(float64(p99(busy).Microseconds())/1000, "burst-page-p99-ms")
	counts, err := store.ViewCounts(ctx, []string{p.ID})
	if err != nil {
		b.Fatal(err)
	}
	if counts[0] != sent.Load() {
		b.Errorf("viewCount %d after the burst, want %d", counts[0], sent.Load())
	}
}

// categoryPager returns a function that reads the category page "go"
// through h and fails b unless it is answered.
func categoryPager(b *testing.B, h http.Handler) func() {
	body, err := json.Marshal(map[string]any{"query": categoryPageQuery, "variables": map[string]any{"slug": "go"}})
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Errorf("category page: %d", rec.Code)
		}
	}
}

// latencies runs f n times and returns how long each took.
func latencies(n int, f func()) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		began := time.Now()
		f()
		ds[i] = time.Since(began)
	}
	return ds
}

// p99 returns the 99th percentile of ds.
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}
