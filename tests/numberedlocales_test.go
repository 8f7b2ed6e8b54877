package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestNumberedPagesInALocale numbers the posts of one locale, of the
// whole blog and of a category, among posts in another locale and posts
// without one: the same posts as the locale's list walked by cursor,
// oldest first, two DynamoDB requests whatever the number; the pages
// worker rebuilds the lists in the locale a post has and had; a month
// with a locale, or a locale that is not BCP 47, is BAD_USER_INPUT with
// no request.
func TestNumberedPagesInALocale(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	w := b.writers[0]
	if err := raw(t, s.admin, `mutation { updateSite(input: {expectedVersion: 0, locales: ["en", "de"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	const create = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`
	const publish = `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id publishedAt } } }`
	made := func(i int, locale string) (string, time.Time) {
		t.Helper()
		s.clock.Advance(time.Minute)
		var c struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": fmt.Sprint("Lokal ", i), "slug": fmt.Sprint("lokal-", i), "body": "Text", "locale": locale, "categories": []string{"go"}}
		if err := raw(t, w, create, map[string]any{"in": in}, &c); err != nil {
			t.Fatal(err)
		}
		var p struct {
			PublishPost struct {
				Post struct{ PublishedAt time.Time }
			}
		}
		if err := raw(t, w, publish, map[string]any{"id": c.CreatePost.Post.ID}, &p); err != nil {
			t.Fatal(err)
		}
		return c.CreatePost.Post.ID, p.PublishPost.Post.PublishedAt
	}
	for i := range 24 {
		locale := "de"
		if i%4 == 3 {
			locale = "en"
		}
		made(i, locale)
	}
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	walk := func(query string) []string {
		var got struct {
			Posts struct {
				Edges []struct{ Node struct{ ID string } }
			}
			Category struct {
				Posts struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
		}
		if err := raw(t, s.client, query, nil, &got); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range append(got.Posts.Edges, got.Category.Posts.Edges...) {
			ids = append(ids, e.Node.ID)
		}
		slices.Reverse(ids) // numbered pages run oldest first
		return ids
	}
	type page struct {
		PostPage struct {
			TotalPages, TotalCount int
			Nodes                  []struct{ ID, Locale string }
		}
	}
	numbered := func(name, args string, want []string) {
		t.Helper()
		var got []string
		pages := (len(want) + 9) / 10
		for n := 1; n <= pages; n++ {
			var pg page
			if err := raw(t, s.client, fmt.Sprintf(`{ postPage(%s, number: %d, size: 10) { totalPages totalCount nodes { id locale } } }`, args, n), nil, &pg); err != nil {
				t.Fatalf("%s page %d: %v", name, n, err)
			}
			// The page index, then one Query of the locale's own list.
			if got := total(s.requests()); got > 2 {
				t.Errorf("%s page %d: %d DynamoDB requests %v, budget 2", name, n, got, s.requests())
			}
			equal(t, name+" totalPages", pg.PostPage.TotalPages, pages)
			equal(t, name+" totalCount", pg.PostPage.TotalCount, len(want))
			for _, p := range pg.PostPage.Nodes {
				got = append(got, p.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: numbered pages hold %v, the cursor walk %v", name, got, want)
		}
	}
	de := walk(`{ posts(locale: "de", first: 100) { edges { node { id } } } }`)
	equal(t, "posts in de", len(de), 18)
	numbered("the blog in de", `locale: "DE"`, de)
	numbered("the go category in de", `category: "go", locale: "de"`,
		walk(`{ category(slug: "go") { posts(locale: "de", first: 100) { edges { node { id } } } } }`))
	numbered("the blog in en", `locale: "en"`, walk(`{ posts(locale: "en", first: 100) { edges { node { id } } } }`))

	// The pages worker, given a post's events, rebuilds the lists in its
	// locale too, and in the one it left.
	id, at := made(24, "de")
	worker := s.store.NewPageSync()
	synced := map[string]bool{}
	worker.OnSync = func(list string, did storage.PagesSynced, err error) {
		if err != nil || did.Behind {
			t.Errorf("rebuild of %s: %+v, %v", list, did, err)
		}
		synced[list] = true
	}
	event := storage.LoggedEvent{Position: 1, Event: storage.Event{Type: storage.EventPostPublished, Data: storage.EventData{
		PostID: rawID(t, id, "Post"), PublishedAt: at, Categories: []string{"go"}, AuthorID: rawID(t, b.authors[0], "Author"), Locale: "de",
	}}}
	if err := worker.Events(ctx, []storage.LoggedEvent{event}); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"LOCALE#de", "LOCALE#de#CAT#go", "LOCALE#de#AUTHOR#" + rawID(t, b.authors[0], "Author")} {
		if !synced[l] {
			t.Errorf("the pages worker rebuilt %v after a post in de, not %s", synced, l)
		}
	}
	numbered("the blog in de after a new post", `locale: "de"`, append(de, id))
	s.consistent()

	for name, args := range map[string]string{
		"a month with a locale": `month: "2026-01", locale: "de"`,
		"a locale not BCP 47":   `locale: "not a tag!"`,
	} {
		err := raw(t, s.client, fmt.Sprintf(`{ postPage(%s, number: 1) { totalCount } }`, args), nil, &struct{}{})
		equal(t, name, code(err), "BAD_USER_INPUT")
		equal(t, "requests of "+name, total(s.requests()), 0)
	}
}
