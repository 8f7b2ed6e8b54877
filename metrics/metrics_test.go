package metrics_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/metrics"
)

// TestOperationLabels checks the operation label: the name, anonymous for
// an operation without one, and other for names past the limit, while the
// names seen before the limit keep their series.
func TestOperationLabels(t *testing.T) {
	m := metrics.New()
	ext := m.Extension().(graphql.ResponseInterceptor)
	request := func(name string) {
		oc := &graphql.OperationContext{
			Operation: &ast.OperationDefinition{Operation: ast.Query, Name: name},
			Stats:     graphql.Stats{OperationStart: time.Now()},
		}
		ctx := graphql.WithOperationContext(context.Background(), oc)
		ext.InterceptResponse(ctx, func(context.Context) *graphql.Response { return &graphql.Response{} })
	}
	for i := range metrics.MaxOperationNames {
		request(fmt.Sprintf("Page%d", i))
	}
	request("OneTooMany")
	request("AnotherOne")
	request("Page0")
	request("")

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	series := map[string]string{}
	n := 0
	for line := range strings.Lines(rec.Body.String()) {
		if name, rest, ok := strings.Cut(strings.TrimSpace(line), " "); ok && strings.HasPrefix(name, "blog_graphql_requests_total{") {
			series[name] = rest
			n++
		}
	}
	for name, want := range map[string]string{
		`blog_graphql_requests_total{operation="Page0",outcome="ok"}`:     "2",
		`blog_graphql_requests_total{operation="Page199",outcome="ok"}`:   "1",
		`blog_graphql_requests_total{operation="other",outcome="ok"}`:     "2",
		`blog_graphql_requests_total{operation="anonymous",outcome="ok"}`: "1",
	} {
		if series[name] != want {
			t.Errorf("%s = %q, want %s", name, series[name], want)
		}
	}
	if want := metrics.MaxOperationNames + 2; n != want {
		t.Errorf("%d series of blog_graphql_requests_total, want %d", n, want)
	}
}

func TestAnswerCacheMetrics(t *testing.T) {
	m := metrics.New()
	gqlhttp.NewAnswerCache(1<<20, m) // Metrics is what an answer cache reports to
	m.AnswerLookup(true)
	m.AnswerLookup(false)
	m.AnswerLookup(false)
	m.AnswerEvicted(3)
	m.AnswerCacheSize(2, 2048)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`blog_answer_cache_lookups_total{result="hit"} 1`,
		`blog_answer_cache_lookups_total{result="miss"} 2`,
		`blog_answer_cache_evictions_total 3`,
		`blog_answer_cache_entries 2`,
		`blog_answer_cache_bytes 2048`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
