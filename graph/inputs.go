package graph

import (
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// postRef returns the storage reference for the unpublishPost and
// deletePost inputs, or a *storage.ValidationError for a bad id.
func postRef(id string, expectedVersion *int, idempotencyKey *string) (storage.PostRef, error) {
	postID, err := decodeIDOf("id", id, kindPost)
	if err != nil {
		return storage.PostRef{}, err
	}
	return storage.PostRef{
		ID:              postID,
		ExpectedVersion: int64(deref(expectedVersion)),
		IdempotencyKey:  deref(idempotencyKey),
	}, nil
}

// newComment returns the storage input for addComment. It returns a
// *storage.ValidationError for a bad id, or for a parent that is a comment
// of another post.
func newComment(in model.AddCommentInput) (storage.NewComment, error) {
	postID, err := decodeIDOf("postId", in.PostID, kindPost)
	if err != nil {
		return storage.NewComment{}, err
	}
	author, err := decodeIDOf("authorId", in.AuthorID, kindAuthor)
	if err != nil {
		return storage.NewComment{}, err
	}
	c := storage.NewComment{
		PostID:         postID,
		AuthorID:       author,
		Body:           in.Body,
		IdempotencyKey: deref(in.IdempotencyKey),
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
