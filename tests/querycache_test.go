package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
)

// padded returns a valid query of about n bytes, distinct for each i: a
// comment makes up the length, as an anonymous client can.
func padded(i, n int) string {
	q := fmt.Sprintf("{ __typename } # %d ", i)
	return q + strings.Repeat("x", max(n-len(q), 0))
}

// persisted returns the body of a request that registers query as an
// automatic persisted query, or, without the query, runs it by its hash.
func persisted(query string, withQuery bool) string {
	sum := sha256.Sum256([]byte(query))
	body := map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}}
	if withQuery {
		body["query"] = query
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// liveHeap returns the bytes of live objects on the heap.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestQueryCachesAreBoundedByBytes sends what an anonymous client can to
// fill the server's query caches: distinct query documents near the body
// limit, many distinct documents within the query size limit, and
// persisted query registrations. The caches keep the bytes their metrics
// say, within their bounds, and the live heap grows by no more than the
// bounds (the caches were bounded by count: 1000 documents of any size,
// 100 persisted queries). A document over the size limit is refused
// before it is parsed or persisted.
func TestQueryCachesAreBoundedByBytes(t *testing.T) {
	m := metrics.New()
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.Metrics = m })
	scrape := scraper(t, m.Handler())
	send := func(body string) response {
		t.Helper()
		r := s.send(t, body, false)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %v", r.status, r.Errors)
		}
		return r
	}
	firstCode := func(r response) string {
		if len(r.Errors) == 0 {
			return ""
		}
		c, _ := r.Errors[0].Extensions["code"].(string)
		return c
	}
	send(request("{ __typename }", nil)) // the server's own first allocations
	before := liveHeap()

	for i := range 40 {
		send(request(padded(i, gqlhttp.MaxBodyBytes-100), nil))
	}
	for i := range 300 {
		r := send(request(padded(1000+i, 30<<10), nil))
		if len(r.Errors) > 0 {
			t.Fatalf("a valid query of 30 KiB: %v", r.Errors)
		}
	}
	for i := range 40 {
		send(persisted(padded(2000+i, 30<<10), true))
	}
	grown := int64(liveHeap()) - int64(before)
	t.Logf("live heap grew by %.1f MiB", float64(grown)/(1<<20))
	if limit := int64(gqlhttp.DefaultQueryCacheBytes + gqlhttp.DefaultPersistedQueryCacheBytes + 8<<20); grown > limit {
		t.Errorf("live heap grew by %d bytes, more than the caches' bounds and 8 MiB (%d)", grown, limit)
	}

	samples := scrape()
	for cache, bound := range map[string]float64{"documents": gqlhttp.DefaultQueryCacheBytes, "persisted": gqlhttp.DefaultPersistedQueryCacheBytes} {
		bytes := samples[`blog_graphql_query_cache_bytes{cache="`+cache+`"}`]
		entries := samples[`blog_graphql_query_cache_entries{cache="`+cache+`"}`]
		t.Logf("%s: %g entries, %g bytes", cache, entries, bytes)
		if bytes <= 0 || bytes > bound || entries < 1 {
			t.Errorf("%s cache: %g entries of %g bytes, want some within %g bytes", cache, entries, bytes, bound)
		}
	}

	t.Run("a document over the size limit is refused before it is parsed", func(t *testing.T) {
		// Past the token limit and with a syntax error: the size is what
		// is refused.
		big := "{" + strings.Repeat(" __typename", gqlhttp.DefaultMaxQueryBytes/10) + " ((("
		r := send(request(big, nil))
		equal(t, "code", firstCode(r), gqlhttp.CodeQuerySizeLimit)
		equal(t, "data", r.Data == nil, true)
		at := send(request(padded(1, gqlhttp.DefaultMaxQueryBytes), nil))
		equal(t, "a query of the limit's size", firstCode(at), "")
	})

	t.Run("a persisted query over the size limit is not registered", func(t *testing.T) {
		big := padded(3000, gqlhttp.DefaultMaxQueryBytes+1)
		equal(t, "registration", firstCode(send(persisted(big, true))), gqlhttp.CodeQuerySizeLimit)
		equal(t, "by its hash", firstCode(send(persisted(big, false))), "PERSISTED_QUERY_NOT_FOUND")
	})

	t.Run("a persisted query within the limit runs by its hash", func(t *testing.T) {
		q := padded(3001, 1000)
		equal(t, "registration", firstCode(send(persisted(q, true))), "")
		r := send(persisted(q, false))
		equal(t, "by its hash", firstCode(r), "")
		equal(t, "data", string(r.Data), `{"__typename":"Query"}`)
	})
}

// TestQueryCacheBoundsAreConfigurable gives the handler small bounds:
// the caches hold no more than those, a document of the configured size
// limit runs and one byte more is refused.
func TestQueryCacheBoundsAreConfigurable(t *testing.T) {
	const docs, apq, maxQuery = 200 << 10, 20 << 10, 4 << 10
	m := metrics.New()
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.Metrics = m
		o.HTTP.QueryCacheBytes, o.HTTP.PersistedQueryCacheBytes, o.HTTP.MaxQueryBytes = docs, apq, maxQuery
	})
	scrape := scraper(t, m.Handler())
	for i := range 50 {
		if r := s.send(t, request(padded(i, 2000), nil), false); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		if r := s.send(t, persisted(padded(100+i, 2000), true), false); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	// The caches evict as they fill, and report each eviction once its
	// callback ran, which a busy machine may delay: the metrics show the
	// bounds once the callbacks due have run.
	within := func(report bool) bool {
		samples := scrape()
		held := true
		for cache, bound := range map[string]float64{"documents": docs, "persisted": apq} {
			bytes := samples[`blog_graphql_query_cache_bytes{cache="`+cache+`"}`]
			entries := samples[`blog_graphql_query_cache_entries{cache="`+cache+`"}`]
			if bytes <= 0 || bytes > bound || entries < 1 || entries >= 50 {
				held = false
				if report {
					t.Errorf("%s cache: %g entries of %g bytes, want some within %g bytes", cache, entries, bytes, bound)
				}
			}
		}
		return held
	}
	deadline := time.Now().Add(waitLimit)
	for !within(time.Now().After(deadline)) && !t.Failed() {
		time.Sleep(5 * time.Millisecond)
	}
	at := s.send(t, request(padded(1, maxQuery), nil), false)
	equal(t, "errors at the limit", len(at.Errors), 0)
	over := s.send(t, request(padded(1, maxQuery+1), nil), false)
	if len(over.Errors) == 0 || over.Errors[0].Extensions["code"] != gqlhttp.CodeQuerySizeLimit {
		t.Errorf("one byte over the limit: %v, want %s", over.Errors, gqlhttp.CodeQuerySizeLimit)
	}
}
