package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// emptyInputs are the optional input fields whose empty string is not the
// same as leaving them out, with what they must be instead: an omitted
// idempotencyKey means none and an omitted subject a new id, but an empty
// one is neither.
var emptyInputs = map[string]string{
	"idempotencyKey": "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -",
	"subject":        "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -",
}

// refuseEmptyInputs is the root field middleware that refuses a mutation
// whose input gives one of emptyInputs as an empty string, with
// BAD_USER_INPUT on that field, before its resolver reads or writes
// anything.
func refuseEmptyInputs(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	opCtx, fc := graphql.GetOperationContext(ctx), graphql.GetRootFieldContext(ctx)
	if opCtx.Operation.Operation != ast.Mutation || fc == nil || fc.Field.Field == nil {
		return next(ctx)
	}
	input, _ := fc.Field.ArgumentMap(opCtx.Variables)["input"].(map[string]any)
	for field, reason := range emptyInputs {
		if v, ok := input[field].(string); ok && v == "" {
			err := &gqlerror.Error{
				Err:       &storage.ValidationError{Field: field, Reason: reason},
				Message:   field + ": " + reason,
				Path:      ast.Path{ast.PathName(fc.Field.Alias)},
				Locations: []gqlerror.Location{{Line: fc.Field.Position.Line, Column: fc.Field.Position.Column}},
			}
			graphql.AddError(ctx, err)
			return graphql.Null
		}
	}
	return next(ctx)
}

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
		ExpectedVersion: expectedVersionOf(expectedVersion),
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

// imageOf returns the storage image of an image input, or a
// *storage.ValidationError for a size given out of range.
func imageOf(in *model.ImageInput) (*storage.Image, error) {
	if in == nil {
		return nil, nil
	}
	img := &storage.Image{URL: in.URL, Alt: deref(in.Alt), Width: deref(in.Width), Height: deref(in.Height)}
	for field, v := range map[string]*int{"coverImage.width": in.Width, "coverImage.height": in.Height} {
		if v != nil && *v < 1 {
			return nil, &storage.ValidationError{Field: field, Reason: fmt.Sprintf("must be between 1 and %d pixels", storage.MaxImageSide)}
		}
	}
	return img, nil
}

// seoOfInput returns the SEO fields of a post's input.
func seoOfInput(in *model.SeoInput) storage.SEO {
	if in == nil {
		return storage.SEO{}
	}
	return storage.SEO{Title: deref(in.Title), Description: deref(in.Description), CanonicalURL: deref(in.CanonicalURL), OGImage: deref(in.OgImage)}
}

// seoPatch returns the changes an input makes to a post's SEO fields.
func seoPatch(in *model.SeoInput) *storage.SEOPatch {
	if in == nil {
		return nil
	}
	return &storage.SEOPatch{Title: in.Title, Description: in.Description, CanonicalURL: in.CanonicalURL, OGImage: in.OgImage}
}

// expectedVersionOf returns the storage form of an optional
// expectedVersion: zero (no condition) when the client omitted it, and
// storage.NoVersion for 0 or less, versions no item has, so that the write
// fails with CONFLICT rather than skip the check.
func expectedVersionOf(v *int) int64 {
	switch {
	case v == nil:
		return 0
	case *v < 1:
		return storage.NoVersion
	}
	return int64(*v)
}
