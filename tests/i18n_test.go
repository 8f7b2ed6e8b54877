package tests

import (
	"context"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"
)

// raw sends query with vars as c and decodes its data into out; it
// returns the GraphQL errors.
func raw(t *testing.T, c graphql.Client, query string, vars map[string]any, out any) error {
	t.Helper()
	return c.MakeRequest(context.Background(), &graphql.Request{Query: query, Variables: vars}, &graphql.Response{Data: out})
}

// TestTranslationsOverHTTP gives posts locales, links them as
// translations, reads both sides and a locale's list with their request
// counts, and refuses bad input with BAD_USER_INPUT, changing nothing.
func TestTranslationsOverHTTP(t *testing.T) {
	s := newServer(t)
	w := s.seedBlog(t).writers[0]
	const create = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id locale } } }`
	const publish = `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`
	var made [3]struct {
		CreatePost struct{ Post struct{ ID, Locale string } }
	}
	for i, loc := range []string{"EN", "de-de", "ja"} {
		in := map[string]any{"title": "Post " + loc, "body": "Text", "locale": loc}
		if err := raw(t, w, create, map[string]any{"in": in}, &made[i]); err != nil {
			t.Fatal(err)
		}
		if err := raw(t, w, publish, map[string]any{"id": made[i].CreatePost.Post.ID}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	equal(t, "canonical locale", made[1].CreatePost.Post.Locale, "de-DE")
	en, de, ja := made[0].CreatePost.Post.ID, made[1].CreatePost.Post.ID, made[2].CreatePost.Post.ID
	const link = `mutation($a: ID!, $b: ID!) { linkTranslation(input: {postId: $a, translationId: $b}) { post { id } } }`
	for _, other := range []string{de, ja} {
		if err := raw(t, w, link, map[string]any{"a": en, "b": other}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		Post struct {
			Translations []struct {
				Locale string
				Post   struct{ ID string }
			}
		}
	}
	if err := raw(t, s.client, `query($id: ID!) { post(id: $id) { translations { locale post { id } } } }`, map[string]any{"id": ja}, &got); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, tr := range got.Post.Translations {
		locs = append(locs, tr.Locale+"="+tr.Post.ID)
	}
	equal(t, "translations of ja", len(locs), 3)
	equal(t, "translations of ja", locs[0], "de-DE="+de)
	// The post, its group, then the translated posts in one batch.
	equal(t, "requests of a post's translations", total(s.requests()), 3)

	var list struct {
		Posts struct {
			Edges []struct{ Node struct{ ID, Locale string } }
		}
	}
	if err := raw(t, s.client, `{ posts(locale: "DE-de", first: 10) { edges { node { id locale } } } }`, nil, &list); err != nil {
		t.Fatal(err)
	}
	equal(t, "posts in de-DE", len(list.Posts.Edges), 1)
	equal(t, "requests of a locale's list", total(s.requests()), 1)

	// The blog's feed per locale: the locale's list, then the bodies.
	feeds := newSyndicationServer(t, s)
	a, n := feeds.get(t, "/feed.xml?locale=de-DE")
	equal(t, "status of the de-DE feed", a.status, http.StatusOK)
	equal(t, "items of the de-DE feed", strings.Count(a.body, "<item>"), 1)
	equal(t, "de-DE feed holds its post", strings.Contains(a.body, "Post de-de"), true)
	equal(t, "requests of a locale's feed", n, 2)
	a, _ = feeds.get(t, "/feed.xml?locale=not_a_tag!")
	equal(t, "status of a feed of a bad locale", a.status, http.StatusBadRequest)

	// The month's sitemap lists each post with its translations as
	// xhtml:link alternates: the list, the groups, their posts.
	a, n = feeds.get(t, "/sitemap.xml?section=posts&month="+s.clock.Now().Format("2006-01"))
	equal(t, "status of the sitemap", a.status, http.StatusOK)
	equal(t, "requests of a sitemap page with translations", n, 3)
	var set struct {
		URLs []struct {
			Loc   string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
			Links []struct {
				Rel      string `xml:"rel,attr"`
				Hreflang string `xml:"hreflang,attr"`
				Href     string `xml:"href,attr"`
			} `xml:"http://www.w3.org/1999/xhtml link"`
		} `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
	}
	if err := xml.Unmarshal([]byte(a.body), &set); err != nil {
		t.Fatal(err)
	}
	linked := 0
	for _, u := range set.URLs {
		if len(u.Links) == 0 {
			continue
		}
		linked++
		var langs []string
		self := false
		for _, l := range u.Links {
			equal(t, "rel of an alternate", l.Rel, "alternate")
			langs = append(langs, l.Hreflang)
			self = self || l.Href == u.Loc
		}
		equal(t, "hreflangs of "+u.Loc, strings.Join(langs, " "), "de-DE en ja")
		equal(t, "alternates of "+u.Loc+" list it", self, true)
	}
	equal(t, "URLs with alternates", linked, 3)
	equal(t, "sitemap declares the xhtml prefix", strings.Contains(a.body, `xmlns:xhtml="http://www.w3.org/1999/xhtml"`), true)
	equal(t, "sitemap writes xhtml:link", strings.Contains(a.body, `<xhtml:link rel="alternate" hreflang="de-DE"`), true)

	for name, q := range map[string]struct {
		query string
		vars  map[string]any
	}{
		"link to itself":  {link, map[string]any{"a": en, "b": en}},
		"bad locale list": {`{ posts(locale: "not a tag!") { edges { cursor } } }`, nil},
		"bad post locale": {create, map[string]any{"in": map[string]any{"title": "x", "body": "x", "locale": "xx_yy_zz_!"}}},
	} {
		err := raw(t, w, q.query, q.vars, &struct{}{})
		equal(t, name, code(err), "BAD_USER_INPUT")
	}
	s.consistent()
}

// TestSiteSettingsPerLocale sets a title and menus per locale and reads
// the settings as readers of several locales see them: the locale's,
// else its parent's, field by field, else the default; bad locales are
// BAD_USER_INPUT and change nothing.
func TestSiteSettingsPerLocale(t *testing.T) {
	s := newServer(t)
	const update = `mutation($in: UpdateSiteInput!) { updateSite(input: $in) { site { version locales localized { locale title } } } }`
	in := map[string]any{
		"expectedVersion": 0, "title": "Blog", "description": "About things", "locales": []string{"en", "PT-br", "de"},
		"menus": []map[string]any{{"name": "main", "items": []map[string]any{{"label": "Home", "kind": "URL", "url": "/"}}}},
		"localized": []map[string]any{
			{"locale": "pt", "title": "Blogue", "menus": []map[string]any{{"name": "main", "items": []map[string]any{{"label": "Início", "kind": "URL", "url": "/pt/"}}}}},
			{"locale": "pt-BR", "description": "Sobre coisas"},
			{"locale": "de", "title": "Das Blog"},
		},
	}
	var up struct {
		UpdateSite struct {
			Site struct {
				Version int
				Locales []string
			}
		}
	}
	if err := raw(t, s.admin, update, map[string]any{"in": in}, &up); err != nil {
		t.Fatal(err)
	}
	equal(t, "locales", strings.Join(up.UpdateSite.Site.Locales, " "), "en pt-BR de")
	type site struct {
		Site struct {
			Title, Description string
			Menus              []struct{ Items []struct{ Label string } }
		}
	}
	for _, c := range []struct{ locale, title, description, menu string }{
		{"pt-BR", "Blogue", "Sobre coisas", "Início"}, // pt-BR's description, pt's title and menus
		{"pt-PT", "Blogue", "About things", "Início"}, // pt's, then the default
		{"de-AT", "Das Blog", "About things", "Home"},
		{"ja", "Blog", "About things", "Home"},
	} {
		var got site
		q := `query($l: String) { site(locale: $l) { title description menus { items { label } } } }`
		if err := raw(t, s.client, q, map[string]any{"l": c.locale}, &got); err != nil {
			t.Fatal(err)
		}
		if err := raw(t, s.client, q, map[string]any{"l": c.locale}, &got); err != nil {
			t.Fatal(err)
		}
		equal(t, "requests of site(locale:) once the settings are held", total(s.requests()), 0)
		equal(t, c.locale+" title", got.Site.Title, c.title)
		equal(t, c.locale+" description", got.Site.Description, c.description)
		equal(t, c.locale+" menu", got.Site.Menus[0].Items[0].Label, c.menu)
	}
	err := raw(t, s.client, `{ site(locale: "no such tag") { title } }`, nil, &struct{}{})
	equal(t, "site of a bad locale", code(err), "BAD_USER_INPUT")
	bad := map[string]any{"expectedVersion": up.UpdateSite.Site.Version, "localized": []map[string]any{{"locale": "pt", "title": "x"}, {"locale": "PT", "title": "y"}}}
	err = raw(t, s.admin, update, map[string]any{"in": bad}, &struct{}{})
	equal(t, "a locale given twice", code(err), "BAD_USER_INPUT")
	var after site
	if err := raw(t, s.client, `{ site(locale: "pt") { title } }`, nil, &after); err != nil {
		t.Fatal(err)
	}
	equal(t, "pt title after a refused update", after.Site.Title, "Blogue")
}

// TestPageLocale gives a page a locale, canonical, and refuses one that
// is not BCP 47.
func TestPageLocale(t *testing.T) {
	s := newServer(t)
	const create = `mutation($in: CreatePageInput!) { createPage(input: $in) { page { locale } } }`
	var got struct {
		CreatePage struct{ Page struct{ Locale string } }
	}
	if err := raw(t, s.admin, create, map[string]any{"in": map[string]any{"title": "À propos", "slug": "a-propos", "locale": "FR-ca"}}, &got); err != nil {
		t.Fatal(err)
	}
	equal(t, "page locale", got.CreatePage.Page.Locale, "fr-CA")
	err := raw(t, s.admin, create, map[string]any{"in": map[string]any{"title": "About", "slug": "about", "locale": "not a tag"}}, &struct{}{})
	equal(t, "page of a bad locale", code(err), "BAD_USER_INPUT")
	var pages struct {
		Pages struct{ Edges []struct{ Cursor string } }
	}
	if err := raw(t, s.admin, `{ pages(drafts: true) { edges { cursor } } }`, nil, &pages); err != nil {
		t.Fatal(err)
	}
	equal(t, "pages after a refused one", len(pages.Pages.Edges), 1)
}
