package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// deferredGroup returns the group of an object's @defer'd fields, as
// graphql.NewDeferredGroup does, for an object of which a field in
// fields is deferred, and an empty group for any other: the executor
// reads the group only for deferred fields, and gqlgen's template made
// one for every object, three allocations each (internal/lazydefer).
func deferredGroup(ctx context.Context, fields []graphql.CollectedField) graphql.DeferredGroup {
	for _, f := range fields {
		if f.IsDeferred() {
			return graphql.NewDeferredGroup(ctx)
		}
	}
	return graphql.DeferredGroup{}
}
