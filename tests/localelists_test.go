package tests

import (
	"fmt"
	"strings"
	"testing"
)

// TestListsFilterByLocale lists a category's, a tag's and an author's
// posts in one locale among posts in others and posts without a locale:
// each list is the entity's read and one Query, whatever the locale (the
// site's default included), and follows a post that changes its locale
// or is unpublished.
func TestListsFilterByLocale(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ada, w := b.authors[0], b.writers[0]
	if err := raw(t, s.admin, `mutation { updateSite(input: {expectedVersion: 0, locales: ["en", "de-DE"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	const create = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id version } } }`
	const publish = `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id version } } }`
	var ids []string
	for i, loc := range []string{"de-DE", "en", "de-de", "ja", "DE-de"} {
		var made struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": "Local " + loc, "slug": fmt.Sprintf("local-%d", i), "body": "Text", "locale": loc, "categories": []string{"go"}, "tags": []string{"Reisen"}}
		if i == 3 {
			in["categories"] = []string{"dynamodb"}
		}
		if err := raw(t, w, create, map[string]any{"in": in}, &made); err != nil {
			t.Fatal(err)
		}
		if err := raw(t, w, publish, map[string]any{"id": made.CreatePost.Post.ID}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, made.CreatePost.Post.ID)
	}
	type conn struct {
		Edges []struct{ Node struct{ ID, Locale string } }
	}
	var got struct {
		Category struct{ Posts conn }
		Tag      struct{ Posts conn }
		Author   struct{ Posts conn }
	}
	list := func(name, query string, vars map[string]any) conn {
		t.Helper()
		got = struct {
			Category struct{ Posts conn }
			Tag      struct{ Posts conn }
			Author   struct{ Posts conn }
		}{}
		if err := raw(t, s.client, query, vars, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The category, tag or author, then one Query of its list in the
		// locale: never the whole list read and filtered.
		equal(t, "requests of "+name, total(s.requests()), 2)
		for _, c := range []conn{got.Category.Posts, got.Tag.Posts, got.Author.Posts} {
			if c.Edges != nil {
				return c
			}
		}
		return conn{}
	}
	locales := func(c conn) string {
		var out []string
		for _, e := range c.Edges {
			out = append(out, e.Node.Locale)
		}
		return strings.Join(out, " ")
	}
	const byCategory = `query($l: String) { category(slug: "go") { posts(locale: $l, first: 50) { edges { node { id locale } } } } }`
	const byTag = `query($l: String) { tag(slug: "reisen") { posts(locale: $l, first: 50) { edges { node { id locale } } } } }`
	const byAuthor = `query($id: ID!, $l: String) { author(id: $id) { posts(locale: $l, first: 50) { edges { node { id locale } } } } }`

	equal(t, "go posts in de-DE", locales(list("the go category in de-DE", byCategory, map[string]any{"l": "de-de"})), "de-DE de-DE de-DE")
	equal(t, "reisen posts in ja", locales(list("the reisen tag in ja", byTag, map[string]any{"l": "ja"})), "ja")
	equal(t, "ada's posts in de-DE", locales(list("ada's posts in de-DE", byAuthor, map[string]any{"id": ada, "l": "de-DE"})), "de-DE de-DE de-DE")
	// The default locale lists the posts given it, not the seeded posts
	// written without one.
	equal(t, "go posts in en", locales(list("the go category in en", byCategory, map[string]any{"l": "en"})), "en")
	equal(t, "go posts in fr", locales(list("the go category in fr", byCategory, map[string]any{"l": "fr"})), "")

	// A post moved to another locale moves between the lists; an
	// unpublished one leaves them.
	var cur struct{ Post struct{ Version int } }
	if err := raw(t, w, `query($id: ID!) { post(id: $id) { version } }`, map[string]any{"id": ids[0]}, &cur); err != nil {
		t.Fatal(err)
	}
	if err := raw(t, w, `mutation($id: ID!, $v: Int!) { updatePost(input: {id: $id, expectedVersion: $v, locale: "fr"}) { post { id } } }`,
		map[string]any{"id": ids[0], "v": cur.Post.Version}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := raw(t, w, `mutation($id: ID!) { unpublishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": ids[2]}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	equal(t, "reisen posts in de-DE after", locales(list("the reisen tag in de-DE", byTag, map[string]any{"l": "de-DE"})), "de-DE")
	equal(t, "reisen posts in fr after", locales(list("the reisen tag in fr", byTag, map[string]any{"l": "fr"})), "fr")
	equal(t, "ada's posts in fr after", locales(list("ada's posts in fr", byAuthor, map[string]any{"id": ada, "l": "fr"})), "fr")

	// totalCount is counted when asked: one Query more, of the same
	// partition, with Select COUNT.
	var counted struct {
		Category struct{ Posts struct{ TotalCount int } }
		Posts    struct{ TotalCount int }
	}
	if err := raw(t, s.client, `{ category(slug: "go") { posts(locale: "de-DE", first: 1) { totalCount } } }`, nil, &counted); err != nil {
		t.Fatal(err)
	}
	equal(t, "totalCount of the go category in de-DE", counted.Category.Posts.TotalCount, 1)
	equal(t, "requests of a locale list's totalCount", total(s.requests()), 3)
	if err := raw(t, s.client, `{ posts(locale: "de-DE", first: 1) { totalCount } }`, nil, &counted); err != nil {
		t.Fatal(err)
	}
	equal(t, "totalCount of the blog in de-DE", counted.Posts.TotalCount, 1)

	err := raw(t, s.client, byCategory, map[string]any{"l": "not a tag!"}, &struct{}{})
	equal(t, "a category's list in a bad locale", code(err), "BAD_USER_INPUT")
	s.consistent()
}
