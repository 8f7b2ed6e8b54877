package graph

import (
	"cmp"
	"context"
	"errors"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"

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

// numberedPageOf returns page number of the whole blog's posts, or of
// the category's or the tag's when one is given: a slug that no category
// or tag can have is a list with no pages, as one that none has, with
// no read; both is BAD_USER_INPUT.
func (r *Resolver) numberedPageOf(ctx context.Context, category, tag *string, number int, size *int) (*model.PostPage, error) {
	if category != nil && tag != nil {
		return nil, &storage.ValidationError{Field: "tag", Reason: "cannot go with category"}
	}
	if category == nil && tag == nil {
		return r.numberedPage(ctx, storage.FeedPartition(), frontend.TagFeed, number, size)
	}
	slug, err := findable(*cmp.Or(category, tag))
	if errors.Is(err, storage.ErrNotFound) {
		z := 20
		if size != nil {
			z = *size
		}
		if err := storage.ValidatePageNumber(number, z); err != nil {
			return nil, err
		}
		if category != nil {
			tagList(ctx, frontend.TagCategory(*category), nil)
		} else {
			tagList(ctx, frontend.TagTag(*tag), nil)
		}
		return &model.PostPage{Number: number, Size: z, Nodes: []*storage.Post{}}, nil
	}
	if category != nil {
		return r.numberedPage(ctx, storage.CategoryListPartition(slug), frontend.TagCategory(slug), number, size)
	}
	return r.numberedPage(ctx, storage.TagListPartition(slug), frontend.TagTag(slug), number, size)
}

// numberedComplexity makes a numbered page cost its two requests, its
// own fields once, and its size times its posts' selection
// (connectionComplexity's model). A size out of range counts once, so
// the resolver refuses it with BAD_USER_INPUT.
func numberedComplexity(child int, size *int) int {
	return listRequestCost + connectionComplexity(child, size, nil)
}
