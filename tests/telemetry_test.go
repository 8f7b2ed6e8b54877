package tests

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tracing"
)

// TestMetrics scrapes /metrics around frontend operations: each is counted
// by name and outcome with its latency, and its DynamoDB requests are
// counted by operation exactly as the request counter sees them.
func TestMetrics(t *testing.T) {
	m := metrics.New()
	s := newServer(t, func(c *storage.ClientConfig, o *graph.HandlerOptions) {
		c.Observe = m.ObserveDynamoDB
		o.Metrics = m
	})
	// Written through the API, not copied: its writes are counted.
	b := s.writeBlog(t)
	scrape := scraper(t, m.Handler())
	ctx := context.Background()

	before := scrape()
	// Both backends report consumed capacity.
	writes := `blog_dynamodb_consumed_capacity_units_total{operation="TransactWriteItems"}`
	if before[writes] <= 0 {
		t.Errorf("seeding the blog consumed %s = %g, want more than 0", writes, before[writes])
	}
	if _, err := PostPage(ctx, s.client, b.commented); err != nil {
		t.Fatal(err)
	}
	dynamo := s.requests()
	after := scrape()
	delta := func(series string) float64 { return after[series] - before[series] }

	equal(t, "PostPage requests", delta(`blog_graphql_requests_total{operation="PostPage",outcome="ok"}`), 1)
	equal(t, "PostPage latencies", delta(`blog_graphql_request_duration_seconds_count{operation="PostPage"}`), 1)
	if d := delta(`blog_graphql_request_duration_seconds_sum{operation="PostPage"}`); d <= 0 || d > 60 {
		t.Errorf("PostPage latency = %gs", d)
	}
	if total(dynamo) == 0 {
		t.Fatal("the post page made no DynamoDB request")
	}
	for op, n := range dynamo {
		equal(t, op+" requests", delta(`blog_dynamodb_requests_total{operation="`+op+`",outcome="ok"}`), float64(n))
		equal(t, op+" latencies", delta(`blog_dynamodb_request_duration_seconds_count{operation="`+op+`"}`), float64(n))
		capacity := `blog_dynamodb_consumed_capacity_units_total{operation="` + op + `"}`
		if _, ok := after[capacity]; !ok {
			t.Errorf("no series %s", capacity)
		}
		if delta(capacity) <= 0 {
			t.Errorf("%s grew by %g, want more than 0", capacity, delta(capacity))
		}
		t.Logf("post page: %d %s, %g capacity units", n, op, delta(capacity))
	}
	// The page's comments have three commenters, read in one batch.
	equal(t, "commenter batches", delta(`blog_dataloader_batch_size_count{loader="commenters"}`), 1)
	equal(t, "commenter keys", delta(`blog_dataloader_batch_size_sum{loader="commenters"}`), 3)

	t.Run("a failed operation is counted by its error code", func(t *testing.T) {
		before := scrape()
		if _, err := CategoryPage(ctx, s.client, "no-such-category", nil, nil); code(err) != graph.CodeNotFound {
			t.Fatalf("err = %v, want NOT_FOUND", err)
		}
		after := scrape()
		series := `blog_graphql_requests_total{operation="CategoryPage",outcome="NOT_FOUND"}`
		equal(t, series, after[series]-before[series], 1)
	})

	t.Run("a document that does not parse is counted as unknown", func(t *testing.T) {
		before := scrape()
		resp, err := http.Post(s.url, "application/json", strings.NewReader(`{"query":"{ posts {"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		after := scrape()
		series := `blog_graphql_requests_total{operation="unknown",outcome="GRAPHQL_PARSE_FAILED"}`
		equal(t, series, after[series]-before[series], 1)
	})
}

// scraper returns a function that scrapes h as Prometheus does and returns
// every sample by its series, e.g. `name{label="value"}`.
func scraper(t *testing.T, h http.Handler) func() map[string]float64 {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return func() map[string]float64 {
		t.Helper()
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /metrics: %s", resp.Status)
		}
		samples := map[string]float64{}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err != nil {
				t.Fatalf("sample %q: %v", line, err)
			}
			samples[line[:i]] = v
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		return samples
	}
}

// TestTracing records the spans of a post page requested by a frontend that
// is itself traced: the operation's span continues the frontend's trace,
// its root field is a child, and every DynamoDB request is a span below
// them.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s := newServer(t, func(c *storage.ClientConfig, o *graph.HandlerOptions) {
		c.TracerProvider = tracing.AWS(tp)
		o.TracerProvider = tp
	})
	b := s.seedBlog(t)

	const (
		frontendTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		frontendSpan  = "00f067aa0ba902b7"
	)
	traced := graphql.NewClient(s.url, &http.Client{Transport: header{
		name: "traceparent", value: "00-" + frontendTrace + "-" + frontendSpan + "-01", next: http.DefaultTransport,
	}})
	if _, err := PostPage(context.Background(), traced, b.commented); err != nil {
		t.Fatal(err)
	}
	dynamo := s.requests()

	var trip []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.SpanContext().TraceID().String() == frontendTrace {
			trip = append(trip, sp)
		}
	}
	op := find(trip, "query PostPage")
	if op == nil {
		t.Fatalf("no span query PostPage in the frontend's trace among %v", names(trip))
	}
	equal(t, "operation span kind", op.SpanKind(), trace.SpanKindServer)
	equal(t, "operation span parent", op.Parent().SpanID().String(), frontendSpan)
	field := find(trip, "Query.post")
	if field == nil {
		t.Fatalf("no span Query.post among %v", names(trip))
	}
	equal(t, "root field span parent", field.Parent().SpanID(), op.SpanContext().SpanID())

	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range trip {
		byID[sp.SpanContext().SpanID()] = sp
	}
	calls := map[string]int{}
	for _, sp := range trip {
		name, ok := strings.CutPrefix(sp.Name(), "DynamoDB.")
		if !ok {
			continue
		}
		calls[name]++
		if !below(sp, op, byID) {
			t.Errorf("span %s is not below the operation's span", sp.Name())
		}
	}
	if len(calls) == 0 || len(calls) != len(dynamo) {
		t.Errorf("DynamoDB spans %v, want one for each request %v", calls, dynamo)
	}
	for name, n := range dynamo {
		equal(t, "DynamoDB."+name+" spans", calls[name], n)
	}
	// Of the AWS SDK's spans only those of calls and their attempts are kept.
	if want := 2 + 2*total(dynamo); len(trip) != want {
		t.Errorf("%d spans %v, want %d: operation, root field, and each DynamoDB call with its attempt", len(trip), names(trip), want)
	}

	t.Run("a failed operation's span is an error with its code", func(t *testing.T) {
		if _, err := CategoryPage(context.Background(), s.client, "no-such-category", nil, nil); code(err) != graph.CodeNotFound {
			t.Fatalf("err = %v, want NOT_FOUND", err)
		}
		var sp sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == "query CategoryPage" {
				sp = s
			}
		}
		if sp == nil {
			t.Fatal("no span query CategoryPage")
		}
		equal(t, "status", sp.Status().Code, codes.Error)
		found := false
		for _, a := range sp.Attributes() {
			found = found || (a.Key == "graphql.error.code" && a.Value.AsString() == graph.CodeNotFound)
		}
		if !found {
			t.Errorf("attributes %v lack graphql.error.code NOT_FOUND", sp.Attributes())
		}
	})
}

func find(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, sp := range spans {
		if sp.Name() == name {
			return sp
		}
	}
	return nil
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = sp.Name()
	}
	return out
}

// below reports whether ancestor is among the parents of sp.
func below(sp, ancestor sdktrace.ReadOnlySpan, byID map[trace.SpanID]sdktrace.ReadOnlySpan) bool {
	for p, ok := byID[sp.Parent().SpanID()]; ok; p, ok = byID[p.Parent().SpanID()] {
		if p.SpanContext().SpanID() == ancestor.SpanContext().SpanID() {
			return true
		}
	}
	return false
}

// header adds one header to every request.
type header struct {
	name, value string
	next        http.RoundTripper
}

func (h header) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.next.RoundTrip(r)
}
