package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
)

// The feeds and the sitemap (package syndication) over HTTP, on the
// store of a GraphQL test server: each format parsed with encoding/xml
// or encoding/json, what readers see in it, the DynamoDB requests of
// each, and HTTP caching. CI also parses the demo blog's feeds with npm
// feedparser (e2e/feeds.mjs).

const siteURL = "https://blog.example.com"

// syndicationServer serves s's store's feeds and sitemap, counting the DynamoDB
// requests of the last one.
type syndicationServer struct {
	url  string
	mu   sync.Mutex
	last *storage.Counter
}

func newSyndicationServer(t *testing.T, s *server, configure ...func(*syndication.Options)) *syndicationServer {
	t.Helper()
	opts := syndication.Options{
		SiteURL: siteURL, Title: "Test Blog", Paths: frontend.DefaultPaths,
		CacheMaxAge: time.Minute, Logger: s.opts.Logger,
	}
	for _, f := range configure {
		f(&opts)
	}
	h, err := syndication.New(s.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	fs := &syndicationServer{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		fs.mu.Lock()
		fs.last = counter
		fs.mu.Unlock()
		mux.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	fs.url = hs.URL
	return fs
}

// get fetches path with headers and returns the answer and its DynamoDB
// requests.
func (f *syndicationServer) get(t *testing.T, path string, headers ...string) (httpAnswer, int) {
	t.Helper()
	h := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	a := (&server{}).fetch(t, http.MethodGet, f.url+path, "", h)
	f.mu.Lock()
	defer f.mu.Unlock()
	return a, f.last.Total()
}

var feedFormats = []string{"feed.xml", "atom.xml", "feed.json"}

// TestFeeds reads every feed of the test blog in every format and checks
// what a reader sees: the newest published posts only, absolute links
// from the site URL, stable ids, dates, authors, categories and bodies.
func TestFeeds(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	f := newSyndicationServer(t, s)
	ids := map[string]string{} // slug → id
	for i, id := range b.published {
		ids[postSlug(i)] = storeID(t, id)
	}
	cases := []struct {
		name, prefix, title string
		count               int
		newest              string
		author              string
	}{
		{"blog", "/", "Test Blog", 20, "post-24", ""},
		{"category", "/categories/dynamodb/", "Test Blog: DynamoDB", 9, "post-24", ""},
		{"author", "/authors/grace-hopper/", "Test Blog: Grace Hopper", 12, "post-23", "Grace Hopper"},
	}
	for _, c := range cases {
		for _, format := range feedFormats {
			t.Run(c.name+" "+format, func(t *testing.T) {
				a, _ := f.get(t, c.prefix+format)
				equal(t, "status", a.status, http.StatusOK)
				title, self, entries := parseFeed(t, format, a.body)
				equal(t, "title", title, c.title)
				equal(t, "self link", self, siteURL+c.prefix+format)
				equal(t, "entries", len(entries), c.count)
				if len(entries) == 0 {
					return
				}
				e := entries[0]
				equal(t, "newest link", e.url, siteURL+"/posts/"+c.newest)
				equal(t, "newest id", e.id, "urn:uuid:"+ids[c.newest])
				if c.author != "" {
					equal(t, "author", e.author, c.author)
				}
				n := strings.TrimPrefix(c.newest, "post-")
				equal(t, "newest body", strings.TrimSpace(e.html), `<h1 id="h-post-`+n+`">Post `+n+"</h1>\n<p>Body.</p>")
				for i := 1; i < len(entries); i++ {
					if !entries[i].published.Before(entries[i-1].published) {
						t.Errorf("entry %d published %s, not before %s", i, entries[i].published, entries[i-1].published)
					}
				}
				for _, e := range entries {
					if e.title == "Draft" || e.title == "Soon" {
						t.Errorf("a draft or scheduled post is in the feed: %q", e.title)
					}
					if e.categories == 0 {
						t.Errorf("%q without categories", e.title)
					}
				}
			})
		}
	}
}

func postSlug(i int) string { return "post-" + strconv.Itoa(i) }

// storeID returns the store's id of a GraphQL global id ("Post:<id>",
// base64url).
func storeID(t *testing.T, global string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(global)
	_, id, ok := strings.Cut(string(raw), ":")
	if err != nil || !ok {
		t.Fatalf("%q is not a global id", global)
	}
	return id
}

// TestFeedRequests checks the DynamoDB requests of each feed and of the
// sitemap, at two sizes: they do not depend on the number of posts shown.
func TestFeedRequests(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	full := newSyndicationServer(t, s)
	excerpt := newSyndicationServer(t, s, func(o *syndication.Options) { o.Content = syndication.ContentExcerpt })
	t.Run("the first request of a server reads the site settings once", func(t *testing.T) {
		a, n := full.get(t, "/sitemap.xml")
		equal(t, "status", a.status, http.StatusOK)
		equal(t, "DynamoDB requests", n, 4)
		_, n = full.get(t, "/sitemap.xml")
		equal(t, "DynamoDB requests", n, 3)
	})
	for _, limit := range []string{"", "?limit=100"} {
		for _, c := range []struct {
			name   string
			f      *syndicationServer
			path   string
			budget int
		}{
			{"blog, full: the feed's summaries, then their bodies", full, "/feed.xml", 2},
			{"blog, excerpt", excerpt, "/atom.xml", 1},
			{"category, full: category, posts, their bodies", full, "/categories/go/feed.json", 3},
			{"category, excerpt: category and posts", excerpt, "/categories/go/feed.xml", 2},
			{"author, full: slug, author, posts, bodies", full, "/authors/ada-lovelace/atom.xml", 4},
			{"author, excerpt", excerpt, "/authors/ada-lovelace/feed.json", 3},
		} {
			t.Run(c.name+limit, func(t *testing.T) {
				a, n := c.f.get(t, c.path+limit)
				equal(t, "status", a.status, http.StatusOK)
				equal(t, "DynamoDB requests", n, c.budget)
			})
		}
	}
	for _, c := range []struct {
		path   string
		budget int
	}{
		// The counts, and the first tag and series (at once).
		{"/sitemap.xml", 3},
		{"/sitemap.xml?section=pages", 1},
		{"/sitemap.xml?section=static", 1},
		{"/sitemap.xml?section=categories", 1},
		{"/sitemap.xml?section=authors", 1},
	} {
		t.Run(c.path, func(t *testing.T) {
			a, n := full.get(t, c.path)
			equal(t, "status", a.status, http.StatusOK)
			equal(t, "DynamoDB requests", n, c.budget)
		})
	}
	t.Run("a month of posts: a Query for each 100", func(t *testing.T) {
		month := start.Add(-time.Hour).UTC().Format("2006-01")
		a, n := full.get(t, "/sitemap.xml?section=posts&month="+month)
		equal(t, "status", a.status, http.StatusOK)
		equal(t, "DynamoDB requests", n, 1)
	})
}

// TestFeedCaching checks the HTTP caching of feeds: an ETag that a
// matching If-None-Match turns into 304, Cache-Control, the cache tags
// of what a feed shows, and no-store on errors.
func TestFeedCaching(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	f := newSyndicationServer(t, s)
	for _, path := range []string{"/feed.xml", "/categories/go/atom.xml", "/authors/ada-lovelace/feed.json", "/sitemap.xml"} {
		t.Run(path, func(t *testing.T) {
			a, _ := f.get(t, path)
			equal(t, "status", a.status, http.StatusOK)
			equal(t, "Cache-Control", a.header.Get("Cache-Control"), "public, max-age=60")
			etag := a.header.Get("ETag")
			if !strings.HasPrefix(etag, `"`) {
				t.Fatalf("ETag %q", etag)
			}
			again, n := f.get(t, path, "If-None-Match", etag)
			equal(t, "status with If-None-Match", again.status, http.StatusNotModified)
			equal(t, "304 body", again.body, "")
			equal(t, "304 ETag", again.header.Get("ETag"), etag)
			if n == 0 {
				t.Error("a 304 read nothing: it cannot know the feed did not change")
			}
			other, _ := f.get(t, path, "If-None-Match", `"other"`)
			equal(t, "status with another ETag", other.status, http.StatusOK)
		})
	}
	a, _ := f.get(t, "/categories/go/feed.xml")
	tags := strings.Split(a.header.Get("Cache-Tag"), ",")
	for _, want := range []string{"category:go", "post:" + storeID(t, b.published[24]), "author:" + storeID(t, b.authors[0])} {
		if !contains(tags, want) {
			t.Errorf("Cache-Tag %v lacks %q", tags, want)
		}
	}
	a, _ = f.get(t, "/feed.json")
	if tags := strings.Split(a.header.Get("Cache-Tag"), ","); !contains(tags, frontend.TagFeed) {
		t.Errorf("the blog's feed: Cache-Tag %v lacks %q", tags, frontend.TagFeed)
	}
	for _, path := range []string{"/categories/nowhere/feed.xml", "/feed.xml?limit=x"} {
		a, _ := f.get(t, path)
		equal(t, path+" Cache-Control", a.header.Get("Cache-Control"), "no-store")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestFeedErrors checks the answers to feeds that do not exist and to
// bad query parameters: 404 and 400 with a message that says why.
func TestFeedErrors(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	f := newSyndicationServer(t, s)
	for _, c := range []struct {
		path   string
		status int
		says   string
	}{
		{"/categories/nowhere/feed.xml", 404, "category nowhere not found"},
		{"/categories/Not_A_Slug/atom.xml", 404, "not found"},
		{"/authors/nobody/feed.json", 404, "author nobody not found"},
		{"/feed.xml?limit=0", 400, `limit="0": must be a whole number from 1 to 100`},
		{"/feed.xml?limit=101", 400, "from 1 to 100"},
		{"/atom.xml?limit=ten", 400, "from 1 to 100"},
		{"/atom.xml?limit=+5", 400, "from 1 to 100"},
		{"/feed.json?limit=5&limit=6", 400, `"limit" given 2 times`},
		{"/feed.xml?limit=%zz", 400, "does not parse"},
		{"/sitemap.xml?section=everything", 400, "must be pages, static, categories, authors, tags, series or posts"},
		{"/sitemap.xml?section=posts", 400, "needs a month as YYYY-MM"},
		{"/sitemap.xml?section=posts&month=2026-13", 400, "needs a month"},
		{"/sitemap.xml?section=authors&month=2026-01", 400, "month goes with section=posts"},
		{"/sitemap.xml?page=2", 400, "the index (/sitemap.xml) takes no parameters"},
		{"/sitemap.xml?section=authors&page=0", 400, "page=\"0\""},
		{"/sitemap.xml?section=authors&page=2", 404, "not found"},
		{"/sitemap.xml?section=posts&month=1999-01", 404, "no posts there"},
	} {
		t.Run(c.path, func(t *testing.T) {
			a, _ := f.get(t, c.path)
			equal(t, "status", a.status, c.status)
			equal(t, "Content-Type", a.header.Get("Content-Type"), "text/plain; charset=utf-8")
			if !strings.Contains(a.body, c.says) {
				t.Errorf("body %q does not say %q", a.body, c.says)
			}
		})
	}
	t.Run("HEAD answers the headers alone, other methods 405", func(t *testing.T) {
		head := (&server{}).fetch(t, http.MethodHead, f.url+"/feed.xml", "", nil)
		equal(t, "HEAD status", head.status, http.StatusOK)
		equal(t, "HEAD body", head.body, "")
		if head.header.Get("ETag") == "" || head.header.Get("Content-Type") != "application/rss+xml; charset=utf-8" {
			t.Errorf("HEAD headers %v", head.header)
		}
		post := (&server{}).fetch(t, http.MethodPost, f.url+"/feed.xml", "{}", nil)
		equal(t, "POST status", post.status, http.StatusMethodNotAllowed)
	})
	t.Run("no site URL: 503 that says what to set", func(t *testing.T) {
		f := newSyndicationServer(t, s, func(o *syndication.Options) { o.SiteURL = "" })
		a, n := f.get(t, "/feed.xml")
		equal(t, "status", a.status, http.StatusServiceUnavailable)
		equal(t, "requests", n, 0)
		if !strings.Contains(a.body, "-site-url") {
			t.Errorf("body %q does not name -site-url", a.body)
		}
	})
}

// TestFeedLinksFollowPathsAndSlugs checks links made from a post path
// with the date in it, ids that keep through a change of slug, an
// author's old slug redirecting to their feed, covers, escaping, the
// excerpt setting, and a scheduled post that shows once its time came.
func TestFeedLinksFollowPathsAndSlugs(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	f := newSyndicationServer(t, s, func(o *syndication.Options) {
		o.SiteURL = siteURL + "/"
		o.Paths.Post = "/blog/{yyyy}/{mm}/{slug}"
	})
	ctx := context.Background()
	p, err := s.store.GetPost(ctx, storeID(t, b.published[24]))
	if err != nil {
		t.Fatal(err)
	}
	title, slug := `Ampersands & <angles> "quoted" ]]> end`, "renamed-post"
	if _, err := s.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: &title, Slug: &slug,
		CoverImage: &storage.Image{URL: "https://img.example.com/covers/cover.PNG", Alt: "A cover"}}); err != nil {
		t.Fatal(err)
	}
	want := siteURL + "/blog/" + p.PublishedAt.UTC().Format("2006/01") + "/renamed-post"
	for _, format := range feedFormats {
		a, _ := f.get(t, "/"+format)
		_, self, entries := parseFeed(t, format, a.body)
		equal(t, format+" self", self, siteURL+"/"+format)
		e := entries[0]
		equal(t, format+" link", e.url, want)
		equal(t, format+" id after the slug changed", e.id, "urn:uuid:"+p.ID)
		equal(t, format+" escaped title", e.title, title)
	}
	a, _ := f.get(t, "/feed.xml")
	var rss rssDoc
	if err := xml.Unmarshal([]byte(a.body), &rss); err != nil {
		t.Fatal(err)
	}
	if enc := rss.Channel.Items[0].Enclosure; enc == nil || enc.URL != "https://img.example.com/covers/cover.PNG" || enc.Type != "image/png" {
		t.Errorf("RSS enclosure %+v, want the cover as image/png", enc)
	}
	a, _ = f.get(t, "/feed.json")
	var jf jsonFeedDoc
	if err := json.Unmarshal([]byte(a.body), &jf); err != nil {
		t.Fatal(err)
	}
	equal(t, "JSON Feed image", jf.Items[0].Image, "https://img.example.com/covers/cover.PNG")

	t.Run("an author's old slug redirects to the feed at the new one", func(t *testing.T) {
		au, err := s.store.GetAuthor(ctx, storeID(t, b.authors[1]))
		if err != nil {
			t.Fatal(err)
		}
		newSlug := "admiral-hopper"
		if _, err := s.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: au.ID, ExpectedVersion: au.Version, Slug: &newSlug}); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, f.url+"/authors/grace-hopper/atom.xml?limit=3", nil)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		equal(t, "status", resp.StatusCode, http.StatusMovedPermanently)
		equal(t, "Location", resp.Header.Get("Location"), "/authors/admiral-hopper/atom.xml?limit=3")
		a, _ := f.get(t, "/authors/admiral-hopper/atom.xml?limit=3")
		_, self, entries := parseFeed(t, "atom.xml", a.body)
		equal(t, "self", self, siteURL+"/authors/admiral-hopper/atom.xml")
		equal(t, "entries", len(entries), 3)
	})

	t.Run("excerpts only", func(t *testing.T) {
		f := newSyndicationServer(t, s, func(o *syndication.Options) { o.Content = syndication.ContentExcerpt })
		for _, format := range feedFormats {
			a, _ := f.get(t, "/"+format)
			_, _, entries := parseFeed(t, format, a.body)
			if entries[0].html != "" {
				t.Errorf("%s: an excerpt feed carries the body %q", format, entries[0].html)
			}
		}
		if a, _ := f.get(t, "/feed.json"); !strings.Contains(a.body, `"content_text": "Excerpt"`) {
			t.Errorf("JSON Feed with excerpts has no content_text:\n%.600s", a.body)
		}
	})

	t.Run("a scheduled post shows once its time has come", func(t *testing.T) {
		a, _ := f.get(t, "/categories/go/feed.json")
		_, _, entries := parseFeed(t, "feed.json", a.body)
		if entries[0].title == "Soon" {
			t.Fatal("the scheduled post is in the feed before its time")
		}
		s.clock.Advance(3 * time.Hour)
		a, _ = f.get(t, "/categories/go/feed.json")
		_, _, entries = parseFeed(t, "feed.json", a.body)
		equal(t, "newest after its time", entries[0].title, "Soon")
	})
}
