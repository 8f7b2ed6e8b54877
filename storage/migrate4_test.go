package storage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/legacytest"
)

// TestMigrateLayout3 turns a blog written by this version back into
// layout 3 (bodies and counts on the post items, the feed in four
// partitions) and migrates it: every post gets its body item and count
// item, the feed is one partition again, readers see what they saw, a
// comment on a post the migration has not reached yet moves that post
// first, and a second run costs one read.
func TestMigrateLayout3(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	body := strings.Repeat("Some words about Go.\n\n## A heading\n\nMore words.\n\n", 40)
	var ids []string
	for i := range 6 {
		p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: fmt.Sprintf("Post %d", i),
			Slug: fmt.Sprintf("post-%d", i), Body: body + fmt.Sprint(i), Categories: []string{"go"}}))
		if i < 5 {
			p = e.publish(p, start.Add(-time.Duration(i+1)*time.Hour))
		}
		ids = append(ids, p.ID)
	}
	first := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: ids[0], AuthorID: "ada", Body: "first"}))
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: ids[0], ParentID: first.ID, AuthorID: "ada", Body: "reply"}))
	before := must[*storage.Post](t)(e.store.GetPost(ctx, ids[0]))
	feed := func(ctx context.Context) []string {
		var out []string
		for _, p := range must[*storage.Result[*storage.Post]](t)(e.store.LatestPosts(ctx, storage.PageArgs{Limit: 10}, storage.Period{})).Items {
			out = append(out, p.ID)
		}
		return out
	}
	wantFeed := feed(ctx)
	equal(t, "feed before", len(wantFeed), 5)

	must[int](t)(legacytest.ToLayout4(ctx, e.client, e.table))
	equal(t, "posts turned back", must[int](t)(legacytest.ToLayout3(ctx, e.client, e.table)), 6)
	equal(t, "layout", must[int](t)(e.store.LayoutVersion(ctx)), 3)
	bad := must[[]string](t)(e.store.Check(ctx))
	for _, want := range []string{"keeps its body on its own item", "has no body item", "has no count item"} {
		if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, want) }) {
			t.Fatalf("the checker finds nothing like %q in the table of layout 3: %q", want, bad)
		}
	}
	// Readers of layout 3's items see the same post meanwhile.
	legacy := must[*storage.Post](t)(e.store.GetPost(ctx, ids[0]))
	equal(t, "body of a post of layout 3", legacy.BodyHTML, before.BodyHTML)

	// A comment on a post of layout 3 moves the post first.
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: ids[1], AuthorID: "ada", Body: "early"}))

	m := must[*storage.Migration](t)(e.store.Migrate(ctx))
	equal(t, "from", m.From, 3)
	equal(t, "to", m.To, storage.CurrentLayout)
	equal(t, "posts split", m.Split, 5)
	e.consistent()

	after := must[*storage.Post](t)(e.store.GetPost(ctx, ids[0]))
	equal(t, "body", after.Body, before.Body)
	equal(t, "HTML", after.BodyHTML, before.BodyHTML)
	equal(t, "headings", len(after.TOC), len(before.TOC))
	equal(t, "comments", after.CommentCount, int64(2))
	equal(t, "threads", after.ThreadCount, int64(1))
	equal(t, "comments of the post commented on before", must[*storage.Post](t)(e.store.GetPost(ctx, ids[1])).CommentCount, int64(1))
	var got []string
	n := counted(func(ctx context.Context) { got = feed(ctx) })
	equal(t, "feed after", strings.Join(got, ","), strings.Join(wantFeed, ","))
	equal(t, "requests of a feed page", fmt.Sprint(n), "map[Query:1]")

	n = counted(func(ctx context.Context) { must[*storage.Migration](t)(e.store.Migrate(ctx)) })
	equal(t, "requests of a migration with nothing to do", fmt.Sprint(n), "map[GetItem:1]")
}

// TestTitleEditOfLayout3Post edits the title of a post of layout 3, whose
// post item holds its body, before the migration reaches it: the write,
// which reads no body item, finds the body on the post item and moves it
// to the body item, as every write of such a post does, and the post
// answers and keeps the body it had.
func TestTitleEditOfLayout3Post(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	body := strings.Repeat("Some words about Go.\n\n## A heading\n\nMore words.\n\n", 40)
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Old", Slug: "old", Body: body}))
	p = e.publish(p, start.Add(-time.Hour))
	must[int](t)(legacytest.ToLayout4(ctx, e.client, e.table))
	equal(t, "posts turned back", must[int](t)(legacytest.ToLayout3(ctx, e.client, e.table)), 1)

	edited := must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr("New")}))
	equal(t, "answer's body", edited.Body, body)
	equal(t, "answer's body unread", edited.BodyUnread, false)
	got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
	equal(t, "body", got.Body, body)
	equal(t, "title", got.Title, "New")
	for _, bad := range must[[]string](t)(e.store.Check(ctx)) {
		if strings.Contains(bad, "body") {
			t.Errorf("after the edit: %s", bad)
		}
	}
}

// TestCommentOnLayout1PostRendersItsBody comments on a post of a layout 1
// table, which no migration has reached: the comment's write moves the
// post to layout 4 first, its body rendered as a migration renders it, so
// that a later write, which leaves the body unread, and the migration
// then find it whole.
func TestCommentOnLayout1PostRendersItsBody(t *testing.T) {
	e := newEnv(t)
	b := e.legacyBlog()
	ctx := context.Background()
	id := b.Posts["intro"]
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: id, ParentID: b.Thread, AuthorID: "grace", Body: "a reply"}))
	must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: id}))
	must[*storage.Migration](t)(e.store.Migrate(ctx))
	got := must[*storage.Post](t)(e.store.GetPost(ctx, id))
	if got.BodyHTML == "" || got.WordCount == 0 {
		t.Errorf("post after a comment, a publish and the migration: %d words, HTML %q", got.WordCount, got.BodyHTML)
	}
	e.consistent()
}
