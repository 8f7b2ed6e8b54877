package tests

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
)

// Routing edges a frontend meets: what a route that passes a URL's
// segment on as a slug gets for a segment no slug can be, and for one no
// item has.

// TestASlugThatCannotExistIsNotFound asks every lookup by slug for a
// slug no item has ("nope", and "Hello-World", which is looked up as
// "hello-world") and for segments that are no slug at all ("favicon.ico",
// one over the length limit): each is null with the same NOT_FOUND
// error, series included, and those that cannot exist cost no DynamoDB
// request.
func TestASlugThatCannotExistIsNotFound(t *testing.T) {
	s := newServer(t)
	fields := map[string]string{
		"post": "title", "category": "name", "tag": "name",
		"author": "name", "series": "title", "page": "title",
	}
	for field, sel := range fields {
		for _, slug := range []string{"nope", "Hello-World", "favicon.ico", strings.Repeat("a", 3000), "a b", ""} {
			name := slug
			if len(name) > 20 {
				name = "a long one"
			}
			t.Run(field+"/"+name, func(t *testing.T) {
				resp := s.send(t, request(`query($slug: String!) { `+field+`(slug: $slug) { `+sel+` } }`, map[string]any{"slug": slug}), false)
				equal(t, "status", resp.status, 200)
				var data map[string]json.RawMessage
				if err := json.Unmarshal(resp.Data, &data); err != nil {
					t.Fatalf("data %s: %v", resp.Data, err)
				}
				equal(t, "data", string(data[field]), "null")
				if len(resp.Errors) != 1 {
					t.Fatalf("errors = %v, want one NOT_FOUND", resp.Errors)
				}
				equal(t, "code", resp.Errors[0].Extensions["code"], any("NOT_FOUND"))
				equal(t, "message", resp.Errors[0].Message, "not found")
				if slug != "nope" && slug != "Hello-World" {
					if reqs := s.requests(); total(reqs) != 0 {
						t.Errorf("a slug that cannot exist sent DynamoDB requests %v", reqs)
					}
				}
			})
		}
	}
}

// TestUnknownQueryParametersAreIgnored fetches the feeds, the sitemap and
// a GraphQL GET with what campaigns and frameworks add to links
// (utm_source, Next.js's _rsc): each answers as it does without them,
// while the parameters it knows are still checked.
func TestUnknownQueryParametersAreIgnored(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	f := newSyndicationServer(t, s)
	for _, path := range []string{
		"/feed.xml", "/atom.xml", "/feed.json?limit=5", "/categories/go/feed.xml", "/authors/ada-lovelace/feed.json",
		"/sitemap.xml", "/sitemap.xml?section=pages", "/sitemap.xml?section=authors",
	} {
		t.Run(path, func(t *testing.T) {
			plain, _ := f.get(t, path)
			equal(t, "status without extras", plain.status, 200)
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			tracked, _ := f.get(t, path+sep+"utm_source=newsletter&_rsc=1x2y&utm_source=twice")
			equal(t, "status with extras", tracked.status, 200)
			if tracked.body != plain.body {
				t.Errorf("the answer with extras differs:\n%.300s\nwant\n%.300s", tracked.body, plain.body)
			}
		})
	}
	for path, says := range map[string]string{
		"/feed.xml?utm_source=newsletter&limit=0":      `limit="0"`,
		"/feed.json?_rsc=1&limit=5&limit=6":            `"limit" given 2 times`,
		"/sitemap.xml?utm_source=x&section=everything": "section=",
		"/sitemap.xml?utm_source=x&page=2":             "takes no parameters",
	} {
		a, _ := f.get(t, path)
		equal(t, path+" status", a.status, 400)
		if !strings.Contains(a.body, says) {
			t.Errorf("%s: body %q does not say %q", path, a.body, says)
		}
	}
	a := s.fetch(t, "GET", s.url+"?query="+url.QueryEscape("{ posts(first: 1) { totalCount } }")+"&utm_source=newsletter&_rsc=1x2y", "", nil)
	equal(t, "GraphQL GET status", a.status, 200)
	if !strings.Contains(a.body, `"totalCount":25`) {
		t.Errorf("GraphQL GET with extras: %s", a.body)
	}
}

// TestFeedsAreCachedAsGraphQLAnswers fetches a feed, the sitemap and a
// public GraphQL GET from servers configured alike: the same
// Cache-Control (s-maxage and stale-while-revalidate included), and
// their tags in Surrogate-Key as in Cache-Tag, so a CDN keeps and purges
// them the same way.
func TestFeedsAreCachedAsGraphQLAnswers(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.HTTP.CacheMaxAge, o.HTTP.CacheSMaxAge, o.HTTP.CacheStaleWhileRevalidate = time.Minute, time.Hour, 30*time.Second
	})
	s.seedBlog(t)
	f := newSyndicationServer(t, s, func(o *syndication.Options) {
		o.CacheMaxAge, o.CacheSMaxAge, o.CacheStaleWhileRevalidate = time.Minute, time.Hour, 30*time.Second
	})
	gql := s.fetch(t, "GET", s.url+"?query="+url.QueryEscape("{ posts(first: 1) { totalCount } }"), "", nil)
	equal(t, "GraphQL status", gql.status, 200)
	want := gql.header.Get("Cache-Control")
	equal(t, "GraphQL Cache-Control", want, "public, max-age=60, s-maxage=3600, stale-while-revalidate=30")
	for _, path := range []string{"/feed.xml", "/categories/go/atom.xml", "/sitemap.xml", "/sitemap.xml?section=authors"} {
		a, _ := f.get(t, path)
		equal(t, path+" status", a.status, 200)
		equal(t, path+" Cache-Control", a.header.Get("Cache-Control"), want)
		keys, tags := a.header.Get("Surrogate-Key"), a.header.Get("Cache-Tag")
		if keys == "" || keys != strings.ReplaceAll(tags, ",", " ") {
			t.Errorf("%s: Surrogate-Key %q, Cache-Tag %q: want the same tags", path, keys, tags)
		}
	}
}
