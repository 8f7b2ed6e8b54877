package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
)

// numberedPage returns page number of the list of posts in the
// partition list (storage.NumberedPosts), or the page read with its
// parent (categoryWithPage, authorWithPage), tagging the answer with the
// list's tag: a post event naming the list purges it.
func (r *Resolver) numberedPage(ctx context.Context, list, tag string, number int, size *int) (*model.PostPage, error) {
	z := pageSize(size)
	var pg *storage.NumberedPage
	if res, err, ok := loadersFor(ctx).ahead.take(numberedKey(list, number, z)); ok && err == nil {
		pg = res.(parentPage).page
	}
	if pg == nil {
		var err error
		if pg, err = r.store.NumberedPosts(ctx, list, number, z); err != nil {
			return nil, err
		}
	}
	return r.postPage(ctx, tag, pg), nil
}

// postPage returns the numbered page pg, tagged with tag, its posts
// primed in the loaders.
func (r *Resolver) postPage(ctx context.Context, tag string, pg *storage.NumberedPage) *model.PostPage {
	if pg.Posts == nil {
		pg.Posts = []*storage.Post{}
	}
	gqlhttp.Tag(ctx, tag) // primePosts tags the posts
	r.primePosts(ctx, nil, "nodes", pg.Posts)
	r.primeFullPosts(ctx, pg.Posts)
	return &model.PostPage{Number: pg.Number, Size: pg.Size, TotalPages: pg.TotalPages, TotalCount: pg.TotalCount, Nodes: pg.Posts}
}

// pageSize returns the size a numbered page is asked for: 20 when none.
func pageSize(size *int) int {
	if size != nil {
		return *size
	}
	return 20
}

// seriesPage returns page number of the series se in its order
// (storage.SeriesPage), showing the caller the posts seriesKeep lets
// them see.
func (r *Resolver) seriesPage(ctx context.Context, se *storage.Series, number int, size *int) (*model.PostPage, error) {
	pg, err := r.store.SeriesPage(ctx, se, number, pageSize(size), r.seriesKeep(ctx, se))
	if err != nil {
		return nil, err
	}
	return r.postPage(ctx, frontend.TagSeries(se.Slug), pg), nil
}

// parentPage is a parent (a category, an author) and a numbered page of
// its posts, read together: two requests for both.
type parentPage struct {
	parent any
	page   *storage.NumberedPage
}

// numberedKey names the read of page number of size size of list, for
// the reads started ahead.
func numberedKey(list string, number, size int) string {
	return fmt.Sprintf("numbered|%s|%d|%d", list, number, size)
}

// numberedArgs returns the list that the postPage field selected on the
// object of type typeName the current field resolves to numbers, of the
// parent's list named list (in the field's locale when it gives one),
// and the field's locale ("" when none), number and size; false when it
// is not selected exactly once or its arguments are not ones a page
// takes (its resolver then reads it, and refuses them).
func numberedArgs(ctx context.Context, typeName, list string) (in, locale string, number, size int, ok bool) {
	args, ok := childArgs(ctx, typeName, "postPage")
	if !ok {
		return "", "", 0, 0, false
	}
	n, ok1 := intArg(args["number"])
	z, ok2 := intArg(args["size"])
	l, ok3 := stringArg(args["locale"])
	if !ok1 || !ok2 || !ok3 || n == nil {
		return "", "", 0, 0, false
	}
	if storage.ValidatePageNumber(*n, pageSize(z)) != nil {
		return "", "", 0, 0, false
	}
	in, err := listIn(list, l)
	if err != nil {
		return "", "", 0, 0, false
	}
	if l != nil {
		locale = *l
	}
	return in, locale, *n, pageSize(z), true
}

// listIn returns the list named list in locale when one is given
// (storage.LocalePageList), else list: BAD_USER_INPUT when locale is not
// BCP 47.
func listIn(list string, locale *string) (string, error) {
	if locale == nil {
		return list, nil
	}
	return storage.LocalePageList(*locale, list)
}

// parentListPage returns page number of the list of a parent (a
// category, a tag, an author) named list, in locale when one is given,
// tagged with tag: a locale not BCP 47 is BAD_USER_INPUT, with no read.
func (r *Resolver) parentListPage(ctx context.Context, list, tag string, number int, size *int, locale *string) (*model.PostPage, error) {
	in, err := listIn(list, locale)
	if err != nil {
		return nil, err
	}
	return r.numberedPage(ctx, in, tag, number, size)
}

// withPage reads, when the current field's object selects postPage, the
// parent (read by read, with the page of its list named list in the
// postPage's locale, "" for none) and the page in one read started
// ahead, which postPage then takes: two requests for both instead of
// three. It returns false when postPage is not selected or this is no
// query.
func withPage[T any](ctx context.Context, typeName, list string, read func(ctx context.Context, locale string, number, size int) (T, *storage.NumberedPage, error)) (T, bool, error) {
	var zero T
	in, locale, number, size, ok := numberedArgs(ctx, typeName, list)
	if !ok {
		return zero, false, nil
	}
	key := numberedKey(in, number, size)
	startAhead(ctx, key, func(ctx context.Context) (parentPage, error) {
		p, pg, err := read(ctx, locale, number, size)
		return parentPage{parent: p, page: pg}, err
	})
	res, err, ok := loadersFor(ctx).ahead.take(key)
	if !ok {
		return zero, false, nil
	}
	if err != nil {
		return zero, true, err
	}
	return res.(parentPage).parent.(T), true, nil
}

// categoryWithPage reads the category slug with the numbered page of its
// posts its postPage selects (withPage).
func (r *Resolver) categoryWithPage(ctx context.Context, slug string) (*storage.Category, bool, error) {
	return withPage(ctx, "Category", storage.CategoryListPartition(slug), func(ctx context.Context, locale string, number, size int) (*storage.Category, *storage.NumberedPage, error) {
		return r.store.CategoryPage(ctx, slug, locale, number, size)
	})
}

// authorWithPage reads the author id with the numbered page of their
// posts their postPage selects (withPage).
func (r *Resolver) authorWithPage(ctx context.Context, id string) (*storage.Author, bool, error) {
	return withPage(ctx, "Author", storage.AuthorListPartition(id), func(ctx context.Context, locale string, number, size int) (*storage.Author, *storage.NumberedPage, error) {
		return r.store.AuthorPage(ctx, id, locale, number, size)
	})
}

// numberedPageOf returns page number of the whole blog's posts, or of
// the category's, the tag's or the month's when one is given, in locale
// when it is not nil: a slug that no category or tag can have is a list
// with no pages, as one that none has, with no read; two of them, a
// month with a locale, a month not YYYY-MM or a locale not BCP 47 is
// BAD_USER_INPUT.
func (r *Resolver) numberedPageOf(ctx context.Context, category, tag, month, locale *string, number int, size *int) (*model.PostPage, error) {
	in := func(list string) (string, error) { return list, nil }
	if locale != nil {
		if month != nil {
			return nil, &storage.ValidationError{Field: "locale", Reason: "cannot go with month"}
		}
		in = func(list string) (string, error) { return storage.LocalePageList(*locale, list) }
		if _, err := in(storage.FeedPartition()); err != nil {
			return nil, err
		}
	}
	page := func(list, tag string) (*model.PostPage, error) {
		l, err := in(list)
		if err != nil {
			return nil, err
		}
		return r.numberedPage(ctx, l, tag, number, size)
	}
	switch {
	case category != nil && tag != nil:
		return nil, &storage.ValidationError{Field: "tag", Reason: "cannot go with category"}
	case month != nil && (category != nil || tag != nil):
		return nil, &storage.ValidationError{Field: "month", Reason: "cannot go with category or tag"}
	case month != nil:
		m, err := storage.ParseMonth("month", *month)
		if err != nil {
			return nil, err
		}
		return r.numberedPage(ctx, storage.FeedMonthList(m), frontend.TagFeed, number, size)
	case category == nil && tag == nil:
		return page(storage.FeedPartition(), frontend.TagFeed)
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
		return page(storage.CategoryListPartition(slug), frontend.TagCategory(slug))
	}
	return page(storage.TagListPartition(slug), frontend.TagTag(slug))
}

// numberedComplexity makes a numbered page cost its two requests, its
// own fields once, and its size times its posts' selection
// (connectionComplexity's model). A size out of range counts once, so
// the resolver refuses it with BAD_USER_INPUT.
func numberedComplexity(child int, size *int) int {
	return listRequestCost + connectionComplexity(child, size, nil)
}
