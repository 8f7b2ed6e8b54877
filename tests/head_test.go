package tests

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The heads of the frontend's pages: Open Graph and Twitter tags,
// canonical URL, robots and JSON-LD, over HTTP.

const headSiteURL = "https://blog.example.com"

// newHeadServer returns a server whose site has a title and a URL.
func newHeadServer(t *testing.T) *server {
	return newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.Site = graph.SiteDefaults{Title: "The Blog", Description: "About Go.", URL: headSiteURL}
	})
}

// headTitle tries to end the <script> element JSON-LD goes in.
const headTitle = "Hello </script><b>World</b>"

// seedHeadBlog writes a post by Ada, co-written by Grace, published an
// hour ago, in category Go with the tag "Go Tips" and a cover image.
func seedHeadBlog(t *testing.T, s *server) (postID string) {
	t.Helper()
	ctx := context.Background()
	ada := s.as("ada", auth.RoleAuthor)
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace", Bio: ptr("Writes programs.")}))
	grace := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("grace"), Name: "Grace Hopper"})).CreateAuthor.Author.Id
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "go", Name: "Go", Description: ptr("The Go language.")}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{
		Title: headTitle, Slug: "hello", Excerpt: ptr("A first post."), Body: ptr("Some words here."),
		Categories: []string{"go"}, CoAuthors: []string{grace}, Tags: []string{"Go Tips"},
		CoverImage: &ImageInput{Url: "https://img.example.com/cover.png", Alt: ptr("A cover"), Width: ptr(1200), Height: ptr(630)},
	})).CreatePost.Post
	at := s.clock.Now().Add(-time.Hour)
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id, At: &at}))
	return p.Id
}

// metaOf returns the contents of the tags named key, and fails when one
// has the wrong attribute.
func metaOf(t *testing.T, h HeadFields, key string) []string {
	t.Helper()
	var out []string
	for _, m := range h.Meta {
		if m.Key != key {
			continue
		}
		want := "property"
		if strings.HasPrefix(key, "twitter:") {
			want = "name"
		}
		if m.Attribute != want {
			t.Errorf("meta %s: attribute %q, want %q", key, m.Attribute, want)
		}
		out = append(out, m.Content)
	}
	return out
}

// graphOf parses a head's JSON-LD and returns its nodes by @type; it
// fails unless the text is JSON of schema.org with no "<" in it.
func graphOf(t *testing.T, h HeadFields) map[string]map[string]any {
	t.Helper()
	if strings.ContainsAny(h.JsonLd, "<>") {
		t.Errorf("jsonLd holds < or >, which could end its <script> element: %s", h.JsonLd)
	}
	var doc struct {
		Context string           `json:"@context"`
		Graph   []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal([]byte(h.JsonLd), &doc); err != nil {
		t.Fatalf("jsonLd is not JSON: %v\n%s", err, h.JsonLd)
	}
	equal(t, "@context", doc.Context, "https://schema.org")
	out := map[string]map[string]any{}
	for _, n := range doc.Graph {
		typ, _ := n["@type"].(string)
		if out[typ] != nil {
			t.Errorf("two %s nodes", typ)
		}
		out[typ] = n
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// checkBlogPosting checks the properties Google's Article rich result
// asks of a BlogPosting: headline, image, datePublished and dateModified
// in ISO 8601, and each author a Person with a name and a url.
func checkBlogPosting(t *testing.T, n map[string]any) {
	t.Helper()
	if str(n["headline"]) == "" {
		t.Error("BlogPosting without headline")
	}
	img, _ := n["image"].(map[string]any)
	if str(img["url"]) == "" && str(n["image"]) == "" {
		t.Errorf("BlogPosting without image: %v", n["image"])
	}
	for _, k := range []string{"datePublished", "dateModified"} {
		if _, err := time.Parse(time.RFC3339, str(n[k])); err != nil {
			t.Errorf("BlogPosting %s %q: %v", k, n[k], err)
		}
	}
	authors, _ := n["author"].([]any)
	if len(authors) == 0 {
		t.Fatalf("BlogPosting without author: %v", n["author"])
	}
	for _, a := range authors {
		p, _ := a.(map[string]any)
		if str(p["@type"]) != "Person" || str(p["name"]) == "" || !strings.HasPrefix(str(p["url"]), "https://") {
			t.Errorf("author %v: want a Person with a name and an absolute url", a)
		}
	}
}

// checkWebSite checks the WebSite node and its SearchAction.
func checkWebSite(t *testing.T, g map[string]map[string]any) {
	t.Helper()
	w := g["WebSite"]
	if w == nil {
		t.Fatal("no WebSite node")
	}
	equal(t, "WebSite url", str(w["url"]), headSiteURL+"/")
	equal(t, "WebSite name", str(w["name"]), "The Blog")
	action, _ := w["potentialAction"].(map[string]any)
	target, _ := action["target"].(map[string]any)
	equal(t, "SearchAction", str(action["@type"]), "SearchAction")
	equal(t, "SearchAction target", str(target["urlTemplate"]), headSiteURL+"/search?q={search_term_string}")
	equal(t, "SearchAction query-input", str(action["query-input"]), "required name=search_term_string")
}

// crumbsOf returns the breadcrumb's names and URLs in order.
func crumbsOf(t *testing.T, g map[string]map[string]any) (names, urls []string) {
	t.Helper()
	items, _ := g["BreadcrumbList"]["itemListElement"].([]any)
	for i, it := range items {
		m, _ := it.(map[string]any)
		if pos, _ := m["position"].(float64); int(pos) != i+1 {
			t.Errorf("crumb %d at position %v", i, m["position"])
		}
		names, urls = append(names, str(m["name"])), append(urls, str(m["item"]))
	}
	return names, urls
}

func TestPostHead(t *testing.T) {
	s := newHeadServer(t)
	ctx := context.Background()
	postID := seedHeadBlog(t, s)
	postURL := headSiteURL + "/posts/hello"

	h := ok[*PostHeadResponse](t)(PostHead(ctx, s.client, "hello")).Post.Head.HeadFields
	t.Run("title, canonical and robots", func(t *testing.T) {
		equal(t, "title", h.Title, headTitle)
		equal(t, "description", h.Description, "A first post.")
		equal(t, "canonical", *h.CanonicalUrl, postURL)
		equal(t, "robots", h.Robots, "index, follow, max-image-preview:large")
	})
	t.Run("Open Graph and Twitter tags", func(t *testing.T) {
		for key, want := range map[string][]string{
			"og:site_name": {"The Blog"}, "og:title": {headTitle}, "og:type": {"article"}, "og:url": {postURL},
			"og:image": {"https://img.example.com/cover.png"}, "og:image:width": {"1200"}, "og:image:height": {"630"},
			"og:image:alt": {"A cover"}, "article:section": {"Go"}, "article:tag": {"Go Tips"},
			"article:author": {headSiteURL + "/authors/ada-lovelace", headSiteURL + "/authors/grace-hopper"},
			"twitter:card":   {"summary_large_image"}, "twitter:title": {headTitle},
			"twitter:image":       {"https://img.example.com/cover.png"},
			"og:description":      {"A first post."},
			"twitter:description": {"A first post."},
		} {
			if got := metaOf(t, h, key); !slices.Equal(got, want) {
				t.Errorf("meta %s = %q, want %q", key, got, want)
			}
		}
		for _, key := range []string{"article:published_time", "article:modified_time"} {
			if got := metaOf(t, h, key); len(got) != 1 {
				t.Errorf("meta %s = %q", key, got)
			} else if _, err := time.Parse(time.RFC3339, got[0]); err != nil {
				t.Errorf("meta %s: %v", key, err)
			}
		}
	})
	t.Run("JSON-LD", func(t *testing.T) {
		if !strings.Contains(h.JsonLd, `\u003c/script\u003e`) {
			t.Errorf("jsonLd does not escape the title's </script>: %s", h.JsonLd)
		}
		g := graphOf(t, h)
		post := g["BlogPosting"]
		if post == nil {
			t.Fatalf("no BlogPosting in %s", h.JsonLd)
		}
		checkBlogPosting(t, post)
		equal(t, "headline", str(post["headline"]), headTitle)
		equal(t, "url", str(post["url"]), postURL)
		authors := post["author"].([]any)
		equal(t, "authors", len(authors), 2)
		equal(t, "author", str(authors[0].(map[string]any)["name"]), "Ada Lovelace")
		equal(t, "author url", str(authors[0].(map[string]any)["url"]), headSiteURL+"/authors/ada-lovelace")
		img := post["image"].(map[string]any)
		equal(t, "image width", img["width"], any(float64(1200)))
		names, urls := crumbsOf(t, g)
		if !slices.Equal(names, []string{"The Blog", "Go", headTitle}) || !slices.Equal(urls, []string{headSiteURL + "/", headSiteURL + "/categories/go", postURL}) {
			t.Errorf("breadcrumb %q %q", names, urls)
		}
		checkWebSite(t, g)
	})

	t.Run("canonical URL and noindex on request", func(t *testing.T) {
		ada := s.as("ada", auth.RoleAuthor)
		v := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "hello")).Post.Version
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: postID, ExpectedVersion: v,
			Seo: &SeoInput{CanonicalUrl: ptr("https://elsewhere.example.com/hello"), Noindex: ptr(true)}}))
		r := ok[*PostHeadResponse](t)(PostHead(ctx, s.client, "hello")).Post
		equal(t, "seo.noindex", r.Seo.Noindex, true)
		equal(t, "canonical", *r.Head.CanonicalUrl, "https://elsewhere.example.com/hello")
		equal(t, "og:url", strings.Join(metaOf(t, r.Head.HeadFields, "og:url"), " "), "https://elsewhere.example.com/hello")
		equal(t, "robots", r.Head.Robots, "noindex, follow")

		ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: postID, ExpectedVersion: v + 1, Seo: &SeoInput{Noindex: ptr(false)}}))
		r = ok[*PostHeadResponse](t)(PostHead(ctx, s.client, "hello")).Post
		equal(t, "seo.noindex undone", r.Seo.Noindex, false)
		equal(t, "robots", r.Head.Robots, "index, follow, max-image-preview:large")
		equal(t, "canonical kept", *r.Head.CanonicalUrl, "https://elsewhere.example.com/hello")
	})

	t.Run("a preview is never indexed", func(t *testing.T) {
		ada := s.as("ada", auth.RoleAuthor)
		d := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Draft", Slug: "draft"})).CreatePost.Post
		token := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, ada, CreatePreviewLinkInput{PostId: d.Id})).CreatePreviewLink.Token
		h := ok[*PreviewHeadResponse](t)(PreviewHead(ctx, s.client, token)).Post.Head.HeadFields
		equal(t, "robots", h.Robots, "noindex, follow")
		if h.CanonicalUrl == nil || *h.CanonicalUrl != headSiteURL+"/posts/draft" {
			t.Errorf("canonical %v", h.CanonicalUrl)
		}
	})

	t.Run("cards in a list carry their heads", func(t *testing.T) {
		r := ok[*CategoryCardHeadsResponse](t)(CategoryCardHeads(ctx, s.client, "go", ptr(20)))
		equal(t, "cards", len(r.Category.Posts.Edges), 1)
		equal(t, "canonical", *r.Category.Posts.Edges[0].Node.Head.CanonicalUrl, "https://elsewhere.example.com/hello")
	})
}

// TestPageHeads checks the heads of the home, author, category, tag,
// static and series pages.
func TestPageHeads(t *testing.T) {
	s := newHeadServer(t)
	ctx := context.Background()
	postID := seedHeadBlog(t, s)
	pg := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "About", Slug: "about", Body: ptr("About us."),
		Seo: &PageSeoInput{Noindex: ptr(true)}})).CreatePage.Page
	ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: pg.Id}))
	ada := s.as("ada", auth.RoleAuthor)
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, ada, CreateSeriesInput{Slug: "learn-go", Title: "Learn Go", Description: ptr("Go in parts.")}))
	ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "learn-go", PostId: postID}))

	r := ok[*PageHeadsResponse](t)(PageHeads(ctx, s.client, "ada-lovelace", "go", "go-tips", "about", "learn-go"))
	for _, c := range []struct {
		name, url, ogType, mainType, crumb string
		h                                  HeadFields
	}{
		{"home", headSiteURL + "/", "website", "", "", r.Site.Head.HeadFields},
		{"author", headSiteURL + "/authors/ada-lovelace", "profile", "ProfilePage", "Ada Lovelace", r.Author.Head.HeadFields},
		{"category", headSiteURL + "/categories/go", "website", "CollectionPage", "Go", r.Category.Head.HeadFields},
		{"tag", headSiteURL + "/tags/go-tips", "website", "CollectionPage", "Go Tips", r.Tag.Head.HeadFields},
		{"static page", headSiteURL + "/about", "website", "WebPage", "About", r.Page.Head.HeadFields},
		{"series", headSiteURL + "/series/learn-go", "website", "CollectionPage", "Learn Go", r.Series.Head.HeadFields},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.h.CanonicalUrl == nil || *c.h.CanonicalUrl != c.url {
				t.Errorf("canonical %v, want %s", c.h.CanonicalUrl, c.url)
			}
			equal(t, "og:type", strings.Join(metaOf(t, c.h, "og:type"), " "), c.ogType)
			equal(t, "og:url", strings.Join(metaOf(t, c.h, "og:url"), " "), c.url)
			equal(t, "twitter:card", strings.Join(metaOf(t, c.h, "twitter:card"), " "), "summary")
			g := graphOf(t, c.h)
			checkWebSite(t, g)
			if c.mainType == "" {
				return
			}
			main := g[c.mainType]
			if main == nil {
				t.Fatalf("no %s in %s", c.mainType, c.h.JsonLd)
			}
			equal(t, "url", str(main["url"]), c.url)
			names, urls := crumbsOf(t, g)
			if !slices.Equal(names, []string{"The Blog", c.crumb}) || !slices.Equal(urls, []string{headSiteURL + "/", c.url}) {
				t.Errorf("breadcrumb %q %q", names, urls)
			}
		})
	}
	person, _ := graphOf(t, r.Author.Head.HeadFields)["ProfilePage"]["mainEntity"].(map[string]any)
	if str(person["@type"]) != "Person" || str(person["name"]) != "Ada Lovelace" || str(person["description"]) != "Writes programs." {
		t.Errorf("ProfilePage's mainEntity %v", person)
	}
	equal(t, "home title", r.Site.Head.Title, "The Blog")
	equal(t, "home robots", r.Site.Head.Robots, "index, follow, max-image-preview:large")
	equal(t, "page seo.noindex", r.Page.Seo.Noindex, true)
	equal(t, "page robots on request", r.Page.Head.Robots, "noindex, follow")
}

// TestHeadCostsNoRequest checks that a post page asking for its head
// costs the DynamoDB requests of the same page without it.
func TestHeadCostsNoRequest(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ok[*SiteResponse](t)(Site(ctx, s.client)) // the server reads the settings once, then holds them

	ok[*PostPageResponse](t)(PostPage(ctx, s.client, b.commented))
	without := s.requests()
	h := ok[*PostPageWithHeadResponse](t)(PostPageWithHead(ctx, s.client, b.commented)).Post.Head
	with := s.requests()
	t.Logf("post page: %v without its head, %v with it", without, with)
	if total(with) != total(without) {
		t.Errorf("post page with its head: %d DynamoDB requests %v, without: %d %v", total(with), with, total(without), without)
	}
	// Without a site URL, the head's URLs are the frontend's paths.
	equal(t, "canonical", *h.CanonicalUrl, "/posts/"+b.commented)
	if graphOf(t, h.HeadFields)["BlogPosting"] == nil {
		t.Errorf("no BlogPosting in %s", h.JsonLd)
	}
}
