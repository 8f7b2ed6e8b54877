package graph

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/vektah/gqlparser/v2/ast"

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
	// observe records the number of keys of each batch read, by loader.
	observe func(loader string, keys int)
	// ahead holds the reads started before the fields that take them
	// (ahead.go).
	ahead ahead
}

type loadersKey struct{}

// withLoaders gives every request passing through next its own loaders,
// whose batch sizes go to observe.
func withLoaders(store *storage.Store, observe func(loader string, keys int), next http.Handler) http.Handler {
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
		loadersFor(ctx).forget()
	}
	return next(ctx)
}

// loadersFor returns the loaders of the request ctx belongs to.
func loadersFor(ctx context.Context) *loaders {
	return ctx.Value(loadersKey{}).(*loaders)
}

// batchObserver returns the function that records loaders' batch sizes in
// m, or one that records nothing when m is nil.
func batchObserver(m *metrics.Metrics) func(loader string, keys int) {
	if m == nil {
		return func(string, int) {}
	}
	return m.ObserveBatch
}

// newLoader makes the loader called name from a batch read that returns
// values and errors in key order, capacity keys at most a batch.
func newLoader[K comparable, V any](name string, capacity int, get func(context.Context, []K) ([]V, []error), observe func(string, int)) *dataloader.Loader[K, V] {
	batch := func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		observe(name, len(keys))
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
	loadersFor(ctx).observe(name, len(keys))
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
	l.observe("commenters", len(writers))
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
