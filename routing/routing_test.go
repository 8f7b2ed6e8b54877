package routing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// site answers with its name.
func site(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })
}

// TestHostsReachTheirPublication sends requests by Host and checks which
// site answers, and how many lookups and builds the router made.
func TestHostsReachTheirPublication(t *testing.T) {
	var lookups, builds atomic.Int32
	rt := New(Options{
		Default: site("default"), DefaultID: "default", DefaultHosts: []string{"localhost", "Blog.Example"},
		// Held longer than any test runs, however loaded the machine.
		HostTTL: time.Hour, UnknownTTL: time.Hour,
		Lookup: func(_ context.Context, host string) (string, error) {
			lookups.Add(1)
			return map[string]string{"b.example": "b", "own.example": "default"}[host], nil
		},
		Build: func(_ context.Context, id string) (http.Handler, error) {
			builds.Add(1)
			return site("site " + id), nil
		},
	})
	cases := []struct {
		host, want string
		status     int
	}{
		{"localhost:8080", "default", 200},
		{"blog.example", "default", 200},
		{"BLOG.EXAMPLE:443", "default", 200},
		{"127.0.0.1:8080", "default", 200},
		{"[::1]:8080", "default", 200},
		{"", "default", 200},
		{"b.example", "site b", 200},
		{"B.Example:8080", "site b", 200},
		{"own.example", "default", 200},
		{"b.example.", "no publication", 404},
		{"nobody.example", "no publication", 404},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/graphql", nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, r)
		if w.Code != c.status || !strings.HasPrefix(w.Body.String(), c.want) {
			t.Errorf("host %q: %d %q, want %d %q", c.host, w.Code, w.Body.String(), c.status, c.want)
		}
	}
	// b.example, own.example and nobody.example, once each: the second
	// b.example and the trailing dot are not looked up.
	if n := lookups.Load(); n != 3 {
		t.Errorf("lookups: %d, want 3", n)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("builds: %d, want 1", n)
	}
	for range 10 {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = "nobody.example"
		rt.ServeHTTP(httptest.NewRecorder(), r)
	}
	if n := lookups.Load(); n != 3 {
		t.Errorf("lookups after 10 more requests for an unknown host: %d, want 3", n)
	}
}
