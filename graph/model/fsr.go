package model

import "github.com/blogql/blog/storage"

// PostSeries is a post's place in its series; previous and next are
// resolved from it, reading the neighbours only when asked.
type PostSeries struct {
	Series   *storage.Series
	Position int
	// PostID is the post whose place this is.
	PostID string
}
