package gqlhttp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
)

// The key of an answer is made from what runs, never from another reading
// of the request. The transport decodes the request once (decodeParams
// refuses a body whose keys another decoder could read otherwise), and
// gqlgen makes the operation's context from it: a persisted query's hash
// is replaced by the document it stands for, the operation is chosen, the
// variables are coerced and the limits on the document are checked. Only
// then does answerLookup key the operation: by the document it runs, the
// operation's name and the variables as coerced. Two requests that run
// the same operation on the same values share an answer, whichever way
// they were sent (GET or POST, the document or its hash, variables in any
// order, unused ones, 1 or 1.0 for an Int); two that run different ones
// never do.

// answerLookup is the extension that looks the answer of a query
// operation up in the answer cache, for a request withCacheHeaders offers
// to it: it leaves in the request's cacheState the answer kept under the
// operation's key, or the key for withCacheHeaders to keep the answer
// under. New adds it after the limits on the document and before
// complexityLimit, which reserves the operation's memory: an answer kept
// in memory costs none to send, so complexityLimit reserves nothing for
// an operation it found (answerKept), and the cache answers however full
// the budget is.
type answerLookup struct{}

var _ graphql.OperationContextMutator = answerLookup{}

func (answerLookup) ExtensionName() string                   { return "AnswerLookup" }
func (answerLookup) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext looks the operation's answer up; it never fails.
func (answerLookup) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	st, ok := ctx.Value(cacheStateKey{}).(*cacheState)
	if !ok || st.answers == nil || opCtx.Operation == nil || opCtx.Operation.Operation != ast.Query {
		return nil
	}
	key, ok := answerKey(opCtx)
	if !ok {
		return nil
	}
	key = st.scope + "\x00" + key
	if a, ok := st.answers.get(key); ok {
		st.kept = a
		return nil
	}
	st.key = key
	return nil
}

// answerKept reports whether answerLookup found the answer of the
// operation of ctx in the answer cache.
func answerKept(ctx context.Context) bool {
	st, ok := ctx.Value(cacheStateKey{}).(*cacheState)
	return ok && st.kept != nil
}

// answersFromMemory is the operation middleware of the answer cache: it
// answers an operation whose answer answerLookup found without running
// it. It sees only operations that passed every extension, so a request
// refused after the lookup is never sent the kept answer. New adds it
// before the operation and response middlewares of Options, which see
// only operations that run.
func answersFromMemory(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	st, ok := ctx.Value(cacheStateKey{}).(*cacheState)
	if !ok || st.kept == nil {
		return next(ctx)
	}
	// withCacheHeaders sends the kept answer as it was written, in place
	// of what the transport writes of this empty one.
	st.hit = st.kept
	return graphql.OneShot(&graphql.Response{Data: json.RawMessage("null")})
}

// answerKey returns the key of the answer of the operation opCtx runs:
// the operation's name, its document normalized (its tokens, without
// whitespace, commas and comments) and its coerced variables in canonical
// JSON (keys sorted); false when they cannot be written so.
func answerKey(opCtx *graphql.OperationContext) (string, bool) {
	doc, ok := normalizeDocument(opCtx.RawQuery)
	if !ok {
		return "", false
	}
	vars := []byte("{}")
	if len(opCtx.Variables) > 0 {
		var err error
		if vars, err = json.Marshal(opCtx.Variables); err != nil { // maps marshal with their keys sorted
			return "", false
		}
	}
	return strings.Join([]string{opCtx.Operation.Name, doc, string(vars)}, "\x00"), true
}

// normalizeDocument returns the tokens of the document query, one space
// apart, strings quoted again: two documents that differ only in
// whitespace, commas, comments or how a string is written give the same
// text. It fails where the lexer does.
func normalizeDocument(query string) (string, bool) {
	lx := lexer.New(&ast.Source{Input: query})
	var b strings.Builder
	b.Grow(len(query))
	for {
		tok, err := lx.ReadToken()
		if err != nil {
			return "", false
		}
		switch tok.Kind {
		case lexer.EOF:
			return b.String(), true
		case lexer.Comment:
			continue
		case lexer.String, lexer.BlockString:
			b.WriteString(strconv.Quote(tok.Value))
		case lexer.Name, lexer.Int, lexer.Float:
			b.WriteString(tok.Value)
		default: // punctuation, which has no value
			b.WriteString(tok.Kind.String())
		}
		b.WriteByte(' ')
	}
}
