package graph

import (
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Lists of posts whose posts have at hand all that the selection asks,
// as a page of post cards: nothing in them waits for a load, so their
// elements run in turn (marshalSlice), as plainElements has those of a
// list with no field with a resolver. internal/leanexec has the lists
// of Post and PostEdge call them (atHandLists).

// postEdgesAtHand reports whether a page of post edges, written with the
// selection sel, waits for nothing: the edges select their cursor and
// their node, and each node has at hand what it selects (postsAtHand).
func postEdgesAtHand(oc *graphql.OperationContext, sel ast.SelectionSet, edges []*model.PostEdge) bool {
	for _, f := range collectFields(oc, sel, postEdgeImplementors) {
		switch {
		case f.Name == "node":
			if !postsAtHand(oc, f.Selections, len(edges), func(i int) *storage.Post { return edges[i].Node }) {
				return false
			}
		case len(f.Selections) > 0 || slices.Contains(resolverFields["PostEdge"], f.Name):
			return false
		}
	}
	return true
}

// postListAtHand is postsAtHand for a list of posts.
func postListAtHand(oc *graphql.OperationContext, sel ast.SelectionSet, posts []*storage.Post) bool {
	return postsAtHand(oc, sel, len(posts), func(i int) *storage.Post { return posts[i] })
}

// postsAtHand reports whether the n posts, post(i) each, written with
// the selection sel, have at hand all it selects: fields without
// resolvers or selections of their own, and an author and categories
// that each post answers alone (postAuthorAtHand,
// postCategoriesAtHand).
func postsAtHand(oc *graphql.OperationContext, sel ast.SelectionSet, n int, post func(int) *storage.Post) bool {
	for _, f := range collectFields(oc, sel, postImplementors) {
		var atHand func(*graphql.OperationContext, graphql.CollectedField, *storage.Post) bool
		switch {
		case f.Name == "author":
			atHand = postAuthorAtHand
		case f.Name == "categories":
			atHand = postCategoriesAtHand
		case len(f.Selections) > 0 || slices.Contains(resolverFields["Post"], f.Name):
			return false
		default:
			continue
		}
		for i := range n {
			if p := post(i); p == nil || !atHand(oc, f, p) {
				return false
			}
		}
	}
	return true
}
