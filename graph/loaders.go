package graph

import (
	"context"
	"net/http"
	"sync/atomic"
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
	tags       *dataloader.Loader[string, *storage.Tag]
	series     *dataloader.Loader[string, *storage.Series]
	// translations reads groups of translations by id.
	translations *dataloader.Loader[string, []storage.Translation]
	comments     *dataloader.Loader[storage.CommentKey, *storage.Comment]
	commenters   *dataloader.Loader[storage.Writer, *storage.Commenter]
	// stats reads the blog-wide counts once for all the fields that ask.
	stats *dataloader.Loader[struct{}, *storage.Stats]
	// views reads the view counts of posts (views.go).
	views *dataloader.Loader[string, int64]
	// reactions and viewerReactions read the reaction counts of posts
	// and comments and the caller's own (reactions.go).
	reactions       *dataloader.Loader[storage.Subject, map[string]int64]
	viewerReactions *dataloader.Loader[storage.Subject, []string]
	// membership reads the request's actor's membership once for all
	// the members-only posts it shows (members.go).
	membership *dataloader.Loader[string, bool]
	// sitePages reads static pages by id (the translations of pages).
	sitePages *dataloader.Loader[string, *storage.SitePage]
	// publicationLocales reads the locales of publications by id.
	publicationLocales *dataloader.Loader[string, []string]
	// observe records each batch read: its loader, its number of keys,
	// and whether it waited for the loader's batch window (or was primed).
	observe func(loader string, keys int, waited bool)
	// ahead holds the reads started before the fields that take them
	// (ahead.go).
	ahead ahead
}

type loadersKey struct{}

// loaderSlot holds the loaders of a request, made when the request first
// reads through one. A subscription's request lives as long as its
// connection: it renews them for every event it sends (renewLoaders), so
// an event shows what is true when it is sent, not what an earlier event
// read, and an idle subscription that sent none holds none.
type loaderSlot struct {
	current atomic.Pointer[loaders]
	make    func() *loaders
}

// withLoaders gives every request passing through next its own loaders,
// whose batch sizes go to observe.
func withLoaders(store *storage.Store, observe func(loader string, keys int, waited bool), next http.Handler) http.Handler {
	// The loaders' batch functions are made once; a request makes only
	// the loaders themselves.
	posts := loaderOf("posts", maxBatch, chargedPosts(store.GetPosts), observe)
	authors := loaderOf("authors", maxBatch, store.GetAuthors, observe)
	categories := loaderOf("categories", maxBatch, store.GetCategories, observe)
	tags := loaderOf("tags", maxBatch, store.GetTags, observe)
	series := loaderOf("series", maxBatch, store.GetManySeries, observe)
	translations := loaderOf("translations", maxBatch, store.GetTranslations, observe)
	sitePages := loaderOf("sitePages", maxBatch, store.GetSitePages, observe)
	// A comment is looked for where it is published and where it is
	// held: two keys each.
	comments := loaderOf("comments", maxBatch/2, store.GetComments, observe)
	commenters := loaderOf("commenters", maxBatch, store.GetCommenters, observe)
	stats := loaderOf("stats", 1, statsOf(store), observe)
	views := loaderOf("views", maxBatch, viewCountsOf(store), observe)
	reactions := loaderOf("reactions", maxBatch, reactionCountsOf(store), observe)
	viewerReactions := loaderOf("viewerReactions", maxBatch, viewerReactionsOf(store), observe)
	membership := loaderOf("membership", 1, membershipOf(store), observe)
	// Publications' locales: their site items, across publications.
	publicationLocales := loaderOf("publicationLocales", maxBatch, store.PublicationLocales, observe)
	make := func() *loaders {
		return &loaders{
			posts:              posts(),
			authors:            authors(),
			categories:         categories(),
			tags:               tags(),
			series:             series(),
			translations:       translations(),
			sitePages:          sitePages(),
			comments:           comments(),
			commenters:         commenters(),
			stats:              stats(),
			views:              views(),
			reactions:          reactions(),
			viewerReactions:    viewerReactions(),
			membership:         membership(),
			observe:            observe,
			publicationLocales: publicationLocales(),
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slot := &loaderSlot{make: make}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loadersKey{}, slot)))
	})
}

// renewLoaders gives the request of ctx new loaders that remember nothing.
func renewLoaders(ctx context.Context) {
	ctx.Value(loadersKey{}).(*loaderSlot).current.Store(nil)
}

// forget drops what the loaders have read.
func (l *loaders) forget() {
	l.posts.ClearAll()
	l.authors.ClearAll()
	l.categories.ClearAll()
	l.tags.ClearAll()
	l.comments.ClearAll()
	l.commenters.ClearAll()
	l.stats.ClearAll()
	l.translations.ClearAll()
	l.views.ClearAll()
	l.reactions.ClearAll()
	l.viewerReactions.ClearAll()
	l.membership.ClearAll()
	l.publicationLocales.ClearAll()
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
	slot := ctx.Value(loadersKey{}).(*loaderSlot)
	for {
		if l := slot.current.Load(); l != nil {
			return l
		}
		if l := slot.make(); slot.current.CompareAndSwap(nil, l) {
			return l
		}
	}
}

// batchObserver returns the function that records loaders' batch reads in
// m, or one that records nothing when m is nil.
func batchObserver(m *metrics.Metrics) func(loader string, keys int, waited bool) {
	if m == nil {
		return func(string, int, bool) {}
	}
	return m.ObserveBatch
}

// loaderOf returns what makes the loader called name from a batch read
// that returns values and errors in key order, capacity keys at most a
// batch.
func loaderOf[K comparable, V any](name string, capacity int, get func(context.Context, []K) ([]V, []error), observe func(string, int, bool)) func() *dataloader.Loader[K, V] {
	batch := func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		// A batch that filled its capacity went out at once; a smaller
		// one waited for the window to end.
		observe(name, len(keys), len(keys) < capacity)
		values, errs := get(ctx, keys)
		tagLoaded(ctx, values)
		out := make([]*dataloader.Result[V], len(keys))
		for i := range keys {
			out[i] = &dataloader.Result[V]{Data: values[i], Error: errs[i]}
		}
		return out
	}
	return func() *dataloader.Loader[K, V] {
		return dataloader.NewBatchedLoader(batch,
			dataloader.WithBatchCapacity[K, V](capacity),
			dataloader.WithWait[K, V](batchWait))
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
	loadNow(ctx, name, loader, get, keys)
}

// loadNow is prime that returns what it read, in the order of keys, as
// LoadMany does. A resolver that holds a list of keys reads them with it
// rather than with LoadMany, whose Loads go one by one into the loader's
// batch window: on a busy machine the window can close between two of
// them and split one read in two.
func loadNow[K comparable, V any](ctx context.Context, name string, loader *dataloader.Loader[K, V], get func(context.Context, []K) ([]V, []error), keys []K) ([]V, []error) {
	loadersFor(ctx).observe(name, len(keys), false)
	values, errs := get(ctx, keys)
	tagLoaded(ctx, values)
	for i, k := range keys {
		if errs[i] == nil {
			loader.Prime(ctx, k, values[i])
		}
	}
	return values, errs
}

// Primed in the background. A field that loads through a loader waits for
// the loader's batch window (batchWait) before the read, unless what it
// loads was primed. Resolvers that hand out posts, or a comment they
// wrote, start the reads their fields will make when the selection shows
// them: the posts' authors and categories, the comment's writer and post,
// one batch read each, the reads the loaders would make. They run in the
// background beside the rest of the answer; a field waits for its own
// (ahead.await under its key) and then finds it in its loader. A read
// that fails primes nothing: the field's own load reports the error. The
// reads are started by primePosts (posts.go), primeComment (comments.go)
// and soleNode (globalid.go).

func primedAuthorKey(id string) string         { return "primed-author:" + id }
func primedCategoriesKey(postID string) string { return "primed-categories:" + postID }
func primedPostKey(id string) string           { return "primed-post:" + id }
func primedViewsKey(id string) string          { return "primed-views:" + id }
func primedFullPostKey(id string) string       { return "primed-full-post:" + id }
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
