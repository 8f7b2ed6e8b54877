package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

// settingsDoc is the page whose table of settings readmeTable makes.
const settingsDoc = "docs/operations.md"

var updateDocs = flag.Bool("update-docs", false, "write the table of settings into docs/operations.md (go generate)")

// The table of settings in docs/operations.md sits between these lines.
const (
	settingsBegin = "<!-- settings: made from config.go by go generate; edit them there -->\n"
	settingsEnd   = "<!-- end of settings -->\n"
)

// TestDocsConfiguration checks that the table of settings in docs/operations.md is
// the one the declarations make; with -update-readme it writes it.
func TestDocsConfiguration(t *testing.T) {
	readme, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := bytes.Cut(readme, []byte(settingsBegin))
	table, after, ok2 := bytes.Cut(rest, []byte(settingsEnd))
	if !ok || !ok2 {
		t.Fatalf("docs/operations.md lacks the lines %q and %q around the table of settings", settingsBegin, settingsEnd)
	}
	want := readmeTable()
	if string(table) == want {
		return
	}
	if *updateDocs {
		out := string(before) + settingsBegin + want + settingsEnd + string(after)
		if err := os.WriteFile(settingsDoc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, wanted := strings.Split(string(table), "\n"), strings.Split(want, "\n")
	for i := range max(len(got), len(wanted)) {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(wanted) {
			w = wanted[i]
		}
		if g != w {
			t.Errorf("docs/operations.md's table of settings differs from config.go's (run go generate), line %d:\n got: %s\nwant: %s", i+1, g, w)
			break
		}
	}
}

// TestSettings checks the declarations themselves: one flag and one
// variable each, both new, every one documented and read from the
// environment.
func TestSettings(t *testing.T) {
	names, vars := map[string]bool{}, map[string]bool{}
	for _, s := range settings(&config{}) {
		if names[s.name] || vars[s.env] {
			t.Errorf("-%s or %s declared twice", s.name, s.env)
		}
		names[s.name], vars[s.env] = true, true
		if s.env != strings.ToUpper(s.env) || s.usage == "" || s.doc == "" || strings.Contains(s.doc, "|") || strings.Contains(s.doc, "\n") {
			t.Errorf("-%s: variable %q, usage %q, doc %q: want an upper-case variable and a one-line doc without |", s.name, s.env, s.usage, s.doc)
		}
	}
	asked := map[string]bool{}
	if _, err := parseConfig(nil, func(k string) string { asked[k] = true; return "" }, io.Discard); err != nil {
		t.Fatal(err)
	}
	for v := range vars {
		if !asked[v] {
			t.Errorf("%s is not read", v)
		}
	}
}
