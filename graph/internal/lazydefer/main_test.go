package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	obj := "\tfields := graphql.CollectFields(ec.OperationContext, sel, implementors)\n\tout := graphql.NewFieldSet(fields)\n\t%s\n"
	eagerSrc := strings.Repeat(strings.Replace(obj, "%s", string(eager), 1), 2)
	lazySrc := strings.Repeat(strings.Replace(obj, "%s", string(lazy), 1), 2)

	generated := write("generated.go", eagerSrc)
	if err := rewrite(generated); err != nil {
		t.Fatal(err)
	}
	if got := read(generated); got != lazySrc {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, lazySrc)
	}
	// Again, as a second go generate without gqlgen would.
	if err := rewrite(generated); err != nil || read(generated) != lazySrc {
		t.Errorf("rewriting again: %v\n%s", err, read(generated))
	}
	if err := rewrite(write("other.go", "package graph\n")); err == nil || !strings.Contains(err.Error(), "template changed") {
		t.Errorf("a file without the line: %v, want the template named", err)
	}
}
