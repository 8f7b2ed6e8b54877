package tests

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
)

// tagFeedsBlog adds to s's test blog three posts by ada tagged "Go Tips"
// (one also "Golang") in the series learn-go, published an hour apart,
// and a draft tagged "Drafty" in the series too.
func tagFeedsBlog(t *testing.T, s *server) {
	t.Helper()
	ctx := context.Background()
	b := s.seedBlog(t)
	ada := storeID(t, b.authors[0])
	ok[*storage.Series](t)(s.store.CreateSeries(ctx, storage.NewSeries{Slug: "learn-go", Title: "Learn Go", OwnerID: ada}))
	for i, tags := range [][]string{{"Go Tips"}, {"Go Tips", "Golang"}, {"Go Tips"}, {"Drafty"}} {
		p := ok[*storage.Post](t)(s.store.CreatePost(ctx, storage.NewPost{AuthorID: ada, Title: fmt.Sprintf("Part %d", i+1),
			Slug: fmt.Sprintf("part-%d", i+1), Body: fmt.Sprintf("Part %d.", i+1), Categories: []string{"go"}, Tags: tags}))
		if i < 3 {
			ok[*storage.Post](t)(s.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Duration(3-i) * time.Minute)}))
		}
		if _, _, err := s.store.AddSeriesPost(ctx, storage.SeriesPostChange{Slug: "learn-go", PostID: p.ID}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTagAndSeriesFeeds reads the feeds of a tag and of a series in
// every format, as a reader would, with their DynamoDB requests, cache
// tags, a merged tag's redirect and the 404 of what does not exist.
func TestTagAndSeriesFeeds(t *testing.T) {
	s := newServer(t)
	tagFeedsBlog(t, s)
	full := newSyndicationServer(t, s)
	excerpt := newSyndicationServer(t, s, func(o *syndication.Options) { o.Content = syndication.ContentExcerpt })
	// The first request of a server reads the site settings.
	full.get(t, "/feed.xml")
	excerpt.get(t, "/feed.xml")
	for _, c := range []struct {
		prefix, title, tag string
		entries            []string
		full, excerpt      int // DynamoDB requests
	}{
		// The tag and its posts at once, then their bodies.
		{"/tags/go-tips/", "Test Blog: Go Tips", "tag:go-tips", []string{"part-3", "part-2", "part-1"}, 3, 2},
		// The series, then its posts with their bodies; not its draft.
		{"/series/learn-go/", "Test Blog: Learn Go", "series:learn-go", []string{"part-3", "part-2", "part-1"}, 2, 2},
	} {
		for _, format := range feedFormats {
			t.Run(c.prefix+format, func(t *testing.T) {
				a, n := full.get(t, c.prefix+format)
				equal(t, "status", a.status, http.StatusOK)
				equal(t, "DynamoDB requests, full content", n, c.full)
				title, self, entries := parseFeed(t, format, a.body)
				equal(t, "title", title, c.title)
				equal(t, "self link", self, siteURL+c.prefix+format)
				var got []string
				for _, e := range entries {
					got = append(got, strings.TrimPrefix(e.url, siteURL+"/posts/"))
				}
				equal(t, "entries", strings.Join(got, " "), strings.Join(c.entries, " "))
				if len(entries) > 0 && !strings.Contains(entries[0].html, "Part 3.") {
					t.Errorf("newest entry's body %q", entries[0].html)
				}
				if tags := strings.Split(a.header.Get(gqlhttp.CacheTagHeader), ","); !slices.Contains(tags, c.tag) {
					t.Errorf("Cache-Tag %q lacks %s", tags, c.tag)
				}
				_, n = excerpt.get(t, c.prefix+format+"?limit=2")
				equal(t, "DynamoDB requests, excerpts", n, c.excerpt)
			})
		}
	}
	for path, requests := range map[string]int{
		"/tags/nope/feed.xml": 2, "/tags/Go_Tips/atom.xml": 0, "/series/nope/feed.json": 1, "/series/favicon.ico/feed.xml": 0,
	} {
		a, n := full.get(t, path)
		equal(t, path+" status", a.status, http.StatusNotFound)
		equal(t, path+" DynamoDB requests", n, requests)
	}
	// An upper-case form of a slug redirects to the feed at the slug.
	status, location := redirectOf(t, full.url+"/tags/Go-Tips/atom.xml?limit=2")
	equal(t, "an upper-case slug's feed", status, http.StatusMovedPermanently)
	equal(t, "its Location", location, "/tags/go-tips/atom.xml?limit=2")

	if _, err := s.store.MergeTags(context.Background(), storage.TagMerge{From: "go-tips", Into: "golang"}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, full.url+"/tags/go-tips/feed.json?limit=5", nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	equal(t, "a merged tag's feed", resp.StatusCode, http.StatusMovedPermanently)
	equal(t, "Location", resp.Header.Get("Location"), "/tags/golang/feed.json?limit=5")
}

// TestSitemapListsTagsAndSeries checks the sitemap's sections of tags
// and of series: named by the index, each a Query, listing the tags and
// series with published posts at their frontend paths.
func TestSitemapListsTagsAndSeries(t *testing.T) {
	s := newServer(t)
	f := newSyndicationServer(t, s)
	a, n := f.get(t, "/sitemap.xml")
	equal(t, "index status", a.status, http.StatusOK)
	if strings.Contains(a.body, "section=tags") || strings.Contains(a.body, "section=series") {
		t.Errorf("the index of a blog without tags or series names their sections:\n%s", a.body)
	}
	equal(t, "index requests: the counts, the first tag and the first series", n, 4) // with the site settings

	tagFeedsBlog(t, s)
	a, n = f.get(t, "/sitemap.xml")
	equal(t, "index requests", n, 3)
	for _, section := range []string{"tags", "series"} {
		if !strings.Contains(a.body, "<loc>"+siteURL+"/sitemap.xml?section="+section+"</loc>") {
			t.Errorf("the index does not name section=%s:\n%s", section, a.body)
		}
	}
	for section, want := range map[string][]string{
		"tags":   {"/tags/go-tips", "/tags/golang"},
		"series": {"/series/learn-go"},
	} {
		a, n := f.get(t, "/sitemap.xml?section="+section)
		equal(t, section+" status", a.status, http.StatusOK)
		equal(t, section+" requests", n, 1)
		equal(t, section+" URLs", strings.Count(a.body, "<loc>"), len(want))
		for _, path := range want {
			if !strings.Contains(a.body, "<loc>"+siteURL+path+"</loc>") {
				t.Errorf("section=%s does not list %s:\n%s", section, path, a.body)
			}
		}
		if strings.Contains(a.body, "drafty") {
			t.Errorf("section=%s lists a tag with no published post", section)
		}
		if tags := strings.Split(a.header.Get(gqlhttp.CacheTagHeader), ","); !slices.Contains(tags, section) {
			t.Errorf("section=%s: Cache-Tag %q lacks its section tag", section, tags)
		}
	}
}

// redirectOf returns the status and Location of a GET of url, without
// following a redirect.
func redirectOf(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}
