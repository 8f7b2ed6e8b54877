package graph

import (
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/trace"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tracing"
	"github.com/blogql/blog/views"
	"github.com/blogql/blog/webhooks"
)

// DefaultComplexityLimit admits a full page of 100 posts with every scalar
// field, bodies and rendered HTML included, their authors and categories,
// a post page of 100 comments with their first replies, a page of posts
// with their series, and every page of the TypeScript client with room to
// spare, but not two pages of bodies, a page of 100 posts that each list
// their comments, or a list that asks each post for its neighbours
// (complexity.go). It stands for 100 requests (listRequestCost) or 40 MB
// of answer (costBytes).
const DefaultComplexityLimit = 40000

// HandlerOptions configure NewHandler. The zero value is a production
// setup: default logger, the zero gqlhttp.Options (no introspection,
// default limits) with DefaultComplexityLimit, comments held for approval
// at DefaultCommentsPerMinute, and no tokens accepted.
type HandlerOptions struct {
	// HTTP configures GraphQL over HTTP: introspection, limits, timeout,
	// caching and query caches. A zero ComplexityLimit means
	// DefaultComplexityLimit. Its hooks (ErrorPresenter, RecoverFunc,
	// ObserveQueryCache, PersistedQueries, Now, Extensions, the
	// middlewares and Wrap) and ComplexityBytes are the blog's:
	// NewHandler sets them, whatever they held. Automatic persisted queries are kept in the
	// table (storage.PersistQuery) unless PersistedQueryCacheBytes is
	// negative, which keeps none.
	HTTP gqlhttp.Options
	// Comments is what applies to readers' comments.
	Comments CommentPolicy
	// Logger receives internal errors and panics; nil means slog.Default().
	Logger *slog.Logger
	// Verifier checks the bearer tokens of requests. Nil accepts none:
	// every request is anonymous, and one with a token gets 401.
	Verifier *auth.Verifier
	// Metrics, when set, counts every request by operation and outcome,
	// measures its latency and records the dataloaders' batch sizes and
	// the query caches' sizes.
	Metrics *metrics.Metrics
	// TracerProvider, when set, traces every operation and its root fields.
	TracerProvider trace.TracerProvider
	// ShowCost puts what each operation took from DynamoDB in every
	// answer to an admin (extensions.cost, see cost.go); without it only
	// answers to admins' requests that ask with CostHeader have it.
	ShowCost bool
	// Webhooks manages webhooks and sends their pings and redeliveries:
	// the same Service the change feed's "webhooks" worker feeds. Nil
	// means webhooks.New(store, webhooks.Options{}): https URLs to public
	// addresses only.
	Webhooks *webhooks.Service
	// Search is the publication's search index, which the change feed
	// keeps current: the server's *search.Service, or a publication's
	// *search.Publication; nil: search fails with INDEX_BUILDING and
	// related posts are none.
	Search Searcher
	// Live gives subscriptions their events. They are served over
	// the streams of HTTP.Streams (whose InitFunc and ResumeVariable are
	// the blog's: NewHandler sets them); without it, over none.
	Live LiveOptions
	// Site is what the site settings show where they were never set.
	Site SiteDefaults
	// PublicationSlug is the slug of the store's publication, which a
	// token may name it by (its pub claim) as well as by its id.
	PublicationSlug string
	// SignIn configures readers' sign-in by email; its zero value
	// signs nobody in.
	SignIn SignInOptions
	// Media is the media library; nil: its fields fail with UNAVAILABLE.
	Media *media.Service
	// Views counts the views recordView records (the same Counter the
	// beacon feeds); nil counts none.
	Views *views.Counter
}

// NewHandler returns the blog's GraphQL endpoint over store: the schema
// with its resolvers and complexity, served over HTTP by gqlhttp, with the
// blog's error presenter and panic recovery, the cost of every operation
// (cost.go), the actor of the request's bearer token, fresh dataloaders
// for every request and the reads started ahead waited for before the
// answer goes. It is the one place the two are composed; the server and
// the tests both use it.
func NewHandler(store *storage.Store, opts HandlerOptions) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = slog.New(gqlhttp.LogHandler(logger.Handler()))

	resolver := newResolver(store, opts.Comments, opts.Webhooks)
	resolver.siteDefaults = opts.Site
	resolver.live, resolver.eventReads = opts.Live, newEventReads(store)
	resolver.searcher = opts.Search
	resolver.signIn = opts.SignIn
	resolver.media = opts.Media
	resolver.views = opts.Views
	if resolver.live.PerConnection <= 0 {
		resolver.live.PerConnection = DefaultSubscriptionsPerConnection
	}
	cfg := Config{Resolvers: newRootResolvers(resolver)}
	withComplexity(&cfg.Complexity)

	h := opts.HTTP
	if h.ComplexityLimit == 0 {
		h.ComplexityLimit = DefaultComplexityLimit
	}
	h.ComplexityBytes = costBytes
	h.ErrorPresenter = presentError(logger)
	h.RecoverFunc = recoverPanic(logger)
	h.ObserveQueryCache, h.Extensions = nil, []graphql.HandlerExtension{fieldsCacheExtension{}}
	h.PersistedQueries, h.Now = nil, store.Now
	if h.PersistedQueryCacheBytes >= 0 {
		h.PersistedQueries = persistedQueries{store}
	}
	if opts.Metrics != nil {
		h.ObserveQueryCache = opts.Metrics.ObserveQueryCache
		h.Extensions = append(h.Extensions, opts.Metrics.Extension())
	}
	if opts.TracerProvider != nil {
		h.Extensions = append(h.Extensions, tracing.Extension(opts.TracerProvider))
	}
	h.AroundRootFields = []graphql.RootFieldMiddleware{freshReadsPerMutation, refuseEmptyInputs, taggedAnswers}
	h.TagSection = frontend.SectionTag
	if h.Answers != nil {
		h.AnswerBypassHeaders = []string{CostHeader}
		h.AroundRootFields = append(h.AroundRootFields, invalidateWritten(h.Answers))
	}
	h.AroundResponses = []graphql.ResponseMiddleware{reportCost, waitAhead, liveResponses(h.ErrorPresenter)}
	if h.Streams != nil {
		streams := *h.Streams
		streams.InitFunc = staffInit(initConnection(opts.Verifier), store, opts.PublicationSlug)
		streams.ResumeVariable = "after"
		h.Streams = &streams
	}
	observe := batchObserver(opts.Metrics)
	h.Wrap = func(srv http.Handler) http.Handler {
		return withCost(opts.ShowCost, withActor(opts.Verifier, logger, withStaff(store, opts.PublicationSlug, logger, withClient(withLoaders(store, observe, withViewer(opts.Views, withConnection(srv)))))))
	}
	return gqlhttp.New(NewExecutableSchema(cfg), h)
}
