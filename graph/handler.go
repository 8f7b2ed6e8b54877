package graph

import (
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/blogql/blog/storage"
)

// DefaultComplexityLimit admits a full page of 100 posts with every scalar
// field, their authors and categories, but not a page of posts that each
// list their comments.
const DefaultComplexityLimit = 5000

// HandlerOptions configure NewHandler. The zero value is a production
// setup: default logger, no introspection, DefaultComplexityLimit.
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
}

// NewHandler returns the GraphQL endpoint over store: GET and POST
// transports, a query cache, automatic persisted queries, a complexity
// limit, the error presenter and panic recovery, with fresh dataloaders for
// every request.
func NewHandler(store *storage.Store, opts HandlerOptions) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	limit := opts.ComplexityLimit
	if limit == 0 {
		limit = DefaultComplexityLimit
	}

	cfg := Config{Resolvers: &Resolver{store: store}}
	cfg.Complexity.Query.Posts = connectionComplexity
	cfg.Complexity.Query.Authors = connectionComplexity
	cfg.Complexity.Author.Posts = connectionComplexity
	cfg.Complexity.Category.Posts = connectionComplexity
	cfg.Complexity.Post.Comments = connectionComplexity

	srv := handler.New(NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(extension.FixedComplexityLimit(limit))
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetValidationRulesFn(withoutIntrospection)
		srv.SetDisableSuggestion(true)
	}
	srv.SetErrorPresenter(presentError(logger))
	srv.SetRecoverFunc(recoverPanic(logger))
	return withLoaders(store, srv)
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
