package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
)

// numberedPage returns page number of the list of posts in the GSI1
// partition list (storage.NumberedPosts), tagging the answer with the
// list's tag: a post event naming the list purges it.
func (r *Resolver) numberedPage(ctx context.Context, list, tag string, number int, size *int) (*model.PostPage, error) {
	z := 20
	if size != nil {
		z = *size
	}
	pg, err := r.store.NumberedPosts(ctx, list, number, z)
	if err != nil {
		return nil, err
	}
	tagList(ctx, tag, pg.Posts)
	r.primePosts(ctx, nil, "nodes", pg.Posts)
	r.primeFullPosts(ctx, pg.Posts)
	return &model.PostPage{Number: pg.Number, Size: pg.Size, TotalPages: pg.TotalPages, TotalCount: pg.TotalCount, Nodes: pg.Posts}, nil
}
