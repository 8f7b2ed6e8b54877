package tests

import (
	"slices"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
)

// TestLinkStoresTheDefaultLocaleWithItsCopies links a published post
// written without a locale to a translation: the link stores the site's
// default locale on it, and from then on it is in the default locale's
// lists (the blog's, its author's, its category's and its tag's), its
// version is the one its editor holds, and every copy agrees with it.
func TestLinkStoresTheDefaultLocaleWithItsCopies(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ada, w := b.authors[0], b.writers[0]
	if err := raw(t, s.admin, `mutation { updateSite(input: {expectedVersion: 0, locales: ["en", "de"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	const create = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`
	const publish = `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id version } } }`
	made := func(slug, locale string) (string, int) {
		t.Helper()
		var c struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": "Post " + slug, "slug": slug, "body": "Text", "categories": []string{"go"}, "tags": []string{"Reisen"}}
		if locale != "" {
			in["locale"] = locale
		}
		if err := raw(t, w, create, map[string]any{"in": in}, &c); err != nil {
			t.Fatal(err)
		}
		var p struct {
			PublishPost struct{ Post struct{ Version int } }
		}
		if err := raw(t, w, publish, map[string]any{"id": c.CreatePost.Post.ID}, &p); err != nil {
			t.Fatal(err)
		}
		return c.CreatePost.Post.ID, p.PublishPost.Post.Version
	}
	plain, version := made("without-locale", "")
	de, _ := made("mit-locale", "de")

	type conn struct {
		Edges []struct{ Node struct{ ID, Locale string } }
	}
	var lists struct {
		Posts    conn
		Author   struct{ Posts conn }
		Category struct{ Posts conn }
		Tag      struct{ Posts conn }
	}
	read := func() {
		t.Helper()
		const q = `query($a: ID!) {
			posts(locale: "en", first: 50) { edges { node { id locale } } }
			author(id: $a) { posts(locale: "en", first: 50) { edges { node { id locale } } } }
			category(slug: "go") { posts(locale: "en", first: 50) { edges { node { id locale } } } }
			tag(slug: "reisen") { posts(locale: "en", first: 50) { edges { node { id locale } } } }
		}`
		if err := raw(t, s.client, q, map[string]any{"a": ada}, &lists); err != nil {
			t.Fatal(err)
		}
	}
	has := func(c conn) bool {
		return slices.ContainsFunc(c.Edges, func(e struct{ Node struct{ ID, Locale string } }) bool { return e.Node.ID == plain })
	}
	read()
	if has(lists.Posts) || has(lists.Author.Posts) || has(lists.Category.Posts) || has(lists.Tag.Posts) {
		t.Fatal("a post without a locale stored is in a locale's list before the link")
	}

	const link = `mutation($a: ID!, $b: ID!) { linkTranslation(input: {postId: $a, translationId: $b}) { post { id locale version } } }`
	var linked struct {
		LinkTranslation struct {
			Post struct {
				ID, Locale string
				Version    int
			}
		}
	}
	if err := raw(t, w, link, map[string]any{"a": plain, "b": de}, &linked); err != nil {
		t.Fatal(err)
	}
	equal(t, "locale the link stores", linked.LinkTranslation.Post.Locale, "en")
	equal(t, "version after the link", linked.LinkTranslation.Post.Version, version)

	read()
	for name, c := range map[string]conn{"blog": lists.Posts, "author": lists.Author.Posts, "category": lists.Category.Posts, "tag": lists.Tag.Posts} {
		if !has(c) {
			t.Errorf("the %s's posts in en lack the post linked without a locale: %+v", name, c.Edges)
		}
	}
	s.consistent()
}

// TestLinkStoringALocaleDropsCachedLists caches, on a second server
// whose answer cache follows the change feed, the default locale's list
// of posts, then links a post without a locale to a translation: the
// link's post.edited event drops the list, which then shows the post.
func TestLinkStoringALocaleDropsCachedLists(t *testing.T) {
	s := newServerOn(t, []storage.Option{storage.WithStream()}, nil, withAnswers(0))
	ids := s.seedAnswers(t)
	if err := raw(t, s.admin, `mutation { updateSite(input: {expectedVersion: 0, locales: ["en", "de"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	ada := s.as("ada", auth.RoleAuthor)
	var de struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	if err := raw(t, ada, `mutation { createPost(input: {title: "Auf Deutsch", slug: "deutsch", locale: "de"}) { post { id } } }`, nil, &de); err != nil {
		t.Fatal(err)
	}
	if err := raw(t, ada, `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": de.CreatePost.Post.ID}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	b := s.answerFollower(t)
	// The writes' events first, so that none of them drops what follows.
	b.await(t, storage.EventPostPublished, postIDOf(t, de.CreatePost.Post.ID))
	const list = `query { posts(locale: "en", first: 10) { edges { node { id } } } }`
	b.post(t, list, `{}`, nil)
	b.hit(t, b.post(t, list, `{}`, nil))

	const link = `mutation($a: ID!, $b: ID!) { linkTranslation(input: {postId: $a, translationId: $b}) { post { id } } }`
	if err := raw(t, ada, link, map[string]any{"a": ids[2], "b": de.CreatePost.Post.ID}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	b.await(t, storage.EventPostEdited, postIDOf(t, ids[2]))
	if a := b.post(t, list, `{}`, nil); !strings.Contains(a.body, ids[2]) {
		t.Errorf("the default locale's posts after the link's event (X-Cache %s): %s", a.header.Get(gqlhttp.AnswerCacheHeader), a.body)
	}
}
