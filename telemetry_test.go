package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestMetricsAddrConfig checks that metrics are off by default and that
// METRICS_ADDR and -metrics-addr set their address.
func TestMetricsAddrConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"off by default", nil, nil, ""},
		{"from the environment", map[string]string{"METRICS_ADDR": ":9090"}, nil, ":9090"},
		{"the flag wins", map[string]string{"METRICS_ADDR": ":9090"}, []string{"-metrics-addr", "127.0.0.1:9191"}, "127.0.0.1:9191"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.metricsAddr != tt.want {
				t.Errorf("metrics address = %q, want %q", c.metricsAddr, tt.want)
			}
		})
	}
	var help strings.Builder
	_, _ = parseConfig([]string{"-h"}, func(string) string { return "" }, &help)
	if !strings.Contains(help.String(), "[METRICS_ADDR]") {
		t.Errorf("help does not mention METRICS_ADDR:\n%s", help.String())
	}
}

// TestRunServesMetrics starts the server with -metrics-addr and scrapes
// the metrics listener after a query; the API's own port has no /metrics.
func TestRunServesMetrics(t *testing.T) {
	base, logs, stop := startServer(t, []string{"-port", "0", "-metrics-addr", "127.0.0.1:0", "-log-format", "json"}, nil)
	defer stop()
	metricsURL := logs.field("metrics")
	if metricsURL == "" {
		t.Fatalf("no log line tells where the metrics are:\n%s", logs)
	}

	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"query Front { posts(first: 2) { edges { node { title } } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	code, body := httpGet(t, metricsURL)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d", metricsURL, code)
	}
	for _, u := range []string{metricsURL, strings.TrimSuffix(metricsURL, "/metrics") + "/nowhere"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		checkSecurityHeaders(t, "metrics listener "+u, resp.Header)
	}
	for _, want := range []string{
		`blog_graphql_requests_total{operation="Front",outcome="ok"} 1`,
		`blog_graphql_request_duration_seconds_count{operation="Front"} 1`,
		`blog_dynamodb_requests_total{operation="Query",outcome="ok"}`,
		`blog_dynamodb_requests_total{operation="TransactWriteItems",outcome="ok"}`, // the demo blog's seeding
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code, _ := httpGet(t, base+"/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's port = %d, want 404", code)
	}
}

// TestRunExportsTraces starts the server with an OTLP endpoint, a fake
// collector on loopback, and checks that the spans of a query reach it by
// the time the server has stopped.
func TestRunExportsTraces(t *testing.T) {
	var mu sync.Mutex
	var got []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)

	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, nil)
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"query Front { posts(first: 2) { edges { node { title } } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stop()

	if !logs.has(`tracing on`) {
		t.Errorf("no log line says tracing is on:\n%s", logs)
	}
	mu.Lock()
	defer mu.Unlock()
	var exported string
	for _, g := range got {
		if strings.HasPrefix(g, "POST /v1/traces application/x-protobuf ") {
			exported += g
		}
	}
	// The protobuf carries span and service names as plain strings.
	for _, want := range []string{"query Front", "Query.posts", "DynamoDB.Query", "blog"} {
		if !strings.Contains(exported, want) {
			t.Errorf("the exported spans lack %q; the collector got %d requests", want, len(got))
		}
	}
}

func httpGet(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// field returns the value of the first log attribute called name.
func (l *logLines) field(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			if v, ok := rec[name].(string); ok {
				return v
			}
		}
	}
	return ""
}
