package tests

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

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
	return append([]string{"../README.md", "../clients/typescript/README.md"}, docs...)
}

// TestDocsRepeatNoPassage checks that no paragraph of README.md and
// docs/ (tables and code left out) says the same ten words twice, as a
// sentence does when an edit pastes a new version of it into the old.
func TestDocsRepeatNoPassage(t *testing.T) {
	const n = 10
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var prose []string
		for line := range strings.SplitSeq(fencedBlock.ReplaceAllString(string(text), ""), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "|") {
				prose = append(prose, line)
			}
		}
		for para := range strings.SplitSeq(strings.Join(prose, "\n"), "\n\n") {
			words := strings.Fields(para)
			first := map[string]int{}
			for i := 0; i+n <= len(words); i++ {
				k := strings.Join(words[i:i+n], " ")
				if j, ok := first[k]; ok && i-j >= n {
					t.Errorf("%s repeats %q in one paragraph", strings.TrimPrefix(f, "../"), k)
					break
				}
				if _, ok := first[k]; !ok {
					first[k] = i
				}
			}
		}
	}
}

// TestReadmeExamples checks the GraphQL examples of README.md and docs/:
// each one validates against the schema, and those that need no variable
// or placeholder answer without errors on the demo blog. README's, which
// a first-time user pastes into the playground, show demo content: none of
// their fields answers null and none of their lists is empty.
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
		if e.file == "README.md" {
			if path := emptyIn(a.data, "data"); path != "" {
				t.Errorf("example %d of %s answered nothing at %s on the demo blog:\n%s", i, e.file, path, doc)
			}
		}
	}
}

// emptyIn returns the path of the first null or empty list in v, a
// decoded JSON answer at path, or "" when there is none.
func emptyIn(v any, path string) string {
	switch v := v.(type) {
	case nil:
		return path
	case []any:
		if len(v) == 0 {
			return path
		}
		for i, e := range v {
			if p := emptyIn(e, path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	case map[string]any:
		for k, e := range v {
			if p := emptyIn(e, path+"."+k); p != "" {
				return p
			}
		}
	}
	return ""
}

var (
	fencedBlock = regexp.MustCompile("(?ms)^```.*?^```")
	mdLink      = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	mdHeading   = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, spaces made hyphens, punctuation dropped, and a
// number added to a repeated one.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(fencedBlock.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a] = n + 1
			a = a + "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// withoutCodeSpans returns text without its code spans: a run of
// backticks up to the next run of as many, as CommonMark reads them (a
// run with no match is kept as it is).
func withoutCodeSpans(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		if text[i] != '`' {
			b.WriteByte(text[i])
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(text) && text[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			b.WriteString(text[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return b.String()
}

// TestDocsLinksResolve checks every relative link of README.md and docs/:
// the file or directory it names exists, and so does the heading its
// anchor names, in that file or in the same one.
func TestDocsLinksResolve(t *testing.T) {
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prose := withoutCodeSpans(fencedBlock.ReplaceAllString(string(text), ""))
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(link, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %s: %v", strings.TrimPrefix(f, "../"), link, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: link %s: an anchor in a file that is not Markdown", strings.TrimPrefix(f, "../"), link)
				continue
			}
			body, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s: link %s: %v", strings.TrimPrefix(f, "../"), link, err)
				continue
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %s: no heading with that anchor", strings.TrimPrefix(f, "../"), link)
			}
		}
	}
}
