package tests

import (
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
)

const (
	linkPages   = `mutation($a: ID!, $b: ID!) { linkPageTranslation(input: {pageId: $a, translationId: $b}) { page { id locale } } }`
	unlinkPages = `mutation($id: ID!) { unlinkPageTranslation(input: {pageId: $id}) { page { id translations { locale } } } }`
)

// localePages creates and publishes, as an admin, one page in each of
// locales and returns their ids.
func (s *server) localePages(t *testing.T, locales ...string) []string {
	t.Helper()
	var ids []string
	for i, loc := range locales {
		var made struct {
			CreatePage struct{ Page struct{ ID string } }
		}
		in := map[string]any{"title": "Page " + loc, "slug": fmt.Sprintf("page-%d", i), "body": "Text", "locale": loc}
		if err := raw(t, s.admin, `mutation($in: CreatePageInput!) { createPage(input: $in) { page { id } } }`, map[string]any{"in": in}, &made); err != nil {
			t.Fatal(err)
		}
		id := made.CreatePage.Page.ID
		if err := raw(t, s.admin, `mutation($id: ID!) { publishPage(input: {id: $id}) { page { id } } }`, map[string]any{"id": id}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// pageVersion returns the version of the page id.
func (s *server) pageVersion(t *testing.T, id string) int {
	var got struct{ Page struct{ Version int } }
	if err := raw(t, s.admin, `query($id: ID!) { page(id: $id) { version } }`, map[string]any{"id": id}, &got); err != nil {
		t.Error(err)
	}
	return got.Page.Version
}

// TestPageTranslationsOverHTTP links static pages as translations,
// reads them from either side with their request count, lists them as
// hreflang alternates in the sitemap, refuses bad input with
// BAD_USER_INPUT (and writers with FORBIDDEN), and keeps the groups
// whole through an unlink and a deletion.
func TestPageTranslationsOverHTTP(t *testing.T) {
	s := newServer(t)
	w := s.seedBlog(t).writers[0]
	ids := s.localePages(t, "en", "DE-de", "ja", "de")
	en, de, ja, de2 := ids[0], ids[1], ids[2], ids[3]
	for _, other := range []string{de, ja} {
		if err := raw(t, s.admin, linkPages, map[string]any{"a": en, "b": other}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		Page struct {
			Translations []struct {
				Locale string
				Page   struct{ ID, Slug string }
			}
		}
	}
	if err := raw(t, s.client, `query($id: ID!) { page(id: $id) { translations { locale page { id slug } } } }`, map[string]any{"id": ja}, &got); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, tr := range got.Page.Translations {
		locs = append(locs, tr.Locale+"="+tr.Page.ID)
	}
	equal(t, "translations of the ja page", strings.Join(locs, " "), "de-DE="+de+" en="+en+" ja="+ja)
	// The page, its group, then its pages in one batch.
	equal(t, "requests of a page's translations", total(s.requests()), 3)

	var list struct {
		Pages struct {
			Edges []struct {
				Node struct{ Translations []struct{ Locale string } }
			}
		}
	}
	if err := raw(t, s.client, `{ pages(first: 10) { edges { node { translations { locale } } } } }`, nil, &list); err != nil {
		t.Fatal(err)
	}
	equal(t, "pages listed", len(list.Pages.Edges), 4)
	// The list, its one group, the group's pages: never a read a page.
	equal(t, "requests of a list of pages with translations", total(s.requests()), 3)

	// The static pages' sitemap lists each linked page with its group.
	feeds := newSyndicationServer(t, s)
	a, n := feeds.get(t, "/sitemap.xml?section=static")
	equal(t, "status of the static sitemap", a.status, http.StatusOK)
	equal(t, "requests of the static sitemap with translations", n, 3)
	var set struct {
		URLs []struct {
			Loc   string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
			Links []struct {
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
		for _, l := range u.Links {
			langs = append(langs, l.Hreflang)
		}
		equal(t, "hreflangs of "+u.Loc, strings.Join(langs, " "), "de-DE en ja")
	}
	equal(t, "static pages with alternates", linked, 3)

	for name, q := range map[string]struct {
		query string
		vars  map[string]any
		code  string
	}{
		"link to itself":         {linkPages, map[string]any{"a": en, "b": en}, "BAD_USER_INPUT"},
		"second page in de-DE":   {linkPages, map[string]any{"a": ja, "b": de2}, ""},
		"a post is not a page":   {linkPages, map[string]any{"a": en, "b": "UG9zdDox"}, "BAD_USER_INPUT"},
		"locale of a linked one": {`mutation($id: ID!, $v: Int!) { updatePage(input: {id: $id, expectedVersion: $v, locale: "fr"}) { page { id } } }`, map[string]any{"id": de, "v": s.pageVersion(t, de)}, "BAD_USER_INPUT"},
	} {
		err := raw(t, s.admin, q.query, q.vars, &struct{}{})
		if q.code != "" {
			equal(t, name, code(err), q.code)
		}
	}
	err := raw(t, w, linkPages, map[string]any{"a": en, "b": de2}, &struct{}{})
	equal(t, "a writer links pages", code(err), "FORBIDDEN")

	// de (de-DE) and de2 (de) are two locales: de2 joined the group.
	var after struct {
		UnlinkPageTranslation struct {
			Page struct{ Translations []struct{ Locale string } }
		}
	}
	if err := raw(t, s.admin, unlinkPages, map[string]any{"id": ja}, &after); err != nil {
		t.Fatal(err)
	}
	equal(t, "translations of an unlinked page", len(after.UnlinkPageTranslation.Page.Translations), 0)
	if err := raw(t, s.admin, `mutation($id: ID!) { deletePage(input: {id: $id}) { deletedId } }`, map[string]any{"id": de}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := raw(t, s.client, `query($id: ID!) { page(id: $id) { translations { locale page { id slug } } } }`, map[string]any{"id": en}, &got); err != nil {
		t.Fatal(err)
	}
	locs = nil
	for _, tr := range got.Page.Translations {
		locs = append(locs, tr.Locale)
	}
	equal(t, "translations after an unlink and a deletion", strings.Join(locs, " "), "de en")
	s.consistent()
}

// TestPageTranslationsStaySymmetricUnderConcurrentWriters links,
// unlinks and edits pages from several clients at once: whatever lands,
// the checker finds every group symmetric.
func TestPageTranslationsStaySymmetricUnderConcurrentWriters(t *testing.T) {
	s := newServer(t)
	ids := s.localePages(t, "en", "de", "fr", "ja", "de", "en")
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for range 12 {
				a, b := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
				var err error
				switch r.IntN(4) {
				case 0:
					err = raw(t, s.admin, unlinkPages, map[string]any{"id": a}, &struct{}{})
				case 1:
					err = raw(t, s.admin, `mutation($id: ID!, $v: Int!) { updatePage(input: {id: $id, expectedVersion: $v, title: "Edited"}) { page { id } } }`,
						map[string]any{"id": a, "v": s.pageVersion(t, a)}, &struct{}{})
				default:
					err = raw(t, s.admin, linkPages, map[string]any{"a": a, "b": b}, &struct{}{})
				}
				if c := code(err); err != nil && c != "BAD_USER_INPUT" && c != "CONFLICT" && c != "UNAVAILABLE" {
					t.Errorf("writer %d: %v", w, err)
				}
			}
		}()
	}
	wg.Wait()
	s.consistent()
}
