package tests

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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
