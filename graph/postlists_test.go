package graph

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// A page of post edges runs in turn when its posts answer, alone, all
// that its selection asks: not when it asks for a field that reads, or
// for the categories of a draft.
func TestPostEdgesAtHand(t *testing.T) {
	published := &storage.Post{ID: "p1", Status: storage.StatusPublished, AuthorSlug: "ada"}
	draft := &storage.Post{ID: "p2", Status: storage.StatusDraft, AuthorSlug: "ada"}
	for _, c := range []struct {
		node  string
		posts []*storage.Post
		want  bool
	}{
		{"id title author { name } categories { slug name }", []*storage.Post{published, published}, true},
		{"id ... on Post { author { id name slug } }", []*storage.Post{published}, true},
		{"id categories { slug }", []*storage.Post{published, draft}, false},
		{"id author { name bio }", []*storage.Post{published}, false},
		{"id body", []*storage.Post{published}, false},
		{"id comments(first: 1) { totalCount }", []*storage.Post{published}, false},
	} {
		doc, errs := gqlparser.LoadQueryWithRules(parsedSchema, `{ posts(first: 2) { edges { cursor node { `+c.node+` } } } }`, nil)
		if errs != nil {
			t.Fatal(errs)
		}
		oc := &graphql.OperationContext{Doc: doc, Variables: map[string]any{}}
		edgesField := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field)
		var edges []*model.PostEdge
		for _, p := range c.posts {
			edges = append(edges, &model.PostEdge{Cursor: "c", Node: p})
		}
		if got := postEdgesAtHand(oc, edgesField.SelectionSet, edges); got != c.want {
			t.Errorf("node { %s } of %d posts: at hand %v, want %v", c.node, len(c.posts), got, c.want)
		}
	}
}
