// Command bench measures the GraphQL server against its floor, the same
// DynamoDB requests made directly through the store.
//
// It seeds a fixed dataset (see dataset.go) into a fresh table, serves the
// real handler (graph.NewHandler) on a loopback HTTP server, and drives the
// frontend's operations through it: the category page, the post page, the
// author page, the feed and addComment. For each it reports the DynamoDB
// requests per operation, p50/p99 latency at concurrency 1, and throughput
// and p50/p99 at concurrency 16, next to the floor's, in the same run and on
// the same backend. Every response is checked; any error ends the run
// without a result.
//
// Usage:
//
//	go run ./cmd/bench -backend embedded    # its data file in a fresh temporary directory
//	scripts/dynamodb-local.sh run 8765 -- go run ./cmd/bench -backend local
//	go run ./cmd/bench -answers -ops "category page"   # the cached category page
//
// scripts/bench.sh runs both. Results go to bench/results-<backend>.json and
// into the table of that backend in BENCHMARKS.md; those of a run with
// -ops, -answers or -stream only to where -out and -markdown say.
//
// With -burst N it measures the comment burst instead (burst.go): N
// comments a second on one post from -burst-clients clients for
// -burst-for, with the change feed's counts worker running, and the time
// from the last answer until every list shows the final count; results go
// to bench/burst-<backend>.json. scripts/bench.sh -burst 200 runs it on
// both backends.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tuning"
)

type config struct {
	backend     string
	endpoint    string
	posts       int
	warmup      time.Duration
	samples     int
	concurrency int
	duration    time.Duration
	rounds      int
	out         string
	markdown    string
	cpuProfile  string
	dataDir     string
	// burst, when above zero, runs the comment burst (burst.go) at that
	// many comments a second instead of the operations.
	burst        int
	burstClients int
	burstFor     time.Duration
	// answers serves anonymous reads from the answer cache; stream
	// makes the table with a stream; ops, when not empty, are the names
	// of the only operations measured.
	answers bool
	stream  bool
	ops     []string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The garbage collector as the server sets it.
	gc := tuning.Apply(os.Getenv)
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	var res *results
	var burst *burstResult
	switch {
	case err == nil && cfg.burst > 0:
		if burst, err = runBurst(ctx, cfg, os.Stderr); err == nil {
			err = burst.write(cfg)
		}
	case err == nil:
		if res, err = run(ctx, cfg, gc, os.Stderr); err == nil {
			err = res.write(cfg)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&c.backend, "backend", "embedded", "`backend`: embedded (in-process engine) or local (DynamoDB Local at -endpoint)")
	fs.StringVar(&c.endpoint, "endpoint", os.Getenv("DYNAMODB_ENDPOINT"), "DynamoDB Local `URL` for -backend local (default $DYNAMODB_ENDPOINT)")
	fs.IntVar(&c.posts, "posts", defaultPosts, "posts in the dataset; a tenth of them get comments")
	fs.DurationVar(&c.warmup, "warmup", -1, "load before measuring; DynamoDB Local's JIT needs ~40s (default 40s local, 5s embedded)")
	fs.IntVar(&c.samples, "samples", 300, "calls per operation at concurrency 1, server and floor each")
	fs.IntVar(&c.concurrency, "concurrency", 16, "workers of the throughput rounds")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "length of each throughput round, server and floor each")
	fs.IntVar(&c.rounds, "rounds", 3, "throughput rounds per operation, alternating floor and server")
	fs.StringVar(&c.out, "out", "", "results `file` (default bench/results-<backend>.json; none for a run with -ops, -answers or -stream)")
	fs.StringVar(&c.markdown, "markdown", "BENCHMARKS.md", "`file` whose table for the backend is replaced with the results; empty: none (the default for a run with -ops, -answers or -stream)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the measurements (after the warm-up) to `file`")
	fs.StringVar(&c.dataDir, "data", "", "`directory` of the embedded engine's data file, as the server keeps it (default a fresh temporary one, removed after)")
	fs.IntVar(&c.burst, "burst", 0, "run the comment burst instead: `comments` a second on one post, and the time until every list shows the final count (0: the operations)")
	fs.IntVar(&c.burstClients, "burst-clients", 16, "clients of the comment burst")
	fs.DurationVar(&c.burstFor, "burst-for", 10*time.Second, "length of the comment burst")
	fs.BoolVar(&c.answers, "answers", false, "serve anonymous reads from the answer cache (-answer-cache-bytes of the server): the cached pages")
	fs.BoolVar(&c.stream, "stream", false, "make the table with a stream, as the server's is (its change feed reads it): the writes of server and floor pay for it")
	ops := fs.String("ops", "", "comma-separated `names` of the only operations to measure, e.g. \"category page\" (default all)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *ops != "" {
		c.ops = strings.Split(*ops, ",")
	}
	// A run of some operations, or of another setup than the tables',
	// writes the results file and the table only where its flags say:
	// by default they hold the full runs.
	if c.burst == 0 && (c.ops != nil || c.answers || c.stream) {
		named := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { named[f.Name] = true })
		if !named["out"] {
			c.out = "-"
		}
		if !named["markdown"] {
			c.markdown = ""
		}
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.backend != "embedded" && c.backend != "local":
		return nil, fmt.Errorf("-backend %q: must be embedded or local", c.backend)
	case c.backend == "local" && c.endpoint == "":
		return nil, errors.New("-backend local needs -endpoint or DYNAMODB_ENDPOINT (scripts/dynamodb-local.sh run PORT -- ...)")
	case c.posts < 100 || c.samples < 10 || c.concurrency < 1 || c.rounds < 1 || c.duration <= 0:
		return nil, errors.New("-posts must be at least 100, -samples at least 10, -concurrency and -rounds at least 1, -duration positive")
	}
	if c.warmup < 0 {
		c.warmup = 5 * time.Second
		if c.backend == "local" {
			c.warmup = 40 * time.Second
		}
	}
	switch {
	case c.burst < 0 || (c.burst > 0 && (c.burstClients < 1 || c.burstFor <= 0)):
		return nil, errors.New("-burst must not be negative; with it, -burst-clients at least 1 and -burst-for positive")
	case c.out == "-":
		c.out = ""
	case c.out == "" && c.burst > 0:
		c.out = "bench/burst-" + c.backend + ".json"
	case c.out == "":
		c.out = "bench/results-" + c.backend + ".json"
	}
	return c, nil
}

// run seeds, measures and returns the results; it fails on the first
// error any call returns.
func run(ctx context.Context, cfg *config, gc tuning.GC, log io.Writer) (*results, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	load := loadAverage()
	b, err := openBackend(ctx, cfg, cfg.dataDir, "bench")
	if err != nil {
		return nil, err
	}
	defer b.close()
	dataFile := b.dataFile
	var storeOpts []storage.Option
	if cfg.stream {
		storeOpts = append(storeOpts, storage.WithStream())
	}
	store := storage.New(b.db, b.table, storeOpts...)
	if err := store.CreateTable(ctx); err != nil {
		return nil, err
	}

	data := newDataset(cfg.posts)
	start := time.Now()
	if err := data.seed(ctx, store); err != nil {
		return nil, err
	}
	seeded := time.Since(start)
	logf("seeded %d authors, %d categories, %d posts, %d comments in %s", numAuthors, len(data.categories), len(data.posts),
		data.comments(), seeded.Round(time.Millisecond))

	secret := make([]byte, auth.MinSecretBytes)
	_, _ = rand.Read(secret)
	verifier, err := auth.NewVerifier(auth.Config{Secret: secret})
	if err != nil {
		return nil, err
	}
	tokens, err := data.tokens(secret)
	if err != nil {
		return nil, err
	}
	counts := newRequestCounts()
	opts := graph.HandlerOptions{
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Verifier: verifier,
		ShowCost: cfg.backend == "embedded", // as the server runs
	}
	if cfg.answers {
		opts.HTTP.Answers = gqlhttp.NewAnswerCache(gqlhttp.DefaultAnswerCacheBytes, nil)
	}
	handler := graph.NewHandler(store, opts)
	srv := httptest.NewServer(counts.middleware(handler))
	defer srv.Close()
	client := newClient(srv.URL, cfg.concurrency)

	t, err := discover(ctx, client, store, data, tokens)
	if err != nil {
		return nil, fmt.Errorf("find the targets through the API: %w", err)
	}
	ops := operations(store, t)
	if len(cfg.ops) > 0 {
		ops = slices.DeleteFunc(ops, func(op operation) bool { return !slices.Contains(cfg.ops, op.name) })
		if len(ops) == 0 {
			return nil, fmt.Errorf("-ops %q: no such operation", cfg.ops)
		}
	}
	var next atomic.Int64
	res := newResults(cfg, data, seeded, load, gc)

	for _, op := range ops {
		r := res.op(op)
		for _, first := range pageSizes(op) {
			if err := client.do(ctx, op, first, int(next.Add(1)), fmt.Sprint(first)); err != nil {
				return nil, fmt.Errorf("%s: %w", op.name, err)
			}
			r.Requests.Server[fmt.Sprint(first)] = counts.lastOf(op.name, fmt.Sprint(first))
		}
		fctx, fc := storage.WithRequestCounter(ctx)
		if err := op.floor(fctx, int(next.Add(1))); err != nil {
			return nil, fmt.Errorf("%s floor: %w", op.name, err)
		}
		r.Requests.Floor = fc.Total()
	}

	logf("warming up for %s", cfg.warmup)
	if _, _, err := concurrent(ctx, cfg.concurrency, cfg.warmup, func(ctx context.Context, i int) error {
		op := ops[i%len(ops)]
		if i/len(ops)%2 == 0 {
			return op.floor(ctx, i)
		}
		return client.do(ctx, op, 20, i, "")
	}, &next); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}

	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	for _, op := range ops {
		r := res.op(op)
		server, floor := client.caller(op), call(op.floor)
		ls, lf, err := sequential(ctx, cfg.samples, server, floor, &next)
		if err != nil {
			return nil, fmt.Errorf("%s at concurrency 1: %w", op.name, err)
		}
		r.Sequential = comparison(ls.stats(0), lf.stats(0), func(s stats) float64 { return s.P50Millis })
		logf("%-14s c1   server p50 %6.2f ms  floor p50 %6.2f ms  ratio %.2f", op.name,
			r.Sequential.Server.P50Millis, r.Sequential.Floor.P50Millis, r.Sequential.Ratio)
		for round := range cfg.rounds {
			lf, ef, err := concurrent(ctx, cfg.concurrency, cfg.duration, floor, &next)
			if err != nil {
				return nil, fmt.Errorf("%s floor round %d: %w", op.name, round+1, err)
			}
			ls, es, err := concurrent(ctx, cfg.concurrency, cfg.duration, server, &next)
			if err != nil {
				return nil, fmt.Errorf("%s round %d: %w", op.name, round+1, err)
			}
			c := comparison(ls.stats(es), lf.stats(ef), func(s stats) float64 { return s.PerSecond })
			r.Rounds = append(r.Rounds, c)
			logf("%-14s c%-3d server %7.0f/s p50 %6.2f p99 %6.2f ms  floor %7.0f/s  ratio %.2f", op.name, cfg.concurrency,
				c.Server.PerSecond, c.Server.P50Millis, c.Server.P99Millis, c.Floor.PerSecond, c.Ratio)
		}
		r.Requests.Min, r.Requests.Max = counts.rangeOf(op.name)
	}
	if cfg.cpuProfile != "" {
		pprof.StopCPUProfile()
	}

	for _, op := range ops {
		r := res.op(op)
		var err error
		r.Allocations.Server, err = allocationsPerCall(ctx, allocationSamples, func(i int) func() error {
			f, err := inProcess(handler, op, i)
			if err != nil {
				return func() error { return err }
			}
			return f
		}, &next)
		if err != nil {
			return nil, fmt.Errorf("%s allocations: %w", op.name, err)
		}
		r.Allocations.Floor, err = allocationsPerCall(ctx, allocationSamples, func(i int) func() error {
			return func() error { return op.floor(ctx, i) }
		}, &next)
		if err != nil {
			return nil, fmt.Errorf("%s floor allocations: %w", op.name, err)
		}
		logf("%-14s allocations per call: server %.0f, floor %.0f", op.name, r.Allocations.Server, r.Allocations.Floor)
	}

	runtime.GC()
	res.Memory = readMemory()
	logf("process RSS %.1f MB (peak %.1f MB; own %.1f MB, mapped files %.1f MB), Go heap in use %.1f MB",
		res.Memory.RSSMB, res.Memory.PeakRSSMB, res.Memory.AnonMB, res.Memory.FileMB, res.Memory.HeapInUseMB)
	if dataFile != "" {
		if fi, err := os.Stat(dataFile); err == nil {
			res.Dataset.DataFileMB = float64(fi.Size()) / (1 << 20)
			logf("data file %.1f MB", res.Dataset.DataFileMB)
		}
	}
	return res, nil
}

// allocationSamples is how many calls of each operation, server and floor,
// the allocations per call are the mean of.
const allocationSamples = 100

func pageSizes(op operation) []int {
	if op.paged {
		return []int{20, 100}
	}
	return []int{20}
}

// tokens returns a bearer token for every author, signed with secret, by
// author id.
func (d *dataset) tokens(secret []byte) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range d.authors {
		t, err := auth.Sign(secret, auth.Claims{
			RegisteredClaims: jwt.RegisteredClaims{Subject: a.ID, ExpiresAt: jwt.NewNumericDate(time.Now().Add(24 * time.Hour))},
			Roles:            []string{auth.RoleAuthor},
		})
		if err != nil {
			return nil, err
		}
		out[a.ID] = t
	}
	return out, nil
}

func (d *dataset) comments() int {
	n := 0
	for _, p := range d.posts {
		n += len(p.comments)
	}
	return n
}
