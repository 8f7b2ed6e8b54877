package graph

//go:generate go tool gqlgen generate
//go:generate go run ./internal/leanexec generated.go

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/media"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/views"
	"github.com/blogql/blog/webhooks"
)

// Resolver is the root resolver. It is the only place dependencies are
// injected; per-request dataloaders come from the request context.
type Resolver struct {
	store    *storage.Store
	previews *keyCache
	// commenterHints are the writers of the pages of comments this
	// server read last, read ahead on the next post page.
	commenterHints *commenterHints
	// readers is what applies to readers' comments: held or not, and how
	// many a minute.
	readers storage.ReaderRules
	// webhooks manages the webhooks and delivers pings and redeliveries.
	webhooks *webhooks.Service
	// live gives subscriptions their events; eventReads reads what each
	// is about once for all of them.
	live       LiveOptions
	eventReads *eventReads
	// searcher is the server's search index; nil: searches fail with
	// INDEX_BUILDING and posts have no related posts.
	searcher Searcher
	// siteDefaults are what unset site settings show (site.go).
	siteDefaults SiteDefaults
	// signIn configures readers' sign-in (signin.go).
	signIn SignInOptions
	// media is the media library; nil: its fields fail with UNAVAILABLE.
	media *media.Service
	// views counts the views recordView records; nil counts none.
	views *views.Counter
}

// newResolver returns the root resolver over store, with the policy for
// readers' comments and the webhooks' service (nil: one that allows
// nothing unsafe).
func newResolver(store *storage.Store, comments CommentPolicy, hooks *webhooks.Service) *Resolver {
	return &Resolver{store: store, previews: &keyCache{}, commenterHints: newCommenterHints(), readers: comments.rules(), webhooks: newWebhooks(store, hooks)}
}

// selectsOnly reports whether the current field selects nothing but the
// given fields (and __typename), so a denormalized copy can answer it
// without a read.
func selectsOnly(ctx context.Context, fields ...string) bool {
	return selectsOnlyOf(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field, fields...)
}

// selectsOnlyOf reports whether field selects nothing but fields (and
// __typename) in the operation oc.
func selectsOnlyOf(oc *graphql.OperationContext, field graphql.CollectedField, fields ...string) bool {
	for _, f := range collectFields(oc, field.Selections, nil) {
		if f.Name != "__typename" && !slices.Contains(fields, f.Name) {
			return false
		}
	}
	return true
}

// selectionAt returns the names of the fields selected below path, a
// dotted path of fields from the field being resolved ("" for the field
// itself), across every alias and fragment; false when path is not
// selected. When satisfies is given, the field's own fragments count only
// when their type is one of it (an interface's value); below, all do.
func selectionAt(ctx context.Context, satisfies []string, path string) ([]string, bool) {
	fields, ok := fieldsAt(ctx, satisfies, path)
	if !ok {
		return nil, false
	}
	var names []string
	for _, f := range fields {
		if f.Name != "__typename" && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	return names, true
}

// soleRootField reports whether the operation selects its root field name
// once, under one alias.
func soleRootField(ctx context.Context, name string) bool {
	oc := graphql.GetOperationContext(ctx)
	n := 0
	for _, f := range collectFields(oc, oc.Operation.SelectionSet, nil) {
		if f.Name == name {
			n++
		}
	}
	return n == 1
}

// fieldsAt returns the fields selected at path below the field of ctx
// (as selectionAt), and false when path is not selected.
func fieldsAt(ctx context.Context, satisfies []string, path string) ([]graphql.CollectedField, bool) {
	oc := graphql.GetOperationContext(ctx)
	fields := collectFields(oc, graphql.GetFieldContext(ctx).Field.Selections, satisfies)
	if path != "" {
		for _, name := range strings.Split(path, ".") {
			var next []graphql.CollectedField
			for _, f := range fields {
				if f.Name == name {
					next = append(next, collectFields(oc, f.Selections, nil)...)
				}
			}
			if next == nil {
				return nil, false
			}
			fields = next
		}
	}
	return fields, true
}

// onlyOf reports whether every name in names, but __typename, is one of
// allowed.
func onlyOf(names []string, allowed ...string) bool {
	for _, n := range names {
		if n != "__typename" && !slices.Contains(allowed, n) {
			return false
		}
	}
	return true
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

// nonEmpty returns a pointer to s, or nil for the empty string.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// positive returns a pointer to n, or nil for zero (unknown).
func positive(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// rootResolvers is the ResolverRoot the handler serves. The generated
// constructors (Resolver.Post…) allocate a resolver on every call, and the
// executor calls one for every field with a resolver, on every object of
// a list; the types that are listed are made once here.
type rootResolvers struct {
	*Resolver
	post      postResolver
	author    authorResolver
	category  categoryResolver
	comment   commentResolver
	commenter commenterResolver
	image     imageResolver
	tag       tagResolver
	page      pageResolver
	menuItem  menuItemResolver
	media     mediaResolver
}

func newRootResolvers(r *Resolver) *rootResolvers {
	return &rootResolvers{
		Resolver: r, post: postResolver{r}, author: authorResolver{r}, category: categoryResolver{r},
		comment: commentResolver{r}, commenter: commenterResolver{r}, image: imageResolver{r},
		tag: tagResolver{r}, page: pageResolver{r}, menuItem: menuItemResolver{r}, media: mediaResolver{r},
	}
}

func (r *rootResolvers) Post() PostResolver           { return &r.post }
func (r *rootResolvers) Author() AuthorResolver       { return &r.author }
func (r *rootResolvers) Category() CategoryResolver   { return &r.category }
func (r *rootResolvers) Comment() CommentResolver     { return &r.comment }
func (r *rootResolvers) Commenter() CommenterResolver { return &r.commenter }
func (r *rootResolvers) Image() ImageResolver         { return &r.image }
func (r *rootResolvers) Tag() TagResolver             { return &r.tag }
func (r *rootResolvers) Page() PageResolver           { return &r.page }
func (r *rootResolvers) MenuItem() MenuItemResolver   { return &r.menuItem }
func (r *rootResolvers) Media() MediaResolver         { return &r.media }
