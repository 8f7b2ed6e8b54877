package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/storage"
)

// emptyInputs are the optional input fields whose empty string is not the
// same as leaving them out, with what they must be instead: an omitted
// idempotencyKey means none and an omitted subject a new id, but an empty
// one is neither.
var emptyInputs = map[string]string{
	"idempotencyKey": "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -",
	"subject":        "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -",
}

// refuseEmptyInputs is the root field middleware that refuses a mutation
// whose input gives one of emptyInputs as an empty string, with
// BAD_USER_INPUT on that field, before its resolver reads or writes
// anything.
func refuseEmptyInputs(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	opCtx, fc := graphql.GetOperationContext(ctx), graphql.GetRootFieldContext(ctx)
	if opCtx.Operation.Operation != ast.Mutation || fc == nil || fc.Field.Field == nil {
		return next(ctx)
	}
	input, _ := fc.Field.ArgumentMap(opCtx.Variables)["input"].(map[string]any)
	for field, reason := range emptyInputs {
		if v, ok := input[field].(string); ok && v == "" {
			err := &gqlerror.Error{
				Err:       &storage.ValidationError{Field: field, Reason: reason},
				Message:   field + ": " + reason,
				Path:      ast.Path{ast.PathName(fc.Field.Alias)},
				Locations: []gqlerror.Location{{Line: fc.Field.Position.Line, Column: fc.Field.Position.Column}},
			}
			graphql.AddError(ctx, err)
			return graphql.Null
		}
	}
	return next(ctx)
}

// expectedVersionOf returns the storage form of an optional
// expectedVersion: zero (no condition) when the client omitted it, and
// storage.NoVersion for 0 or less, versions no item has, so that the write
// fails with CONFLICT rather than skip the check.
func expectedVersionOf(v *int) int64 {
	switch {
	case v == nil:
		return 0
	case *v < 1:
		return storage.NoVersion
	}
	return int64(*v)
}
