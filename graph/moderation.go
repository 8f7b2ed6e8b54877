package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// onLivePosts returns the edges of a page of the moderation queue without
// the comments whose post was deleted. A deleted post's comments go after
// its transaction, in batches (storage.Store.DeletePost), and the queue
// lists them until they have gone, or until the deletion sent again
// removes them when DynamoDB refused; their post would be a NOT_FOUND
// error in the page. When the page selects the comments' posts, they are
// read anyway (by primePage, and by the loader for one it did not find),
// so this costs no request more; when it does not, nothing in the page
// shows the post is gone, and the edges are left as they are.
// The page's cursors stay those of the Query, so the next page starts
// where this one's read ended.
func (r *Resolver) onLivePosts(ctx context.Context, edges []*model.CommentEdge) []*model.CommentEdge {
	if !graphql.FieldRequested(ctx, "edges.node.post") {
		return edges
	}
	posts := loadersFor(ctx).posts
	kept := edges[:0]
	for _, e := range edges {
		if _, err := posts.Load(ctx, e.Node.PostID)(); errors.Is(err, storage.ErrNotFound) {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// CommentPolicy is what applies to readers' comments: the resolvers' own
// configuration, whatever serves them. Authors' and admins' comments are
// never held or counted.
type CommentPolicy struct {
	// Moderation says whether readers' comments are held for approval
	// (the zero value) or published at once.
	Moderation Moderation
	// UnmoderatedEdits lets a reader's edit of their published comment
	// stay published. By default, when readers' comments are held, such
	// an edit holds the comment again until it is approved, so no text
	// goes live unmoderated.
	UnmoderatedEdits bool
	// PerMinute is the most comments a reader may add in any minute, at
	// most storage.MaxCommentsPerMinute; zero means
	// DefaultCommentsPerMinute, a negative number no limit.
	PerMinute int
}

// Moderation is what happens to a reader's new comment.
type Moderation int

const (
	// HoldReaderComments keeps readers' comments PENDING until the post's
	// author or an admin approves them.
	HoldReaderComments Moderation = iota
	// PublishReaderComments publishes readers' comments at once.
	PublishReaderComments
)

// DefaultCommentsPerMinute is a reader's comment rate limit when
// CommentPolicy.PerMinute is zero.
const DefaultCommentsPerMinute = 5

// rules returns the rules storage applies to a reader's comment under p.
func (p CommentPolicy) rules() storage.ReaderRules {
	hold := p.Moderation == HoldReaderComments
	rules := storage.ReaderRules{Hold: hold, HoldEdits: hold && !p.UnmoderatedEdits, PerMinute: p.PerMinute}
	switch {
	case rules.PerMinute == 0:
		rules.PerMinute = DefaultCommentsPerMinute
	case rules.PerMinute < 0:
		rules.PerMinute = 0
	}
	rules.PerMinute = min(rules.PerMinute, storage.MaxCommentsPerMinute)
	return rules
}
