package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// Benchmarks of the index (docs/performance.md, Search): indexing generated
// posts, searching them at concurrency 1 (p50/p95) and 16 (searches a
// second), and the index's size. SEARCH_BENCH_POSTS sets how many posts
// (default 100,000); the corpus is built once per process, in a
// temporary directory, or in SEARCH_BENCH_DIR, where it is kept and
// used again by the next run that asks for as many posts (remove the
// directory after a change of the index's mapping).
//
//	SEARCH_BENCH_POSTS=20000 go test -run '^$' -bench . -benchtime 1x ./search

// benchPosts returns n generated posts: a vocabulary of 5,000 made-up
// words with Zipf-like frequencies (s = 1.1), the 30 most frequent left
// out as stop words, titles of 6 words, bodies of about
// 300 words in paragraphs, 1 to 3 of 20 categories, 50 authors; a fixed
// seed makes every run the same.
func benchPosts(n int) []*storage.Post {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	syll := []string{"ka", "lo", "mi", "ren", "to", "sha", "vel", "dor", "in", "qua", "ber", "nu", "tis", "gar", "on", "pe"}
	for i := range vocab {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		vocab[i] = b.String() + strconv.Itoa(i%7)
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			// The 30 most frequent words stand for English's stop words,
			// which the analyzer drops: they are left out.
			rank := zipf.Uint64()
			for rank < 30 {
				rank = zipf.Uint64()
			}
			w[i] = vocab[rank]
		}
		return strings.Join(w, " ")
	}
	posts := make([]*storage.Post, n)
	for i := range posts {
		p := &storage.Post{ID: fmt.Sprintf("p%07d", i), Title: words(6), AuthorID: fmt.Sprintf("a%02d", i%50), AuthorName: "Author " + strconv.Itoa(i%50)}
		var body []string
		for range 5 {
			body = append(body, words(60))
		}
		p.Body = strings.Join(body, "\n\n")
		for c := range 1 + r.IntN(3) {
			slug := fmt.Sprintf("cat-%02d", (i+c*7)%20)
			p.Categories = append(p.Categories, storage.CategoryRef{Slug: slug, Name: "Category " + slug})
		}
		posts[i] = p
	}
	return posts
}

func benchSize() int {
	if n, err := strconv.Atoi(os.Getenv("SEARCH_BENCH_POSTS")); err == nil && n > 0 {
		return n
	}
	return 100000
}

var corpus struct {
	once  sync.Once
	svc   *Service
	posts []*storage.Post
	took  time.Duration
	cpu   time.Duration
	err   error
	// segments is how many the index holds once its merges settled.
	segments int
	dir      string
	kept     bool // dir is SEARCH_BENCH_DIR
}

// TestMain removes the benchmarks' corpus (half a gigabyte at 100,000
// posts) when the tests and benchmarks end.
func TestMain(m *testing.M) {
	code := m.Run()
	if corpus.svc != nil {
		corpus.svc.Close()
	}
	if corpus.dir != "" && !corpus.kept {
		_ = os.RemoveAll(corpus.dir)
	}
	os.Exit(code)
}

// settle waits (up to 2 minutes) until the index's background merges
// after indexing have settled: no segment in memory and the count the
// same for a second. A server's index has settled long before most of
// its searches; the searches' CPU time would otherwise include merging.
func settle(s *Service) int {
	count := func() (segments int, inMemory bool) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		stats, _ := s.cur.b.StatsMap()["index"].(map[string]any)
		file, _ := stats["num_root_filesegments"].(uint64)
		mem, _ := stats["num_root_memorysegments"].(uint64)
		return int(file + mem), mem > 0
	}
	last, same := -1, 0
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && same < 4; {
		time.Sleep(250 * time.Millisecond)
		n, inMemory := count()
		if n == last && !inMemory {
			same++
		} else {
			last, same = n, 0
		}
	}
	return last
}

// cpuTime returns the CPU time the process used so far: on a machine
// shared with other work, what a benchmark costs in CPU tells more than
// the time it took.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchService returns the service over the generated corpus, indexed
// once per process.
func benchService(b *testing.B) *Service {
	corpus.once.Do(func() {
		dir, kept := os.Getenv("SEARCH_BENCH_DIR"), true
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "search-bench-"); err != nil {
				corpus.err = err
				return
			}
			kept = false
		}
		corpus.dir, corpus.kept = dir, kept
		corpus.posts = benchPosts(benchSize())
		corpus.svc, corpus.err = New(storage.New(nil, "bench"), Options{Dir: dir, Table: "bench"})
		if corpus.err != nil {
			return
		}
		_, n := corpus.svc.Size()
		if n == uint64(len(corpus.posts)) {
			// Kept from a run before: not measured again.
			corpus.segments = settle(corpus.svc)
			return
		}
		if n > 0 {
			corpus.err = fmt.Errorf("%s holds an index of %d posts, not %d: remove it", dir, n, len(corpus.posts))
			return
		}
		start, cpu := time.Now(), cpuTime()
		corpus.err = corpus.svc.Index(corpus.posts)
		corpus.took, corpus.cpu = time.Since(start), cpuTime()-cpu
		corpus.segments = settle(corpus.svc)
	})
	if corpus.err != nil {
		b.Fatal(corpus.err)
	}
	return corpus.svc
}

// BenchmarkIndex reports how long indexing the corpus took, and the
// index's size.
func BenchmarkIndex(b *testing.B) {
	s := benchService(b)
	size, docs := s.Size()
	b.ReportMetric(float64(docs), "posts")
	b.ReportMetric(corpus.took.Seconds(), "s-to-index")
	b.ReportMetric(float64(docs)/corpus.took.Seconds(), "posts/s")
	b.ReportMetric(corpus.cpu.Seconds(), "cpu-s-to-index")
	b.ReportMetric(float64(size)/(1<<20), "MB-on-disk")
	b.ReportMetric(float64(corpus.segments), "segments")
}

// benchQueries are searches a reader types: common and rarer words, two
// and three words, a phrase, a typo, a prefix, a category filter; with
// the kind of each.
func benchQueries(posts []*storage.Post) ([]Request, []string) {
	var qs []Request
	var kinds []string
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		p := posts[r.IntN(len(posts))]
		w := strings.Fields(p.Body)
		t := strings.Fields(p.Title)
		kind := r.IntN(6)
		kinds = append(kinds, queryKinds[kind])
		switch kind {
		case 0:
			qs = append(qs, Request{Query: t[0]})
		case 1:
			qs = append(qs, Request{Query: t[1] + " " + t[2]})
		case 2:
			qs = append(qs, Request{Query: `"` + w[10] + " " + w[11] + `"`})
		case 3:
			typo := []rune(w[20])
			if len(typo) > 4 {
				typo = append(typo[:2], typo[3:]...)
			}
			qs = append(qs, Request{Query: string(typo)})
		case 4:
			qs = append(qs, Request{Query: t[3] + " " + w[5] + " " + w[30]})
		default:
			qs = append(qs, Request{Query: t[0], Category: p.Categories[0].Slug})
		}
	}
	for i := range qs {
		qs[i].First, qs[i].Facets = 10, true
	}
	return qs, kinds
}

// queryKinds name benchQueries' kinds of query.
var queryKinds = []string{"word", "two-words", "phrase", "typo", "three-words", "word-in-category"}

// BenchmarkSearchC1 searches one at a time and reports the p50 and p95
// latency, and the p95 of the CPU time of a search (cpu-p95-ms: its
// thread's, which a shared machine does not inflate as it does the
// latency; the collector's work on other threads is not in it); every
// search is ranked afresh (as if the index changed
// before each), not from a repeated search's ranking.
func BenchmarkSearchC1(b *testing.B) { searchC1(b, false) }

// BenchmarkSearchRepeatedC1 is BenchmarkSearchC1 for searches made
// before since the index last changed (a search box's common queries):
// their rankings are reused.
func BenchmarkSearchRepeatedC1(b *testing.B) { searchC1(b, true) }

// BenchmarkSearchC16 searches 16 at a time and reports searches a second,
// each ranked afresh.
func BenchmarkSearchC16(b *testing.B) { searchC16(b, false) }

// BenchmarkSearchRepeatedC16 is BenchmarkSearchC16 for repeated searches.
func BenchmarkSearchRepeatedC16(b *testing.B) { searchC16(b, true) }

// prepare returns the benchmark's queries; for repeated ones it makes
// each once first.
func prepare(b *testing.B, s *Service, repeated bool) []Request {
	qs, _ := benchQueries(corpus.posts)
	s.snaps.clear()
	forgetWeights(s)
	if repeated {
		for _, q := range qs {
			if _, err := s.Search(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
	}
	return qs
}

func searchC1(b *testing.B, repeated bool) {
	s := benchService(b)
	qs := prepare(b, s, repeated)
	ctx := context.Background()
	var took, own []time.Duration
	// The searches run on this goroutine's thread alone: its CPU time
	// is what each search cost, whatever else the machine runs.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		if !repeated {
			s.changes.Add(1)
		}
		start, thread := time.Now(), threadCPUTime()
		if _, err := s.Search(ctx, qs[i%len(qs)]); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		own = append(own, threadCPUTime()-thread)
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(len(took)), "cpu-ms/search")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
	slices.Sort(own)
	b.ReportMetric(float64(own[len(own)*95/100].Microseconds())/1000, "cpu-p95-ms")
}

// threadCPUTime returns the CPU time the calling thread used so far.
func threadCPUTime() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	_ = syscall.Getrusage(rusageThread, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func searchC16(b *testing.B, repeated bool) {
	s := benchService(b)
	qs := prepare(b, s, repeated)
	ctx := context.Background()
	var mu sync.Mutex
	next := 0
	b.SetParallelism(max(1, 16/runtimeProcs()))
	start, cpu := time.Now(), cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			q := qs[next%len(qs)]
			next++
			mu.Unlock()
			if !repeated {
				s.changes.Add(1)
			}
			if _, err := s.Search(ctx, q); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "searches/s")
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/search")
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// forgetWeights empties the index's weights of common words
// (weights.go), as a server's are when it starts: with -benchtime 200x
// each query is made once, and only the words they share are read from
// memory.
func forgetWeights(s *Service) { s.cur.weights.forget() }

// BenchmarkSearchByKind makes each search of BenchmarkSearchC1 afresh,
// one at a time, and reports the mean CPU time of each kind of query
// (its thread's: <kind>-cpu-ms).
func BenchmarkSearchByKind(b *testing.B) {
	s := benchService(b)
	qs, kinds := benchQueries(corpus.posts)
	s.snaps.clear()
	forgetWeights(s)
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	took := map[string]time.Duration{}
	count := map[string]int{}
	for i := 0; b.Loop(); i++ {
		q := qs[i%len(qs)]
		s.changes.Add(1)
		start := threadCPUTime()
		if _, err := s.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		took[kinds[i%len(qs)]] += threadCPUTime() - start
		count[kinds[i%len(qs)]]++
	}
	for k, d := range took {
		b.ReportMetric(float64(d.Microseconds())/1000/float64(count[k]), k+"-cpu-ms")
	}
}
