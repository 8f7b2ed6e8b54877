package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// TestCacheHeaders checks what a CDN in front of the server sees: answers
// to anonymous GET queries are public and carry an ETag that revalidates
// with 304; writes, signed-in readers and failed queries are never stored.
func TestCacheHeaders(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.CacheMaxAge = 90 * time.Second })
	ctx := context.Background()
	ok[*storage.Category](t)(s.store.CreateCategory(ctx, storage.NewCategory{Slug: "go", Name: "Go"}))
	const query = `query Category($slug: String!) { category(slug: $slug) { name postCount } }`
	get := s.getQueryURL(query, `{"slug":"go"}`, "")

	first := s.fetch(t, http.MethodGet, get, "", nil)
	equal(t, "status", first.status, http.StatusOK)
	equal(t, "Cache-Control", first.header.Get("Cache-Control"), "public, max-age=90")
	equal(t, "Vary", strings.Join(first.header.Values("Vary"), ", "), "Accept, Authorization")
	etag := first.header.Get("ETag")
	if len(etag) < 10 || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %q, want a quoted hash", etag)
	}
	if !strings.Contains(first.body, `"name":"Go"`) {
		t.Fatalf("body %s", first.body)
	}

	t.Run("a matching If-None-Match is 304 without a body", func(t *testing.T) {
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag} {
			r := s.fetch(t, http.MethodGet, get, "", map[string]string{"If-None-Match": inm})
			equal(t, "status", r.status, http.StatusNotModified)
			equal(t, "body", r.body, "")
			equal(t, "ETag", r.header.Get("ETag"), etag)
			equal(t, "Cache-Control", r.header.Get("Cache-Control"), "public, max-age=90")
		}
	})

	t.Run("another ETag gets the full answer", func(t *testing.T) {
		r := s.fetch(t, http.MethodGet, get, "", map[string]string{"If-None-Match": `"stale"`})
		equal(t, "status", r.status, http.StatusOK)
		equal(t, "body", r.body, first.body)
		equal(t, "ETag", r.header.Get("ETag"), etag)
	})

	t.Run("changed content changes the ETag", func(t *testing.T) {
		ok[*storage.Category](t)(s.store.UpdateCategory(ctx, storage.CategoryPatch{Slug: "go", Name: ptr("Golang")}))
		r := s.fetch(t, http.MethodGet, get, "", map[string]string{"If-None-Match": etag})
		equal(t, "status", r.status, http.StatusOK)
		if r.header.Get("ETag") == etag || !strings.Contains(r.body, "Golang") {
			t.Errorf("after a rename: ETag %q (was %q), body %s", r.header.Get("ETag"), etag, r.body)
		}
	})

	token := s.signed(s.claims("reader", "author"))
	postBody := `{"query":"query { category(slug: \"go\") { name } }"}`
	mutation := `mutation { createCategory(input: {slug: "new", name: "New"}) { category { slug } } }`
	adminToken := s.signed(s.claims("admin", "admin"))
	notStored := []struct {
		name              string
		method, url, body string
		authorization     string
		wantStatus        int
		wantBodyContains  string
	}{
		{name: "a signed-in reader's GET", method: http.MethodGet, url: get, authorization: token, wantStatus: http.StatusOK, wantBodyContains: "Golang"},
		{name: "a POST query", method: http.MethodPost, url: s.url, body: postBody, wantStatus: http.StatusOK, wantBodyContains: "Golang"},
		{name: "a mutation", method: http.MethodPost, url: s.url, body: `{"query":` + jsonString(mutation) + `}`, authorization: adminToken, wantStatus: http.StatusOK, wantBodyContains: `"slug":"new"`},
		{name: "a mutation over GET", method: http.MethodGet, url: s.getQueryURL(mutation, "", ""), wantStatus: http.StatusMethodNotAllowed},
		{name: "a query with an error", method: http.MethodGet, url: s.getQueryURL(query, `{"slug":"missing"}`, ""), wantStatus: http.StatusOK, wantBodyContains: "NOT_FOUND"},
		{name: "a query that does not validate", method: http.MethodGet, url: s.getQueryURL(`{ category { nope } }`, "", ""), wantBodyContains: "errors"},
		{name: "an invalid token", method: http.MethodGet, url: get, authorization: "not-a-token", wantStatus: http.StatusUnauthorized},
	}
	for _, c := range notStored {
		t.Run(c.name+" is no-store", func(t *testing.T) {
			h := map[string]string{"If-None-Match": etag}
			if c.authorization != "" {
				h["Authorization"] = "Bearer " + c.authorization
			}
			r := s.fetch(t, c.method, c.url, c.body, h)
			if c.wantStatus != 0 {
				equal(t, "status", r.status, c.wantStatus)
			}
			if !strings.Contains(r.body, c.wantBodyContains) {
				t.Errorf("body %s, want it to contain %q", r.body, c.wantBodyContains)
			}
			equal(t, "Cache-Control", r.header.Get("Cache-Control"), "no-store")
			equal(t, "ETag", r.header.Get("ETag"), "")
		})
	}

	t.Run("persisted queries by hash are public once known", func(t *testing.T) {
		sum := sha256.Sum256([]byte(query))
		ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
		byHash := s.getQueryURL("", `{"slug":"go"}`, ext)
		unknown := s.fetch(t, http.MethodGet, byHash, "", nil)
		if !strings.Contains(unknown.body, "PersistedQueryNotFound") {
			t.Fatalf("unknown hash answered %s", unknown.body)
		}
		equal(t, "unknown hash Cache-Control", unknown.header.Get("Cache-Control"), "no-store")

		registered := s.fetch(t, http.MethodGet, s.getQueryURL(query, `{"slug":"go"}`, ext), "", nil)
		equal(t, "registering Cache-Control", registered.header.Get("Cache-Control"), "public, max-age=90")
		known := s.fetch(t, http.MethodGet, byHash, "", nil)
		equal(t, "status", known.status, http.StatusOK)
		equal(t, "Cache-Control", known.header.Get("Cache-Control"), "public, max-age=90")
		equal(t, "ETag", known.header.Get("ETag"), registered.header.Get("ETag"))
		equal(t, "body", known.body, registered.body)
	})
}

// TestCacheHeadersOff checks that a server without a cache max age lets
// nothing be stored.
func TestCacheHeadersOff(t *testing.T) {
	s := newServer(t)
	ok[*storage.Category](t)(s.store.CreateCategory(context.Background(), storage.NewCategory{Slug: "go", Name: "Go"}))
	r := s.fetch(t, http.MethodGet, s.getQueryURL(`{ category(slug: "go") { name } }`, "", ""), "", nil)
	equal(t, "status", r.status, http.StatusOK)
	equal(t, "Cache-Control", r.header.Get("Cache-Control"), "no-store")
	equal(t, "ETag", r.header.Get("ETag"), "")
}

// getQueryURL returns the GET request URL of a query, its variables and
// extensions, each left out when empty.
func (s *server) getQueryURL(query, variables, extensions string) string {
	v := url.Values{}
	for k, val := range map[string]string{"query": query, "variables": variables, "extensions": extensions} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return s.url + "?" + v.Encode()
}

// signed returns a bearer token for c, signed with the tests' secret.
func (s *server) signed(c auth.Claims) string {
	tok, err := auth.Sign(testSecret, c)
	if err != nil {
		s.t.Fatal(err)
	}
	return tok
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
