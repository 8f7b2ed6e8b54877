package storage_test

import (
	"context"
	"errors"
	"fmt"
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
	// A server of layout 5 sees nothing of the blog until it is moved
	// into the publication.
	if _, err := e.store.GetPost(ctx, ids[0]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a post of layout 3 read in the publication: %v, want ErrNotFound", err)
	}

	m := must[*storage.Migration](t)(e.store.Migrate(ctx))
	equal(t, "from", m.From, 3)
	equal(t, "to", m.To, storage.CurrentLayout)
	equal(t, "posts split", m.Split, 6)
	e.consistent()

	after := must[*storage.Post](t)(e.store.GetPost(ctx, ids[0]))
	equal(t, "body", after.Body, before.Body)
	equal(t, "HTML", after.BodyHTML, before.BodyHTML)
	equal(t, "headings", len(after.TOC), len(before.TOC))
	equal(t, "comments", after.CommentCount, int64(2))
	equal(t, "threads", after.ThreadCount, int64(1))
	var got []string
	n := counted(func(ctx context.Context) { got = feed(ctx) })
	equal(t, "feed after", strings.Join(got, ","), strings.Join(wantFeed, ","))
	equal(t, "requests of a feed page", fmt.Sprint(n), "map[Query:1]")

	n = counted(func(ctx context.Context) { must[*storage.Migration](t)(e.store.Migrate(ctx)) })
	equal(t, "requests of a migration with nothing to do", fmt.Sprint(n), "map[GetItem:1]")
}
