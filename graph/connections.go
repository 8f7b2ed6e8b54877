package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// defaultFirst is the page size when a client gives neither first nor
// last (or passes them as null).
const defaultFirst = 20

// pageOf returns the storage page for connection arguments: forward with
// first and after, backward with last and before (before alone reads
// backward too). first and last together, a size outside
// 1..storage.MaxPageSize and an empty after or before are a
// *storage.ValidationError, checked here, where every connection's
// arguments pass, so that a selection that reads nothing (totalCount
// alone) is refused as one that reads the page; storage rejects a
// cursor on the wrong side before it sends any request.
func pageOf(first *int, after *string, last *int, before *string) (storage.PageArgs, error) {
	return pageWithin(storage.MaxPageSize, first, after, last, before)
}

// pageWithin is pageOf for a connection whose pages hold at most max.
func pageWithin(max int, first *int, after *string, last *int, before *string) (storage.PageArgs, error) {
	p := storage.PageArgs{Limit: defaultFirst, After: deref(after), Before: deref(before)}
	outside := func(n *int) bool { return n != nil && (*n < 1 || *n > max) }
	within := fmt.Sprintf("must be between 1 and %d", max)
	switch {
	// No cursor is empty: an empty one is a client's mistake (a cursor
	// field read as "" instead of null), and reading the first page for
	// it would hide the mistake. Omit the argument, or pass null, for
	// the first page.
	case after != nil && *after == "":
		return p, storage.BadCursor("after")
	case before != nil && *before == "":
		return p, storage.BadCursor("before")
	case first != nil && last != nil:
		return p, &storage.ValidationError{Field: "last", Reason: "cannot be given with first"}
	case outside(first):
		return p, &storage.ValidationError{Field: "first", Reason: within}
	case outside(last):
		return p, &storage.ValidationError{Field: "last", Reason: within}
	case last != nil:
		p.Limit, p.Backward = *last, true
	case first != nil:
		p.Limit = *first
	default:
		p.Backward = p.Before != "" && p.After == ""
	}
	return p, nil
}

// periodOf returns the publication period of publishedAfter and
// publishedBefore.
func periodOf(after, before *time.Time) storage.Period {
	return storage.Period{From: deref(after), To: deref(before)}
}

// replyPageOf returns the storage page for the arguments of a comment's
// replyConnection, of at most storage.MaxReplyPage.
func replyPageOf(first *int, after *string, last *int, before *string) (storage.PageArgs, error) {
	p, err := pageWithin(storage.MaxReplyPage, first, after, last, before)
	if first == nil && last == nil {
		p.Limit = storage.MaxReplyPage
	}
	return p, err
}

// replyComplexity makes a page of replies cost as connectionComplexity
// does for other connections, but for the request: the first page (up to
// storage.MaxReplyPage replies, no cursor) comes with its comment.
func replyComplexity(child int, first *int, after *string, last *int, before *string) int {
	p, err := replyPageOf(first, nil, last, nil)
	n := p.Limit
	if err != nil || n < 1 || n > storage.MaxReplyPage {
		n = 1
	}
	cost := connectionFields + n*max(child, minItemCost)
	if after != nil || before != nil || last != nil {
		cost += listRequestCost
	}
	return cost
}

// connectionComplexity makes a connection cost its request, its own
// fields once, and its page size times its items' selection, at least
// minItemCost an item (complexity.go). A size out of range counts once, so the
// resolver can reject it with BAD_USER_INPUT instead of the complexity
// limit rejecting the query.
func connectionComplexity(child int, first, last *int) int {
	n := defaultFirst
	switch {
	case first != nil:
		n = *first
	case last != nil:
		n = *last
	}
	if n < 1 || n > storage.MaxPageSize {
		n = 1
	}
	return listRequestCost + connectionFields + n*max(child, minItemCost)
}

// listComplexity is connectionComplexity for a connection's arguments.
func listComplexity(child int, first *int, _ *string, last *int, _ *string) int {
	return connectionComplexity(child, first, last)
}

// postsComplexity is connectionComplexity for the arguments of a list of
// posts.
func postsComplexity(child int, first *int, _ *string, last *int, _ *string, _, _ *time.Time) int {
	return connectionComplexity(child, first, last)
}

// adjacentCost is what previous, next and their category variants add to
// an operation's complexity: each costs queries of its own (up to 4), so
// they are for a post page, and a list that asks them of every post is
// over the limit from 20 posts on.
const adjacentCost = 5 * listRequestCost

// adjacentComplexity is the complexity of previous and next.
func adjacentComplexity(child int) int { return adjacentCost + child }

// adjacentInComplexity is the complexity of previousInCategory and
// nextInCategory.
func adjacentInComplexity(child int, _ string) int { return adjacentCost + child }

// pageInfo describes the page r.
func pageInfo[T any](r *storage.Result[T]) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: r.HasNext, HasPreviousPage: r.HasPrev}
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

func postConnection(r *storage.Result[*storage.Post], count model.Counter) *model.PostConnection {
	return &model.PostConnection{
		Edges:    edges(r, func(c string, n *storage.Post) *model.PostEdge { return &model.PostEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(r),
		Count:    count,
	}
}

func authorConnection(r *storage.Result[*storage.Author], count model.Counter) *model.AuthorConnection {
	return &model.AuthorConnection{
		Edges:    edges(r, func(c string, n *storage.Author) *model.AuthorEdge { return &model.AuthorEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(r),
		Count:    count,
	}
}

func commentConnection(r *storage.Result[*storage.Comment], count model.Counter) *model.CommentConnection {
	return &model.CommentConnection{
		Edges:    edges(r, func(c string, n *storage.Comment) *model.CommentEdge { return &model.CommentEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(r),
		Count:    count,
	}
}

// periodCount returns a Counter of the posts of a list in per: from the
// archive when per runs from a month's start to another's (or is open),
// which costs nothing more, else count, which reads the period.
func periodCount(archive []storage.ArchiveMonth, per storage.Period, count model.Counter) model.Counter {
	if n, ok := storage.CountIn(archive, per); ok {
		return model.Count(n)
	}
	return count
}

// countPosts returns a Counter that reads the posts of a list in per (see
// storage.Store.CountPosts).
func (r *Resolver) countPosts(authorID, category string, per storage.Period, scheduled bool) model.Counter {
	return func(ctx context.Context) (int, error) {
		n, err := r.store.CountPosts(ctx, authorID, category, per, scheduled)
		return int(n), err
	}
}

func replyConnection(r *storage.Result[*storage.Comment], count model.Counter) *model.ReplyConnection {
	c := commentConnection(r, count)
	return &model.ReplyConnection{Edges: c.Edges, PageInfo: c.PageInfo, Count: count}
}

// statsCount returns a Counter that reads one of the blog-wide counts; the
// read happens only when a client selects totalCount, once a request.
func (r *Resolver) statsCount(pick func(*storage.Stats) int64) model.Counter {
	return func(ctx context.Context) (int, error) {
		s, err := loadersFor(ctx).stats.Load(ctx, struct{}{})()
		if err != nil {
			return 0, err
		}
		return int(pick(s)), nil
	}
}

// feedCount returns a Counter of the whole blog's posts in per: the
// blog-wide count, or from the archive by month, or by reading the period.
func (r *Resolver) feedCount(per storage.Period) model.Counter {
	if per == (storage.Period{}) {
		return r.statsCount(func(s *storage.Stats) int64 { return s.PostCount })
	}
	if _, whole := storage.CountIn(nil, per); !whole {
		return r.countPosts("", "", per, false)
	}
	return func(ctx context.Context) (int, error) {
		st, err := loadersFor(ctx).stats.Load(ctx, struct{}{})()
		if err != nil {
			return 0, err
		}
		n, _ := storage.CountIn(st.Archive, per)
		return int(n), nil
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
