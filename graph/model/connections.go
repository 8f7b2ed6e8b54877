package model

import (
	"context"

	"github.com/blogql/blog/storage"
)

// PageInfo describes one page of a Relay connection.
type PageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

// Counter returns the total number of items of a connection. It is called
// only when totalCount is selected, because some totals cost a request.
type Counter func(ctx context.Context) (int, error)

// Count returns a Counter for a total that is already known.
func Count(n int64) Counter {
	return func(context.Context) (int, error) { return int(n), nil }
}

// PostConnection is a page of posts.
type PostConnection struct {
	Edges    []*PostEdge
	PageInfo *PageInfo
	Count    Counter
}

// TotalCount returns the number of items in the whole list, or the error of
// the request that counts them.
func (c *PostConnection) TotalCount(ctx context.Context) (int, error) { return c.Count(ctx) }

// PostEdge is a post with its cursor.
type PostEdge struct {
	Cursor string
	Node   *storage.Post
}

// AuthorConnection is a page of authors.
type AuthorConnection struct {
	Edges    []*AuthorEdge
	PageInfo *PageInfo
	Count    Counter
}

// TotalCount returns the number of items in the whole list, or the error of
// the request that counts them.
func (c *AuthorConnection) TotalCount(ctx context.Context) (int, error) { return c.Count(ctx) }

// AuthorEdge is an author with its cursor.
type AuthorEdge struct {
	Cursor string
	Node   *storage.Author
}

// CommentConnection is a page of top-level comments.
type CommentConnection struct {
	Edges    []*CommentEdge
	PageInfo *PageInfo
	Count    Counter
}

// TotalCount returns the number of items in the whole list, or the error of
// the request that counts them.
func (c *CommentConnection) TotalCount(ctx context.Context) (int, error) { return c.Count(ctx) }

// CommentEdge is a comment with its cursor.
type CommentEdge struct {
	Cursor string
	Node   *storage.Comment
}

// ReplyConnection is a page of the replies to a comment.
type ReplyConnection struct {
	Edges    []*CommentEdge
	PageInfo *PageInfo
	Count    Counter
}

// TotalCount returns the number of items in the whole list, or the error of
// the request that counts them.
func (c *ReplyConnection) TotalCount(ctx context.Context) (int, error) { return c.Count(ctx) }

// PendingCommentConnection is a page of the moderation queue.
type PendingCommentConnection struct {
	Edges    []*CommentEdge
	PageInfo *PageInfo
	Count    Counter
}

// TotalCount returns the number of items in the whole queue, or the error
// of the request that counts them.
func (c *PendingCommentConnection) TotalCount(ctx context.Context) (int, error) { return c.Count(ctx) }

// DraftConnection is a page of an author's drafts.
type DraftConnection struct {
	Edges    []*PostEdge
	PageInfo *PageInfo
	Count    Counter
}

// TotalCount returns the number of the author's drafts, or the error of
// the request that counts them.
func (c *DraftConnection) TotalCount(ctx context.Context) (int, error) { return c.Count(ctx) }
