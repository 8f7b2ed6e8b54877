package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// benchPublications is how many publications' indexes
// BenchmarkSearchPublications opens (SEARCH_BENCH_PUBLICATIONS).
func benchPublications() int {
	if n, err := strconv.Atoi(os.Getenv("SEARCH_BENCH_PUBLICATIONS")); err == nil && n > 0 {
		return n
	}
	return 50
}

// BenchmarkSearchPublications measures what an open publication's index
// of 100 posts holds in memory (heap, after a search of it), on disk and
// in memory (Options.Dir ""), and what opening one kept on disk and
// searching it costs: the figures of -search-open-indexes. It reports
// the heap of 1,000 such indexes open at once, the bound's default
// (DefaultMaxOpen) and every publication of a platform of 1,000.
func BenchmarkSearchPublications(b *testing.B) {
	posts := benchPosts(100)
	for _, where := range []string{"disk", "memory"} {
		b.Run(where, func(b *testing.B) {
			n := benchPublications()
			parent := ""
			if where == "disk" {
				parent = b.TempDir()
			}
			ctx := context.Background()
			req := Request{Query: strings.Fields(posts[0].Title)[0], First: 10}
			var perIndex, disk float64
			var open time.Duration
			for b.Loop() {
				before := heapInUse()
				svcs := make([]*Service, n)
				for i := range svcs {
					svcs[i] = benchPublication(b, parent, i, posts)
					if _, err := svcs[i].Search(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
				perIndex = float64(heapInUse()-before) / float64(n)
				size, _ := svcs[0].Size()
				disk = float64(size)
				for _, s := range svcs {
					s.Close()
				}
				if parent != "" {
					// Opened again from its directory, as after it was
					// closed for others, and searched.
					start := time.Now()
					s, err := New(storage.New(nil, "bench"), Options{Dir: pubBenchDir(parent, 0), Table: "bench"})
					if err == nil {
						_, err = s.Search(ctx, req)
					}
					if err != nil {
						b.Fatal(err)
					}
					open = time.Since(start)
					s.Close()
				}
			}
			b.ReportMetric(perIndex/1024, "KB-heap/index")
			b.ReportMetric(perIndex*1000/(1<<20), "MB-heap/1000-indexes")
			b.ReportMetric(perIndex*DefaultMaxOpen/(1<<20), "MB-heap/default-bound")
			if parent != "" {
				b.ReportMetric(disk/1024, "KB-on-disk/index")
				b.ReportMetric(float64(open.Microseconds())/1000, "ms-to-reopen-and-search")
			}
		})
	}
}

// pubBenchDir is the directory of the publication i's index under
// parent.
func pubBenchDir(parent string, i int) string {
	return filepath.Join(parent, publicationsDir, fmt.Sprintf("p%d", i))
}

// benchPublication returns a Service of posts, in its own directory
// under parent ("" in memory), its segments written.
func benchPublication(b *testing.B, parent string, i int, posts []*storage.Post) *Service {
	dir := ""
	if parent != "" {
		dir = pubBenchDir(parent, i)
		_ = os.RemoveAll(dir)
	}
	s, err := New(storage.New(nil, "bench"), Options{Dir: dir, Table: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Index(posts); err != nil {
		b.Fatal(err)
	}
	if dir != "" {
		// An index open for a while has written its segments.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			stats, _ := s.cur.b.StatsMap()["index"].(map[string]any)
			if mem, _ := stats["num_root_memorysegments"].(uint64); mem == 0 {
				break
			}
		}
	}
	return s
}

// heapInUse returns the heap's bytes in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
