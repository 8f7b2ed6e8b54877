package graph

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"go.opentelemetry.io/otel/trace"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tracing"
)

// DefaultComplexityLimit admits a full page of 100 posts with every scalar
// field, bodies and rendered HTML included, their authors and categories,
// but not four pages of bodies, a page of posts that each list their
// comments, or a list that asks each post for its neighbours.
const DefaultComplexityLimit = 10000

// HandlerOptions configure NewHandler. The zero value is a production
// setup: default logger, no introspection, DefaultComplexityLimit,
// DefaultRequestTimeout, and no tokens accepted.
type HandlerOptions struct {
	// Logger receives internal errors and panics; nil means slog.Default().
	Logger *slog.Logger
	// Introspection enables schema introspection (the playground needs it)
	// and field suggestions in validation errors. Without it, an operation
	// that asks for __schema or __type fails validation.
	Introspection bool
	// ComplexityLimit is the highest complexity an operation may have, where
	// a connection costs its page size times its selection; zero means
	// DefaultComplexityLimit.
	ComplexityLimit int
	// RequestTimeout bounds each request, its DynamoDB calls included; zero
	// means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Verifier checks the bearer tokens of requests. Nil accepts none:
	// every request is anonymous, and one with a token gets 401.
	Verifier *auth.Verifier
	// MaxResponseBytes bounds the JSON answer of an operation; zero means
	// MaxResponseBytes (responsesize.go).
	MaxResponseBytes int64
	// CacheMaxAge is how long a CDN or browser may reuse the answer to an
	// anonymous GET query (see cache.go); zero marks every answer no-store.
	CacheMaxAge time.Duration
	// Metrics, when set, counts every request by operation and outcome,
	// measures its latency and records the dataloaders' batch sizes.
	Metrics *metrics.Metrics
	// TracerProvider, when set, traces every operation and its root fields.
	TracerProvider trace.TracerProvider
	// Moderation says whether readers' comments are held for approval
	// (the zero value) or published at once.
	Moderation Moderation
	// UnmoderatedEdits lets a reader's edit of their published comment
	// stay published. By default, when readers' comments are held, such
	// an edit holds the comment again until it is approved, so no text
	// goes live unmoderated.
	UnmoderatedEdits bool
	// CommentsPerMinute is the most comments a reader may add in any
	// minute, at most storage.MaxCommentsPerMinute; zero means
	// DefaultCommentsPerMinute, a negative number no limit. Authors and
	// admins have none.
	CommentsPerMinute int
	// ShowCost puts what each operation took from DynamoDB in every
	// answer to an admin (extensions.cost, see cost.go); without it only
	// answers to admins' requests that ask with CostHeader have it.
	ShowCost bool
	// MaxQueryBytes bounds the query document of a request, a persisted
	// query's included, checked before it is parsed; zero means
	// DefaultMaxQueryBytes.
	MaxQueryBytes int
	// QueryCacheBytes bounds the memory of the parsed documents kept for
	// the next requests that send the same query (see querycache.go);
	// zero means DefaultQueryCacheBytes, a negative number none kept.
	QueryCacheBytes int64
	// PersistedQueryCacheBytes bounds the memory of the automatic
	// persisted queries; zero means DefaultPersistedQueryCacheBytes, a
	// negative number none kept (every hash alone is then
	// PERSISTED_QUERY_NOT_FOUND).
	PersistedQueryCacheBytes int64
}

// cacheBound returns the bound of a cache: def for zero, none for a
// negative number.
func cacheBound(n, def int64) int64 {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// Names of the query caches in the metrics.
const (
	documentCacheName  = "documents"
	persistedCacheName = "persisted"
)

// cacheReport returns what a query cache reports its size to: the
// metrics' gauges, or nothing without metrics.
func cacheReport(m *metrics.Metrics, cache string) func(int, int64) {
	if m == nil {
		return nil
	}
	return func(entries int, bytes int64) { m.ObserveQueryCache(cache, entries, bytes) }
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
// HandlerOptions.CommentsPerMinute is zero.
const DefaultCommentsPerMinute = 5

// NewHandler returns the GraphQL endpoint over store: GET and POST
// transports that follow the GraphQL over HTTP specification (with the
// statuses of checkMethod and the variable coercion of variables.go), a
// limit on the size of query documents, a query cache and automatic
// persisted queries bounded by the memory they take (querycache.go), validation that looks through
// fragments in linear time (validation.go), the limits of limits.go (body
// size, tokens, depth, aliases, root fields, complexity, time) and of
// responsesize.go (the size of answers), the error presenter and panic
// recovery, a request id in every log line, the cost of every operation
// (cost.go), with the actor of the request's bearer token and fresh
// dataloaders for every request.
func NewHandler(store *storage.Store, opts HandlerOptions) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = slog.New(LogHandler(logger.Handler()))
	timeout := opts.RequestTimeout
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	limit := opts.ComplexityLimit
	if limit == 0 {
		limit = DefaultComplexityLimit
	}

	hold := opts.Moderation == HoldReaderComments
	rules := storage.ReaderRules{Hold: hold, HoldEdits: hold && !opts.UnmoderatedEdits, PerMinute: opts.CommentsPerMinute}
	switch {
	case rules.PerMinute == 0:
		rules.PerMinute = DefaultCommentsPerMinute
	case rules.PerMinute < 0:
		rules.PerMinute = 0
	}
	rules.PerMinute = min(rules.PerMinute, storage.MaxCommentsPerMinute)

	cfg := Config{Resolvers: &Resolver{store: store, previews: &keyCache{}, readers: rules}}
	cfg.Complexity.Query.Posts = postsComplexity
	cfg.Complexity.Query.Authors = listComplexity
	cfg.Complexity.Author.Posts = postsComplexity
	cfg.Complexity.Author.Drafts = listComplexity
	cfg.Complexity.Category.Posts = postsComplexity
	cfg.Complexity.Post.Comments = listComplexity
	cfg.Complexity.Post.Previous = adjacentComplexity
	cfg.Complexity.Post.Next = adjacentComplexity
	cfg.Complexity.Post.PreviousInCategory = adjacentInComplexity
	cfg.Complexity.Post.NextInCategory = adjacentInComplexity
	cfg.Complexity.Query.ModerationQueue = listComplexity
	cfg.Complexity.Comment.ReplyConnection = replyComplexity
	cfg.Complexity.Comment.Replies = func(child int) int { return storage.MaxReplyPage * child }
	withSizeCosts(&cfg.Complexity)

	schema := NewExecutableSchema(cfg)
	srv := handler.New(schema)
	srv.AddTransport(transport.Options{AllowedMethods: []string{allowedMethods}})
	srv.AddTransport(overHTTP{transport.GET{}, schema.Schema()})
	srv.AddTransport(overHTTP{postJSON{}, schema.Schema()})
	maxQuery := opts.MaxQueryBytes
	if maxQuery == 0 {
		maxQuery = DefaultMaxQueryBytes
	}
	srv.Use(querySizeLimit{max: maxQuery})
	srv.SetQueryCache(newByteLRU(cacheBound(opts.QueryCacheBytes, DefaultQueryCacheBytes), documentCost,
		cacheReport(opts.Metrics, documentCacheName)))
	srv.Use(extension.AutomaticPersistedQuery{Cache: newByteLRU(cacheBound(opts.PersistedQueryCacheBytes, DefaultPersistedQueryCacheBytes),
		persistedCost, cacheReport(opts.Metrics, persistedCacheName))})
	srv.SetParserTokenLimit(MaxTokens)
	srv.Use(operationLimits{complexityLimit: limit})
	srv.Use(extension.FixedComplexityLimit(limit))
	srv.SetValidationRulesFn(validationRules(opts.Introspection))
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetDisableSuggestion(true)
	}
	srv.SetErrorPresenter(presentError(logger))
	srv.SetRecoverFunc(recoverPanic(logger))
	if opts.Metrics != nil {
		srv.Use(opts.Metrics.Extension())
	}
	if opts.TracerProvider != nil {
		srv.Use(tracing.Extension(opts.TracerProvider))
	}
	srv.AroundRootFields(freshReadsPerMutation)
	srv.AroundRootFields(refuseEmptyInputs)
	maxResponse := opts.MaxResponseBytes
	if maxResponse == 0 {
		maxResponse = MaxResponseBytes
	}
	sizeOperation, sizeField, sizeResponse := responseSize(maxResponse)
	srv.AroundOperations(sizeOperation)
	srv.AroundFields(sizeField)
	srv.AroundResponses(reportCost)
	srv.AroundResponses(waitAhead)
	srv.AroundResponses(markCacheable)
	srv.AroundResponses(sizeResponse)
	return WithRequestID(checkMethod(limitBody(MaxBodyBytes, withTimeout(timeout,
		withCacheHeaders(opts.CacheMaxAge, withCost(opts.ShowCost, withActor(opts.Verifier, logger, withLoaders(store, batchObserver(opts.Metrics), srv))))))))
}
