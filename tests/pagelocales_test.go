package tests

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

// pagesOf returns the ids of the published pages of locale, in list
// order, as c reads them, and the requests the answer took.
func (s *server) pagesOf(t *testing.T, locale string) (string, int) {
	t.Helper()
	var got struct {
		Pages struct {
			Edges []struct{ Node struct{ ID, Locale string } }
		}
	}
	if err := raw(t, s.client, `query($l: String) { pages(locale: $l, first: 100) { edges { node { id locale } } } }`, map[string]any{"l": locale}, &got); err != nil {
		t.Fatal(err)
	}
	n := total(s.requests())
	var ids []string
	for _, e := range got.Pages.Edges {
		ids = append(ids, e.Node.ID)
	}
	return strings.Join(ids, " "), n
}

// TestPagesByLocaleOverHTTP lists the published pages of a locale, each
// list one Query of that locale's pages alone, and follows a page's
// locale change, its unpublishing, its deletion and a link that gives a
// page without a locale the default one; drafts, pages of other locales
// and pages without a locale are never listed. A locale that is not BCP
// 47, or a locale with drafts, is BAD_USER_INPUT.
func TestPagesByLocaleOverHTTP(t *testing.T) {
	s := newServer(t)
	const update = `mutation($in: UpdateSiteInput!) { updateSite(input: $in) { site { version } } }`
	if err := raw(t, s.admin, update, map[string]any{"in": map[string]any{"expectedVersion": 0, "locales": []string{"en", "fr"}}}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	ids := s.localePages(t, "fr", "en", "FR", "fr-CA", "")
	fr1, en, fr2, frCA, none := ids[0], ids[1], ids[2], ids[3], ids[4]
	var draft struct {
		CreatePage struct{ Page struct{ ID string } }
	}
	in := map[string]any{"title": "Brouillon", "slug": "brouillon", "body": "Texte", "locale": "fr"}
	if err := raw(t, s.admin, `mutation($in: CreatePageInput!) { createPage(input: $in) { page { id } } }`, map[string]any{"in": in}, &draft); err != nil {
		t.Fatal(err)
	}

	got, n := s.pagesOf(t, "FR")
	equal(t, "pages in fr", got, fr1+" "+fr2)
	equal(t, "requests of a locale's pages", n, 1)
	equal(t, "Query of a locale's pages", s.requests()["Query"], 1)
	got, _ = s.pagesOf(t, "fr-CA")
	equal(t, "pages in fr-CA", got, frCA)
	got, _ = s.pagesOf(t, "de")
	equal(t, "pages in de", got, "")

	// A new locale moves the page from one list to the other.
	const setLocale = `mutation($id: ID!, $v: Int!, $l: String) { updatePage(input: {id: $id, expectedVersion: $v, locale: $l}) { page { id locale } } }`
	if err := raw(t, s.admin, setLocale, map[string]any{"id": fr1, "v": s.pageVersion(t, fr1), "l": "en"}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.pagesOf(t, "fr")
	equal(t, "pages in fr after a page moved to en", got, fr2)
	got, _ = s.pagesOf(t, "en")
	equal(t, "pages in en after a page moved to it", got, fr1+" "+en)

	// Unpublished, then deleted: out of the list.
	if err := raw(t, s.admin, `mutation($id: ID!) { unpublishPage(input: {id: $id}) { page { id } } }`, map[string]any{"id": fr1}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := raw(t, s.admin, `mutation($id: ID!) { deletePage(input: {id: $id}) { deletedId } }`, map[string]any{"id": fr2}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.pagesOf(t, "fr")
	equal(t, "pages in fr after a deletion", got, "")
	got, _ = s.pagesOf(t, "en")
	equal(t, "pages in en after an unpublishing", got, en)

	// Linked to a translation, a page without a locale takes the default
	// one, and is listed in it; its translations come from the page.
	if err := raw(t, s.admin, linkPages, map[string]any{"a": frCA, "b": none}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Pages struct {
			Edges []struct {
				Node struct {
					ID           string
					Translations []struct{ Locale string }
				}
			}
		}
	}
	if err := raw(t, s.client, `{ pages(locale: "en") { edges { node { id translations { locale } } } } }`, nil, &list); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, e := range list.Pages.Edges {
		var locs []string
		for _, tr := range e.Node.Translations {
			locs = append(locs, tr.Locale)
		}
		seen = append(seen, e.Node.ID+"="+strings.Join(locs, ","))
	}
	equal(t, "pages in en with their translations", strings.Join(seen, " "), en+"= "+none+"=en,fr-CA")
	// The list, the pages (for their groups), the group, its pages.
	equal(t, "requests of a locale's pages with translations", total(s.requests()), 4)

	for name, q := range map[string]string{
		"a locale that is not BCP 47": `{ pages(locale: "not a tag!") { edges { cursor } } }`,
		"a locale with drafts":        `{ pages(locale: "fr", drafts: true) { edges { cursor } } }`,
	} {
		err := raw(t, s.admin, q, nil, &struct{}{})
		equal(t, name, code(err), "BAD_USER_INPUT")
	}
	s.consistent()
}

// TestPagesByLocaleUnderConcurrentWriters edits, moves to another locale,
// unpublishes, publishes and links pages (some without a locale, which a
// link gives the default one) from several clients at once: whatever
// lands, every page's copy agrees with it (the checker finds nothing),
// and each locale's list holds exactly its published pages.
func TestPagesByLocaleUnderConcurrentWriters(t *testing.T) {
	s := newServer(t)
	if err := raw(t, s.admin, `mutation($in: UpdateSiteInput!) { updateSite(input: $in) { site { version } } }`,
		map[string]any{"in": map[string]any{"expectedVersion": 0, "locales": []string{"en", "fr", "de"}}}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	ids := s.localePages(t, "", "", "fr", "en", "de", "")
	locales := []string{"en", "fr", "de", ""}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 17))
			for range 12 {
				a, b := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
				var err error
				switch r.IntN(6) {
				case 0:
					err = raw(t, s.admin, `mutation($id: ID!, $v: Int!) { updatePage(input: {id: $id, expectedVersion: $v, title: "Edited"}) { page { id } } }`,
						map[string]any{"id": a, "v": s.pageVersion(t, a)}, &struct{}{})
				case 1:
					err = raw(t, s.admin, `mutation($id: ID!, $v: Int!, $l: String) { updatePage(input: {id: $id, expectedVersion: $v, locale: $l}) { page { id } } }`,
						map[string]any{"id": a, "v": s.pageVersion(t, a), "l": locales[r.IntN(len(locales))]}, &struct{}{})
				case 2:
					err = raw(t, s.admin, `mutation($id: ID!) { unpublishPage(input: {id: $id}) { page { id } } }`, map[string]any{"id": a}, &struct{}{})
				case 3:
					err = raw(t, s.admin, `mutation($id: ID!) { publishPage(input: {id: $id}) { page { id } } }`, map[string]any{"id": a}, &struct{}{})
				case 4:
					err = raw(t, s.admin, unlinkPages, map[string]any{"id": a}, &struct{}{})
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
	// The locale each page has stored (Page.locale reads the default
	// for none).
	want := map[string][]string{}
	for _, id := range ids {
		p := ok[*storage.SitePage](t)(s.store.GetPage(context.Background(), rawID(t, id, "Page")))
		if p.Status == storage.StatusPublished && p.Locale != "" {
			want[p.Locale] = append(want[p.Locale], id)
		}
	}
	for _, l := range locales[:3] {
		got, _ := s.pagesOf(t, l)
		equal(t, "pages in "+l, got, strings.Join(want[l], " "))
	}
}
