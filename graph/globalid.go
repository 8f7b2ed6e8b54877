package graph

import (
	"context"
	"strings"
	"sync"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Global ids are frontend's (frontend.GlobalID): opaque to clients, who
// need not build or parse them. The id arguments also take the key a
// global id of their kind holds (the raw id cache tags and events name:
// rawKeyOf), so that a frontend holding either gets the same object.

// kind is the GraphQL type a global id names.
type kind string

const (
	kindPost     kind = frontend.TypePost
	kindAuthor   kind = frontend.TypeAuthor
	kindCategory kind = frontend.TypeCategory
	kindComment  kind = frontend.TypeComment
	kindPage     kind = frontend.TypePage
)

// maxGlobalIDLen bounds what is decoded, so a huge argument costs nothing.
const maxGlobalIDLen = 1024

var idEncoding = frontend.GlobalIDEncoding

// globalID is a decoded global id. For a comment, post holds the id of its
// post; it is empty for every other kind.
type globalID struct {
	kind kind
	post string
	id   string
}

func postGID(id string) string            { return frontend.PostGlobalID(id) }
func authorGID(id string) string          { return frontend.AuthorGlobalID(id) }
func categoryGID(slug string) string      { return encodeID(kindCategory, slug) }
func commentGID(postID, id string) string { return frontend.CommentGlobalID(postID, id) }
func pageGID(id string) string            { return frontend.PageGlobalID(id) }

// encodeID returns the global id of key.
func encodeID(k kind, key string) string { return frontend.GlobalID(string(k), key) }

// decodeID returns the global id s of any kind. It returns a
// *storage.ValidationError on field when s was not made by this server.
func decodeID(field, s string) (globalID, error) {
	bad := &storage.ValidationError{Field: field, Reason: "is not a valid id"}
	if len(s) > maxGlobalIDLen {
		return globalID{}, bad
	}
	raw, err := idEncoding.DecodeString(s)
	// The decoder skips line breaks, so only the one spelling this server
	// hands out is an id: one object, one id.
	if err != nil || idEncoding.EncodeToString(raw) != s {
		return globalID{}, bad
	}
	k, key, ok := strings.Cut(string(raw), ":")
	if !ok || key == "" {
		return globalID{}, bad
	}
	g := globalID{kind: kind(k), id: key}
	switch g.kind {
	case kindPost, kindAuthor, kindCategory, kindPage:
		return g, nil
	case kindComment:
		if g.post, g.id, ok = strings.Cut(key, ":"); ok && g.post != "" && g.id != "" {
			return g, nil
		}
	}
	return globalID{}, bad
}

// decodeIDOf returns the key of the global id s, which must be of kind
// want, or s itself when it is no global id but a key of that kind
// (rawKeyOf). It returns a *storage.ValidationError on field for any
// other string: a global id of another kind, or neither a global id nor
// a key.
func decodeIDOf(field, s string, want kind) (string, error) {
	g, err := decodeID(field, s)
	if err != nil {
		if rawKeyOf(s, want) {
			return s, nil
		}
		return "", err
	}
	if g.kind != want {
		return "", &storage.ValidationError{Field: field, Reason: "is not a " + string(want) + " id"}
	}
	return g.id, nil
}

// rawKeyOf reports whether s may be the key of an object of kind k as
// cache tags and events name it: an id for posts, authors and pages, a
// slug for categories. A comment's key is two ids: it is taken as its
// global id only, which webhook deliveries carry.
func rawKeyOf(s string, k kind) bool {
	switch k {
	case kindPost, kindAuthor, kindPage:
		return storage.ValidID(s)
	case kindCategory:
		return storage.ValidSlug(s)
	}
	return false
}

// decodeCommentID returns the comment the global id s names. It returns a
// *storage.ValidationError on field for any string that is not a comment id.
func decodeCommentID(field, s string) (storage.CommentKey, error) {
	g, err := decodeID(field, s)
	if err != nil {
		return storage.CommentKey{}, err
	}
	if g.kind != kindComment {
		return storage.CommentKey{}, &storage.ValidationError{Field: field, Reason: "is not a Comment id"}
	}
	return storage.CommentKey{PostID: g.post, CommentID: g.id}, nil
}

// soleNode answers the only node field of its operation: it reads what
// the id names at once, with no loader's batch window to wait for, and
// primes the loaders with the post it reads and for the fields below.
func (r *Resolver) soleNode(ctx context.Context, g globalID) (model.Node, error) {
	switch g.kind {
	case kindPost:
		return r.primedPost(ctx, postImplementors)(r.visible(ctx)(r.store.GetPost(ctx, g.id)))
	case kindAuthor:
		return r.store.GetAuthor(ctx, g.id)
	case kindCategory:
		return r.store.GetCategory(ctx, g.id)
	case kindPage:
		return r.seenPage(ctx)(r.store.GetPage(ctx, g.id))
	}
	key := storage.CommentKey{PostID: g.post, CommentID: g.id}
	var (
		c          *storage.Comment
		p          *storage.Post
		cerr, perr error
		reads      sync.WaitGroup
	)
	// Both reads finish before the answer, so a comment on a hidden post
	// takes as long as a missing one.
	reads.Go(func() {
		cs, errs := r.store.GetComments(ctx, []storage.CommentKey{key})
		c, cerr = cs[0], errs[0]
	})
	reads.Go(func() { p, perr = r.store.GetPost(ctx, g.post) })
	reads.Wait()
	p, err := r.visible(ctx)(p, perr)
	if err != nil {
		return nil, err
	}
	l := loadersFor(ctx)
	// The comment's post field finds it read: primeComment reads it no more.
	l.primeOne(ctx, primedPostKey(p.ID), func(ctx context.Context) { l.posts.Prime(ctx, p.ID, p) })
	c, err = r.seenComment(ctx, p)(c, cerr)
	if err != nil {
		return nil, err
	}
	r.primeComment(ctx, commentImplementors, "", c)
	return c, nil
}

// batchedNode answers a node field beside other fields: it loads what the
// id names through the request's loaders, batched with the other fields'
// reads.
func (r *Resolver) batchedNode(ctx context.Context, g globalID) (model.Node, error) {
	l := loadersFor(ctx)
	switch g.kind {
	case kindPost:
		return r.visible(ctx)(l.posts.Load(ctx, g.id)())
	case kindAuthor:
		return l.authors.Load(ctx, g.id)()
	case kindCategory:
		return l.categories.Load(ctx, g.id)()
	case kindPage:
		return r.seenPage(ctx)(r.store.GetPage(ctx, g.id))
	default:
		// Both reads finish before the answer, whatever it is, so that a
		// comment on a hidden post takes as long as a missing one.
		comment, post := l.comments.Load(ctx, storage.CommentKey{PostID: g.post, CommentID: g.id}), l.posts.Load(ctx, g.post)
		c, cerr := comment()
		p, err := r.visible(ctx)(post())
		if err != nil {
			return nil, err
		}
		return r.seenComment(ctx, p)(c, cerr)
	}
}
