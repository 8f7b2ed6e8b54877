package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

func TestCommentThreads(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	p := e.publish(e.post("ada", "threads"), time.Time{})
	add := func(parent, body string) *storage.Comment {
		e.clock.Advance(time.Second)
		return must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: parent, AuthorID: "bob", Body: body}))
	}
	first := add("", "first")
	second := add("", "second")
	r1 := add(first.ID, "reply 1")
	r2 := add(first.ID, "reply 2")
	s1 := add(second.ID, "reply to second")
	e.consistent()

	var roots *storage.Result[*storage.Comment]
	n := counted(func(ctx context.Context) {
		roots = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 50}))
	})
	equal(t, "comments requests", n["Query"], 1)
	equalSlices(t, "roots", []string{roots.Items[0].ID, roots.Items[1].ID}, []string{first.ID, second.ID})
	equal(t, "roots only", len(roots.Items), 2)

	// The first replies come with their comments.
	equal(t, "replies of first", len(roots.Items[0].Replies), 2)
	equal(t, "first reply", roots.Items[0].Replies[0].ID, r1.ID)
	equal(t, "second reply", roots.Items[0].Replies[1].ID, r2.ID)
	equal(t, "reply of second", roots.Items[1].Replies[0].ID, s1.ID)
	equal(t, "reply's parent", roots.Items[0].Replies[0].ParentID, first.ID)
	var page *storage.Result[*storage.Comment]
	n = counted(func(ctx context.Context) {
		page = must[*storage.Result[*storage.Comment]](t)(e.store.ReplyPage(ctx, roots.Items[0], storage.PageArgs{Limit: 1}))
	})
	equal(t, "first page of replies requests", len(n), 0)
	equalSlices(t, "first page of replies", commentIDs(page.Items), []string{r1.ID})
	equal(t, "more replies", page.HasNext, true)
	n = counted(func(ctx context.Context) {
		page = must[*storage.Result[*storage.Comment]](t)(e.store.ReplyPage(ctx, roots.Items[0], storage.PageArgs{Limit: 1, After: page.Cursors[0]}))
	})
	equal(t, "next page of replies requests", n["Query"], 1)
	equalSlices(t, "next page of replies", commentIDs(page.Items), []string{r2.ID})
	equal(t, "no more replies", page.HasNext, false)

	if _, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: r1.ID, AuthorID: "bob", Body: "deep"}); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("reply to a reply: err = %v, want invalid input", err)
	}

	// Deleting a comment with replies leaves a tombstone; without, it goes.
	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: first.ID}))
	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: s1.ID}))
	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: second.ID}))
	e.consistent()
	roots = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 50}))
	equal(t, "roots after delete", len(roots.Items), 1)
	equal(t, "tombstone", roots.Items[0].Deleted, true)
	equal(t, "tombstone body", roots.Items[0].Body, "")
	got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
	equal(t, "comment count", got.CommentCount, int64(2))
	if _, err := e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: first.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("delete twice: err = %v, want not found", err)
	}
	if _, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: first.ID, AuthorID: "bob", Body: "late"}); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("reply to a tombstone: err = %v, want invalid input", err)
	}

	comments := must[[]*storage.Comment](t)(func() ([]*storage.Comment, error) {
		cs, errs := e.store.GetComments(ctx, []storage.CommentKey{{PostID: p.ID, CommentID: r2.ID}, {PostID: p.ID, CommentID: s1.ID}})
		equal(t, "found", errs[0], nil)
		if !errors.Is(errs[1], storage.ErrNotFound) {
			t.Errorf("deleted reply: err = %v", errs[1])
		}
		return cs, nil
	}())
	equal(t, "reply body", comments[0].Body, "reply 2")

	t.Run("the last reply of a tombstone takes the tombstone along", func(t *testing.T) {
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: r1.ID}))
		e.consistent()
		roots := must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 50}))
		equal(t, "tombstone still holds a reply", len(roots.Items), 1)
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: r2.ID}))
		e.consistent()
		roots = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 50}))
		equal(t, "roots left", len(roots.Items), 0)
		got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
		equal(t, "comment count", got.CommentCount, int64(0))
		equal(t, "thread count", got.ThreadCount, int64(0))
	})
}

func commentIDs(cs []*storage.Comment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
