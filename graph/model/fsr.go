package model

import (
	"context"
	"sync"

	"github.com/blogql/blog/storage"
)

// PostSeries is a post's place in its series; previous and next are
// resolved from it, reading the neighbours once, and only when asked.
type PostSeries struct {
	Series   *storage.Series
	Position int
	// PostID is the post whose place this is.
	PostID string

	once       sync.Once
	prev, next *storage.Post
	err        error
}

// Neighbours returns the posts before and after this one, read by read
// the first time either is asked for.
func (p *PostSeries) Neighbours(ctx context.Context, read func(ctx context.Context) (prev, next *storage.Post, err error)) (prev, next *storage.Post, err error) {
	p.once.Do(func() { p.prev, p.next, p.err = read(ctx) })
	return p.prev, p.next, p.err
}
