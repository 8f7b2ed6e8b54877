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
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// The memory of requests in flight (issue 33), measured in process on
// the backend the tests use:
//
//	go test -run '^$' -bench InFlight -benchtime 1x ./tests
//
// A table of 100 published posts of about 99 KB of Markdown each; the
// worst request within the complexity limit asks for their bodies under
// three aliases (about 29 MB of JSON). For each setting (the default
// budget, and none) it measures a normal page's latency alone (200
// pages one after another), then while 16 clients send the worst request
// again and again (once each has had an answer), and reports
// the peak RSS and heap of the process (server and clients) meanwhile,
// the normal page's p50 and p99 idle and under load, and what the worst
// requests were answered; ns/op means nothing here.

// worstRequest is the worst request of the issue.
var worstRequest = request("{ "+aliases(3, "posts(first: 100) { edges { node { body } } }")+"}", nil)

// normalPage is a front page: 20 summaries with their authors.
var normalPage = request("{ posts(first: 20) { edges { node { id slug title excerpt publishedAt readingTimeMinutes author { name slug } categories { slug name } } } } }", nil)

func BenchmarkInFlight(b *testing.B) {
	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.ClientConfig(b, nil))
	if err != nil {
		b.Fatal(err)
	}
	store := storage.New(db, dynamotest.Table(b, db, "inflight"))
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	seedLargePosts(b, store, 100, 99_000)
	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		b.Fatal(err)
	}
	for _, setting := range []struct {
		name   string
		budget *inflight.Budget
	}{
		{"budget=64MiB", inflight.NewBudget(inflight.DefaultBudget, inflight.DefaultWait)},
		{"budget=none", nil},
	} {
		b.Run(setting.name, func(b *testing.B) {
			opts := graph.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Verifier: verifier}
			opts.HTTP.Budget = setting.budget
			hs := httptest.NewServer(graph.NewHandler(store, opts))
			defer hs.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			for range b.N {
				measureInFlight(b, client, hs.URL)
			}
		})
	}
}

// seedLargePosts publishes n posts of bodies of about size bytes.
func seedLargePosts(b *testing.B, store *storage.Store, n, size int) {
	ctx := context.Background()
	a, err := store.CreateAuthor(ctx, storage.NewAuthor{Name: "Ada"})
	if err != nil {
		b.Fatal(err)
	}
	para := "A paragraph of *Markdown* with `code`, a [link](https://example.com/) and \"quotes\" <em>too</em>.\n\n"
	body := strings.Repeat(para, size/len(para))
	for i := range n {
		p, err := store.CreatePost(ctx, storage.NewPost{AuthorID: a.ID, Title: fmt.Sprint("Post ", i), Slug: fmt.Sprint("post-", i), Body: body})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.Publish(ctx, storage.PublishPost{ID: p.ID, ExpectedVersion: p.Version}); err != nil {
			b.Fatal(err)
		}
	}
}

// measureInFlight runs one measure against the endpoint at url.
func measureInFlight(b *testing.B, client *http.Client, url string) {
	const pages, clients = 200, 16
	post := func(body string) (int, string) {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = json.NewDecoder(bytes.NewReader(raw)).Decode(&out)
		code := "ok"
		if len(out.Errors) > 0 {
			code = fmt.Sprint(out.Errors[0].Extensions["code"])
		}
		return resp.StatusCode, code
	}
	latencies := func() []time.Duration {
		var d []time.Duration
		for range pages {
			start := time.Now()
			if status, code := post(normalPage); status != http.StatusOK || code != "ok" {
				b.Fatalf("normal page: %d %s", status, code)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d
	}
	runtime.GC()
	idle := latencies()
	baseRSS, baseHeap := rss(), heapObjects()

	var peakRSS, peakHeap atomic.Int64
	stop := make(chan struct{})
	var sampler, load sync.WaitGroup
	sampler.Go(func() {
		for {
			peakRSS.Store(max(peakRSS.Load(), rss()))
			peakHeap.Store(max(peakHeap.Load(), heapObjects()))
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	var mu sync.Mutex
	outcomes := map[string]int{}
	warm := make(chan struct{}) // closed once the clients have had an answer each
	answers := 0
	for range clients {
		load.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				status, code := post(worstRequest)
				mu.Lock()
				outcomes[strconv.Itoa(status)+" "+code]++
				if answers++; answers == clients {
					close(warm)
				}
				mu.Unlock()
			}
		})
	}
	<-warm
	busy := latencies()
	close(stop)
	load.Wait()
	sampler.Wait()

	p := func(d []time.Duration, q float64) float64 {
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(p(idle, 0.5), "idle-p50-ms")
	b.ReportMetric(p(idle, 0.99), "idle-p99-ms")
	b.ReportMetric(p(busy, 0.5), "load-p50-ms")
	b.ReportMetric(p(busy, 0.99), "load-p99-ms")
	b.ReportMetric(float64(baseRSS)/1e6, "idle-rss-MB")
	b.ReportMetric(float64(peakRSS.Load())/1e6, "peak-rss-MB")
	b.ReportMetric(float64(baseHeap)/1e6, "idle-heap-MB")
	b.ReportMetric(float64(peakHeap.Load())/1e6, "peak-heap-MB")
	b.Logf("worst requests answered: %v", outcomes)
}

// rss returns the resident memory of the process, from /proc (0 where
// there is none).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// heapObjects returns the bytes of the Go heap's objects, live or not yet
// collected, without stopping the world (as runtime.ReadMemStats would).
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
