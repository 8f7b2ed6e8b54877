package search

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// relevanceCase is a line of testdata/relevance.tsv: a query, the title
// of the post that must come first, and what it exercises.
type relevanceCase struct {
	line                int
	query, title, about string
}

// readRelevance returns the cases of the relevance set in testdata/name.
func readRelevance(t *testing.T, name string) []relevanceCase {
	t.Helper()
	var cases []relevanceCase
	for _, l := range readTSV(t, name, 3, "query, title and what it exercises") {
		cases = append(cases, relevanceCase{l.n, l.cols[0], l.cols[1], l.cols[2]})
	}
	return cases
}

// tsvLine is line n of a testdata file, split at tabs.
type tsvLine struct {
	n    int
	cols []string
}

// readTSV returns the lines of testdata/name, split at tabs into n
// columns (what names them), leaving out blank lines and comments (#).
func readTSV(t *testing.T, name string, n int, what string) []tsvLine {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tsvLine
	sc := bufio.NewScanner(f)
	for i := 1; sc.Scan(); i++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != n {
			t.Fatalf("testdata/%s:%d: %d columns, want %s", name, i, len(cols), what)
		}
		out = append(out, tsvLine{i, cols})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// demoService returns a Service whose index (in dir, "" in memory) holds the demo blog's
// published posts, built from a table the demo was seeded into.
func demoService(t *testing.T, dir string) *Service {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := dynamotest.NewClock(now)
	client, err := storage.NewClient(ctx, dynamotest.EmbeddedConfig(t, clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	store := storage.New(client, dynamotest.Table(t, client, "relevance"), storage.WithClock(clock.Now))
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := demo.Seed(ctx, store, now); err != nil {
		t.Fatal(err)
	}
	s, err := New(store, Options{Table: "relevance", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.rebuild(ctx, "the relevance set"); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRelevance runs every query of testdata/relevance.tsv on the demo
// blog and lists those whose first result is not the expected post.
func TestRelevance(t *testing.T) {
	checkRelevance(t, demoService(t, ""), "relevance.tsv")
}

// TestRelevanceInOtherLanguages runs every query of
// testdata/relevance-languages.tsv on the posts of
// testdata/languages.tsv, each indexed in its locale's language, and
// lists those whose first result is not the expected post.
func TestRelevanceInOtherLanguages(t *testing.T) {
	var posts []*storage.Post
	for _, l := range readTSV(t, "languages.tsv", 3, "locale, title and body") {
		posts = append(posts, localePost(fmt.Sprint("p", l.n), l.cols[0], l.cols[1], l.cols[2]))
	}
	checkRelevance(t, testService(t, posts...), "relevance-languages.tsv")
}

// checkRelevance runs every query of the relevance set in testdata/name
// on s and lists those whose first result is not the expected post.
func checkRelevance(t *testing.T, s *Service, name string) {
	t.Helper()
	cases := readRelevance(t, name)
	var misses []string
	for _, c := range cases {
		res, err := s.Search(context.Background(), Request{Query: c.query, First: 3})
		got := "nothing"
		switch {
		case err != nil:
			got = "error: " + err.Error()
		case len(res.Hits) > 0:
			var titles []string
			for _, h := range res.Hits {
				titles = append(titles, plainTitle(h))
			}
			got = strings.Join(titles, " | ")
		}
		if err != nil || len(res.Hits) == 0 || plainTitle(res.Hits[0]) != c.title {
			misses = append(misses, fmt.Sprintf("  %s:%d %q (%s): want %q first, got %s", name, c.line, c.query, c.about, c.title, got))
		}
	}
	if len(misses) > 0 {
		t.Errorf("%d of %d queries miss their first result:\n%s", len(misses), len(cases), strings.Join(misses, "\n"))
	}
}

// plainTitle returns h's title as text: without the <mark> around what
// matched, unescaped.
func plainTitle(h Hit) string {
	return html.UnescapeString(strings.NewReplacer("<mark>", "", "</mark>", "").Replace(h.Title))
}
