package graph

//go:generate go tool gqlgen generate

import (
	"context"
	"fmt"
	"slices"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/storage"
)

// Resolver is the root resolver. It is the only place dependencies are
// injected; per-request dataloaders come from the request context.
type Resolver struct {
	store    *storage.Store
	previews *keyCache
	// readers is what applies to readers' comments: held or not, and how
	// many a minute.
	readers storage.ReaderRules
}

// allCategories returns every category, ordered by slug, in as few pages as
// storage allows.
func (r *Resolver) allCategories(ctx context.Context) ([]*storage.Category, error) {
	var all []*storage.Category
	p := storage.Page{Limit: storage.MaxPageSize}
	for {
		res, err := r.store.Categories(ctx, p)
		if err != nil {
			return nil, err
		}
		all = append(all, res.Items...)
		if !res.HasNext || len(res.Cursors) == 0 {
			return all, nil
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
}

// selectsOnly reports whether the current field selects nothing but the
// given fields (and __typename), so a denormalized copy can answer it
// without a read.
func selectsOnly(ctx context.Context, fields ...string) bool {
	for _, f := range graphql.CollectAllFields(ctx) {
		if f != "__typename" && !slices.Contains(fields, f) {
			return false
		}
	}
	return true
}

// selectsNested reports whether the current field selects field, and that
// field selects child.
func selectsNested(ctx context.Context, field, child string) bool {
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(oc, graphql.GetFieldContext(ctx).Field.Selections, nil) {
		if f.Name != field {
			continue
		}
		for _, g := range graphql.CollectFields(oc, f.Selections, nil) {
			if g.Name == child {
				return true
			}
		}
	}
	return false
}

// categoriesOf answers a post's categories from the names it carries.
func categoriesOf(refs []storage.CategoryRef) []*storage.Category {
	cats := make([]*storage.Category, len(refs))
	for i, c := range refs {
		cats[i] = &storage.Category{Slug: c.Slug, Name: c.Name}
	}
	return cats
}

// slugsOf returns the slugs of a post's categories, in order.
func slugsOf(refs []storage.CategoryRef) []string {
	slugs := make([]string, len(refs))
	for i, c := range refs {
		slugs[i] = c.Slug
	}
	return slugs
}

// deref returns *p, or the zero value for an omitted optional argument.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// exactlyOne returns an error unless exactly one of args is given.
func exactlyOne(args ...*string) error {
	n := 0
	for _, a := range args {
		if a != nil {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%d arguments of %d given, want one", n, len(args))
	}
	return nil
}
