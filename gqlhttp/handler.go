// Package gqlhttp serves a GraphQL schema over HTTP: the transports of
// the GraphQL over HTTP specification (transport.go, overhttp.go,
// variables.go), limits on request bodies, query documents, validation
// work, operations, time and answers (limits.go, validation.go,
// mergefields.go, responsesize.go), a budget of the memory of requests in
// flight (inflight.go), a query cache bounded by memory
// (querycache.go), automatic persisted queries kept in memory and in a
// store (persisted.go), HTTP caching with ETag, 304 and tag headers
// (cache.go), an answer cache that keeps whole answers until their tags
// are invalidated (answercache.go, answerkey.go) and request ids
// (requestid.go). It knows nothing of the
// schema it serves: what is particular to one (its resolvers' middlewares,
// error presenter, request context) comes in through Options.
package gqlhttp

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/admission"
	"github.com/blogql/blog/inflight"
)

// Options configure New. ComplexityLimit must be set; for the other
// fields the zero value is a production setup: no introspection,
// DefaultRequestTimeout, MaxResponseBytes, DefaultMaxQueryBytes, the
// default query cache bounds, and every answer no-store.
type Options struct {
	// Introspection enables schema introspection (the playground needs it)
	// and field suggestions in validation errors. Without it, an operation
	// that asks for __schema or __type fails validation.
	Introspection bool
	// ComplexityLimit is the highest complexity an operation may have, as
	// the schema's complexity functions count it; it must be positive.
	ComplexityLimit int
	// RequestTimeout bounds each request, everything its resolvers call
	// included; zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxResponseBytes bounds the JSON answer of an operation; zero means
	// MaxResponseBytes (responsesize.go).
	MaxResponseBytes int64
	// Budget, when set, bounds the bytes the requests in flight hold
	// between them (inflight.go); nil: no bound but each request's.
	Budget *inflight.Budget
	// ComplexityBytes is how many bytes of an answer one unit of
	// complexity may stand for: an operation reserves its complexity
	// times this of Budget before it runs. Zero means
	// DefaultComplexityBytes.
	ComplexityBytes int64
	// ObserveBytes, when set, is called when a request ends with the
	// bytes its resolvers charged to its answer and those they loaded
	// and answered (inflight.Answer, inflight.Load).
	ObserveBytes func(answered, charged int64)
	// CacheMaxAge is how long a CDN or browser may reuse the answer to an
	// anonymous GET query (see cache.go); zero marks every answer no-store.
	CacheMaxAge time.Duration
	// CacheSMaxAge and CacheStaleWhileRevalidate, when positive, add
	// s-maxage (how long a shared cache, a CDN, may reuse the answer) and
	// stale-while-revalidate to the Cache-Control of public answers.
	CacheSMaxAge              time.Duration
	CacheStaleWhileRevalidate time.Duration
	// TagSection returns the section tag of a tag (see Tag): the tag that
	// every change naming the tag names too. An answer whose tags take
	// more than MaxTagHeaderBytes sends sections in their place; nil:
	// such an answer is kept by no shared cache.
	TagSection func(tag string) string
	// Answers, when set, keeps the answers to anonymous query operations
	// without errors (not marked NoStore, and tagged: see Tag) in memory
	// and serves them again, GET and POST alike (answercache.go).
	Answers *AnswerCache
	// AnswerScope names this handler's answers in Answers: handlers that
	// share one AnswerCache with different scopes (one per site of a
	// server that serves several) never share an answer, while an
	// invalidation by tag reaches every scope.
	AnswerScope string
	// AnswerBypassHeaders are request headers which, like Authorization,
	// keep a request from the answer cache and from HTTP caches.
	AnswerBypassHeaders []string
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
	// PersistedQueries, when set, keeps the automatic persisted queries
	// beyond this process, behind the memory of PersistedQueryCacheBytes
	// (see persisted.go); nil keeps them in memory only.
	PersistedQueries PersistedQueryStore
	// PersistedQueryWrites bounds the registrations this server writes to
	// PersistedQueries a second; past it a registration's query runs and
	// is kept in memory only. Zero means DefaultPersistedQueryWrites, a
	// negative number none written.
	PersistedQueryWrites int
	// Now is the clock of the rate of PersistedQueryWrites and of the
	// refreshes of persisted queries; nil means time.Now.
	Now func() time.Time
	// ObserveQueryCache, when set, is called with the entries and bytes a
	// query cache holds after every change; cache is DocumentCache or
	// PersistedCache.
	ObserveQueryCache func(cache string, entries int, bytes int64)

	// ErrorPresenter presents the errors of resolvers and of gqlgen that
	// this package does not present itself; nil means gqlgen's default.
	ErrorPresenter graphql.ErrorPresenterFunc
	// RecoverFunc turns a resolver's panic into its error; nil means
	// gqlgen's default.
	RecoverFunc graphql.RecoverFunc
	// Extensions are added to the executor, in order, after the limits
	// and before the size of the answer is counted.
	Extensions []graphql.HandlerExtension
	// AroundRootFields wrap every root field, the first outermost.
	AroundRootFields []graphql.RootFieldMiddleware
	// AroundResponses wrap every answer, the first outermost, inside the
	// Extensions and outside the caching and size checks of the answer.
	AroundResponses []graphql.ResponseMiddleware
	// Wrap, when set, wraps the executor's HTTP handler: it is the
	// innermost middleware, inside the limits, the timeout and the caching
	// headers, where a request has been admitted and has its deadline.
	Wrap func(http.Handler) http.Handler
	// Admission, when set, bounds the requests executed at once
	// (admission.go): a request waits for one of its slots in the queue
	// of AdmissionKey (its site's), and streams take none.
	Admission    *admission.Gate
	AdmissionKey string
	// Streams, when set, serves subscriptions over WebSocket and
	// Server-Sent Events (streams.go, sse.go); without it the endpoint
	// takes none.
	Streams *StreamOptions
}

// Names of the query caches, as ObserveQueryCache reports them.
const (
	DocumentCache  = "documents"
	PersistedCache = "persisted"
)

// New returns the GraphQL endpoint of schema: GET and POST transports
// that follow the GraphQL over HTTP specification (with the statuses of
// checkMethod and the variable coercion of variables.go), a limit on the
// size of query documents, a query cache and automatic persisted queries
// bounded by the memory they take (querycache.go), validation that looks
// through fragments in linear time (validation.go), the limits of
// limits.go (body size, tokens, depth, aliases, root fields, complexity,
// time), of responsesize.go (the size of answers) and of inflight.go (the
// memory of requests in flight), admission to a bounded number of
// requests executed at once (admission.go), caching headers
// (cache.go) and a request id (requestid.go). What opts adds runs within
// these.
func New(schema graphql.ExecutableSchema, opts Options) http.Handler {
	if opts.ComplexityLimit <= 0 {
		panic("gqlhttp: Options.ComplexityLimit must be positive")
	}
	timeout := opts.RequestTimeout
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	maxQuery := opts.MaxQueryBytes
	if maxQuery == 0 {
		maxQuery = DefaultMaxQueryBytes
	}
	maxResponse := opts.MaxResponseBytes
	if maxResponse == 0 {
		maxResponse = MaxResponseBytes
	}

	srv := handler.New(schema)
	if opts.Streams != nil {
		for _, t := range streamTransports(opts.Streams) {
			srv.AddTransport(t)
		}
	}
	srv.AddTransport(transport.Options{AllowedMethods: []string{allowedMethods}})
	srv.AddTransport(overHTTP{transport.GET{}, schema.Schema()})
	srv.AddTransport(overHTTP{postJSON{}, schema.Schema()})
	srv.Use(querySizeLimit{max: maxQuery})
	srv.Use(subscriptionsOnStreams{})
	srv.SetQueryCache(newByteCache(cacheBound(opts.QueryCacheBytes, DefaultQueryCacheBytes), documentCost,
		cacheReport(opts.ObserveQueryCache, DocumentCache)))
	persisted := newPersistedQueries(opts)
	srv.Use(lookup{persisted})
	srv.SetParserTokenLimit(MaxTokens)
	srv.Use(operationLimits{complexityLimit: opts.ComplexityLimit})
	// Before the complexity limit reserves the operation's memory: an
	// answer the answer cache holds reserves none.
	srv.Use(answerLookup{})
	srv.Use(&complexityLimit{limit: opts.ComplexityLimit, bytesPer: opts.ComplexityBytes, maxResponse: maxResponse})
	srv.Use(register{persisted}) // after every limit: only what passed is kept
	// After every limit, and outside the operation middlewares of opts,
	// which see only the operations that run.
	srv.AroundOperations(answersFromMemory)
	srv.SetValidationRulesFn(validationRules(opts.Introspection))
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetDisableSuggestion(true)
	}
	srv.SetErrorPresenter(presentError(opts.ErrorPresenter))
	if opts.RecoverFunc != nil {
		srv.SetRecoverFunc(opts.RecoverFunc)
	}
	for _, ext := range opts.Extensions {
		srv.Use(ext)
	}
	for _, f := range opts.AroundRootFields {
		srv.AroundRootFields(f)
	}
	if opts.Streams != nil {
		srv.AroundOperations(countOperations)
	}
	for _, f := range opts.AroundResponses {
		srv.AroundResponses(f)
	}
	srv.AroundResponses(reportComplexity)
	srv.AroundResponses(markCacheable)
	srv.AroundResponses(responseSize(maxResponse))

	var inner http.Handler = srv
	if opts.Wrap != nil {
		inner = opts.Wrap(srv)
	}
	// A request answered from memory by its exact bytes takes no slot.
	requests := checkMethod(limitBody(MaxBodyBytes, withTimeout(timeout, withCacheHeaders(caching{
		maxAge: opts.CacheMaxAge, sMaxAge: opts.CacheSMaxAge, staleWhileRevalidate: opts.CacheStaleWhileRevalidate,
		answers: opts.Answers, scope: opts.AnswerScope, bypass: opts.AnswerBypassHeaders, section: opts.TagSection,
	}, withAdmission(opts.Admission, opts.AdmissionKey, withMeter(opts.Budget, maxResponse, opts.ObserveBytes, inner))))))
	if opts.Streams == nil {
		return WithRequestID(requests)
	}
	// A stream is not a request: no timeout, no caching headers.
	streams := checkMethod(limitBody(MaxBodyBytes, newStreamGate(opts.Streams).wrap(noStore(inner))))
	return WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			streams.ServeHTTP(w, r)
			return
		}
		requests.ServeHTTP(w, r)
	}))
}

// noStore marks every answer of next no-store.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// presentError returns the error presenter: what this package's limits
// raise is presented here, everything else by next (gqlgen's default when
// nil).
func presentError(next graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	if next == nil {
		next = graphql.DefaultErrorPresenter
	}
	return func(ctx context.Context, err error) *gqlerror.Error {
		if gqlErr := inflightError(err); gqlErr != nil {
			// A resolver's charge failed: the answer is that error alone
			// (responseSize).
			gqlErr.Path = graphql.GetPath(ctx)
			return gqlErr
		}
		if gqlErr, ok := errors.AsType[*gqlerror.Error](err); ok &&
			gqlErr.Message == tooComplexToValidate && gqlErr.Rule == fieldsMergeRule.Name {
			// Validation refused the document for the work it takes, not
			// for what it says: a limit, like the complexity's.
			gqlErr.Extensions = map[string]any{"code": CodeComplexityLimit}
			return gqlErr
		}
		return next(ctx, err)
	}
}

// newPersistedQueries returns the automatic persisted queries opts
// configure.
func newPersistedQueries(opts Options) *persistedQueries {
	p := &persistedQueries{
		cache: newByteCache(cacheBound(opts.PersistedQueryCacheBytes, DefaultPersistedQueryCacheBytes),
			persistedCost, cacheReport(opts.ObserveQueryCache, PersistedCache)),
		store: opts.PersistedQueries,
		now:   opts.Now,
	}
	if p.now == nil {
		p.now = time.Now
	}
	writes := opts.PersistedQueryWrites
	if writes == 0 {
		writes = DefaultPersistedQueryWrites
	}
	p.writes = newRateLimit(writes)
	return p
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

// cacheReport returns what a query cache reports its size to: observe
// with the cache's name, or nothing.
func cacheReport(observe func(string, int, int64), cache string) func(int, int64) {
	if observe == nil {
		return nil
	}
	return func(entries int, bytes int64) { observe(cache, entries, bytes) }
}
