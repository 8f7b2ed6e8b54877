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

	"github.com/blogql/blog/storage"
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

// TestForgetDropsOnlyWhatChanged: a publication.updated drops the hosts a
// publication left, and those it has that the router holds for another
// publication or none; a host already held for it stays held, so an event
// that changes none of its hosts (one the server's own start wrote, read
// back late) costs no lookup.
func TestForgetDropsOnlyWhatChanged(t *testing.T) {
	var lookups atomic.Int32
	claims := map[string]string{"b.example": "b", "c.example": "c"}
	rt := New(Options{
		Default: site("default"), DefaultID: "default", DefaultHosts: []string{"localhost"},
		HostTTL: time.Hour, UnknownTTL: time.Hour,
		Lookup: func(_ context.Context, host string) (string, error) {
			lookups.Add(1)
			return claims[host], nil
		},
		Build: func(_ context.Context, id string) (http.Handler, error) { return site("site " + id), nil },
	})
	serve := func(host string) string {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, r)
		return w.Body.String()
	}
	updated := func(pub string, d storage.EventData) []storage.LoggedEvent {
		return []storage.LoggedEvent{{Event: storage.Event{Type: storage.EventPublicationUpdated, Publication: pub, Data: d}}}
	}
	for _, h := range []string{"b.example", "c.example", "new.example"} {
		serve(h)
	}
	equal := func(what string, got, want int32) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %d lookups, want %d", what, got, want)
		}
	}
	equal("first requests", lookups.Load(), 3)

	// b's title changed: its host still names it.
	rt.Forget(updated("b", storage.EventData{Slug: "b", Hosts: []string{"b.example"}}))
	serve("b.example")
	equal("after an event that changes no host", lookups.Load(), 3)

	// c.example moved to b, and new.example joined b.
	claims["c.example"], claims["new.example"] = "b", "b"
	rt.Forget(updated("b", storage.EventData{Slug: "b", Hosts: []string{"b.example", "C.example", "new.example"}}))
	if got := serve("c.example"); got != "site b" {
		t.Errorf("c.example after it moved = %q, want site b", got)
	}
	if got := serve("new.example"); got != "site b" {
		t.Errorf("new.example after it joined = %q, want site b", got)
	}
	equal("after a move and a join", lookups.Load(), 5)

	// b removed: every host it had is dropped.
	delete(claims, "b.example")
	delete(claims, "c.example")
	delete(claims, "new.example")
	rt.Forget(updated("b", storage.EventData{Slug: "b", PreviousSlugs: []string{"b"}, PreviousHosts: []string{"b.example", "c.example", "new.example"}}))
	for _, h := range []string{"b.example", "c.example", "new.example"} {
		if got := serve(h); !strings.HasPrefix(got, "no publication") {
			t.Errorf("%s after its publication was removed = %q, want none", h, got)
		}
	}
}
