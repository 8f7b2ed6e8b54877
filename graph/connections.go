package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// defaultFirst is the page size when a client passes `first: null`; the
// schema's default covers an omitted `first`.
const defaultFirst = 20

// pageOf returns the storage page for connection arguments. Storage rejects
// a size outside 1..storage.MaxPageSize with BAD_USER_INPUT on "first"
// before it sends any request.
func pageOf(first *int, after *string) storage.Page {
	p := storage.Page{Limit: defaultFirst, After: deref(after)}
	if first != nil {
		p.Limit = *first
	}
	return p
}

// replyPageOf returns the storage page for the arguments of a comment's
// replyConnection; storage rejects a size outside 1..storage.MaxReplyPage.
func replyPageOf(first *int, after *string) storage.Page {
	p := storage.Page{Limit: storage.MaxReplyPage, After: deref(after)}
	if first != nil {
		p.Limit = *first
	}
	return p
}

// replyComplexity makes a page of replies cost its size times its
// selection, as connectionComplexity does for other connections.
func replyComplexity(child int, first *int, _ *string) int {
	n := replyPageOf(first, nil).Limit
	if n < 1 || n > storage.MaxReplyPage {
		n = 1
	}
	return n * child
}

// connectionComplexity makes a connection cost its page size times its
// selection. A size out of range counts once, so the resolver can reject it
// with BAD_USER_INPUT instead of the complexity limit rejecting the query.
func connectionComplexity(child int, first *int, _ *string) int {
	n := pageOf(first, nil).Limit
	if n < 1 || n > storage.MaxPageSize {
		n = 1
	}
	return n * child
}

// pageInfo describes the page r that answered p.
func pageInfo[T any](r *storage.Result[T], p storage.Page) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: r.HasNext, HasPreviousPage: p.After != ""}
	if n := len(r.Cursors); n > 0 {
		info.StartCursor, info.EndCursor = &r.Cursors[0], &r.Cursors[n-1]
	}
	return info
}

// edges pairs each item of r with its cursor.
func edges[T, E any](r *storage.Result[T], edge func(cursor string, node T) E) []E {
	out := make([]E, len(r.Items))
	for i, item := range r.Items {
		out[i] = edge(r.Cursors[i], item)
	}
	return out
}

func postConnection(r *storage.Result[*storage.Post], p storage.Page, count model.Counter) *model.PostConnection {
	return &model.PostConnection{
		Edges:    edges(r, func(c string, n *storage.Post) *model.PostEdge { return &model.PostEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(r, p),
		Count:    count,
	}
}

func authorConnection(r *storage.Result[*storage.Author], p storage.Page, count model.Counter) *model.AuthorConnection {
	return &model.AuthorConnection{
		Edges:    edges(r, func(c string, n *storage.Author) *model.AuthorEdge { return &model.AuthorEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(r, p),
		Count:    count,
	}
}

func commentConnection(r *storage.Result[*storage.Comment], p storage.Page, count model.Counter) *model.CommentConnection {
	return &model.CommentConnection{
		Edges:    edges(r, func(c string, n *storage.Comment) *model.CommentEdge { return &model.CommentEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(r, p),
		Count:    count,
	}
}

func replyConnection(r *storage.Result[*storage.Comment], p storage.Page, count model.Counter) *model.ReplyConnection {
	c := commentConnection(r, p, count)
	return &model.ReplyConnection{Edges: c.Edges, PageInfo: c.PageInfo, Count: count}
}

// statsCount returns a Counter that reads one of the blog-wide counts; the
// read happens only when a client selects totalCount.
func (r *Resolver) statsCount(pick func(*storage.Stats) int64) model.Counter {
	return func(ctx context.Context) (int, error) {
		s, err := r.store.Stats(ctx)
		if err != nil {
			return 0, err
		}
		return int(pick(s)), nil
	}
}

// threadCount returns a Counter of the top-level comments of p. A summary
// from a list does not carry the count, so the full post is read through the
// loader: one batch for the whole page.
func threadCount(p *storage.Post) model.Counter {
	if !p.Summary {
		return model.Count(p.ThreadCount)
	}
	return func(ctx context.Context) (int, error) {
		full, err := loadersFor(ctx).posts.Load(ctx, p.ID)()
		if err != nil {
			return 0, err
		}
		return int(full.ThreadCount), nil
	}
}
