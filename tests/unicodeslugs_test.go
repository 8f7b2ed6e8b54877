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

	"github.com/blogql/blog/gqlhttp"
)

// TestUnicodeSlugs names tags, categories and posts in other scripts than
// Latin: their slugs keep the script and find them; a slug in another
// normalization form, one mixing look-alike scripts in a word and one
// with a text direction character are refused with BAD_USER_INPUT; with
// slugTransliteration LATIN, titles make Latin slugs; ASCII slugs stay.
func TestUnicodeSlugs(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t)
	ctx := context.Background()

	cat := ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "привет", Name: "Привет"})).CreateCategory.Category
	equal(t, "category slug", cat.Slug, "привет")
	equal(t, "category by slug", ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "привет", nil, nil)).Category.Name, "Привет")
	old := ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "plain-ascii", Name: "Plain"})).CreateCategory.Category
	equal(t, "an ASCII slug", ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, old.Slug, nil, nil)).Category.Name, "Plain")

	for _, c := range []struct{ what, slug string }{
		{"decomposed é", "cafe\u0301"},
		{"Cyrillic а in a Latin word", "p\u0430ypal"},
		{"a right-to-left override", "abc\u202Edef"},
		{"upper case", "Привет-2"},
	} {
		_, err := CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c.slug, Name: "x"})
		equal(t, c.what, code(err), "BAD_USER_INPUT")
	}

	for _, c := range []struct{ title, slug string }{
		{"日本語の記事", "日本語の記事"},
		{"Привет мир", "привет-мир"},
		{"مرحبا بالعالم", "مرحبا-بالعالم"},
	} {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: c.title, Tags: []string{"日本語"}})).CreatePost.Post
		equal(t, "slug of "+c.title, p.Slug, c.slug)
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: p.Id}))
		equal(t, "post by "+c.slug, ok[*PostPageResponse](t)(PostPage(ctx, s.client, c.slug)).Post.Id, p.Id)
	}
	equal(t, "tag by slug", ok[*TagPageResponse](t)(TagPage(ctx, s.client, "日本語", nil, nil, nil, nil)).Tag.Name, "日本語")

	// Composed and decomposed й name one tag, and both forms find it, as
	// does upper case.
	for title, name := range map[string]string{"Composed": "Мой", "Decomposed": "Мои\u0306"} {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: title, Tags: []string{name}})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: p.Id}))
	}
	for _, form := range []string{"мой", "мои\u0306", "МОЙ", "МОИ\u0306"} {
		tag := ok[*TagPageResponse](t)(TagPage(ctx, s.client, form, nil, nil, nil, nil)).Tag
		equal(t, "the tag found by "+form, tag.Slug, "мой")
		equal(t, "its posts, by "+form, tag.Posts.TotalCount, 2)
	}
	equal(t, "a category by upper case", ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "ПРИВЕТ", nil, nil)).Category.Name, "Привет")
	equal(t, "a post by upper case", ok[*PostPageResponse](t)(PostPage(ctx, s.client, "ПРИВЕТ-МИР")).Post.Slug, "привет-мир")
	upper := ok[*ArchiveOfAuthorSlugResponse](t)(ArchiveOfAuthorSlug(ctx, s.client, "ADA-LOVELACE")).Archive
	lower := ok[*ArchiveOfAuthorSlugResponse](t)(ArchiveOfAuthorSlug(ctx, s.client, "ada-lovelace")).Archive
	if len(lower) == 0 || fmt.Sprint(upper) != fmt.Sprint(lower) {
		t.Errorf("the archive of ADA-LOVELACE = %+v, want ada-lovelace's %+v", upper, lower)
	}
	_, err := CreatePost(ctx, b.ada, CreatePostInput{Title: "p\u0430ypal login"})
	equal(t, "a title mixing scripts in a word", code(err), "BAD_USER_INPUT")

	site := ok[*SiteResponse](t)(Site(ctx, s.client)).Site
	ok[*UpdateSiteResponse](t)(UpdateSite(ctx, s.admin, UpdateSiteInput{ExpectedVersion: site.Version, SlugTransliteration: ptr(SlugTransliterationLatin)}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "Привет мир!"})).CreatePost.Post
	equal(t, "transliterated", p.Slug, "privet-mir")
	s.consistent()
}

// TestUnicodeSlugsInURLs reads what links to items with slugs in other
// scripts than Latin, as a crawler and a feed reader would: the tag's and
// the category's feeds at their percent-encoded paths, whose links and
// Cache-Tag header are ASCII and parse as URLs, and every <loc> of the
// sitemap, where the tag, the category and the post are. A post renamed
// from an ASCII slug to a Cyrillic one is still found by the old slug.
func TestUnicodeSlugsInURLs(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "привет", Name: "Привет"}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "日本語の記事", Tags: []string{"日本語"}, Categories: []string{"привет"}})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: p.Id}))
	f := newSyndicationServer(t, s)

	for _, c := range []struct{ path, self, tag string }{
		{"/tags/%E6%97%A5%E6%9C%AC%E8%AA%9E/atom.xml", "/tags/%E6%97%A5%E6%9C%AC%E8%AA%9E/atom.xml", "tag:%E6%97%A5%E6%9C%AC%E8%AA%9E"},
		{"/categories/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82/atom.xml", "/categories/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82/atom.xml", "category:%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82"},
	} {
		a, _ := f.get(t, c.path)
		equal(t, c.path+" status", a.status, http.StatusOK)
		var feed struct {
			Links []struct {
				Href string `xml:"href,attr"`
				Rel  string `xml:"rel,attr"`
			} `xml:"link"`
			Entries []struct {
				Links []struct {
					Href string `xml:"href,attr"`
				} `xml:"link"`
			} `xml:"entry"`
		}
		if err := xml.Unmarshal([]byte(a.body), &feed); err != nil {
			t.Fatalf("%s: %v\n%s", c.path, err, a.body)
		}
		hrefs := []string{}
		for _, l := range feed.Links {
			hrefs = append(hrefs, l.Href)
			if l.Rel == "self" {
				equal(t, c.path+" self link", l.Href, siteURL+c.self)
			}
		}
		for _, e := range feed.Entries {
			for _, l := range e.Links {
				hrefs = append(hrefs, l.Href)
			}
		}
		if !slices.Contains(hrefs, siteURL+"/posts/"+url.PathEscape(p.Slug)) {
			t.Errorf("%s links %q, not the post's page", c.path, hrefs)
		}
		for _, h := range hrefs {
			validURL(t, c.path+" link", h)
		}
		cacheTags := a.header.Get(gqlhttp.CacheTagHeader)
		if !slices.Contains(strings.Split(cacheTags, ","), c.tag) || !ascii(cacheTags) {
			t.Errorf("%s: Cache-Tag %q, want ASCII with %s", c.path, cacheTags, c.tag)
		}
	}

	var all []string
	index := sitemapLocs(t, f, "/sitemap.xml")
	for _, section := range index {
		validURL(t, "sitemap index", section)
		all = append(all, sitemapLocs(t, f, strings.TrimPrefix(section, siteURL))...)
	}
	for _, want := range []string{"/tags/%E6%97%A5%E6%9C%AC%E8%AA%9E", "/categories/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82", "/posts/" + url.PathEscape(p.Slug)} {
		if !slices.Contains(all, siteURL+want) {
			t.Errorf("the sitemap lacks %s: %q", want, all)
		}
	}
	for _, loc := range all {
		validURL(t, "sitemap", loc)
	}

	created := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "Old", Slug: "old-ascii"})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: created.Id}))
	// The category's archive and a post's next in the category take
	// the category's slug in upper case too.
	for _, field := range []string{`archive(category: "ПРИВЕТ") { postCount }`, `post(slug: "old-ascii") { nextInCategory(slug: "ПРИВЕТ") { slug } }`} {
		if r := s.send(t, request(`{ `+field+` }`, nil), false); len(r.Errors) > 0 {
			t.Errorf("%s: %v", field, r.Errors)
		}
	}
	equal(t, "the category's archive by upper case", string(s.send(t, request(`{ archive(category: "ПРИВЕТ") { postCount } }`, nil), false).Data), `{"archive":[{"postCount":1}]}`)
	old := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "old-ascii")).Post
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.ada, UpdatePostInput{Id: old.Id, ExpectedVersion: old.Version, Slug: ptr("новый")}))
	equal(t, "the old ASCII slug leads to the renamed post", ok[*PostPageResponse](t)(PostPage(ctx, s.client, "old-ascii")).Post.Slug, "новый")
	equal(t, "the new slug", ok[*PostPageResponse](t)(PostPage(ctx, s.client, "новый")).Post.Id, old.Id)
}

// sitemapLocs returns the <loc> entries of the sitemap or sitemap index
// at path.
func sitemapLocs(t *testing.T, f *syndicationServer, path string) []string {
	t.Helper()
	a, _ := f.get(t, path)
	equal(t, path+" status", a.status, http.StatusOK)
	var doc struct {
		URLs []string `xml:"url>loc"`
		Maps []string `xml:"sitemap>loc"`
	}
	if err := xml.Unmarshal([]byte(a.body), &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, a.body)
	}
	return append(doc.URLs, doc.Maps...)
}

// validURL fails t unless u is an absolute URL of ASCII that url.Parse
// reads back to itself.
func validURL(t *testing.T, what, u string) {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil || !parsed.IsAbs() || !ascii(u) || parsed.String() != u {
		t.Errorf("%s: %q is not a valid URL of ASCII (%v)", what, u, err)
	}
}

func ascii(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x80 })
}
