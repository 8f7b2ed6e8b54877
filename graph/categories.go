package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// allCategories returns every category, ordered by slug, in as few pages as
// storage allows.
func (r *Resolver) allCategories(ctx context.Context) ([]*storage.Category, error) {
	var all []*storage.Category
	p := storage.PageArgs{Limit: storage.MaxPageSize}
	for {
		res, err := r.store.Categories(ctx, p)
		if err != nil {
			return nil, err
		}
		all = append(all, res.Items...)
		if !res.HasNext || len(res.Cursors) == 0 {
			return all, nil
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
}

// categoriesOf answers a post's categories from the names it carries.
func categoriesOf(refs []storage.CategoryRef) []*storage.Category {
	cats, vals := make([]*storage.Category, len(refs)), make([]storage.Category, len(refs))
	for i, c := range refs {
		vals[i] = storage.Category{Slug: c.Slug, Name: c.Name}
		cats[i] = &vals[i]
	}
	return cats
}

// slugsOf returns the slugs of a post's categories, in order.
func slugsOf(refs []storage.CategoryRef) []string {
	slugs := make([]string, len(refs))
	for i, c := range refs {
		slugs[i] = c.Slug
	}
	return slugs
}

// categoryPostsKey names the read of a page of a category's posts.
func categoryPostsKey(slug string, p storage.PageArgs, per storage.Period) string {
	return listKey("category-posts:"+slug, p, per)
}

// categoryPostsAhead starts the read of the category's posts, when the
// category field being resolved selects them.
func (r *Resolver) categoryPostsAhead(ctx context.Context, slug string) {
	if !storage.ValidSlug(slug) {
		return
	}
	listAhead(ctx, "Category", "posts",
		func(p storage.PageArgs, per storage.Period) string { return categoryPostsKey(slug, p, per) },
		func(ctx context.Context, p storage.PageArgs, per storage.Period) (*storage.Result[*storage.Post], error) {
			return r.store.CategoryPosts(ctx, slug, p, per)
		})
}

// categoryPostsCount returns the Counter of a category's posts in per.
func (r *Resolver) categoryPostsCount(c *storage.Category, per storage.Period) model.Counter {
	if per == (storage.Period{}) {
		return model.Count(c.PostCount)
	}
	return periodCount(c.Archive, per, r.countPosts("", c.Slug, per, false))
}

// postCategoriesAtHand reports whether a post's categories, selected by
// field, are answered from the post alone, as postAuthorAtHand does for
// its author. A draft keeps the names it was saved with (a category
// rename reaches published posts only): its categories are read.
func postCategoriesAtHand(oc *graphql.OperationContext, field graphql.CollectedField, obj *storage.Post) bool {
	return obj.Status == storage.StatusPublished && selectsOnlyOf(oc, field, "id", "slug", "name")
}
