package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestFeedsFollowAcceptLanguage reads the blog's feed in each format on
// a site of several locales without ?locale=: the best match of the
// site's locales for the reader's Accept-Language, with Vary:
// Accept-Language, Content-Language and an ETag of its own; ?locale=
// wins over the header; no header, or one matching none of the site's
// locales, is the whole blog's feed as before. Each costs the requests
// of the feed it serves.
func TestFeedsFollowAcceptLanguage(t *testing.T) {
	s := newServer(t)
	w := s.seedBlog(t).writers[0]
	if err := raw(t, s.admin, `mutation { updateSite(input: {expectedVersion: 0, locales: ["en", "de", "pt-BR"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	const create = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`
	const publish = `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`
	for i, loc := range []string{"en", "de", "pt-BR"} {
		var made struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": "Beitrag " + loc, "slug": fmt.Sprint("beitrag-", i), "body": "Text", "locale": loc}
		if err := raw(t, w, create, map[string]any{"in": in}, &made); err != nil {
			t.Fatal(err)
		}
		if err := raw(t, w, publish, map[string]any{"id": made.CreatePost.Post.ID}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	feeds := newSyndicationServer(t, s)
	for _, file := range feedFormats {
		whole, wholeRequests := feeds.get(t, "/"+file)
		equal(t, file+" without Accept-Language", whole.status, http.StatusOK)
		equal(t, file+" without Accept-Language varies", whole.header.Get("Vary"), "Accept-Language")
		equal(t, file+" without Accept-Language has no language", whole.header.Get("Content-Language"), "")
		equal(t, file+" without Accept-Language holds every locale", strings.Contains(whole.body, "Beitrag de") && strings.Contains(whole.body, "Beitrag en"), true)

		etags := map[string]string{"": whole.header.Get("ETag")}
		for _, c := range []struct{ header, want string }{
			{"de-CH, en;q=0.5", "de"},
			{"pt-PT;q=0.9, fr", "pt-BR"},
			{"fr, en-GB;q=0.8", "en"},
		} {
			a, n := feeds.get(t, "/"+file, "Accept-Language", c.header)
			name := fmt.Sprintf("%s for %q", file, c.header)
			equal(t, name+" status", a.status, http.StatusOK)
			equal(t, name+" Content-Language", a.header.Get("Content-Language"), c.want)
			equal(t, name+" Vary", a.header.Get("Vary"), "Accept-Language")
			equal(t, name+" holds the post in "+c.want+" alone", strings.Contains(a.body, "Beitrag "+c.want) && strings.Count(a.body, "Beitrag ") == 1, true)
			// The locale's own list, as ?locale= reads it.
			explicit, m := feeds.get(t, "/"+file+"?locale="+c.want)
			equal(t, name+" requests", n, m)
			equal(t, name+" is the feed of ?locale="+c.want, a.body, explicit.body)
			equal(t, name+" ETag", a.header.Get("ETag"), explicit.header.Get("ETag"))
			if other, ok := etags[a.header.Get("ETag")]; ok {
				t.Errorf("%s has the ETag of the feed for %q", name, other)
			}
			etags[a.header.Get("ETag")] = c.header
			// A 304 still says what it varies on.
			nm, _ := feeds.get(t, "/"+file, "Accept-Language", c.header, "If-None-Match", a.header.Get("ETag"))
			equal(t, name+" revalidated", nm.status, http.StatusNotModified)
			equal(t, name+" revalidated Vary", nm.header.Get("Vary"), "Accept-Language")
		}

		// ?locale= wins over the header and does not vary on it.
		a, _ := feeds.get(t, "/"+file+"?locale=de", "Accept-Language", "en")
		equal(t, file+"?locale=de with Accept-Language en", a.header.Get("Content-Language"), "de")
		equal(t, file+"?locale=de does not vary", a.header.Get("Vary"), "")
		// A header matching none of the site's locales: the whole feed.
		a, n := feeds.get(t, "/"+file, "Accept-Language", "ja")
		equal(t, file+" for ja", a.body, whole.body)
		equal(t, file+" for ja requests", n, wholeRequests)
		equal(t, file+" for ja has no language", a.header.Get("Content-Language"), "")
	}
	// A category's feed is no locale's: it does not vary.
	a, _ := feeds.get(t, "/categories/go/feed.xml", "Accept-Language", "de")
	equal(t, "a category's feed", a.status, http.StatusOK)
	equal(t, "a category's feed with Accept-Language", a.header.Get("Vary")+a.header.Get("Content-Language"), "")
}
