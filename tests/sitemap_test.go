package tests

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
)

// TestSitemap checks the sitemap index and its pages with pages of 3
// URLs: the namespace, an index that names every page, at most 3 URLs a
// page, every published post once and nothing else, and lastmod.
func TestSitemap(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	f := newSyndicationServer(t, s, func(o *syndication.Options) { o.SitemapPageSize = 3 })
	type loc struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	}
	a, _ := f.get(t, "/sitemap.xml")
	equal(t, "Content-Type", a.header.Get("Content-Type"), "application/xml; charset=utf-8")
	var index struct {
		XMLName  xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
		Sitemaps []loc    `xml:"sitemap"`
	}
	if err := xml.Unmarshal([]byte(a.body), &index); err != nil {
		t.Fatalf("the index does not parse as a sitemap index: %v\n%s", err, a.body)
	}
	posts := map[string]bool{}
	pages := 0
	for _, sm := range index.Sitemaps {
		u, err := url.Parse(sm.Loc)
		if err != nil || !strings.HasPrefix(sm.Loc, siteURL+"/sitemap.xml?") {
			t.Fatalf("index names %q, not a page of the site's sitemap", sm.Loc)
		}
		a, _ := f.get(t, "/sitemap.xml?"+u.RawQuery)
		equal(t, sm.Loc+" status", a.status, http.StatusOK)
		var set struct {
			XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
			URLs    []loc    `xml:"url"`
		}
		if err := xml.Unmarshal([]byte(a.body), &set); err != nil {
			t.Fatalf("%s does not parse as a urlset: %v", sm.Loc, err)
		}
		if len(set.URLs) == 0 || len(set.URLs) > 3 {
			t.Errorf("%s has %d URLs, want 1 to 3", sm.Loc, len(set.URLs))
		}
		pages++
		for _, l := range set.URLs {
			if l.LastMod != "" {
				if _, err := time.Parse(time.RFC3339, l.LastMod); err != nil {
					t.Errorf("%s: lastmod %q: %v", l.Loc, l.LastMod, err)
				}
			}
			if p, ok := strings.CutPrefix(l.Loc, siteURL+"/posts/"); ok {
				if posts[p] {
					t.Errorf("post %s listed twice", p)
				}
				posts[p] = true
				if l.LastMod == "" {
					t.Errorf("post %s without lastmod", p)
				}
			}
		}
	}
	equal(t, "posts in the sitemap", len(posts), len(b.published))
	for i := range b.published {
		if !posts[postSlug(i)] {
			t.Errorf("post-%d is not in the sitemap", i)
		}
	}
	if posts["a-draft"] || posts["soon"] {
		t.Error("a draft or scheduled post is in the sitemap")
	}
	// 25 posts in pages of 3 (by month), 3 authors in one page, 2
	// categories in one, the home page and the months in one or more.
	if pages < 9+1+1+1 {
		t.Errorf("%d pages, want at least 12", pages)
	}
}

// TestSitemapTagHeaderIsCapped checks that a sitemap page of many posts
// keeps its Cache-Tag header within gqlhttp.MaxTagHeaderBytes, with the
// posts' section tag (feed, which every post event names) in place of
// their own tags, and that a small page keeps its posts' own tags.
func TestSitemapTagHeaderIsCapped(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ok[*storage.Author](t)(s.store.CreateAuthor(ctx, storage.NewAuthor{ID: "ada", Name: "Ada"}))
	// About 42 bytes of tag a post: 250 take 10 KB.
	month := start.AddDate(0, 0, -start.Day()+1).Truncate(24 * time.Hour)
	for i := range 250 {
		p := ok[*storage.Post](t)(s.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i)}))
		ok[*storage.Post](t)(s.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: month.Add(time.Duration(i) * time.Minute)}))
	}
	path := "/sitemap.xml?section=posts&month=" + month.Format("2006-01")
	for _, c := range []struct {
		name     string
		pageSize int
		wantPost bool
	}{{"a page of 250 posts", 0, false}, {"a page of 10 posts", 10, true}} {
		t.Run(c.name, func(t *testing.T) {
			f := newSyndicationServer(t, s, func(o *syndication.Options) { o.SitemapPageSize = c.pageSize })
			a, _ := f.get(t, path)
			equal(t, "status", a.status, http.StatusOK)
			header := a.header.Get(gqlhttp.CacheTagHeader)
			tags := strings.Split(header, ",")
			if len(header) > gqlhttp.MaxTagHeaderBytes {
				t.Errorf("Cache-Tag of %d bytes, want at most %d", len(header), gqlhttp.MaxTagHeaderBytes)
			}
			// Every post event names the feed and its month's archive.
			if !slices.Contains(tags, frontend.TagFeed) && !slices.Contains(tags, frontend.TagArchive(month)) {
				t.Errorf("Cache-Tag %.200q names neither the feed nor the month's archive", header)
			}
			hasPost := slices.ContainsFunc(tags, func(tag string) bool { return strings.HasPrefix(tag, "post:") })
			equal(t, "a post's own tag in Cache-Tag", hasPost, c.wantPost)
			equal(t, "the site's tag in Cache-Tag", slices.Contains(tags, frontend.TagSite), true)
			equal(t, "Cache-Control", a.header.Get("Cache-Control"), "public, max-age=60")
		})
	} // The lists of all authors and the index, which counts them, carry
	// the section tag that a new author's event names.
	f := newSyndicationServer(t, s)
	for _, path := range []string{"/sitemap.xml", "/sitemap.xml?section=authors"} {
		a, _ := f.get(t, path)
		if tags := strings.Split(a.header.Get(gqlhttp.CacheTagHeader), ","); !slices.Contains(tags, frontend.TagAuthors) {
			t.Errorf("%s: Cache-Tag %q lacks %s", path, tags, frontend.TagAuthors)
		}
	}
}
