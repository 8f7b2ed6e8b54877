package graph

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
	"go.opentelemetry.io/otel/trace"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tracing"
)

// DefaultComplexityLimit admits a full page of 100 posts with every scalar
// field, their authors and categories, but not a page of posts that each
// list their comments.
const DefaultComplexityLimit = 5000

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
	// CommentsPerMinute is the most comments a reader may add in any
	// minute, at most storage.MaxCommentsPerMinute; zero means
	// DefaultCommentsPerMinute, a negative number no limit. Authors and
	// admins have none.
	CommentsPerMinute int
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
// transports that follow the GraphQL over HTTP specification, a query
// cache, automatic persisted queries, the limits of limits.go (body size,
// tokens, depth, aliases, root fields, complexity, time), the error
// presenter and panic recovery, a request id in every log line, with the actor of the request's bearer
// token and fresh dataloaders for every request.
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

	rules := storage.ReaderRules{Hold: opts.Moderation == HoldReaderComments, PerMinute: opts.CommentsPerMinute}
	switch {
	case rules.PerMinute == 0:
		rules.PerMinute = DefaultCommentsPerMinute
	case rules.PerMinute < 0:
		rules.PerMinute = 0
	}
	rules.PerMinute = min(rules.PerMinute, storage.MaxCommentsPerMinute)

	cfg := Config{Resolvers: &Resolver{store: store, readers: rules}}
	cfg.Complexity.Query.Posts = connectionComplexity
	cfg.Complexity.Query.Authors = connectionComplexity
	cfg.Complexity.Author.Posts = connectionComplexity
	cfg.Complexity.Author.Drafts = connectionComplexity
	cfg.Complexity.Category.Posts = connectionComplexity
	cfg.Complexity.Post.Comments = connectionComplexity
	cfg.Complexity.Query.ModerationQueue = connectionComplexity
	cfg.Complexity.Comment.ReplyConnection = replyComplexity
	cfg.Complexity.Comment.Replies = func(child int) int { return storage.MaxReplyPage * child }

	srv := handler.New(NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(overHTTP{transport.GET{}})
	srv.AddTransport(overHTTP{postJSON{}})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.SetParserTokenLimit(MaxTokens)
	srv.Use(operationLimits{complexityLimit: limit})
	srv.Use(extension.FixedComplexityLimit(limit))
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetValidationRulesFn(withoutIntrospection)
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
	srv.AroundResponses(markCacheable)
	return WithRequestID(limitBody(MaxBodyBytes, withTimeout(timeout,
		withCacheHeaders(opts.CacheMaxAge, withActor(opts.Verifier, logger, withLoaders(store, batchObserver(opts.Metrics), srv))))))
}

// withoutIntrospection returns the default validation rules plus one that
// rejects __schema and __type, so a client asking for the schema of a server
// without introspection gets a validation error rather than a failed field.
func withoutIntrospection() *rules.Rules {
	r := rules.NewDefaultRules()
	r.AddRule("NoIntrospection", func(observers *core.Events, addError core.AddErrFunc) {
		observers.OnField(func(_ *core.Walker, f *ast.Field) {
			if f.Name == "__schema" || f.Name == "__type" {
				addError(core.Message("introspection is disabled"), core.At(f.Position))
			}
		})
	})
	return r
}
