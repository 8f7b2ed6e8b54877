package gqlhttp

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// testSDL is a schema of the shapes the tests need: connections that nest
// (posts of authors of posts), an interface, arguments and a mutation.
const testSDL = `
type Query {
  hello: String!
  posts(first: Int): PostConnection!
  authors(first: Int): AuthorConnection!
  node(id: ID!): Node
}
type Mutation { touch: Boolean! }
interface Node { id: ID! }
type Post implements Node { id: ID! title: String! slug: String! author: Author! }
type Author implements Node { id: ID! name: String! posts(first: Int): PostConnection! }
type PostConnection { edges: [PostEdge!]! totalCount: Int! }
type PostEdge { node: Post! }
type AuthorConnection { edges: [AuthorEdge!]! }
type AuthorEdge { node: Author! }
`

// testComplexityLimit is the complexity limit of the tests.
const testComplexityLimit = 10000

// testSchema is a graphql.ExecutableSchema without resolvers: every
// operation that runs answers {"hello":"world"}. It is what New needs to
// serve GraphQL over HTTP, with no store behind it.
type testSchema struct{ schema *ast.Schema }

func newTestSchema() testSchema {
	return testSchema{gqlparser.MustLoadSchema(&ast.Source{Name: "test.graphqls", Input: testSDL})}
}

func (s testSchema) Schema() *ast.Schema { return s.schema }

func (testSchema) Complexity(context.Context, string, string, int, map[string]any) (int, bool) {
	return 0, false
}

func (testSchema) Exec(context.Context) graphql.ResponseHandler {
	return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"hello":"world"}`)})
}
