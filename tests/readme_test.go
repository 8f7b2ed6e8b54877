package tests

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/demo"
)

// TestReadmeExamples checks the GraphQL examples of README.md: each one
// validates against the schema, and those that need no variable or
// placeholder answer without errors on the demo blog.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sdl, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(sdl)})
	blocks := regexp.MustCompile("(?s)```graphql\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d examples", len(blocks))
	}
	s := newServer(t)
	if err := demo.Seed(context.Background(), s.store, s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		doc := b[1]
		if _, errs := gqlparser.LoadQueryWithRules(schema, doc, nil); errs != nil {
			t.Errorf("example %d does not validate: %v\n%s", i, errs, doc)
			continue
		}
		if strings.Contains(doc, "$") || strings.Contains(doc, "<") || strings.HasPrefix(strings.TrimSpace(doc), "mutation") {
			continue
		}
		a := s.sendTS(t, doc, nil, "")
		if a.data == nil {
			t.Errorf("example %d answered no data", i)
		}
	}
}
