package gqlhttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Limits on every request. A request over one of them gets one error whose
// extensions.code names the limit, before any resolver runs (but for the
// time limit); docs/frontend.md lists them with their codes.
const (
	// MaxBodyBytes bounds a request body: 413 and BAD_REQUEST above it.
	// Most of it is for variables: a post's body is one.
	MaxBodyBytes = 1 << 20
	// DefaultMaxQueryBytes bounds the query document of a request (its
	// `query`, a persisted query's registration included) when
	// Options.MaxQueryBytes is zero: QUERY_SIZE_LIMIT_EXCEEDED
	// above it, before it is parsed, cached or persisted. MaxTokens
	// tokens written out take a few kilobytes; what is past that is
	// comments, blanks and literal values, which belong in variables.
	DefaultMaxQueryBytes = 32 << 10
	// MaxTokens bounds the lexical tokens of a query document
	// (GRAPHQL_PARSE_FAILED above it): the standard introspection query has
	// about 200. Validation takes time quadratic in the fields of one
	// selection set, so this is what bounds the work a document can cause
	// before it is refused.
	MaxTokens = 1000
	// MaxDepth bounds how deeply fields nest (DEPTH_LIMIT_EXCEEDED);
	// introspection is left to gqlparser's own depth rule.
	MaxDepth = 12
	// MaxAliases bounds the aliased fields of an operation and its
	// fragments (ALIAS_LIMIT_EXCEEDED): aliases let one field run many
	// times in one request.
	MaxAliases = 30
	// MaxRootFields bounds the distinct root fields of an operation
	// (ROOT_FIELD_LIMIT_EXCEEDED): each starts its own reads.
	MaxRootFields = 20
	// DefaultRequestTimeout is how long a request may take when
	// Options.RequestTimeout is zero. Its deadline reaches every
	// DynamoDB call; past it the request answers TIMEOUT.
	DefaultRequestTimeout = 10 * time.Second
)

// Codes of requests refused by a limit.
const (
	CodeQuerySizeLimit  = "QUERY_SIZE_LIMIT_EXCEEDED"
	CodeDepthLimit      = "DEPTH_LIMIT_EXCEEDED"
	CodeAliasLimit      = "ALIAS_LIMIT_EXCEEDED"
	CodeRootFieldLimit  = "ROOT_FIELD_LIMIT_EXCEEDED"
	CodeComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED" // gqlgen's own code
)

func init() {
	// The operation never ran: a request error like a failed validation,
	// with the HTTP status gqlgen gives those.
	for _, code := range []string{CodeQuerySizeLimit, CodeDepthLimit, CodeAliasLimit, CodeRootFieldLimit, CodeComplexityLimit} {
		errcode.RegisterErrorType(code, errcode.KindProtocol)
	}
}

// querySizeLimit refuses a query document longer than max bytes before
// anything else looks at it: the parser, the document cache and the
// automatic persisted queries, which keep what they are sent. It must be
// added before AutomaticPersistedQuery.
type querySizeLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = querySizeLimit{}

func (querySizeLimit) ExtensionName() string                   { return "QuerySizeLimit" }
func (querySizeLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters returns QUERY_SIZE_LIMIT_EXCEEDED for a query
// longer than the limit, or nil.
func (l querySizeLimit) MutateOperationParameters(_ context.Context, params *graphql.RawParams) *gqlerror.Error {
	if len(params.Query) <= l.max {
		return nil
	}
	err := gqlerror.Errorf("the query document has %d bytes; the limit is %d (send long values in variables)", len(params.Query), l.max)
	errcode.Set(err, CodeQuerySizeLimit)
	return err
}

// operationLimits refuses operations that nest too deeply, alias too many
// fields or ask for too many root fields. It also refuses one whose
// fragments expand to more fields than the complexity limit allows, before
// gqlgen's complexity count walks that expansion: fragments that each spread
// the next one twice make a document of a few hundred bytes expand to
// millions of fields. It must be added before the complexity limit.
type operationLimits struct {
	complexityLimit int
	// report, when set, is called with the selections the measure of an
	// operation visited.
	report func(work int)
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = operationLimits{}

func (operationLimits) ExtensionName() string                   { return "OperationLimits" }
func (operationLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext returns the error of the first limit the operation
// exceeds, or nil.
func (l operationLimits) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Operation
	if op == nil {
		return nil
	}
	m := &measure{memo: map[string]shape{}, cap: l.complexityLimit + 1}
	s := m.selections(op.SelectionSet)
	if l.report != nil {
		l.report(m.work)
	}
	refuse := func(code, format string, args ...any) *gqlerror.Error {
		err := gqlerror.Errorf(format, args...)
		errcode.Set(err, code)
		return err
	}
	aliases := countAliases(op.SelectionSet, map[string]bool{})
	roots := len(rootFields(op.SelectionSet, map[string]bool{}, map[string]bool{}))
	switch {
	case s.depth > MaxDepth:
		return refuse(CodeDepthLimit, "the operation nests fields %d deep; the limit is %d", s.depth, MaxDepth)
	case aliases > MaxAliases:
		return refuse(CodeAliasLimit, "the operation has %d aliases; the limit is %d", aliases, MaxAliases)
	case roots > MaxRootFields:
		return refuse(CodeRootFieldLimit, "the operation asks for %d root fields; the limit is %d", roots, MaxRootFields)
	case s.fields > l.complexityLimit:
		return refuse(CodeComplexityLimit, "the operation selects more than %d fields once its fragments are expanded, which exceeds the complexity limit", l.complexityLimit)
	}
	return nil
}

// shape is the depth of a selection set and the number of fields it selects
// once its fragments are expanded.
type shape struct{ depth, fields int }

// measure computes shapes, each fragment once, with field counts capped at
// cap so no expansion is ever walked or counted in full.
type measure struct {
	memo map[string]shape
	cap  int
	work int
}

func (m *measure) selections(set ast.SelectionSet) shape {
	var out shape
	for _, sel := range set {
		m.work++
		var sub shape
		switch s := sel.(type) {
		case *ast.Field:
			if isIntrospection(s) {
				continue
			}
			sub = m.selections(s.SelectionSet)
			sub.depth++
			sub.fields = min(sub.fields+1, m.cap)
		case *ast.FragmentSpread:
			if s.Definition == nil {
				continue
			}
			var ok bool
			if sub, ok = m.memo[s.Name]; !ok {
				// Validation has refused fragment cycles, so this ends.
				sub = m.selections(s.Definition.SelectionSet)
				m.memo[s.Name] = sub
			}
		case *ast.InlineFragment:
			sub = m.selections(s.SelectionSet)
		}
		out.depth = max(out.depth, sub.depth)
		out.fields = min(out.fields+sub.fields, m.cap)
	}
	return out
}

// isIntrospection reports whether f asks for the schema (__schema or
// __type); __typename is an ordinary field.
func isIntrospection(f *ast.Field) bool {
	return strings.HasPrefix(f.Name, "__") && f.Name != "__typename"
}

// countAliases returns the aliased fields of set and of each fragment it
// reaches, counting every fragment once, as written.
func countAliases(set ast.SelectionSet, seen map[string]bool) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias != s.Name {
				n++
			}
			n += countAliases(s.SelectionSet, seen)
		case *ast.FragmentSpread:
			if !seen[s.Name] && s.Definition != nil {
				seen[s.Name] = true
				n += countAliases(s.Definition.SelectionSet, seen)
			}
		case *ast.InlineFragment:
			n += countAliases(s.SelectionSet, seen)
		}
	}
	return n
}

// rootFields returns the response keys of set, fragments included (each
// once: a fragment spread again adds no key): the fields that run once
// each.
func rootFields(set ast.SelectionSet, keys map[string]bool, seen map[string]bool) map[string]bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			keys[s.Alias] = true
		case *ast.FragmentSpread:
			if !seen[s.Name] && s.Definition != nil {
				seen[s.Name] = true
				rootFields(s.Definition.SelectionSet, keys, seen)
			}
		case *ast.InlineFragment:
			rootFields(s.SelectionSet, keys, seen)
		}
	}
	return keys
}

// withTimeout gives every request a deadline of d, which the resolvers'
// DynamoDB calls inherit.
func withTimeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// limitBody refuses request bodies larger than n bytes with 413 and a
// GraphQL error. A body of unknown length (chunked) is read here to find
// out, which costs nothing extra: the GraphQL transport reads it whole
// anyway.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > n {
			tooLarge(w, n)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, n)
		if r.ContentLength < 0 {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				bodyNotRead(w, err)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, n int64) {
	bodyNotRead(w, &http.MaxBytesError{Limit: n})
}
