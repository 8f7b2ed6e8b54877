package gqlhttp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/inflight"
)

// The size of answers. Three limits keep one request from building an
// answer of hundreds of megabytes:
//
//   - Before execution, the schema's complexity functions may make fields
//     whose values can be large cost what they can hold, so the complexity
//     limit bounds the size of what an operation asks for.
//   - During execution, the resolvers of fields whose values can be large
//     charge the request's Meter what they answer (inflight.go): the
//     charge that passes MaxResponseBytes fails, and so does every one
//     after it, so the request stops building at the limit.
//   - After execution, the answer's data, marshalled, is measured once,
//     for all the small fields no resolver charges.
//
// Past either of the last two the answer is one RESPONSE_TOO_LARGE error,
// without any of the data.

// MaxResponseBytes is the largest answer a request gets when
// Options.MaxResponseBytes is zero: room for a page of 100 posts of the
// blog with bodies of the largest size, and their JSON escapes.
const MaxResponseBytes = 16 << 20

// CodeResponseTooLarge is the code of a request whose answer would pass
// the size limit.
const CodeResponseTooLarge = "RESPONSE_TOO_LARGE"

// responseSize returns the middleware that holds every answer's data to
// max bytes of JSON: it replaces a larger answer, or that of a request
// whose Meter failed (charged past the limit, or refused by the budget),
// with the one error of why and data null.
func responseSize(max int64) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp == nil {
			return resp
		}
		var gqlErr *gqlerror.Error
		if err := inflight.Err(ctx); errors.Is(err, inflight.ErrBusy) {
			gqlErr = inflightError(err)
		} else if err != nil || int64(len(resp.Data)) > max {
			gqlErr = tooLargeError(max)
		}
		if gqlErr == nil {
			return resp
		}
		return &graphql.Response{Data: json.RawMessage("null"), Errors: gqlerror.List{gqlErr}}
	}
}
