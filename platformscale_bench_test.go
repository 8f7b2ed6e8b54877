package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/storage"
)

// scalePage is the frontend's category page of the tests' single-blog
// BenchmarkCategoryPage (tests/bench_test.go): the category and its 20
// newest posts with what a post card shows.
const scalePage = `query CategoryPage($slug: String!) {
  category(slug: $slug) {
    id name description postCount
    posts(first: 20) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { id slug title excerpt publishedAt commentCount author { name } categories { slug name } } }
    }
  }
}`

// The platform of BenchmarkPlatformCategoryPage: scalePublications
// publications besides the default one, each with scalePosts posts, and
// the one whose category page is measured.
const (
	scalePublications = 1000
	scalePosts        = 100
	scaleMeasured     = scalePublications / 2
)

// scaleHost returns the host of the platform's publication i.
func scaleHost(i int) string { return fmt.Sprintf("pub-%04d.localhost", i) }

// BenchmarkPlatformCategoryPage compares a category page of one
// publication of a platform of 1,000, with 100 posts each, with the same
// page of a single blog of the same 100 posts (the default publication of
// a table of its own): each is served by a server of its own (run, the
// embedded engine on a data file in memory, answer cache off) and asked
// over HTTP at its host, one request at a time (p50, p99) and from 16
// clients at once (answers a second), the two measured in turn, in
// alternating order, once an iteration. The platform's default
// publication has the same posts and is measured too, at the single
// blog's host: what the table's size costs without a publication's own
// site. It logs each iteration's figures and reports their medians and
// each platform page's over the single blog's
// (docs/benchmarks-publications.md):
//
//	go test -run '^$' -bench PlatformCategoryPage -benchtime 8x .
func BenchmarkPlatformCategoryPage(b *testing.B) {
	args := []string{"-port", "0", "-log-format", "json", "-answer-cache-bytes", "0", "-seed-demo=false"}
	start := time.Now()
	single := seedScale(b, args, 0)
	seedSingle := time.Since(start)
	start = time.Now()
	platform := seedScale(b, args, scalePublications)
	seeded := time.Since(start)
	b.Logf("seeded: single blog in %v, %d publications × %d posts in %v", seedSingle.Round(time.Millisecond), scalePublications, scalePosts, seeded.Round(time.Second))

	// The pages measured: the single blog's, one publication's of the
	// platform and the platform's default publication's, which has the
	// same posts, served as the single blog's is.
	servers := map[string]string{}
	for _, dir := range []string{single, platform} {
		base, logs, stop := startServer(b, args, map[string]string{"DATA_DIR": dir})
		defer stop()
		if logs.has("renderer changed") {
			b.Fatal("the server renders the seeded bodies again")
		}
		servers[dir] = base
	}
	sites := []struct {
		name, host, base string
		figures          []scaleFigures
	}{
		{name: "single", host: "localhost", base: servers[single]},
		{name: "platform", host: scaleHost(scaleMeasured), base: servers[platform]},
		{name: "platform-default", host: "localhost", base: servers[platform]},
	}
	for i := range sites {
		send := scaleSender(sites[i].base, sites[i].host)
		for range 50 { // warm: the publication's site built, the engine's pages read
			if err := send(); err != nil {
				b.Fatalf("%s: %v", sites[i].name, err)
			}
		}
	}
	round := 0
	for b.Loop() {
		order := []int{0, 1, 2}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			f := measureScale(b, scaleSender(sites[i].base, sites[i].host))
			sites[i].figures = append(sites[i].figures, f)
			b.Logf("round %d %s: p50 %.2f ms, p99 %.2f ms, c16 %.0f/s", round, sites[i].name, f.p50, f.p99, f.rate)
		}
		round++
	}
	b.StopTimer()
	b.ReportMetric(seeded.Seconds(), "seed-s")
	s := medianScale(sites[0].figures)
	for _, site := range sites {
		m := medianScale(site.figures)
		b.ReportMetric(m.p50, site.name+"-p50-ms")
		b.ReportMetric(m.p99, site.name+"-p99-ms")
		b.ReportMetric(m.rate, site.name+"-c16-req/s")
		if site.name == "single" {
			continue
		}
		b.ReportMetric(m.p50/s.p50, site.name+"/single-p50")
		b.ReportMetric(m.p99/s.p99, site.name+"/single-p99")
		b.ReportMetric(m.rate/s.rate, site.name+"/single-c16")
	}
}

// scaleFigures are one measurement of a category page: its p50 and p99
// in milliseconds, one request at a time, and the answers a second of
// 16 clients.
type scaleFigures struct{ p50, p99, rate float64 }

// medianScale returns the median of each figure of fs.
func medianScale(fs []scaleFigures) scaleFigures {
	median := func(get func(scaleFigures) float64) float64 {
		v := make([]float64, len(fs))
		for i, f := range fs {
			v[i] = get(f)
		}
		slices.Sort(v)
		if len(v)%2 == 0 {
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return v[len(v)/2]
	}
	return scaleFigures{
		p50:  median(func(f scaleFigures) float64 { return f.p50 }),
		p99:  median(func(f scaleFigures) float64 { return f.p99 }),
		rate: median(func(f scaleFigures) float64 { return f.rate }),
	}
}

// measureScale sends 300 category pages one at a time, then sends them
// from 16 clients for two seconds.
func measureScale(b *testing.B, send func() error) scaleFigures {
	took := make([]time.Duration, 300)
	for i := range took {
		start := time.Now()
		if err := send(); err != nil {
			b.Fatal(err)
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	answered := floodFor(b, send, 2*time.Second)
	return scaleFigures{p50: ms(took[len(took)/2]), p99: ms(took[len(took)*99/100]), rate: float64(answered) / 2}
}

// scaleSender returns a function that asks the server at base for the
// category page of "go" at host and fails unless it answers its 20 posts.
func scaleSender(base, host string) func() error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	body, _ := json.Marshal(map[string]any{"query": scalePage, "variables": map[string]any{"slug": "go"}})
	return func() error {
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var res struct {
			Errors []json.RawMessage
			Data   struct {
				Category struct {
					Posts struct{ Edges []json.RawMessage }
				}
			}
		}
		if err := json.Unmarshal(answer, &res); err != nil || resp.StatusCode != http.StatusOK || len(res.Errors) > 0 || len(res.Data.Category.Posts.Edges) != 20 {
			return fmt.Errorf("category page at %s: status %d, %.300s", host, resp.StatusCode, answer)
		}
		return nil
	}
}

// seedScale writes a table for the server of args in a data directory of
// its own, in memory where the machine has one, and returns the
// directory: a single blog of scalePosts posts (the default
// publication's), and publications more, each with the same posts at its
// host (scaleHost).
// It writes through the Store, as the server's table is readied (made,
// migrated, the renderer claimed), without a stream, so the server's
// change feed starts after the seeded posts.
func seedScale(b *testing.B, args []string, publications int) string {
	b.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp(memoryDir(), "blog-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	cfg, err := parseConfig(args, func(k string) string {
		if k == "DATA_DIR" {
			return dir
		}
		return ""
	}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	engine, err := embedded.Open(embedded.Options{Path: filepath.Join(dir, dataFile)})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close()
	client, err := storage.NewClient(ctx, storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: engine}})
	if err != nil {
		b.Fatal(err)
	}
	store := storage.New(client, cfg.table, storeOptions(cfg)...)
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := store.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := store.ClaimRendererAlone(ctx); err != nil {
		b.Fatal(err)
	}
	if err := seedScalePosts(ctx, store); err != nil {
		b.Fatal(err)
	}
	// Publications are seeded by a few writers at once, whose
	// transactions the engine commits together.
	next := atomic.Int64{}
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < publications && failed.Load() == nil; i = int(next.Add(1)) - 1 {
				pub, err := store.CreatePublication(ctx, storage.NewPublication{Slug: fmt.Sprintf("pub-%04d", i), Title: "A publication", Hosts: []string{scaleHost(i)}})
				if err == nil {
					var in *storage.Store
					if in, err = store.In(pub.ID); err == nil {
						err = seedScalePosts(ctx, in)
					}
				}
				if err != nil {
					failed.Store(fmt.Errorf("publication %d: %w", i, err))
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return dir
}

// seedScalePosts writes the posts of tests' BenchmarkCategoryPage, and
// more of them: two categories and two authors, and scalePosts published
// posts, every one in "go" and every other one in "dynamodb" too, an hour
// apart; then the lists' numbered pages, as the pages worker would.
func seedScalePosts(ctx context.Context, store *storage.Store) error {
	for _, slug := range []string{"go", "dynamodb"} {
		if _, err := store.CreateCategory(ctx, storage.NewCategory{Slug: slug, Name: strings.ToUpper(slug[:1]) + slug[1:]}); err != nil {
			return err
		}
	}
	var authors []string
	for _, name := range []string{"Ada Lovelace", "Grace Hopper"} {
		a, err := store.CreateAuthor(ctx, storage.NewAuthor{Name: name})
		if err != nil {
			return err
		}
		authors = append(authors, a.ID)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range scalePosts {
		p, err := store.CreatePost(ctx, storage.NewPost{
			AuthorID: authors[i%2], Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i),
			Excerpt: "What the post is about.", Body: strings.Repeat("Markdown text. ", 200),
			Categories: []string{"go", "dynamodb"}[:1+i%2],
		})
		if err != nil {
			return err
		}
		if _, err := store.Publish(ctx, storage.PublishPost{ID: p.ID, At: at.Add(time.Duration(i) * time.Hour)}); err != nil {
			return err
		}
	}
	return store.SyncAllPages(ctx)
}

// memoryDir returns a directory in memory where the machine has one
// (as the embedded engine's OpenMemory looks for), or the default
// temporary directory.
func memoryDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return ""
}
