package gqlhttp

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// TestOperationLimitsSeeThroughFragments checks how the limits count
// what fragments hide: depth through spreads and inline fragments, each
// fragment's aliases once, a root field spread twice once, and no depth
// for introspection, which has its own rule.
func TestOperationLimitsSeeThroughFragments(t *testing.T) {
	schema := newTestSchema().Schema()
	deep := "posts { edges { node { author { posts { edges { node { author { posts { edges { node { title } } } } } } } } } } }" // 12
	tests := []struct {
		name  string
		query string
		code  string // "" when the operation is within the limits
	}{
		{"12 deep", "{ " + deep + " }", ""},
		{"13 deep through a fragment", "{ posts { ...Deep } } fragment Deep on PostConnection { edges { node { author { posts { edges { node { author { posts { edges { node { author { name } } } } } } } } } } } }", CodeDepthLimit},
		{"13 deep through an inline fragment", `{ node(id: "x") { ... on Post { author { posts { edges { node { author { posts { edges { node { author { posts { edges { node { title } } } } } } } } } } } } } } }`, CodeDepthLimit},
		{"introspection is not counted", "{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } }", ""},
		{"a fragment's aliases count once however often it is spread", "{ posts { ...A } authors { edges { node { posts { ...A } } } } } fragment A on PostConnection { edges { node { " + aliases(30) + "} } }", ""},
		{"aliases in fragments count", "{ posts { ...A edges { node { b: title } } } } fragment A on PostConnection { edges { node { " + aliases(30) + "} } }", CodeAliasLimit},
		{"a root field spread twice is one", "{ ...R ...R } fragment R on Query { " + aliases(20) + "}", ""},
		{"root fields in fragments count", "{ a20: __typename ...R } fragment R on Query { " + aliases(20) + "}", CodeRootFieldLimit},
		{"fragments that expand past the limit", bomb(14), CodeComplexityLimit},
		{"fragments that expand within it", bomb(13), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if errs := validator.ValidateWithRules(schema, doc, nil); len(errs) > 0 {
				t.Fatalf("invalid test query: %v", errs)
			}
			opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
			got := operationLimits{complexityLimit: testComplexityLimit}.MutateOperationContext(context.Background(), opCtx)
			switch {
			case tt.code == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.code != "" && (got == nil || got.Extensions["code"] != tt.code):
				t.Errorf("got %v, want %s", got, tt.code)
			}
		})
	}
}

// aliases returns n aliased __typename fields.
func aliases(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("a" + strings.Repeat("x", i) + ": __typename ")
	}
	return b.String()
}

// bomb returns a query whose fragments expand to 2^n __typename fields.
func bomb(n int) string {
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range n {
		b.WriteString("fragment F" + strconv.Itoa(i) + " on Query { ...F" + strconv.Itoa(i+1) + " ...F" + strconv.Itoa(i+1) + " }\n")
	}
	b.WriteString("fragment F" + strconv.Itoa(n) + " on Query { __typename }\n")
	return b.String()
}
