package graph

import (
	"context"
	"errors"
	"slices"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
)

// Search and related posts, from the server's search index (package
// search). A page of results reads its posts in one BatchGetItem through
// the posts' loader, only when they are selected, and leaves out a post
// that is no longer public (its unpublish not yet in the index). Their
// answers carry the search index's tag, which every event changing what
// it holds names, and the tags of the posts they show.

// defaultSearchFirst is a search's page size when first is not given.
const defaultSearchFirst = 10

// Costs of search and related in an operation's complexity: a search
// costs searchCost, and searchTermCost for each word of its query, on top
// of its page; related posts relatedCost on top of theirs.
const (
	searchCost     = listRequestCost / 5
	searchTermCost = listRequestCost / 10
	relatedCost    = listRequestCost / 2
)

// searchComplexity is the complexity of search: its words and its page.
func searchComplexity(child int, query string, first *int, _ *string, _ *string, _ *string) int {
	n := defaultSearchFirst
	if first != nil {
		n = *first
	}
	if n < 1 || n > search.MaxFirst {
		n = 1
	}
	terms := min(search.CountTerms(query), search.MaxTerms+1)
	return searchCost + searchTermCost*terms + n*child
}

// relatedComplexity is the complexity of related.
func relatedComplexity(child int, first *int) int {
	n := 3
	if first != nil {
		n = *first
	}
	if n < 1 || n > search.MaxRelated {
		n = 1
	}
	return relatedCost + n*child
}

// Searcher is a search index of published posts (package search).
type Searcher interface {
	// Search returns a page of the posts matching r (search.Service's).
	Search(ctx context.Context, r search.Request) (*search.Results, error)
	// Related returns the ids of the posts most alike the post id.
	Related(ctx context.Context, id string, first int) ([]string, error)
}

// errNoSearch is a search on a handler without a search index, which
// answers as a server still building its first.
var errNoSearch = search.ErrBuilding

func (r *Resolver) search(ctx context.Context, query string, first *int, after, category, author *string) (*model.SearchConnection, error) {
	if r.searcher == nil {
		return nil, errNoSearch
	}
	gqlhttp.Tag(ctx, frontend.TagSearch)
	req := search.Request{Query: query, First: defaultSearchFirst, Category: deref(category), After: deref(after)}
	// Facets cost a visit of every match: counted when asked for.
	if names, _ := selectionAt(ctx, nil, ""); slices.Contains(names, "categories") {
		req.Facets = true
	}
	if first != nil {
		req.First = *first
	}
	if after != nil && *after == "" {
		return nil, storage.BadCursor("after")
	}
	if author != nil {
		id, err := decodeIDOf("author", *author, kindAuthor)
		if err != nil {
			return nil, err
		}
		req.AuthorID = id
	}
	res, err := r.searcher.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	hits := res.Hits
	if names, _ := selectionAt(ctx, nil, "edges.node"); slices.Contains(names, "post") {
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.PostID
		}
		posts, err := r.publicPosts(ctx, ids)
		if err != nil {
			return nil, err
		}
		hits = nil
		for i, p := range posts {
			if p != nil {
				hits = append(hits, res.Hits[i])
			}
		}
	}
	c := &model.SearchConnection{PageInfo: &model.PageInfo{HasNextPage: res.HasNext, HasPreviousPage: res.HasPrev}, TotalCount: res.Total}
	for _, h := range hits {
		gqlhttp.Tag(ctx, frontend.TagPost(h.PostID))
		c.Edges = append(c.Edges, &model.SearchEdge{Cursor: h.Cursor,
			Node: &model.SearchResult{PostID: h.PostID, Score: h.Score, Title: h.Title, Snippet: h.Snippet}})
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.StartCursor, c.PageInfo.EndCursor = &c.Edges[0].Cursor, &c.Edges[n-1].Cursor
	}
	var slugs []string
	for _, f := range res.Facets {
		c.Categories = append(c.Categories, &model.SearchFacet{Slug: f.Category, Count: f.Count})
		slugs = append(slugs, f.Category)
	}
	// The facets' categories in one batch read before the facets resolve,
	// so the read does not depend on the loader's batch window.
	if names, _ := selectionAt(ctx, nil, "categories"); len(slugs) > 0 && slices.Contains(names, "category") {
		prime(ctx, "categories", loadersFor(ctx).categories, r.store.GetCategories, slugs)
	}
	return c, nil
}

// publicPosts loads the posts ids in one batch (the posts' loader) and
// returns them in order, nil for each that is missing or not public.
func (r *Resolver) publicPosts(ctx context.Context, ids []string) ([]*storage.Post, error) {
	posts, errs := loadNow(ctx, "posts", loadersFor(ctx).posts, chargedPosts(r.store.GetPosts), ids)
	now := r.store.Now()
	out := make([]*storage.Post, len(ids))
	for i := range ids {
		switch {
		case errs != nil && errs[i] != nil && errors.Is(errs[i], storage.ErrNotFound):
		case errs != nil && errs[i] != nil:
			return nil, errs[i]
		case posts[i].VisibleAt(now):
			out[i] = posts[i]
		}
	}
	return out, nil
}

func (r *Resolver) related(ctx context.Context, p *storage.Post, first *int) ([]*storage.Post, error) {
	gqlhttp.Tag(ctx, frontend.TagSearch)
	n := 3
	if first != nil {
		n = *first
	}
	if r.searcher == nil || !p.VisibleAt(r.store.Now()) {
		if n < 1 || n > search.MaxRelated {
			return nil, &storage.ValidationError{Field: "first", Reason: "must be 1 to 20"}
		}
		return []*storage.Post{}, nil
	}
	ids, err := r.searcher.Related(ctx, p.ID, n)
	if err != nil || len(ids) == 0 {
		return []*storage.Post{}, err
	}
	posts, err := r.publicPosts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*storage.Post, 0, len(ids))
	for _, q := range posts {
		if q != nil && q.ID != p.ID {
			out = append(out, q)
		}
	}
	return out, nil
}

func (r *Resolver) searchResultPost(ctx context.Context, res *model.SearchResult) (*storage.Post, error) {
	return loadersFor(ctx).posts.Load(ctx, res.PostID)()
}

func (r *Resolver) facetCategory(ctx context.Context, f *model.SearchFacet) (*storage.Category, error) {
	return loadersFor(ctx).categories.Load(ctx, f.Slug)()
}
