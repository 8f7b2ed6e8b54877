package gqlhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The size of answers. Two limits keep one request from building an
// answer of hundreds of megabytes:
//
//   - Before execution, the schema's complexity functions may make fields
//     whose values can be large cost what they can hold, so the complexity
//     limit bounds the size of what an operation asks for.
//   - During execution, every field's value is counted as it is resolved,
//     in the bytes it takes in the JSON answer; once the answer passes
//     MaxResponseBytes, no further field resolves (no further read is
//     made) and the answer is one RESPONSE_TOO_LARGE error, without data
//     past the limit ever being kept.

// MaxResponseBytes is the largest answer a request gets when
// Options.MaxResponseBytes is zero: room for a page of 100 posts of the
// blog with bodies of the largest size, and their JSON escapes.
const MaxResponseBytes = 16 << 20

// CodeResponseTooLarge is the code of a request whose answer would pass
// the size limit.
const CodeResponseTooLarge = "RESPONSE_TOO_LARGE"

// errResponseTooLarge stops the fields resolved after an answer passed its
// limit. It is never shown: the answer becomes one error instead.
var errResponseTooLarge = errors.New("response too large")

// responseBudget is what is left of one answer's size.
type responseBudget struct {
	left atomic.Int64
	over atomic.Bool
}

type responseBudgetKey struct{}

// responseSize returns the middlewares that hold every operation's answer
// to max bytes: one gives each operation its budget, one counts each
// field's value and stops the rest once the budget is spent, one replaces
// such an answer with a RESPONSE_TOO_LARGE error.
func responseSize(max int64) (graphql.OperationMiddleware, graphql.FieldMiddleware, graphql.ResponseMiddleware) {
	operation := func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		b := &responseBudget{}
		b.left.Store(max)
		return next(context.WithValue(ctx, responseBudgetKey{}, b))
	}
	field := func(ctx context.Context, next graphql.Resolver) (any, error) {
		b, _ := ctx.Value(responseBudgetKey{}).(*responseBudget)
		if b == nil {
			return next(ctx)
		}
		if b.over.Load() {
			return nil, errResponseTooLarge
		}
		res, err := next(ctx)
		n := int64(len(graphql.GetFieldContext(ctx).Field.Alias)+4) + jsonSize(res)
		if b.left.Add(-n) < 0 {
			b.over.Store(true)
			return nil, errResponseTooLarge
		}
		return res, err
	}
	response := func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		b, _ := ctx.Value(responseBudgetKey{}).(*responseBudget)
		if resp == nil || b == nil || !b.over.Load() {
			return resp
		}
		return &graphql.Response{
			Data: json.RawMessage("null"),
			Errors: gqlerror.List{{
				Message:    fmt.Sprintf("the answer would be larger than %d bytes: ask for fewer items or fields", max),
				Extensions: map[string]any{"code": CodeResponseTooLarge},
			}},
		}
	}
	return operation, field, response
}

// jsonSize returns about how many bytes v takes in a JSON answer: exactly
// for strings, which are what can be large, and a bound for the rest. The
// fields of objects and lists are counted as they resolve.
func jsonSize(v any) int64 {
	switch v := v.(type) {
	case string:
		return quotedSize(v)
	case *string:
		if v != nil {
			return quotedSize(*v)
		}
	case []string:
		n := int64(2)
		for _, s := range v {
			n += quotedSize(s) + 1
		}
		return n
	}
	return 32
}

// quotedSize returns the length of s as gqlgen writes it in an answer:
// quoted, with quotes, backslashes and control characters escaped.
func quotedSize(s string) int64 {
	n := int64(len(s) + 2)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}
