package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// ownPostRef returns the storage reference for the unpublishPost and
// deletePost inputs once the actor of ctx may change the post; see
// ownPost for the errors.
func (r *Resolver) ownPostRef(ctx context.Context, id string, expectedVersion *int, idemKey *string) (storage.PostRef, error) {
	postID, err := r.ownPost(ctx, id, idemKey)
	if err != nil {
		return storage.PostRef{}, err
	}
	return storage.PostRef{
		ID:              postID,
		ExpectedVersion: int64(deref(expectedVersion)),
		IdempotencyKey:  idempotencyKey(ctx, idemKey),
	}, nil
}

// newComment returns the storage input for addComment, but for who writes
// it and its idempotency key. It returns a *storage.ValidationError for a
// bad id, or for a parent that is a comment of another post.
func newComment(in model.AddCommentInput) (storage.NewComment, error) {
	postID, err := decodeIDOf("postId", in.PostID, kindPost)
	if err != nil {
		return storage.NewComment{}, err
	}
	c := storage.NewComment{
		PostID: postID,
		Body:   in.Body,
	}
	if in.ParentID != nil {
		parent, err := decodeCommentID("parentId", *in.ParentID)
		if err != nil {
			return storage.NewComment{}, err
		}
		if parent.PostID != postID {
			return storage.NewComment{}, &storage.ValidationError{Field: "parentId", Reason: "is not a comment of this post"}
		}
		c.ParentID = parent.CommentID
	}
	return c, nil
}
