package graph

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
)

const (
	// maxBatch is the most keys one BatchGetItem takes.
	maxBatch = 100
	// batchWait is how long a loader collects keys before it asks; the
	// library default of 16 ms would add that much to every nested field.
	batchWait = 2 * time.Millisecond
)

// loaders batch the reads of one request. A new set is made for every
// request, so nothing is cached across requests.
type loaders struct {
	posts      *dataloader.Loader[string, *storage.Post]
	authors    *dataloader.Loader[string, *storage.Author]
	categories *dataloader.Loader[string, *storage.Category]
	comments   *dataloader.Loader[storage.CommentKey, *storage.Comment]
	commenters *dataloader.Loader[storage.Writer, *storage.Commenter]
	// stats reads the blog-wide counts once for all the fields that ask.
	stats *dataloader.Loader[struct{}, *storage.Stats]
	// observe records each batch read: its loader, its number of keys,
	// and whether it waited for the loader's batch window (or was primed).
	observe func(loader string, keys int, waited bool)
	// ahead holds the reads started before the fields that take them
	// (ahead.go).
	ahead ahead
}

type loadersKey struct{}

// withLoaders gives every request passing through next its own loaders,
// whose batch sizes go to observe.
func withLoaders(store *storage.Store, observe func(loader string, keys int, waited bool), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := &loaders{
			posts:      newLoader("posts", maxBatch, store.GetPosts, observe),
			authors:    newLoader("authors", maxBatch, store.GetAuthors, observe),
			categories: newLoader("categories", maxBatch, store.GetCategories, observe),
			// A comment is looked for where it is published and where it
			// is held: two keys each.
			comments:   newLoader("comments", maxBatch/2, store.GetComments, observe),
			commenters: newLoader("commenters", maxBatch, store.GetCommenters, observe),
			stats:      newLoader("stats", 1, statsOf(store), observe),
			observe:    observe,
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loadersKey{}, l)))
	})
}

// forget drops what the loaders have read.
func (l *loaders) forget() {
	l.posts.ClearAll()
	l.authors.ClearAll()
	l.categories.ClearAll()
	l.comments.ClearAll()
	l.commenters.ClearAll()
	l.stats.ClearAll()
}

// freshReadsPerMutation makes each mutation of a request start with
// loaders that remember nothing: its payload must not show what the
// request read before an earlier mutation of it wrote. Mutations run one
// after another, so nothing reads while the loaders forget.
func freshReadsPerMutation(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if graphql.GetOperationContext(ctx).Operation.Operation == ast.Mutation {
		l := loadersFor(ctx)
		l.ahead.wait() // no read primed for an earlier payload lands later
		l.forget()
	}
	return next(ctx)
}

// loadersFor returns the loaders of the request ctx belongs to.
func loadersFor(ctx context.Context) *loaders {
	return ctx.Value(loadersKey{}).(*loaders)
}

// batchObserver returns the function that records loaders' batch reads in
// m, or one that records nothing when m is nil.
func batchObserver(m *metrics.Metrics) func(loader string, keys int, waited bool) {
	if m == nil {
		return func(string, int, bool) {}
	}
	return m.ObserveBatch
}

// newLoader makes the loader called name from a batch read that returns
// values and errors in key order, capacity keys at most a batch.
func newLoader[K comparable, V any](name string, capacity int, get func(context.Context, []K) ([]V, []error), observe func(string, int, bool)) *dataloader.Loader[K, V] {
	batch := func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		// A batch that filled its capacity went out at once; a smaller
		// one waited for the window to end.
		observe(name, len(keys), len(keys) < capacity)
		values, errs := get(ctx, keys)
		out := make([]*dataloader.Result[V], len(keys))
		for i := range keys {
			out[i] = &dataloader.Result[V]{Data: values[i], Error: errs[i]}
		}
		return out
	}
	return dataloader.NewBatchedLoader(batch,
		dataloader.WithBatchCapacity[K, V](capacity),
		dataloader.WithWait[K, V](batchWait))
}

// statsOf returns a batch read of the blog-wide counts: one GetItem,
// whatever the fields of a request that ask for them.
func statsOf(store *storage.Store) func(context.Context, []struct{}) ([]*storage.Stats, []error) {
	return func(ctx context.Context, keys []struct{}) ([]*storage.Stats, []error) {
		st, err := store.Stats(ctx)
		values, errs := make([]*storage.Stats, len(keys)), make([]error, len(keys))
		for i := range keys {
			values[i], errs[i] = st, err
		}
		return values, errs
	}
}

// prime reads keys with one batch read and puts what it finds in the loader
// called name. Fields that load the items of a page one by one then find
// them there, instead of being batched by timing alone (the wait window),
// which would make a page cost more than one request on a busy machine.
// Failures are not cached: the fields' own loads report them.
func prime[K comparable, V any](ctx context.Context, name string, loader *dataloader.Loader[K, V], get func(context.Context, []K) ([]V, []error), keys []K) {
	loadersFor(ctx).observe(name, len(keys), false)
	values, errs := get(ctx, keys)
	for i, k := range keys {
		if errs[i] == nil {
			loader.Prime(ctx, k, values[i])
		}
	}
}

// primeFullPosts loads the full posts of a page of summaries in one batch
// read when the connection's selection needs what summaries lack: the
// body, its HTML and table of contents, the SEO fields, the thread count.
func (r *Resolver) primeFullPosts(ctx context.Context, page []*storage.Post) {
	if len(page) == 0 || !graphql.AnyFieldRequested(ctx, fullPostFields...) {
		return
	}
	var ids []string
	for _, p := range page {
		if p.Summary {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) > 0 {
		prime(ctx, "posts", loadersFor(ctx).posts, r.store.GetPosts, ids)
	}
}

// primeComments loads who wrote a page of comments, and the first
// replies each carries, in one BatchGetItem (one more for each 100
// commenters past the first 100), when the page's selection shows them.
// The first replies need no read of their own: every comment carries them.
func (r *Resolver) primeComments(ctx context.Context, page []*storage.Comment) {
	var writers []storage.Writer
	seen := map[storage.Writer]bool{}
	add := func(cs []*storage.Comment) {
		for _, c := range cs {
			if w := c.Writer(); !c.Deleted && !seen[w] {
				seen[w] = true
				writers = append(writers, w)
			}
		}
	}
	if graphql.AnyFieldRequested(ctx, "edges.node.author", "edges.node.commenter") {
		add(page)
	}
	if graphql.AnyFieldRequested(ctx, "edges.node.replies.author", "edges.node.replies.commenter",
		"edges.node.replyConnection.edges.node.author", "edges.node.replyConnection.edges.node.commenter") {
		for _, c := range page {
			add(c.Replies)
		}
	}
	r.primeCommenters(ctx, writers)
}

// primePage loads what a page of comments from anywhere asks for: their
// commenters and their posts, one BatchGetItem each.
func (r *Resolver) primePage(ctx context.Context, page []*storage.Comment) {
	r.primeComments(ctx, page)
	if len(page) > 0 && graphql.FieldRequested(ctx, "edges.node.post") {
		var ids []string
		for _, c := range page {
			if !slices.Contains(ids, c.PostID) {
				ids = append(ids, c.PostID)
			}
		}
		prime(ctx, "posts", loadersFor(ctx).posts, r.store.GetPosts, ids)
	}
}

// primeCommenters reads writers in one BatchGetItem per 100 and primes the
// commenters loader with all of them and the authors loader with the
// authors among them, so `author` and `commenter` share the read.
func (r *Resolver) primeCommenters(ctx context.Context, writers []storage.Writer) {
	if len(writers) == 0 {
		return
	}
	l := loadersFor(ctx)
	l.observe("commenters", len(writers), false)
	got, errs := r.store.GetCommenters(ctx, writers)
	for i, w := range writers {
		if errs[i] != nil {
			continue // the fields' own loads report it
		}
		l.commenters.Prime(ctx, w, got[i])
		if got[i].Author != nil {
			l.authors.Prime(ctx, w.AuthorID, got[i].Author)
		}
	}
}

// Primed in the background. A field that loads through a loader waits for
// the loader's batch window (batchWait) before the read, unless what it
// loads was primed. Resolvers that hand out posts, or a comment they
// wrote, start the reads their fields will make when the selection shows
// them: the posts' authors and categories, the comment's writer and post,
// one batch read each, the reads the loaders would make. They run in the
// background beside the rest of the answer; a field waits for its own
// (ahead.await under its key) and then finds it in its loader. A read
// that fails primes nothing: the field's own load reports the error.

func primedAuthorKey(id string) string         { return "primed-author:" + id }
func primedCategoriesKey(postID string) string { return "primed-categories:" + postID }
func primedPostKey(id string) string           { return "primed-post:" + id }
func primedWriterKey(w storage.Writer) string {
	return "primed-writer:" + w.AuthorID + ":" + w.ReaderID
}

// joinPath returns the dotted path of field below path.
func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// primePosts starts the reads the posts at path (a dotted path of fields
// below the field being resolved, "" for its own value, whose type is
// one of satisfies when given) will make: the authors of those whose
// author selects more than the names a post carries (Post.author), and
// the categories of those whose categories are read (a draft's, or more
// than their names: Post.categories).
func (r *Resolver) primePosts(ctx context.Context, satisfies []string, path string, posts []*storage.Post) {
	if len(posts) == 0 {
		return
	}
	l := loadersFor(ctx)
	if sel, ok := selectionAt(ctx, satisfies, joinPath(path, "author")); ok {
		beyondNames := !onlyOf(sel, "id", "name", "slug")
		slug := slices.Contains(sel, "slug")
		var keys, ids []string
		for _, p := range posts {
			if beyondNames || slug && p.AuthorSlug == "" {
				keys, ids = append(keys, primedAuthorKey(p.AuthorID)), append(ids, p.AuthorID)
			}
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			prime(ctx, "authors", l.authors, r.store.GetAuthors, pick(ids, fresh))
		})
	}
	if sel, ok := selectionAt(ctx, satisfies, joinPath(path, "categories")); ok {
		beyondNames := !onlyOf(sel, "id", "slug", "name")
		var keys []string
		var read []*storage.Post
		for _, p := range posts {
			if len(p.Categories) > 0 && (beyondNames || p.Status != storage.StatusPublished) {
				keys, read = append(keys, primedCategoriesKey(p.ID)), append(read, p)
			}
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			var slugs []string
			for _, p := range pick(read, fresh) {
				for _, c := range p.Categories {
					if !slices.Contains(slugs, c.Slug) {
						slugs = append(slugs, c.Slug)
					}
				}
			}
			prime(ctx, "categories", l.categories, r.store.GetCategories, slugs)
		})
	}
}

// primedPost starts the reads of the fields of the post the field being
// resolved returns (primePosts), and returns it; satisfies as there.
func (r *Resolver) primedPost(ctx context.Context, satisfies []string) func(*storage.Post, error) (*storage.Post, error) {
	return func(p *storage.Post, err error) (*storage.Post, error) {
		if err == nil && p != nil {
			r.primePosts(ctx, satisfies, "", []*storage.Post{p})
		}
		return p, err
	}
}

// primeWritten starts the reads the comment a mutation wrote will make in
// its payload's comment field (primeComment).
func (r *Resolver) primeWritten(ctx context.Context, c *storage.Comment) {
	r.primeComment(ctx, nil, "comment", c)
}

// primeComment starts the reads the comment at path (as in primePosts)
// will make: its writer (Comment.author and Comment.commenter) and its
// post (Comment.post).
func (r *Resolver) primeComment(ctx context.Context, satisfies []string, path string, c *storage.Comment) {
	l := loadersFor(ctx)
	selects := func(field string) bool {
		_, ok := selectionAt(ctx, satisfies, joinPath(path, field))
		return ok
	}
	if !c.Deleted && (selects("author") || selects("commenter")) {
		w := c.Writer()
		l.primeOne(ctx, primedWriterKey(w), func(ctx context.Context) {
			r.primeCommenters(ctx, []storage.Writer{w})
		})
	}
	if selects("post") {
		l.primeOne(ctx, primedPostKey(c.PostID), func(ctx context.Context) {
			prime(ctx, "posts", l.posts, r.store.GetPosts, []string{c.PostID})
		})
	}
}

// primeAhead runs read once in the background under each of keys no read
// was started under yet (ahead.startUnder), with the indexes of those keys.
func (l *loaders) primeAhead(ctx context.Context, keys []string, read func(ctx context.Context, fresh []int)) {
	l.ahead.startUnder(ctx, keys, func(ctx context.Context, fresh []int) (any, error) {
		read(ctx, fresh)
		return nil, nil
	})
}

// primeOne runs read in the background under key, unless a read was
// started under it already, and returns key.
func (l *loaders) primeOne(ctx context.Context, key string, read func(context.Context)) string {
	l.primeAhead(ctx, []string{key}, func(ctx context.Context, _ []int) { read(ctx) })
	return key
}

// pick returns the elements of list at the indexes in at.
func pick[T any](list []T, at []int) []T {
	out := make([]T, len(at))
	for i, j := range at {
		out[i] = list[j]
	}
	return out
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
