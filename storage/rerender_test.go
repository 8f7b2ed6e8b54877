package storage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
)

const rerenderBody = "Intro [home](https://blog.example/about) and [go](https://go.dev).\n\n```go\nfunc main() {}\n```\n"

// renderer returns a store on e's table whose renderer links to
// https://blog.example as the blog's own and highlights code.
func (e *env) renderer() *storage.Store {
	return storage.New(e.client, e.table, storage.WithClock(e.clock.Now),
		storage.WithSiteURL("https://blog.example"), storage.WithHighlight(true))
}

// stale makes the items of a post look rendered by an older renderer:
// another version, word count and derived excerpt.
func (e *env) stale(pk, sk string, post bool) {
	e.t.Helper()
	set := "SET words = :w, autoExcerpt = :x"
	vals := map[string]types.AttributeValue{
		":w": &types.AttributeValueMemberN{Value: "1"}, ":x": &types.AttributeValueMemberS{Value: "old excerpt"},
	}
	if post {
		set += ", renderVersion = :v, bodyHtml = :h"
		vals[":v"] = &types.AttributeValueMemberS{Value: "r1-old"}
		vals[":h"] = &types.AttributeValueMemberS{Value: "<p>old</p>"}
	}
	must[*dynamodb.UpdateItemOutput](e.t)(e.client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(e.table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
		UpdateExpression: aws.String(set), ExpressionAttributeValues: vals,
	}))
}

func TestRerenderRendersWhatAnotherRendererWrote(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	created := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "t", Body: rerenderBody, Categories: []string{"go"}}))
	p := e.publish(created, start.Add(-1))
	draft := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "D", Slug: "d", Body: rerenderBody}))
	about := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: "About", Slug: "about", Body: rerenderBody}))
	about = must[*storage.SitePage](t)(e.store.PublishPage(ctx, storage.PageRef{ID: about.ID}))
	draftPage := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: "Soon", Slug: "soon", Body: rerenderBody}))
	if !strings.Contains(created.BodyHTML, `<a href="https://blog.example/about" rel="nofollow noreferrer">`) || strings.Contains(created.BodyHTML, "chroma") {
		t.Fatalf("rendered with the first renderer: %s", created.BodyHTML)
	}

	// No renderer claimed: nothing to do. The first claim writes, the
	// same again does not.
	s2 := e.renderer()
	equal(t, "swept before any claim", must[storage.Rerendered](t)(s2.Rerender(ctx)).Swept, false)
	equal(t, "first claim", must[bool](t)(e.store.ClaimRenderer(ctx)), true)
	equal(t, "same claim", must[bool](t)(e.store.ClaimRenderer(ctx)), false)
	// A server of another renderer never sweeps over the claimed one's.
	equal(t, "swept by another renderer", must[storage.Rerendered](t)(s2.Rerender(ctx)).Swept, false)
	// Done once a sweep finds nothing, a minute after the claim: every
	// server has read the claim by then.
	r := must[storage.Rerendered](t)(e.store.Rerender(ctx))
	if !r.Swept || r.Rendered != 0 || r.Done {
		t.Errorf("the claimed renderer's sweep with nothing to do, at once: %+v", r)
	}
	e.clock.Advance(time.Minute)
	r = must[storage.Rerendered](t)(e.store.Rerender(ctx))
	if !r.Swept || r.Rendered != 0 || !r.Done {
		t.Errorf("the claimed renderer's sweep with nothing to do, a minute later: %+v", r)
	}

	// The new renderer claims the table and renders the posts and pages
	// again, once.
	equal(t, "new claim", must[bool](t)(s2.ClaimRenderer(ctx)), true)
	reqs := counted(func(ctx context.Context) { r = must[storage.Rerendered](t)(s2.Rerender(ctx)) })
	if r.Rendered != 4 || r.Stale != 4 || r.Done {
		t.Errorf("sweep: %+v", r)
	}
	// GetItem: the renderer item and each page; Query: the feed, the
	// authors, one author's drafts, the published pages and the draft
	// pages, and each post with its body item; one transaction a post or
	// a page.
	equal(t, "GetItem", reqs["GetItem"], 3)
	equal(t, "Query", reqs["Query"], 7)
	equal(t, "TransactWriteItems", reqs["TransactWriteItems"], 4)
	e.clock.Advance(time.Minute)
	r = must[storage.Rerendered](t)(s2.Rerender(ctx))
	if r.Rendered != 0 || !r.Done {
		t.Errorf("second sweep: %+v", r)
	}
	equal(t, "a tick once done", counted(func(ctx context.Context) { must[storage.Rerendered](t)(s2.Rerender(ctx)) })["GetItem"], 1)

	for _, id := range []string{p.ID, draft.ID} {
		got := must[*storage.Post](t)(s2.GetPost(ctx, id))
		if !strings.Contains(got.BodyHTML, `<a href="https://blog.example/about">home</a>`) ||
			!strings.Contains(got.BodyHTML, `<pre class="chroma"><code class="language-go">`) {
			t.Errorf("post %s not rendered again: %s", id, got.BodyHTML)
		}
		if got.Version != must[*storage.Post](t)(e.store.GetPost(ctx, id)).Version {
			t.Error("versions differ")
		}
	}
	for _, pg := range []*storage.SitePage{about, draftPage} {
		got := must[*storage.SitePage](t)(s2.GetPage(ctx, pg.ID))
		if !strings.Contains(got.BodyHTML, `<a href="https://blog.example/about">home</a>`) ||
			!strings.Contains(got.BodyHTML, `<pre class="chroma"><code class="language-go">`) {
			t.Errorf("page %s not rendered again: %s", pg.Slug, got.BodyHTML)
		}
		if got.Version != pg.Version || !got.UpdatedAt.Equal(pg.UpdatedAt) {
			t.Errorf("page %s: version %d updated %v, want %d %v", pg.Slug, got.Version, got.UpdatedAt, pg.Version, pg.UpdatedAt)
		}
	}
	// No version moved: an editor's expected version still holds.
	must[*storage.Post](t)(s2.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: aws.String("T2")}))
	must[*storage.SitePage](t)(s2.UpdatePage(ctx, storage.PagePatch{ID: about.ID, ExpectedVersion: about.Version, Title: aws.String("About us")}))
	checkWith(t, s2)
}

func TestRerenderRewritesTheCopiesSummaries(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "t", Body: "Some words here.", Categories: []string{"go"}}))
	p = e.publish(p, start.Add(-1))
	must[bool](t)(e.store.ClaimRenderer(ctx))
	e.stale(pubPrefix+"POST#"+p.ID, "POST#"+p.ID, true)
	e.stale(pubPrefix+"POST#"+p.ID, "CAT#go", false)
	e.stale(pubPrefix+"AUTHOR#ada", "POST#"+keyTime(p.PublishedAt)+"#"+p.ID, false)
	if r := must[storage.Rerendered](t)(e.store.Rerender(ctx)); r.Rendered != 1 {
		t.Fatalf("sweep: %+v", r)
	}
	page := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 10}, storage.Period{}))
	if len(page.Items) != 1 || page.Items[0].WordCount != 3 || page.Items[0].Excerpt != "Some words here." {
		t.Errorf("category copy: %+v", page.Items[0])
	}
	e.consistent()
}

// TestRerenderNeverLosesAConcurrentEdit edits a post, or a page, through
// a server of the old renderer while the new one sweeps again and again:
// every edit stays, and once the editing stops a sweep leaves the last
// body rendered by the new renderer.
func TestRerenderNeverLosesAConcurrentEdit(t *testing.T) {
	// rendered is what a reader gets of a post or a page.
	type rendered struct {
		body, html string
		version    int64
	}
	kinds := []struct {
		name   string
		create func(e *env) (id string, version int64)
		edit   func(s *storage.Store, id string, version int64, body string) (int64, error)
		get    func(s *storage.Store, id string) (rendered, error)
	}{
		{"post", func(e *env) (string, int64) {
			e.author("ada", "Ada")
			p := must[*storage.Post](e.t)(e.store.CreatePost(context.Background(), storage.NewPost{AuthorID: "ada", Title: "T", Slug: "t", Body: rerenderBody}))
			return p.ID, p.Version
		}, func(s *storage.Store, id string, version int64, body string) (int64, error) {
			p, err := s.UpdatePost(context.Background(), storage.PostPatch{ID: id, ExpectedVersion: version, Body: &body})
			if err != nil {
				return 0, err
			}
			return p.Version, nil
		}, func(s *storage.Store, id string) (rendered, error) {
			p, err := s.GetPost(context.Background(), id)
			if err != nil {
				return rendered{}, err
			}
			return rendered{p.Body, p.BodyHTML, p.Version}, nil
		}},
		{"page", func(e *env) (string, int64) {
			ctx := context.Background()
			pg := must[*storage.SitePage](e.t)(e.store.CreatePage(ctx, storage.NewPage{Title: "T", Slug: "t", Body: rerenderBody}))
			pg = must[*storage.SitePage](e.t)(e.store.PublishPage(ctx, storage.PageRef{ID: pg.ID}))
			return pg.ID, pg.Version
		}, func(s *storage.Store, id string, version int64, body string) (int64, error) {
			pg, err := s.UpdatePage(context.Background(), storage.PagePatch{ID: id, ExpectedVersion: version, Body: &body})
			if err != nil {
				return 0, err
			}
			return pg.Version, nil
		}, func(s *storage.Store, id string) (rendered, error) {
			pg, err := s.GetPage(context.Background(), id)
			if err != nil {
				return rendered{}, err
			}
			return rendered{pg.Body, pg.BodyHTML, pg.Version}, nil
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			id, version := kind.create(e)
			s2 := e.renderer()
			must[bool](t)(s2.ClaimRenderer(ctx))
			// Past the settling time, so that sweeps mark the renderer
			// done between the edits, and the edits mark it not done
			// again.
			e.clock.Advance(time.Minute)
			must[struct{}](t)(struct{}{}, e.store.RefreshRenderer(ctx))
			const edits = 10
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s2.Rerender(ctx); err != nil && !strings.Contains(err.Error(), "busy") {
						t.Error(err)
						return
					}
				}
			})
			for i := range edits {
				v, err := kind.edit(e.store, id, version, fmt.Sprintf("Edit %d [home](https://blog.example/)", i))
				if err != nil {
					t.Fatalf("edit %d: %v", i, err)
				}
				version = v
			}
			close(stop)
			wg.Wait()
			// The sweeps went on while the editor edited (the test's
			// clock stands still: none was ever done); they go on until
			// one finds nothing, 10 s or more after the last edit.
			for i := 0; ; i++ {
				e.clock.Advance(10 * time.Second)
				r := must[storage.Rerendered](t)(s2.Rerender(ctx))
				if r.Done {
					break
				}
				if !r.Swept || i > 3 {
					t.Fatalf("sweep %d: %+v", i, r)
				}
			}
			got := must[rendered](t)(kind.get(s2, id))
			equal(t, "body", got.body, fmt.Sprintf("Edit %d [home](https://blog.example/)", edits-1))
			equal(t, "version", got.version, version)
			equal(t, "html", got.html, fmt.Sprintf("<p>Edit %d <a href=\"https://blog.example/\">home</a></p>\n", edits-1))
			checkWith(t, s2)
		})
	}
}

// checkWith fails the test when s's invariant checker finds anything.
func checkWith(t *testing.T, s *storage.Store) {
	t.Helper()
	for _, b := range must[[]string](t)(s.Check(context.Background())) {
		t.Error("invariant: " + b)
	}
}

// TestCheckReportsABodyLeftToAnotherRenderer: once the table's renderer
// is done, a post or a page that an outdated server wrote without marking
// it (it had not read the claim) is reported until a sweep renders it.
func TestCheckReportsABodyLeftToAnotherRenderer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "t", Body: rerenderBody}))
	pg := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: "About", Slug: "about", Body: rerenderBody}))
	s2 := e.renderer()
	must[bool](t)(s2.ClaimRenderer(ctx))
	e.clock.Advance(time.Minute)
	for i := 0; !must[storage.Rerendered](t)(s2.Rerender(ctx)).Done; i++ {
		if i > 3 {
			t.Fatal("the sweep is never done")
		}
		e.clock.Advance(10 * time.Second)
	}
	checkWith(t, s2)

	body := "Edited [home](https://blog.example/)"
	must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Body: &body}))
	must[*storage.SitePage](t)(e.store.UpdatePage(ctx, storage.PagePatch{ID: pg.ID, ExpectedVersion: pg.Version, Body: &body}))
	var got []string
	for _, b := range must[[]string](t)(s2.Check(ctx)) {
		if strings.Contains(b, "whose sweep is done") {
			got = append(got, strings.Fields(b)[0])
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"page", "post"}) {
		t.Errorf("reported as left to another renderer: %v, want the page and the post", got)
	}
}

// TestAnOutdatedServersPageWriteMarksTheRenderer: once the table's
// renderer is done, a page that a server of another renderer creates or
// edits marks it not done, so that the next sweep renders the page with
// the table's renderer, as a post's write does.
func TestAnOutdatedServersPageWriteMarksTheRenderer(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s2 := e.renderer()
	must[bool](t)(s2.ClaimRenderer(ctx))
	must[struct{}](t)(struct{}{}, e.store.RefreshRenderer(ctx))
	// sweep sweeps until done and returns how many items it rendered.
	sweep := func() int {
		t.Helper()
		n := 0
		for i := 0; ; i++ {
			e.clock.Advance(10 * time.Second)
			r := must[storage.Rerendered](t)(s2.Rerender(ctx))
			n += r.Rendered
			if r.Done {
				return n
			}
			if !r.Swept || i > 8 {
				t.Fatalf("sweep %d: %+v", i, r)
			}
		}
	}
	sweep()
	pg := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: "About", Slug: "about", Body: rerenderBody}))
	equal(t, "rendered after a creation", sweep(), 1)
	body := "Edited [home](https://blog.example/)"
	must[*storage.SitePage](t)(e.store.UpdatePage(ctx, storage.PagePatch{ID: pg.ID, ExpectedVersion: pg.Version, Body: &body}))
	equal(t, "rendered after an edit", sweep(), 1)
	equal(t, "html", must[*storage.SitePage](t)(s2.GetPage(ctx, pg.ID)).BodyHTML, "<p>Edited <a href=\"https://blog.example/\">home</a></p>\n")
	checkWith(t, s2)
}
