package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestRenderingEndsWithTheRequest: a body is rendered under the request's
// deadline, and a request out of time fails with the deadline's error
// (TIMEOUT to a client), not with one about the body, which it had no
// time to render. Nothing is read or written: the store has no client.
func TestRenderingEndsWithTheRequest(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	body := strings.Repeat("|a", 5000) + "|\n" + strings.Repeat("|-", 5000) + "|\n" + strings.Repeat("|\n", 2000)
	s := storage.New(nil, "t")
	_, err := s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Big", Slug: "big", Body: body})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("createPost: %v, want the deadline's error", err)
	}
	err = s.ValidatePostPatch(ctx, &storage.PostPatch{ID: "p", Body: &body})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("updatePost: %v, want the deadline's error", err)
	}
}
