package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestReadsBeforeWrites covers the reads a caller makes to decide whether
// a write may go ahead: one request each, ErrNotFound for what is missing
// and a validation error for a malformed comment id.
func TestReadsBeforeWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("grace", "Grace")
	p := e.publish(e.post("ada", "checked"), time.Time{})
	c := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "grace", Body: "Hi"}))

	var post *storage.Post
	reqs := counted(func(ctx context.Context) { post = must[*storage.Post](t)(e.store.ReadPost(ctx, p.ID)) })
	equal(t, "ReadPost author", post.AuthorID, "ada")
	equal(t, "ReadPost requests", reqs["Query"], 1) // the post with its count and body items

	var comment *storage.Comment
	reqs = counted(func(ctx context.Context) {
		var err error
		comment, post, err = e.store.ReadComment(ctx, storage.CommentKey{PostID: p.ID, CommentID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
	})
	equal(t, "ReadComment writer", comment.AuthorID, "grace")
	equal(t, "ReadComment post author", post.AuthorID, "ada")
	equal(t, "ReadComment requests", reqs["TransactGetItems"], 1)

	if _, err := e.store.ReadPost(ctx, "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("ReadPost of a missing post = %v, want ErrNotFound", err)
	}
	if _, _, err := e.store.ReadComment(ctx, storage.CommentKey{PostID: "missing", CommentID: c.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("ReadComment of a missing comment = %v, want ErrNotFound", err)
	}
	if _, _, err := e.store.ReadComment(ctx, storage.CommentKey{PostID: p.ID, CommentID: "nonsense"}); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("ReadComment of a malformed id = %v, want ErrInvalidInput", err)
	}
}
