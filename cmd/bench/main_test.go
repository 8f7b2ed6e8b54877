package main

import (
	"context"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/tuning"
)

// TestOperationsKeepTheirBudgets runs the benchmark briefly on a small
// dataset, so the harness keeps working, and checks what it measures that
// does not depend on the machine: every operation makes exactly the
// DynamoDB requests DESIGN.md budgets, at page size 20 and 100 alike, and
// its floor makes the same number. It runs on DynamoDB Local when
// DYNAMODB_ENDPOINT is set.
func TestOperationsKeepTheirBudgets(t *testing.T) {
	cfg := &config{
		backend: "embedded", posts: 60, samples: 10, concurrency: 4,
		duration: 100 * time.Millisecond, rounds: 1,
	}
	if cfg.endpoint = dynamotest.Endpoint(t); cfg.endpoint != "" {
		cfg.backend = "local"
	}
	res, err := run(context.Background(), cfg, tuning.GC{Percent: 100}, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Operations) != 5 {
		t.Fatalf("%d operations measured, want 5", len(res.Operations))
	}
	for _, o := range res.Operations {
		r := o.Requests
		if r.Min != o.Budget || r.Max != o.Budget {
			t.Errorf("%s: %d to %d DynamoDB requests per call, budget %d", o.Name, r.Min, r.Max, o.Budget)
		}
		for size, n := range r.Server {
			if n != o.Budget {
				t.Errorf("%s at page size %s: %d DynamoDB requests, budget %d", o.Name, size, n, o.Budget)
			}
		}
		if r.Floor != o.Budget {
			t.Errorf("%s floor: %d DynamoDB requests, want the budget %d", o.Name, r.Floor, o.Budget)
		}
		if o.Sequential.Server.Calls != cfg.samples || len(o.Rounds) != 1 || o.Rounds[0].Server.Calls == 0 {
			t.Errorf("%s: %d sequential calls, %d rounds", o.Name, o.Sequential.Server.Calls, len(o.Rounds))
		}
		if o.Allocations.Server <= 0 || o.Allocations.Floor <= 0 {
			t.Errorf("%s: %v allocations per call of the server, %v of the floor", o.Name, o.Allocations.Server, o.Allocations.Floor)
		}
	}
}

// TestBurstConverges runs a short comment burst, so the mode keeps
// working: every comment is answered without error, the counts worker
// syncs the post at most once a second, and every list ends showing the
// final count.
func TestBurstConverges(t *testing.T) {
	cfg := &config{backend: "embedded", burst: 40, burstClients: 4, burstFor: 500 * time.Millisecond}
	if cfg.endpoint = dynamotest.Endpoint(t); cfg.endpoint != "" {
		cfg.backend = "local"
	}
	res, err := runBurst(context.Background(), cfg, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	if res.Acked == 0 || res.Failed != 0 || res.MaxSyncsPerSecond > 1 {
		t.Errorf("%d comments answered, %d failed (%s), at most %d syncs of the post within a second, want none failed and 1",
			res.Acked, res.Failed, res.FirstError, res.MaxSyncsPerSecond)
	}
}

// TestPartialRunsKeepTheTables: a run of some operations, or of another
// setup, writes no results file and no table unless its flags name them;
// a full run writes both where they belong.
func TestPartialRunsKeepTheTables(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		out, markdown string
	}{
		{nil, "bench/results-embedded.json", "BENCHMARKS.md"},
		{[]string{"-burst", "200"}, "bench/burst-embedded.json", "BENCHMARKS.md"},
		{[]string{"-ops", "category page"}, "", ""},
		{[]string{"-answers"}, "", ""},
		{[]string{"-stream", "-ops", "addComment"}, "", ""},
		{[]string{"-ops", "feed", "-out", "feed.json"}, "feed.json", ""},
		{[]string{"-answers", "-markdown", "CACHED.md"}, "", "CACHED.md"},
	} {
		c, err := parseFlags(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if c.out != tc.out || c.markdown != tc.markdown {
			t.Errorf("%q: results %q, table in %q; want %q and %q", tc.args, c.out, c.markdown, tc.out, tc.markdown)
		}
	}
}
