package graph

import (
	"context"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// featuredPosts answers Query.featuredPosts: one Query a page, and one
// more when totalCount is selected.
func (r *Resolver) featuredPosts(ctx context.Context, first *int, after *string, last *int, before *string) (*model.PostConnection, error) {
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	res, err := r.store.FeaturedPosts(ctx, p)
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagFeatured) // primePosts tags the posts
	r.primePosts(ctx, nil, "edges.node", res.Items)
	return postConnection(res, func(ctx context.Context) (int, error) {
		n, err := r.store.CountFeatured(ctx)
		return int(n), err
	}), nil
}

// setPostFeatured answers Mutation.setPostFeatured: the post's author or
// an admin.
func (r *Resolver) setPostFeatured(ctx context.Context, input model.SetPostFeaturedInput) (*model.SetPostFeaturedPayload, error) {
	id, err := r.ownPost(ctx, input.ID, input.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	p, err := r.store.SetFeatured(answerBody(ctx), storage.FeaturePost{
		ID: id, Featured: input.Featured, ExpectedVersion: expectedVersionOf(input.ExpectedVersion),
		IdempotencyKey: idempotencyKey(ctx, input.IdempotencyKey),
	})
	if err != nil {
		return nil, err
	}
	r.primePosts(ctx, nil, "post", []*storage.Post{p})
	return &model.SetPostFeaturedPayload{Post: p}, nil
}
