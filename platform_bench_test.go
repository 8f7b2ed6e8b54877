package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkNoisyNeighbour measures the demo blog's category page (the
// call budget's query, 20 posts) on demo.localhost while 16 clients flood
// the other demo publication (notes.localhost) with its own category
// page as fast as they are answered: idle, during the flood without
// limits, and during it with -publication-rate-limit and
// -publication-inflight-share. It reports p50 and p99
// (docs/benchmarks-platform.md).
//
//	go test -run '^$' -bench NoisyNeighbour -benchtime 400x .
func BenchmarkNoisyNeighbour(b *testing.B) {
	const (
		page  = `{ category(slug: "go") { name posts(first: 20) { edges { node { title slug excerpt publishedAt commentCount author { name } categories { name } } } } } }`
		flood = `{ category(slug: "trails") { name posts(first: 20) { edges { node { title slug excerpt publishedAt commentCount author { name } categories { name } } } } } }`
	)
	for _, c := range []struct {
		name    string
		clients int
		args    []string
	}{
		{"idle", 0, nil},
		{"flood", 16, nil},
		{"flood-limited", 16, []string{"-publication-rate-limit", "600", "-publication-inflight-share", "50"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			base, _, stop := startServer(b, append([]string{"-port", "0", "-log-format", "json", "-answer-cache-bytes", "0"}, c.args...), nil)
			defer stop()
			// Answers are not cached: every request is built.
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			send := func(host, query string) (int, error) {
				body, _ := json.Marshal(map[string]string{"query": query})
				req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(string(body)))
				req.Host = host
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return 0, err
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode, nil
			}
			if code, err := send("demo.localhost", page); err != nil || code != http.StatusOK {
				b.Fatalf("category page: %d %v", code, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			statuses := map[int]int{}
			for range c.clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						code, _ := send("notes.localhost", flood)
						mu.Lock()
						statuses[code]++
						mu.Unlock()
					}
				}()
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				if code, err := send("demo.localhost", page); err != nil || code != http.StatusOK {
					b.Fatalf("category page during the flood: %d %v", code, err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			cancel()
			wg.Wait()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			if c.clients > 0 {
				b.ReportMetric(float64(statuses[http.StatusOK]), "flood-200s")
				b.ReportMetric(float64(statuses[http.StatusTooManyRequests]+statuses[http.StatusServiceUnavailable]), "flood-refused")
			}
		})
	}
}
