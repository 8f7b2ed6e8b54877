package gqlhttp

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// FuzzCheckDocument parses, validates and measures documents as the
// handler does before it executes anything, starting from the shapes that
// took exponential time (fragment chains under a field, under __schema,
// fragments spreading the next twice) and ordinary queries. The checks
// must never panic, and the rule that looks through fragments must stop
// at its work limit whatever the document.
func FuzzCheckDocument(f *testing.F) {
	f.Add(probeDocument(21))
	f.Add(introspectionProbe(12))
	f.Add(bomb(16))
	f.Add(sharedFragment(8))
	f.Add("{ posts(first: 2) { edges { node { title author { name } } } } }")
	f.Add("{ posts { edges { node { ... on Post { title } t: title } } } }")
	f.Add("{ posts { edges { node { title: slug title } } } }")
	f.Add("query($n: Int = 2147483648) { posts(first: $n) { totalCount } }")
	f.Add("{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }")
	schema := newTestSchema().Schema()
	f.Fuzz(func(t *testing.T, query string) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
		if err != nil {
			return
		}
		for _, introspection := range []bool{true, false} {
			work := 0
			r := validationRules(introspection)()
			r.ReplaceRule(fieldsMergeRule.Name, newFieldsMergeRule(maxValidationWork, func(w int) { work = max(work, w) }).RuleFunc)
			errs := validator.ValidateWithRules(schema, doc, r)
			if work > maxValidationWork+len(query) {
				t.Fatalf("validation worked %d, past its limit of %d:\n%s", work, maxValidationWork, query)
			}
			if len(errs) > 0 || len(doc.Operations) == 0 {
				continue
			}
			opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
			operationLimits{complexityLimit: testComplexityLimit}.MutateOperationContext(context.Background(), opCtx)
		}
	})
}
