package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// TestPostWriteKeepsCommentCounts reads a post, then changes its comments
// so that commentCount ends where it was while threadCount does not, and
// writes the post as read: comments count on the post's count item, which
// a post write leaves as it is, so the write goes through and the counts
// stay exact.
func TestPostWriteKeepsCommentCounts(t *testing.T) {
	ctx := context.Background()
	db, table := testBackend(t, nil, "threads")
	s := New(db, table)
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "T", Slug: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = s.Publish(ctx, PublishPost{ID: p.ID}); err != nil {
		t.Fatal(err)
	}
	first, err := s.AddComment(ctx, NewComment{PostID: p.ID, AuthorID: "ada", Body: "first"})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := s.AddComment(ctx, NewComment{PostID: p.ID, ParentID: first.ID, AuthorID: "ada", Body: "reply"})
	if err != nil {
		t.Fatal(err)
	}

	before, r, err := s.readPost(ctx, p.ID, nil, "", false, true, moreNames{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddComment(ctx, NewComment{PostID: p.ID, AuthorID: "ada", Body: "second"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteComment(ctx, CommentRef{PostID: p.ID, CommentID: reply.ID}); err != nil {
		t.Fatal(err)
	}

	after := *before
	after.Title, after.Version = "Edited", before.Version+1
	r.keep(before)
	if _, err := s.writePost(ctx, nil, before, &after, r); err != nil {
		t.Errorf("write of the post as read before = %v", err)
	}
	if comments, threads, err := s.readCommentCount(ctx, p.ID); err != nil || comments != 2 || threads != 2 {
		t.Errorf("counts = %d in %d threads (%v), want 2 in 2", comments, threads, err)
	}
	if err := s.SyncAllCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if bad, err := s.Check(ctx); err != nil || len(bad) > 0 {
		t.Errorf("invariants: %v %v", bad, err)
	}
}

// TestPostActionsBound counts the actions postActions makes for a change
// of everything a post write can change at once (no one mutation does it
// all): a scheduled post moved from 10 categories to 10 others and to
// another month, its schedule item with it, its slug changed to another
// post's redirect while its own are at their bound. With the idempotency record that is the most a
// post write's transaction can hold, far below DynamoDB's 100.
func TestPostActionsBound(t *testing.T) {
	var from, to []catRef
	cats := map[string]*categoryItem{}
	for i := range 2 * MaxCategories {
		c := catRef{Slug: fmt.Sprintf("c%02d", i), Name: "C"}
		cats[c.Slug] = &categoryItem{Slug: c.Slug, Name: c.Name}
		if i < MaxCategories {
			from = append(from, c)
		} else {
			to = append(to, c)
		}
	}
	slugs := []string{"current"}
	for i := range MaxRedirects {
		slugs = append(slugs, fmt.Sprintf("old-%d", i))
	}
	before := &postItem{
		ID: "p", Slug: "current", Slugs: slugs, Status: string(StatusPublished), AuthorID: "ada", AuthorName: "Ada",
		Cats: from, PublishedAt: "2026-04-15T00:00:00.000Z", GoLiveAt: "2026-04-15T00:00:00.000Z",
		CreatedAt: "2026-01-01T00:00:00.000Z", Version: 3, hasBody: true,
	}
	before.counts = &countItem{Status: before.Status, PublishedAt: before.PublishedAt, AuthorID: "ada"}
	after := *before
	after.Slug, after.Cats, after.PublishedAt, after.Version = "taken", to, "2026-05-15T00:00:00.000Z", 4
	after.Slugs, _ = slugHistory(before.Slugs, before.Slug, after.Slug)
	r := &names{
		author: &authorItem{ID: "ada", Name: "Ada"}, cats: cats, stats: &statsItem{},
		slug: &reservation{Owner: "q", Redirect: true, OwnerSlugs: []string{"q", "taken"}},
	}
	s := &Store{db: dynamo.New(nil, "t", nil), table: "t", now: time.Now}
	txn := s.db.NewTxn()
	if err := postActions(testKS, txn, before, &after, r, "2026-03-01T00:00:00.000Z"); err != nil {
		t.Fatal(err)
	}
	if err := s.record(txn, &idem{key: s.ks.Idempotency("updatePost", "k"), hash: "h"}, after.post()); err != nil {
		t.Fatal(err)
	}
	// post; its schedule item moved (a put and a delete); new slug, old
	// slug as a redirect, oldest redirect dropped, the other post's
	// slugs; author copy put and deleted, 10 category copies put, 10
	// deleted; author, 20 categories, STATS; the count item's
	// publishedAt; record.
	if want := 1 + 2 + 4 + 2 + 20 + 22 + 1 + 1; txn.Len() != want {
		t.Errorf("%d actions, want %d", txn.Len(), want)
	}
}
