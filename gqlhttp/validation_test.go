package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// specCases are graphql-js's tests of the two rules this server replaces,
// as gqlparser exports them (testdata/validation/spec.json).
type specCases struct {
	Schemas []string `json:"schemas"`
	Rules   map[string][]struct {
		Name   string            `json:"name"`
		Schema int               `json:"schema"`
		Query  string            `json:"query"`
		Errors []json.RawMessage `json:"errors"`
	} `json:"rules"`
}

// TestReplacedRulesFollowTheSpecification runs graphql-js's tests of
// "Overlapping fields can be merged" and of the introspection depth limit
// against this server's own rules: a document is refused exactly when
// graphql-js refuses it.
func TestReplacedRulesFollowTheSpecification(t *testing.T) {
	raw, err := os.ReadFile("testdata/validation/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec specCases
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	schemas := make([]*ast.Schema, len(spec.Schemas))
	for i, s := range spec.Schemas {
		if schemas[i], err = gqlparser.LoadSchema(&ast.Source{Name: fmt.Sprint("schema ", i), Input: s}); err != nil {
			t.Fatal(err)
		}
	}
	// gqlparser skips this one too: its query asks for a field the schema
	// does not have.
	skip := map[string]bool{"reports correctly when a non-exclusive follows an exclusive": true}
	for _, rule := range []core.Rule{fieldsMergeRule, introspectionDepthRule} {
		cases := spec.Rules[rule.Name]
		if len(cases) == 0 {
			t.Fatalf("no cases for %s", rule.Name)
		}
		for _, c := range cases {
			if skip[c.Name] {
				continue
			}
			t.Run(rule.Name+"/"+c.Name, func(t *testing.T) {
				doc, err := parser.ParseQuery(&ast.Source{Input: c.Query})
				if err != nil {
					t.Fatal(err)
				}
				errs := validator.ValidateWithRules(schemas[c.Schema], doc, rules.NewRules(rule))
				if (len(errs) > 0) != (len(c.Errors) > 0) {
					t.Errorf("errors %v, want %d errors:\n%s", errs, len(c.Errors), c.Query)
				}
			})
		}
	}
}

// probeDocument returns the document of a hostile probe: a page of posts
// whose node spreads a chain of n fragments, each spreading the next one
// twice beside a field with a selection of its own. It expands to 2^n
// fields; gqlparser's rule took time doubling with each link.
func probeDocument(n int) string {
	var b strings.Builder
	b.WriteString("{posts(first:100){edges{node{...F0}}}}\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment F%d on Post { ...F%d ...F%d author { ...A%d } }\n", i, i+1, i+1, i)
		fmt.Fprintf(&b, "fragment A%d on Author { name }\n", i)
	}
	fmt.Fprintf(&b, "fragment F%d on Post { title }\n", n)
	return b.String()
}

// introspectionProbe is the same chain below __schema, where the
// introspection depth rule walks it.
func introspectionProbe(n int) string {
	var b strings.Builder
	b.WriteString("{__schema{types{...T0}}}\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment T%d on __Type { ...T%d ...T%d ofType { name } }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment T%d on __Type { name }\n", n)
	return b.String()
}

// sharedFragment returns a document that spreads one fragment of 50
// fields under n aliased lists: gathered again for each, its fields would
// cost n times 50.
func sharedFragment(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, "a%d: posts { edges { node { ...Y } } }\n", i)
	}
	b.WriteString("}\nfragment Y on Post {")
	for i := range 50 {
		fmt.Fprintf(&b, " t%d: title", i)
	}
	b.WriteString(" }\n")
	return b.String()
}

// TestValidationWorkIsLinear counts the work of the checks that run
// before execution and look through fragments (the two replaced rules and
// the operation limits) on documents of growing length: each link of a
// fragment chain, and each list that spreads a shared fragment, adds the
// same work, whatever the length. gqlparser's rules did twice the work for
// each link.
func TestValidationWorkIsLinear(t *testing.T) {
	schema := newTestSchema().Schema()
	for _, shape := range []struct {
		name string
		doc  func(int) string
	}{{"posts", probeDocument}, {"introspection", introspectionProbe}, {"typename bomb", bomb}, {"shared fragment", sharedFragment}} {
		work := map[int]int{}
		for _, n := range []int{21, 30, 60, 120} {
			work[n] = checkWork(t, schema, shape.doc(n))
		}
		t.Logf("%s: work by length %v", shape.name, work)
		perLink := (work[60] - work[30]) / 30
		if perLink <= 0 || work[60]-work[30] != 30*perLink || work[120]-work[60] != 60*perLink || work[30]-work[21] != 9*perLink {
			t.Errorf("%s: work by length %v, want the same work for every link", shape.name, work)
		}
	}
}

// checkWork validates doc and applies the operation limits to it, and
// returns the work they counted.
func checkWork(t *testing.T, schema *ast.Schema, query string) int {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		t.Fatal(err)
	}
	var merge, depth, limits int
	r := validationRules(true)()
	r.ReplaceRule(fieldsMergeRule.Name, newFieldsMergeRule(maxValidationWork, func(w int) { merge = w }).RuleFunc)
	r.ReplaceRule(introspectionDepthRule.Name, newIntrospectionDepthRule(func(w int) { depth = w }).RuleFunc)
	if errs := validator.ValidateWithRules(schema, doc, r); len(errs) > 0 {
		t.Fatalf("invalid document: %v", errs)
	}
	opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
	l := operationLimits{complexityLimit: testComplexityLimit, report: func(w int) { limits = w }}
	l.MutateOperationContext(context.Background(), opCtx)
	return merge + depth + limits
}

// BenchmarkRefuseFragmentChains sends the probe's documents through the
// whole handler, as a client would: each is refused (the complexity limit,
// or the token limit for the longest chain) before anything executes. The
// time per document is the figure docs/frontend.md quotes; gqlparser's rule took
// 15 s for 21 links.
func BenchmarkRefuseFragmentChains(b *testing.B) {
	h := New(newTestSchema(), Options{ComplexityLimit: testComplexityLimit})
	for _, c := range []struct {
		name string
		doc  string
	}{
		{"posts-21", probeDocument(21)}, {"posts-30", probeDocument(30)}, {"posts-60", probeDocument(60)},
		{"introspection-30", introspectionProbe(30)},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				// A comment makes each document new, so the query cache
				// never answers in place of parsing and validating.
				n++
				body, err := json.Marshal(map[string]string{"query": c.doc + "# " + strconv.Itoa(n)})
				if err != nil {
					b.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if !bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
					b.Fatalf("not refused: %s", rec.Body)
				}
			}
		})
	}
}
