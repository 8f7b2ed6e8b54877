package gqlhttp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The size of answers. Two limits keep one request from building an
// answer of hundreds of megabytes:
//
//   - Before execution, the schema's complexity functions may make fields
//     whose values can be large cost what they can hold, so the complexity
//     limit bounds the size of what an operation asks for, and with it
//     what the server builds in memory for one answer.
//   - After execution, the answer's data, marshalled, is measured once:
//     past MaxResponseBytes it is dropped and the answer is one
//     RESPONSE_TOO_LARGE error, without any of the data.
//
// The answer is measured whole rather than field by field as it resolves:
// a middleware around every field cost more than a tenth of a page of 20
// posts, and the complexity limit already stops what could grow without
// bound before it is read.

// MaxResponseBytes is the largest answer a request gets when
// Options.MaxResponseBytes is zero: room for a page of 100 posts of the
// blog with bodies of the largest size, and their JSON escapes.
const MaxResponseBytes = 16 << 20

// CodeResponseTooLarge is the code of a request whose answer would pass
// the size limit.
const CodeResponseTooLarge = "RESPONSE_TOO_LARGE"

// responseSize returns the middleware that holds every answer's data to
// max bytes of JSON: it replaces a larger answer with a RESPONSE_TOO_LARGE
// error and data null.
func responseSize(max int64) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp == nil || int64(len(resp.Data)) <= max {
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
}
