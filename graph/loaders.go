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
	replies    *dataloader.Loader[storage.CommentKey, []*storage.Comment]
	// stats reads the blog-wide counts once for all the fields that ask.
	stats *dataloader.Loader[struct{}, *storage.Stats]
	// observe records the number of keys of each batch read, by loader.
	observe func(loader string, keys int)
}

type loadersKey struct{}

// withLoaders gives every request passing through next its own loaders,
// whose batch sizes go to observe.
func withLoaders(store *storage.Store, observe func(loader string, keys int), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := &loaders{
			posts:      newLoader("posts", store.GetPosts, observe),
			authors:    newLoader("authors", store.GetAuthors, observe),
			categories: newLoader("categories", store.GetCategories, observe),
			comments:   newLoader("comments", store.GetComments, observe),
			replies:    newLoader("replies", repliesOf(store), observe),
			stats:      newLoader("stats", statsOf(store), observe),
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
	l.replies.ClearAll()
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
// values and errors in key order.
func newLoader[K comparable, V any](name string, get func(context.Context, []K) ([]V, []error), observe func(string, int)) *dataloader.Loader[K, V] {
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
		dataloader.WithBatchCapacity[K, V](maxBatch),
		dataloader.WithWait[K, V](batchWait))
}

// repliesOf returns a batch read of the replies to top-level comments: one
// storage request per post, however many of its comments are asked for.
func repliesOf(store *storage.Store) func(context.Context, []storage.CommentKey) ([][]*storage.Comment, []error) {
	return func(ctx context.Context, keys []storage.CommentKey) ([][]*storage.Comment, []error) {
		parents := map[string][]string{}
		var posts []string
		for _, k := range keys {
			if _, seen := parents[k.PostID]; !seen {
				posts = append(posts, k.PostID)
			}
			parents[k.PostID] = append(parents[k.PostID], k.CommentID)
		}
		replies := make(map[string]map[string][]*storage.Comment, len(posts))
		failed := make(map[string]error)
		for _, p := range posts {
			replies[p], failed[p] = store.Replies(ctx, p, parents[p])
		}
		values := make([][]*storage.Comment, len(keys))
		errs := make([]error, len(keys))
		for i, k := range keys {
			values[i], errs[i] = replies[k.PostID][k.CommentID], failed[k.PostID]
		}
		return values, errs
	}
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

// primeComments loads what a page of comments asks for in as few reads as
// DynamoDB allows: the replies of every comment on the page in one Query,
// then the authors of the comments and of those replies in one BatchGetItem.
func (r *Resolver) primeComments(ctx context.Context, postID string, page []*storage.Comment) error {
	var replies []*storage.Comment
	if graphql.FieldRequested(ctx, "edges.node.replies") {
		var parents []string
		for _, c := range page {
			if c.ReplyCount > 0 {
				parents = append(parents, c.ID)
			}
		}
		if len(parents) > 0 {
			loadersFor(ctx).observe("replies", len(parents))
			byParent, err := r.store.Replies(ctx, postID, parents)
			if err != nil {
				return err
			}
			for _, id := range parents {
				loadersFor(ctx).replies.Prime(ctx, storage.CommentKey{PostID: postID, CommentID: id}, byParent[id])
				replies = append(replies, byParent[id]...)
			}
		}
	}
	var ids []string
	addAuthors := func(cs []*storage.Comment) {
		for _, c := range cs {
			if !c.Deleted && !slices.Contains(ids, c.AuthorID) {
				ids = append(ids, c.AuthorID)
			}
		}
	}
	if graphql.FieldRequested(ctx, "edges.node.author") {
		addAuthors(page)
	}
	if graphql.FieldRequested(ctx, "edges.node.replies.author") {
		addAuthors(replies)
	}
	if len(ids) > 0 {
		prime(ctx, "authors", loadersFor(ctx).authors, r.store.GetAuthors, ids)
	}
	return nil
}
