package tests

import (
	"fmt"
	"testing"

	"github.com/blogql/blog/auth"
)

// TestPublicationLocales: a publication shows the locales of its site
// settings, default first, and none when they name none, found by slug or
// listed; a page of publications reads every one's settings in one
// BatchGetItem, and none once the server holds them.
func TestPublicationLocales(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	platform := h.client("", "ops", auth.RolePlatform)
	ids := map[string]string{}
	for _, slug := range []string{"beta", "gamma", "delta"} {
		var created struct {
			CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
		}
		in := map[string]any{"slug": slug, "title": slug, "hosts": []string{slug + ".localhost"}, "ownerAccount": "olive"}
		if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
			t.Fatal(err)
		}
		ids[slug] = created.CreatePublication.Publication.ID
	}
	olive := h.scoped("beta.localhost", ids["beta"], "olive", auth.PubOwner)
	if err := gql(olive, `mutation { updateSite(input: {expectedVersion: 0, locales: ["de", "en", "pt-BR"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}

	// No one read gamma's and delta's settings yet: the page reads them
	// at once, with the default publication's.
	want := map[string]string{"beta": "[de en pt-BR]", "gamma": "[]", "delta": "[]"}
	list := func(fields string) map[string]string {
		var out struct {
			Publications struct {
				Edges []struct {
					Node struct {
						Slug    string
						Locales []string
					}
				}
			}
		}
		if err := gql(platform, `{ publications(first: 10) { edges { node { `+fields+` } } } }`, nil, &out); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, e := range out.Publications.Edges {
			got[e.Node.Slug] = fmt.Sprint(e.Node.Locales)
		}
		return got
	}
	list("slug")
	without := h.requests()
	got := list("slug locales")
	with := h.requests()
	for slug, locales := range want {
		if got[slug] != locales {
			t.Errorf("publications: %s's locales = %s, want %s", slug, got[slug], locales)
		}
	}
	if with["BatchGetItem"] != without["BatchGetItem"]+1 || total(with) != total(without)+1 {
		t.Errorf("publications with locales made %v, without %v: want one BatchGetItem more", with, without)
	}
	list("slug locales")
	if again := h.requests(); total(again) != total(without) {
		t.Errorf("publications with locales again made %v, want %v: the server holds the settings", again, without)
	}

	for slug, locales := range want {
		var found struct {
			Publication struct{ Locales []string } `json:"publication"`
		}
		if err := gql(h.client("", ""), `query($s: String!) { publication(slug: $s) { locales } }`, map[string]any{"s": slug}, &found); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(found.Publication.Locales); got != locales || found.Publication.Locales == nil {
			t.Errorf("publication(slug: %q) { locales } = %s, want %s", slug, got, locales)
		}
	}
}
