package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// persistedAs returns the body of a request that sends query with hash as
// its persisted query's hash (a client's mistake, or a forgery, when it is
// not the query's).
func persistedAs(query, hash string) string {
	b, err := json.Marshal(map[string]any{
		"query":      query,
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}},
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func hashOf(query string) string {
	sum := sha256.Sum256([]byte(query))
	return hex.EncodeToString(sum[:])
}

// errorCode returns the extensions.code of r's first error, or "".
func errorCode(r response) string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// byHash sends query by its hash alone to s and returns its error code ("" when
// it ran) and the DynamoDB requests it made.
func (s *server) byHash(t *testing.T, query string) (string, map[string]int) {
	t.Helper()
	r := s.send(t, persisted(query, false), false)
	if errorCode(r) == "" && string(r.Data) == "" {
		t.Fatalf("no data and no error: status %d", r.status)
	}
	return errorCode(r), s.requests()
}

// TestPersistedQueriesAreKeptInTheTable registers automatic persisted
// queries on one server and runs them by hash on a second server on the
// same table and after a restart, with one GetItem; refuses a hash that is
// not its query's and keeps nothing of a document that fails validation or
// a limit; does not serve an expired registration; and refreshes the
// expiry of a query in use at most once a day.
func TestPersistedQueriesAreKeptInTheTable(t *testing.T) {
	s := newServer(t)
	const query = "query Persisted { __typename }"

	r := s.send(t, persisted(query, true), false)
	equal(t, "registration", errorCode(r), "")
	equal(t, "data", string(r.Data), `{"__typename":"Query"}`)
	if got := s.requests(); !maps.Equal(got, map[string]int{"PutItem": 1}) {
		t.Errorf("registration made %v, want one PutItem", got)
	}
	code, reqs := s.byHash(t, query)
	equal(t, "by hash on the same server", code, "")
	equal(t, "its requests", total(reqs), 0)

	t.Run("a second server on the table runs it by hash with one GetItem", func(t *testing.T) {
		other := s.another()
		code, reqs := other.byHash(t, query)
		equal(t, "code", code, "")
		if !maps.Equal(reqs, map[string]int{"GetItem": 1}) {
			t.Errorf("requests %v, want one GetItem", reqs)
		}
		code, reqs = other.byHash(t, query)
		equal(t, "again", code, "")
		equal(t, "again, from memory", total(reqs), 0)
	})

	t.Run("a restarted server runs it by hash with one GetItem", func(t *testing.T) {
		restarted := &server{t: s.t, db: s.db, table: s.table, store: s.store, clock: s.clock, opts: s.opts}
		restarted.serve()
		code, reqs := restarted.byHash(t, query)
		equal(t, "code", code, "")
		if !maps.Equal(reqs, map[string]int{"GetItem": 1}) {
			t.Errorf("requests %v, want one GetItem", reqs)
		}
	})

	t.Run("an altered hash is refused and registers nothing", func(t *testing.T) {
		const other = "query Altered { __typename }"
		altered := hashOf(query)
		r := s.send(t, persistedAs(other, altered), false)
		equal(t, "code", errorCode(r), "BAD_REQUEST")
		equal(t, "data", string(r.Data), "")
		equal(t, "requests", total(s.requests()), 0)
		// The hash still stands for its own query, here and elsewhere.
		for _, srv := range []*server{s, s.another()} {
			r := srv.send(t, persisted(query, false), false)
			equal(t, "the hash's query", string(r.Data), `{"__typename":"Query"}`)
		}
		flipped := []byte(hashOf(other))
		flipped[0] ^= 1
		r = s.send(t, persistedAs(other, string(flipped)), false)
		equal(t, "one digit changed", errorCode(r), "BAD_REQUEST")
	})

	t.Run("a document that fails validation or a limit is not kept", func(t *testing.T) {
		deep := "query Deep { posts(first: 100) { edges { node { comments(first: 100) { edges { node { body } } } } } } }"
		for name, doc := range map[string]string{
			"invalid":    "query Invalid { nope }",
			"too costly": deep,
			"too deep":   "query Nested { post(id: \"x\") { author { posts { edges { node { author { posts { edges { node { author { posts { edges { node { id } } } } } } } } } } } } } }",
		} {
			r := s.send(t, persisted(doc, true), false)
			if errorCode(r) == "" {
				t.Fatalf("%s: ran: %s", name, r.Data)
			}
			equal(t, name+": requests", total(s.requests()), 0)
			for _, srv := range []*server{s, s.another()} {
				code, _ := srv.byHash(t, doc)
				equal(t, name+": by hash", code, "PERSISTED_QUERY_NOT_FOUND")
			}
		}
	})

	t.Run("a hash that is not one is not looked up", func(t *testing.T) {
		r := s.send(t, `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"`+strings.Repeat("x", 2000)+`"}}}`, false)
		equal(t, "code", errorCode(r), "PERSISTED_QUERY_NOT_FOUND")
		equal(t, "requests", total(s.requests()), 0)
	})

	t.Run("an expired registration is not served, and registers again", func(t *testing.T) {
		const q = "query Expiring { __typename }"
		equal(t, "registration", errorCode(s.send(t, persisted(q, true), false)), "")
		s.clock.Advance(storage.PersistedQueryTTL + time.Second)
		other := s.another()
		code, reqs := other.byHash(t, q)
		equal(t, "expired", code, "PERSISTED_QUERY_NOT_FOUND")
		equal(t, "its read", total(reqs), 1)
		equal(t, "registered again", errorCode(other.send(t, persisted(q, true), false)), "")
		if got := other.requests(); !maps.Equal(got, map[string]int{"PutItem": 1}) {
			t.Errorf("registration made %v, want one PutItem", got)
		}
		code, _ = s.another().byHash(t, q)
		equal(t, "served again", code, "")
	})

	t.Run("a query in use is refreshed at most once a day", func(t *testing.T) {
		const q = "query Refreshed { __typename }"
		equal(t, "registration", errorCode(s.send(t, persisted(q, true), false)), "")
		other := s.another()
		code, reqs := other.byHash(t, q)
		equal(t, "fresh", code, "")
		equal(t, "a fresh registration is read, not refreshed", total(reqs), 1)
		for _, step := range []struct {
			advance time.Duration
			want    map[string]int
		}{
			{time.Hour, map[string]int{}},
			{storage.PersistedQueryRefresh, map[string]int{"UpdateItem": 1}},
			{time.Hour, map[string]int{}},
			{storage.PersistedQueryRefresh - 2*time.Hour, map[string]int{}},
			{2 * time.Hour, map[string]int{"UpdateItem": 1}},
		} {
			s.clock.Advance(step.advance)
			code, reqs := other.byHash(t, q)
			equal(t, "code", code, "")
			if !maps.Equal(reqs, step.want) {
				t.Errorf("%s on: requests %v, want %v", step.advance, reqs, step.want)
			}
		}
		// Used daily, it outlives the TTL it was registered with.
		s.clock.Advance(storage.PersistedQueryTTL - storage.PersistedQueryRefresh)
		code, _ = s.another().byHash(t, q)
		equal(t, "past the first expiry", code, "")
	})
	s.consistent()
}

// TestPersistedQueryWritesAreCapped registers more queries in a second
// than a server writes: past the cap each query runs and is kept in its
// server's memory, not in the table; the next second writes again.
func TestPersistedQueryWritesAreCapped(t *testing.T) {
	const perSecond = 3
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.PersistedQueryWrites = perSecond })
	query := func(i int) string { return fmt.Sprintf("query Capped%d { __typename }", i) }
	puts := 0
	register := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			r := s.send(t, persisted(query(i), true), false)
			equal(t, "registration runs", string(r.Data), `{"__typename":"Query"}`)
			puts += s.requests()["PutItem"]
		}
	}
	register(0, 10)
	equal(t, "registrations written in the second", puts, perSecond)
	other := s.another()
	for i := range 10 {
		code, _ := s.byHash(t, query(i))
		equal(t, fmt.Sprintf("query %d on its server", i), code, "")
		want := ""
		if i >= perSecond {
			want = "PERSISTED_QUERY_NOT_FOUND"
		}
		code, _ = other.byHash(t, query(i))
		equal(t, fmt.Sprintf("query %d on another server", i), code, want)
	}
	s.clock.Advance(time.Second)
	puts = 0
	register(10, 20)
	equal(t, "registrations written in the next second", puts, perSecond)

	t.Run("a server can write none", func(t *testing.T) {
		none := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.PersistedQueryWrites = -1 })
		r := none.send(t, persisted(query(0), true), false)
		equal(t, "runs", string(r.Data), `{"__typename":"Query"}`)
		equal(t, "requests", total(none.requests()), 0)
		code, _ := none.byHash(t, query(0))
		equal(t, "kept in memory", code, "")
	})
}
