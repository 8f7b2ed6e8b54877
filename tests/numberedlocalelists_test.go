package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
)

// Numbered pages in one locale of a category's, a tag's and an author's
// posts: postPage(locale:) on Category, Tag and Author.

// localeListPage is what a parent's postPage answers.
type localeListPage struct {
	TotalPages, TotalCount int
	Nodes                  []struct{ ID, Title, Locale string }
}

// parentPage asks c for page number of size 10 of the posts in locale of
// the parent that parent selects (`category(slug: "go")`), and returns
// it.
func parentPage(t *testing.T, c graphql.Client, parent, locale string, number int) (localeListPage, error) {
	t.Helper()
	var got map[string]struct{ PostPage localeListPage }
	q := fmt.Sprintf(`{ p: %s { postPage(locale: %q, number: %d, size: 10) { totalPages totalCount nodes { id title locale } } } }`, parent, locale, number)
	err := raw(t, c, q, nil, &got)
	return got["p"].PostPage, err
}

// parentPages returns the ids of every numbered page of the posts in
// locale of parent, in page order, checking each page's totals against
// want's and that each holds posts of locale alone; each says, after it
// is read, how many DynamoDB requests it took.
func parentPages(t *testing.T, c graphql.Client, parent, locale string, want []string, read func(name string)) []string {
	t.Helper()
	var ids []string
	pages := (len(want) + 9) / 10
	for n := 1; n <= pages+1; n++ {
		pg, err := parentPage(t, c, parent, locale, n)
		if err != nil {
			t.Fatalf("%s page %d in %s: %v", parent, n, locale, err)
		}
		name := fmt.Sprintf("%s page %d in %s", parent, n, locale)
		if read != nil {
			read(name)
		}
		equal(t, name+" totalPages", pg.TotalPages, pages)
		equal(t, name+" totalCount", pg.TotalCount, len(want))
		for _, p := range pg.Nodes {
			if p.Locale != locale {
				t.Errorf("%s holds %s in %q", name, p.ID, p.Locale)
			}
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// TestNumberedLocalePagesOfACategoryTagAndAuthor numbers the posts of
// one locale of a category, a tag and an author, among posts in another
// locale and posts without one: the same posts as the parent's
// posts(locale:) walked by cursor, oldest first, with the locale's
// totals; the category or the author and the page are two DynamoDB
// requests whatever the number, the tag's page two more than the tag. A
// locale that is not BCP 47 is BAD_USER_INPUT, with no read of a page.
func TestNumberedLocalePagesOfACategoryTagAndAuthor(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	w := b.writers[0]
	// SyncAllPages builds the lists of the site's locales.
	if err := raw(t, s.admin, `mutation { updateSite(input: {expectedVersion: 0, locales: ["en", "fr"]}) { site { locales } } }`, nil, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	const create = `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`
	const publish = `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`
	for i := range 23 {
		locale := "fr"
		if i%4 == 3 {
			locale = "en"
		}
		var c struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": fmt.Sprint("Billet ", i), "slug": fmt.Sprint("billet-", i), "body": "Texte",
			"locale": locale, "categories": []string{"go"}, "tags": []string{"Langues"}}
		if err := raw(t, w, create, map[string]any{"in": in}, &c); err != nil {
			t.Fatal(err)
		}
		if err := raw(t, w, publish, map[string]any{"id": c.CreatePost.Post.ID}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	author := fmt.Sprintf("author(id: %q)", b.authors[0])
	for _, parent := range []string{`category(slug: "go")`, `tag(slug: "langues")`, author} {
		for _, locale := range []string{"fr", "en"} {
			var walked map[string]struct {
				Posts struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
			if err := raw(t, s.client, fmt.Sprintf(`{ p: %s { posts(locale: %q, first: 100) { edges { node { id } } } } }`, parent, locale), nil, &walked); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, e := range walked["p"].Posts.Edges {
				want = append(want, e.Node.ID)
			}
			slices.Reverse(want) // numbered pages run oldest first
			equal(t, parent+" posts in "+locale, len(want), map[string]int{"fr": 18, "en": 5}[locale])
			budget := 2 // the parent read with the page index, then the page
			if parent == `tag(slug: "langues")` {
				budget = 3 // the tag, then the page index and the page
			}
			got := parentPages(t, s.client, parent, locale, want, func(name string) {
				if n := total(s.requests()); n > budget {
					t.Errorf("%s: %d DynamoDB requests %v, budget %d", name, n, s.requests(), budget)
				}
			})
			if !slices.Equal(got, want) {
				t.Errorf("%s in %s: numbered pages hold %v, the cursor walk %v", parent, locale, got, want)
			}
		}
	}
	// The locale in any case, as the root's postPage takes it.
	if pg, err := parentPage(t, s.client, `category(slug: "go")`, "FR", 2); err != nil || len(pg.Nodes) != 8 {
		t.Errorf(`category postPage(locale: "FR") page 2: %+v, %v; want the 8 newest posts in fr`, pg, err)
	}
	for _, parent := range []string{`category(slug: "go")`, `tag(slug: "langues")`, author} {
		for _, bad := range []string{"not a tag!", ""} {
			_, err := parentPage(t, s.client, parent, bad, 1)
			equal(t, fmt.Sprintf("%s postPage(locale: %q)", parent, bad), code(err), "BAD_USER_INPUT")
			if n := s.requests()["BatchGetItem"] + s.requests()["Query"]; n > 0 {
				t.Errorf("%s postPage(locale: %q): %v DynamoDB requests, want no read of a page", parent, bad, s.requests())
			}
		}
	}
	s.consistent()
}

// TestNumberedLocalePagesFollowTheChangeFeed: on the server with its
// change feed, a category's, a tag's and an author's numbered pages in
// French show the French posts alone, in order, with French totals, and
// follow them as they are published, edited, unpublished and moved to
// another locale: each wait is for the pages worker's post.pages.updated
// deliveries, the pages read again at each.
func TestNumberedLocalePagesFollowTheChangeFeed(t *testing.T) {
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	me := ok[*ViewerResponse](t)(Viewer(ctx, writer)).Viewer.Id
	r := newFeedReceiver(t)
	s.hook(writer, r, "post.pages.updated")
	parents := []string{`category(slug: "feeds")`, `tag(slug: "langues")`, fmt.Sprintf("author(id: %q)", me)}
	type post struct {
		id      string
		version int
	}
	var fr, en []post
	for i := range 14 {
		locale := "fr"
		if i%5 == 4 {
			locale = "en"
		}
		var c struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		in := map[string]any{"title": fmt.Sprint("Billet ", i), "slug": fmt.Sprint("billet-", i), "locale": locale,
			"categories": []string{"feeds"}, "tags": []string{"Langues"}}
		if err := raw(t, writer, `mutation($in: CreatePostInput!) { createPost(input: $in) { post { id } } }`, map[string]any{"in": in}, &c); err != nil {
			t.Fatal(err)
		}
		// A minute apart, in the past: the lists' order is the order of
		// creation.
		at := time.Now().Add(-time.Duration(100-i) * time.Minute)
		p := ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: c.CreatePost.Post.ID, At: &at})).PublishPost.Post
		if locale == "fr" {
			fr = append(fr, post{p.Id, p.Version})
		} else {
			en = append(en, post{p.Id, p.Version})
		}
	}
	ids := func(ps []post) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.id)
		}
		return out
	}
	// pagesHold waits until every parent's pages in locale hold want,
	// oldest first, as their totals count.
	pagesHold := func(what, locale string, want []string) {
		t.Helper()
		r.waitFor(t, what, func([]delivery) bool {
			for _, parent := range parents {
				var got []string
				n := (len(want) + 9) / 10
				for i := 1; i <= max(n, 1); i++ {
					pg, err := parentPage(t, writer, parent, locale, i)
					if err != nil {
						t.Fatal(err)
					}
					if pg.TotalCount != len(want) || pg.TotalPages != n {
						return false
					}
					for _, p := range pg.Nodes {
						got = append(got, p.ID)
					}
				}
				if !slices.Equal(got, want) {
					return false
				}
			}
			return true
		})
	}
	pagesHold("12 posts in fr", "fr", ids(fr))
	for _, parent := range parents {
		got := parentPages(t, writer, parent, "fr", ids(fr), nil)
		if !slices.Equal(got, ids(fr)) {
			t.Errorf("%s in fr holds %v, want %v", parent, got, ids(fr))
		}
	}

	// An edit shows on its page at once: the locale's copies are written
	// with the post.
	const update = `mutation($in: UpdatePostInput!) { updatePost(input: $in) { post { id version } } }`
	var v struct {
		UpdatePost struct{ Post struct{ Version int } }
	}
	if err := raw(t, writer, update, map[string]any{"in": map[string]any{"id": fr[3].id, "expectedVersion": fr[3].version, "title": "Billet modifié"}}, &v); err != nil {
		t.Fatal(err)
	}
	for _, parent := range parents {
		pg, err := parentPage(t, writer, parent, "fr", 1)
		if err != nil || len(pg.Nodes) != 10 || pg.Nodes[3].Title != "Billet modifié" {
			t.Errorf("%s page 1 in fr after an edit: %+v, %v; want its 4th post retitled", parent, pg, err)
		}
	}

	// Unpublishing the oldest shifts every page by one.
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, writer, UnpublishPostInput{Id: fr[0].id}))
	fr = fr[1:]
	pagesHold("11 posts in fr", "fr", ids(fr))

	// A post moved to English leaves the French pages for the English,
	// where it comes before the English posts published after it.
	moved := fr[4]
	if err := raw(t, writer, update, map[string]any{"in": map[string]any{"id": moved.id, "expectedVersion": moved.version, "locale": "en"}}, &v); err != nil {
		t.Fatal(err)
	}
	fr = slices.Delete(fr, 4, 5)
	pagesHold("10 posts in fr", "fr", ids(fr))
	pagesHold("3 posts in en", "en", []string{en[0].id, moved.id, en[1].id})
}
