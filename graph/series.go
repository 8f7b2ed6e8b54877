package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Series: who may do what. Authors and admins make series; a series'
// owner (the author who made it) and admins change it, reorder it and
// delete it; the owner adds their own posts to it, an admin any post; the
// owner, the post's author or an admin takes a post out. Readers see a
// series' public posts; a post's author and admins its drafts too.

// seriesReadBytes bounds what Post.series reads for each post: its
// series' item (MaxSeriesPosts ids, about 40 KB, with its title,
// description and cover) and, for a post of a list, the post's own item
// (a summary names no series), each in a BatchGetItem that the page's
// posts share.
const seriesReadBytes = 64_000

// seriesCost is what Post.series costs besides its selection: what it
// reads, as a field that holds as much costs (sizeCost).
const seriesCost = 1 + seriesReadBytes/costBytes

// withSeriesCosts sets the complexity of the series' fields: Post.series
// costs what it reads (seriesCost), in requests shared by a page's posts,
// so a list may show each post's series; a post's neighbours in its
// series are read by a request of their own (one BatchGetItem for both),
// so each costs a list's request, and a list of 100 posts that asks them
// is over the limit.
func withSeriesCosts(c *ComplexityRoot) {
	c.Post.Series = func(child int) int { return seriesCost + child }
	c.PostSeries.Previous = func(child int) int { return listRequestCost + child }
	c.PostSeries.Next = func(child int) int { return listRequestCost + child }
	c.Post.Revisions = listComplexity
	c.Query.FeaturedPosts = listComplexity
	c.Query.AllSeries = listComplexity
	c.Series.Posts = listComplexity
	c.Series.Title = sizeCost(4 * storage.MaxTitleLength)
	c.Series.Description = sizeCost(4 * storage.MaxExcerptLength)
	c.Revision.Title = sizeCost(4 * storage.MaxTitleLength)
	c.Revision.Excerpt = sizeCost(4 * storage.MaxExcerptLength)
}

// seriesKeep returns which posts of a series the actor of ctx sees: those
// r.sees, the public ones and, for their author and admins, drafts and
// scheduled posts. The series' owner is no exception: an admin may have
// put another author's draft in it.
func (r *Resolver) seriesKeep(ctx context.Context, _ *storage.Series) func(*storage.Post) bool {
	return func(p *storage.Post) bool { return r.sees(ctx, p) }
}

// ownSeries reads the series slug once the actor of ctx may change it:
// its owner or an admin.
func (r *Resolver) ownSeries(ctx context.Context, slug string) (*storage.Series, error) {
	if _, err := author(ctx); err != nil {
		return nil, err
	}
	se, err := r.store.GetSeries(ctx, slug)
	if err != nil {
		return nil, err
	}
	return se, actsFor(ctx, se.OwnerID, "the series' owner")
}

// querySeries answers Query.series: NOT_FOUND when there is none, as
// for a tag, a category or an author.
func (r *Resolver) querySeries(ctx context.Context, slug string) (*storage.Series, error) {
	slug, err := findable(slug)
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagSeries(slug)) // found or not: its creation names it
	return r.store.GetSeries(ctx, slug)
}

func (r *Resolver) allSeries(ctx context.Context, first *int, after *string, last *int, before *string) (*model.SeriesConnection, error) {
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	res, err := r.store.AllSeries(ctx, p)
	if err != nil {
		return nil, err
	}
	return &model.SeriesConnection{
		Edges:    edges(res, func(c string, n *storage.Series) *model.SeriesEdge { return &model.SeriesEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(res),
	}, nil
}

func (r *Resolver) seriesOwner(ctx context.Context, se *storage.Series) (*storage.Author, error) {
	return loadersFor(ctx).authors.Load(ctx, se.OwnerID)()
}

// seriesPosts answers Series.posts; totalCount reads every post of the
// series (one BatchGetItem per 100) to count those the caller sees.
func (r *Resolver) seriesPosts(ctx context.Context, se *storage.Series, first *int, after *string, last *int, before *string) (*model.PostConnection, error) {
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	keep := r.seriesKeep(ctx, se)
	res, err := r.store.SeriesPosts(ctx, se, p, keep)
	if err != nil {
		return nil, err
	}
	tagList(ctx, frontend.TagSeries(se.Slug), res.Items)
	return postConnection(res, func(ctx context.Context) (int, error) {
		n := 0
		for ids := range slices.Chunk(se.Posts, storage.MaxPageSize) {
			posts, errs := r.store.GetPosts(ctx, ids)
			for i, p := range posts {
				if errs[i] == nil && keep(p) {
					n++
				}
			}
		}
		return n, nil
	}), nil
}

// postSeries answers Post.series.
func (r *Resolver) postSeries(ctx context.Context, obj *storage.Post) (*model.PostSeries, error) {
	p, err := fullPost(ctx, obj)
	if err != nil || p.Series == "" {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagSeries(p.Series))
	se, err := loadersFor(ctx).series.Load(ctx, p.Series)()
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	i := slices.Index(se.Posts, p.ID)
	if i < 0 {
		return nil, nil
	}
	return &model.PostSeries{Series: se, Position: i + 1, PostID: p.ID}, nil
}

func (r *Resolver) seriesNeighbour(ctx context.Context, obj *model.PostSeries, next bool) (*storage.Post, error) {
	prev, nxt, err := obj.Neighbours(ctx, func(ctx context.Context) (*storage.Post, *storage.Post, error) {
		prev, next, err := r.store.SeriesNeighbours(ctx, obj.Series, obj.PostID, r.seriesKeep(ctx, obj.Series))
		gqlhttp.Tag(ctx, frontend.TagSeries(obj.Series.Slug))
		tagPosts(ctx, prev, next)
		return prev, next, err
	})
	if next {
		return nxt, err
	}
	return prev, err
}

func (r *Resolver) createSeries(ctx context.Context, input model.CreateSeriesInput) (*model.CreateSeriesPayload, error) {
	a, err := author(ctx)
	if err != nil {
		return nil, err
	}
	cover, err := imageOf(input.CoverImage)
	if err != nil {
		return nil, err
	}
	if _, err := loadersFor(ctx).authors.Load(ctx, a.ID)(); errors.Is(err, storage.ErrNotFound) {
		return nil, asSubject(&storage.ValidationError{Field: "authorId", Reason: "no author has this id"})
	} else if err != nil {
		return nil, err
	}
	se, err := r.store.CreateSeries(ctx, storage.NewSeries{
		Slug: input.Slug, Title: input.Title, Description: deref(input.Description), CoverImage: cover, OwnerID: a.ID,
	})
	if err != nil {
		return nil, err
	}
	return &model.CreateSeriesPayload{Series: se}, nil
}

func (r *Resolver) updateSeries(ctx context.Context, input model.UpdateSeriesInput) (*model.UpdateSeriesPayload, error) {
	cover, err := imageOf(input.CoverImage)
	if err != nil {
		return nil, err
	}
	if _, err := r.ownSeries(ctx, input.Slug); err != nil {
		return nil, err
	}
	se, err := r.store.UpdateSeries(ctx, storage.SeriesPatch{
		Slug: input.Slug, ExpectedVersion: expectedVersionOf(input.ExpectedVersion),
		Title: input.Title, Description: input.Description, CoverImage: cover, RemoveCoverImage: deref(input.RemoveCoverImage),
	})
	if err != nil {
		return nil, err
	}
	return &model.UpdateSeriesPayload{Series: se}, nil
}

func (r *Resolver) deleteSeries(ctx context.Context, input model.DeleteSeriesInput) (*model.DeleteSeriesPayload, error) {
	if _, err := r.ownSeries(ctx, input.Slug); err != nil {
		return nil, err
	}
	se, err := r.store.DeleteSeries(ctx, input.Slug, expectedVersionOf(input.ExpectedVersion))
	if err != nil {
		return nil, err
	}
	return &model.DeleteSeriesPayload{Slug: se.Slug}, nil
}

// seriesPostChange checks who may change the post postID's place in the
// series slug and returns the change: the series' owner or an admin, and
// for add, a non-admin only with a post of their own; for remove, the
// post's author too.
func (r *Resolver) seriesPostChange(ctx context.Context, slug, gid string, position *int, expected *int, add bool) (storage.SeriesPostChange, error) {
	a, err := author(ctx)
	if err != nil {
		return storage.SeriesPostChange{}, err
	}
	postID, err := decodeIDOf("postId", gid, kindPost)
	if err != nil {
		return storage.SeriesPostChange{}, err
	}
	c := storage.SeriesPostChange{Slug: slug, PostID: postID, Position: deref(position), ExpectedVersion: expectedVersionOf(expected)}
	if a.IsAdmin() {
		return c, nil
	}
	se, err := r.store.GetSeries(ctx, slug)
	if err != nil {
		return c, err
	}
	p, err := r.visible(ctx)(r.store.ReadPostWithoutBody(ctx, postID))
	if err != nil {
		return c, err
	}
	owner, author := a.Acts(se.OwnerID), slices.ContainsFunc(p.AuthorIDs(), a.Acts)
	switch {
	case add && !(owner && author):
		return c, fmt.Errorf("%w: only the series' owner, with a post of their own, or an admin may do this", auth.ErrForbidden)
	case !add && !owner && !author:
		return c, fmt.Errorf("%w: only the series' owner, one of the post's authors or an admin may do this", auth.ErrForbidden)
	}
	return c, nil
}

func (r *Resolver) addPostToSeries(ctx context.Context, input model.AddPostToSeriesInput) (*model.AddPostToSeriesPayload, error) {
	c, err := r.seriesPostChange(ctx, input.SeriesSlug, input.PostID, input.Position, input.ExpectedVersion, true)
	if err != nil {
		return nil, err
	}
	p, se, err := r.store.AddSeriesPost(answerBody(ctx), c)
	if err != nil {
		return nil, err
	}
	return &model.AddPostToSeriesPayload{Series: se, Post: p}, nil
}

func (r *Resolver) removePostFromSeries(ctx context.Context, input model.RemovePostFromSeriesInput) (*model.RemovePostFromSeriesPayload, error) {
	c, err := r.seriesPostChange(ctx, input.SeriesSlug, input.PostID, nil, input.ExpectedVersion, false)
	if err != nil {
		return nil, err
	}
	p, se, err := r.store.RemoveSeriesPost(answerBody(ctx), c)
	if err != nil {
		return nil, err
	}
	return &model.RemovePostFromSeriesPayload{Series: se, Post: p}, nil
}

func (r *Resolver) moveSeriesPost(ctx context.Context, input model.MoveSeriesPostInput) (*model.MoveSeriesPostPayload, error) {
	postID, err := decodeIDOf("postId", input.PostID, kindPost)
	if err != nil {
		return nil, err
	}
	if _, err := r.ownSeries(ctx, input.SeriesSlug); err != nil {
		return nil, err
	}
	se, err := r.store.MoveSeriesPost(ctx, storage.SeriesPostChange{
		Slug: input.SeriesSlug, PostID: postID, Position: input.Position, ExpectedVersion: expectedVersionOf(input.ExpectedVersion),
	})
	if err != nil {
		return nil, err
	}
	return &model.MoveSeriesPostPayload{Series: se}, nil
}
