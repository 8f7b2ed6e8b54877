package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
)

// Queries of BenchmarkNoisyNeighbour: the measured page, on
// demo.localhost, and the flood's, on notes.localhost.
const (
	noisyPage  = `{ category(slug: "go") { name posts(first: 20) { edges { node { title slug excerpt publishedAt commentCount author { name } categories { name } } } } } }`
	noisyFlood = `{ category(slug: "trails") { name posts(first: 20) { edges { node { title slug excerpt publishedAt commentCount author { name } categories { name } } } } } }`
)

// floodEnv, when set, makes the test binary a flood of
// BenchmarkNoisyNeighbour's outside cases (TestMain): its value is
// "<clients> <server's base URL>".
const floodEnv = "BLOG_BENCH_FLOOD"

func TestMain(m *testing.M) {
	if v := os.Getenv(floodEnv); v != "" {
		floodProcess(v)
		return
	}
	os.Exit(m.Run())
}

// floodProcess floods the server of spec (floodEnv) until its standard
// input closes, then prints the answers it got and the refusals.
func floodProcess(spec string) {
	n, base, _ := strings.Cut(spec, " ")
	clients, err := strconv.Atoi(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	ok, refused := flood(ctx, noisySender(base), clients)
	fmt.Println(ok, refused)
}

// noisySender returns a function that sends query to host on base and
// returns the status of the answer, read whole.
func noisySender(base string) func(host, query string) (int, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func(host, query string) (int, error) {
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
}

// flood sends noisyFlood to notes.localhost from clients clients, each
// as soon as its last answer came, until ctx ends, and returns the
// answers (200) and the refusals (429, 503) they got.
func flood(ctx context.Context, send func(host, query string) (int, error), clients int) (ok, refused int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				code, _ := send("notes.localhost", noisyFlood)
				mu.Lock()
				switch code {
				case http.StatusOK:
					ok++
				case http.StatusTooManyRequests, http.StatusServiceUnavailable:
					refused++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ok, refused
}

// floodOutside starts a flood of clients clients in a process of its
// own, and returns the function that stops it and returns its counts.
func floodOutside(b *testing.B, base string, clients int) func() (ok, refused int) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %s", floodEnv, clients, base))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return func() (ok, refused int) {
		stdin.Close()
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if err := cmd.Wait(); err != nil {
			b.Fatalf("flood process: %v", err)
		}
		if _, err := fmt.Sscan(line, &ok, &refused); err != nil {
			b.Fatalf("flood process printed %q: %v", line, err)
		}
		return ok, refused
	}
}

// BenchmarkNoisyNeighbour measures the demo blog's category page (the
// call budget's query, 20 posts) on demo.localhost, one request after
// another, alone and then while 16 clients flood the other demo
// publication (notes.localhost) with its own category page as fast as
// they are answered, on the same server: the embedded engine in memory,
// or the test's DynamoDB (dynamotest.Endpoint), each case on a table of
// its own seeded with the demo platform. Once the server has answered
// the page for 3 seconds (its start's work done), it measures the page
// noisyIdleRequests times alone, then b.N times during the flood, and
// reports both p50s and p99s, the p99s' ratio, and the flood's answers
// (docs/benchmarks-publications.md):
//
//	go test -run '^$' -bench NoisyNeighbour -benchtime 1000x -count 2 .
//
// The cases:
//
//   - flood: without the admission stage (-execution-slots -1);
//   - flood-admitted: the default admission stage (-execution-slots,
//     -execution-queue, -publication-execution-slots);
//   - flood-unshared: the admission stage without a publication's share
//     (-publication-execution-slots -1), fair turns only;
//   - the outside/ cases: the flood from a process of its own (the test
//     binary again, TestMain), sharing the machine's cores with the
//     server but not its Go scheduler, as a flood from another process
//     on the machine would; the others flood from the benchmark's own
//     process, whose clients' goroutines queue with the server's.
func BenchmarkNoisyNeighbour(b *testing.B) {
	const clients = 16
	unbounded := []string{"-execution-slots", "-1"}
	unshared := []string{"-publication-execution-slots", "-1"}
	for _, c := range []struct {
		name    string
		outside bool
		args    []string
	}{
		{"flood", false, unbounded},
		{"flood-admitted", false, nil},
		{"flood-unshared", false, unshared},
		{"outside/flood", true, unbounded},
		{"outside/flood-admitted", true, nil},
		{"outside/flood-unshared", true, unshared},
	} {
		b.Run(c.name, func(b *testing.B) {
			args, env := []string{"-port", "0", "-log-format", "json"}, map[string]string(nil)
			if dynamotest.Endpoint(b) != "" {
				args, env, _ = platformBackend(b)
			}
			base, _, stop := startServer(b, append(args, append([]string{"-answer-cache-bytes", "0"}, c.args...)...), env)
			defer stop()
			// Answers are not cached: every request is built.
			send := noisySender(base)
			page := func() time.Duration {
				start := time.Now()
				if code, err := send("demo.localhost", noisyPage); err != nil || code != http.StatusOK {
					b.Fatalf("category page: %d %v", code, err)
				}
				return time.Since(start)
			}
			for start := time.Now(); time.Since(start) < 3*time.Second; {
				page()
			}
			idle := make([]time.Duration, noisyIdleRequests)
			for i := range idle {
				idle[i] = page()
			}
			var stopFlood func() (int, int)
			switch {
			case c.outside:
				stopFlood = floodOutside(b, base, clients)
			default:
				ctx, cancel := context.WithCancel(context.Background())
				var ok, refused int
				done := make(chan struct{})
				go func() {
					ok, refused = flood(ctx, send, clients)
					close(done)
				}()
				stopFlood = func() (int, int) {
					cancel()
					<-done
					return ok, refused
				}
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				took = append(took, page())
			}
			b.StopTimer()
			ok, refused := stopFlood()
			p50, p99 := percentiles(took)
			idle50, idle99 := percentiles(idle)
			b.ReportMetric(idle50, "idle-p50-ms")
			b.ReportMetric(idle99, "idle-p99-ms")
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.ReportMetric(p99/idle99, "p99/idle")
			b.ReportMetric(float64(ok), "flood-200s")
			b.ReportMetric(float64(refused), "flood-refused")
		})
	}
}

// noisyIdleRequests are the requests BenchmarkNoisyNeighbour measures
// alone before each flood.
const noisyIdleRequests = 1000

// percentiles returns the p50 and p99 of took in milliseconds, sorting
// it.
func percentiles(took []time.Duration) (p50, p99 float64) {
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(took[len(took)/2]), ms(took[len(took)*99/100])
}
