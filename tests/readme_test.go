package tests

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/demo"
)

// docFiles returns README.md and every Markdown file of docs/, as paths
// relative to this package's directory.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no Markdown file in docs/")
	}
	return append([]string{"../README.md"}, docs...)
}

// TestReadmeExamples checks the GraphQL examples of README.md and docs/:
// each one validates against the schema, and those that need no variable
// or placeholder answer without errors on the demo blog.
func TestReadmeExamples(t *testing.T) {
	sdl, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(sdl)})
	type example struct{ file, doc string }
	var examples []example
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range regexp.MustCompile("(?s)```graphql\n(.*?)```").FindAllStringSubmatch(string(text), -1) {
			examples = append(examples, example{strings.TrimPrefix(f, "../"), b[1]})
		}
	}
	if len(examples) < 5 {
		t.Fatalf("found %d examples", len(examples))
	}
	s := newServer(t)
	if err := demo.Seed(context.Background(), s.store, s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	for i, e := range examples {
		doc := e.doc
		if _, errs := gqlparser.LoadQueryWithRules(schema, doc, nil); errs != nil {
			t.Errorf("example %d of %s does not validate: %v\n%s", i, e.file, errs, doc)
			continue
		}
		if strings.Contains(doc, "$") || strings.Contains(doc, "<") || strings.HasPrefix(strings.TrimSpace(doc), "mutation") {
			continue
		}
		a := s.sendTS(t, doc, nil, "")
		if a.data == nil {
			t.Errorf("example %d of %s answered no data", i, e.file)
		}
	}
}
