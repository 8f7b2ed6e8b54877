package metrics_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/blogql/blog/metrics"
)

// TestPublicationLabels: of 10,000 publications served, the first
// MaxPublicationLabels and those of the allow-list get a label of their
// own, and every other request counts under "other".
func TestPublicationLabels(t *testing.T) {
	m := metrics.New()
	m.SetPublicationLabels([]string{"p9999"})
	for i := range 10000 {
		m.ObservePublication(fmt.Sprintf("p%d", i), metrics.Served, 2, 1, 0)
	}
	m.ObservePublication("p0", metrics.RateLimited, 0, 0, 0)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	series := map[string]string{}
	for line := range strings.Lines(rec.Body.String()) {
		if name, rest, ok := strings.Cut(strings.TrimSpace(line), " "); ok && strings.HasPrefix(name, "blog_publication_") {
			series[name] = rest
		}
	}
	for name, want := range map[string]string{
		`blog_publication_requests_total{outcome="served",publication="p0"}`:           "1",
		`blog_publication_requests_total{outcome="rate_limited",publication="p0"}`:     "1",
		`blog_publication_requests_total{outcome="served",publication="p99"}`:          "1",
		`blog_publication_requests_total{outcome="served",publication="p9999"}`:        "1",
		`blog_publication_requests_total{outcome="served",publication="other"}`:        "9899",
		`blog_publication_dynamodb_requests_total{publication="other"}`:                "19798",
		`blog_publication_consumed_capacity_units_total{kind="read",publication="p0"}`: "1",
	} {
		if series[name] != want {
			t.Errorf("%s = %q, want %s", name, series[name], want)
		}
	}
	// 102 labels: 4 series each (requests served, dynamodb, read, write),
	// and p0's rate_limited.
	if want := (metrics.MaxPublicationLabels+2)*4 + 1; len(series) != want {
		t.Errorf("%d series, want %d", len(series), want)
	}
}
