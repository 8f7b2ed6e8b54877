package graph

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
	"github.com/graph-gophers/dataloader/v7"
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

// batchedNode answers a node field beside other node fields. The first of
// them to run reads what all of them name at once (readNodes), and each
// takes its item from that read: what the operation costs never depends
// on the loaders' batch window, which a busy machine can close between
// two fields, and a missing item costs what a hidden one does.
func (r *Resolver) batchedNode(ctx context.Context, g globalID) (model.Node, error) {
	l := loadersFor(ctx)
	l.ahead.start(ctx, "nodes", func(ctx context.Context) (any, error) { return r.readNodes(ctx), nil })
	res, _, _ := l.ahead.take("nodes")
	n := res.(*nodeReads)
	switch g.kind {
	case kindPost:
		return r.visible(ctx)(n.posts.get(ctx, l.posts, g.id))
	case kindAuthor:
		return n.authors.get(ctx, l.authors, g.id)
	case kindCategory:
		return n.categories.get(ctx, l.categories, g.id)
	case kindPage:
		return r.seenPage(ctx)(r.store.GetPage(ctx, g.id))
	default:
		// Both were read before the answer, whatever it is, so that a
		// comment on a hidden post takes as long as a missing one.
		c, cerr := n.comments.get(ctx, l.comments, storage.CommentKey{PostID: g.post, CommentID: g.id})
		p, err := r.visible(ctx)(n.posts.get(ctx, l.posts, g.post))
		if err != nil {
			return nil, err
		}
		return r.seenComment(ctx, p)(c, cerr)
	}
}

// nodeReads holds what readNodes read, found or not, by key.
type nodeReads struct {
	posts      readByKey[string, *storage.Post]
	comments   readByKey[storage.CommentKey, *storage.Comment]
	authors    readByKey[string, *storage.Author]
	categories readByKey[string, *storage.Category]
}

// readByKey is one batch read's keys and what it answered for each.
type readByKey[K comparable, V any] struct {
	keys   []K
	values []V
	errs   []error
}

// add adds k to the keys to read, once.
func (b *readByKey[K, V]) add(k K) {
	if !slices.Contains(b.keys, k) {
		b.keys = append(b.keys, k)
	}
}

// read reads the keys with get, when there are any, and primes loader
// with what it finds.
func (b *readByKey[K, V]) read(ctx context.Context, name string, loader *dataloader.Loader[K, V], get func(context.Context, []K) ([]V, []error)) {
	if len(b.keys) > 0 {
		b.values, b.errs = loadNow(ctx, name, loader, get, b.keys)
	}
}

// get returns what the read answered for k, or loads k through loader
// when k was not among its keys.
func (b *readByKey[K, V]) get(ctx context.Context, loader *dataloader.Loader[K, V], k K) (V, error) {
	if i := slices.Index(b.keys, k); i >= 0 {
		return b.values[i], b.errs[i]
	}
	return loader.Load(ctx, k)()
}

// readNodes reads what the node fields of the operation name: their
// posts (a comment's post too), comments, authors and categories, one
// batch read of each at once, and then the writers of the comments whose
// selection shows them, one more, which it primes the loaders with. The
// writers of a comment the reader may not see are not read, so that it
// answers as fast as a missing one.
func (r *Resolver) readNodes(ctx context.Context) *nodeReads {
	oc := graphql.GetOperationContext(ctx)
	n := &nodeReads{}
	writes := map[storage.CommentKey]bool{}
	for _, f := range collectFields(oc, oc.Operation.SelectionSet, nil) {
		if f.Name != "node" {
			continue
		}
		id, _ := f.ArgumentMap(oc.Variables)["id"].(string)
		g, err := decodeID("id", id)
		if err != nil {
			continue
		}
		switch g.kind {
		case kindPost:
			n.posts.add(g.id)
		case kindAuthor:
			n.authors.add(g.id)
		case kindCategory:
			n.categories.add(g.id)
		case kindComment:
			key := storage.CommentKey{PostID: g.post, CommentID: g.id}
			n.comments.add(key)
			n.posts.add(g.post)
			for _, sf := range collectFields(oc, f.Selections, commentImplementors) {
				if sf.Name == "author" || sf.Name == "commenter" {
					writes[key] = true
				}
			}
		}
	}
	l := loadersFor(ctx)
	var reads sync.WaitGroup
	reads.Go(func() { n.posts.read(ctx, "posts", l.posts, r.store.GetPosts) })
	reads.Go(func() { n.comments.read(ctx, "comments", l.comments, r.store.GetComments) })
	reads.Go(func() { n.authors.read(ctx, "authors", l.authors, r.store.GetAuthors) })
	reads.Go(func() { n.categories.read(ctx, "categories", l.categories, r.store.GetCategories) })
	reads.Wait()
	var writers []storage.Writer
	for _, key := range n.comments.keys {
		if !writes[key] {
			continue
		}
		c, cerr := n.comments.get(ctx, l.comments, key)
		p, err := r.visible(ctx)(n.posts.get(ctx, l.posts, key.PostID))
		if err != nil {
			continue
		}
		c, err = r.seenComment(ctx, p)(c, cerr)
		if err != nil || c.Deleted || slices.Contains(writers, c.Writer()) {
			continue
		}
		writers = append(writers, c.Writer())
	}
	r.primeCommenters(ctx, writers)
	return n
}
