package graph

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

var (
	tsDocument = regexp.MustCompile("graphql\\(`([^`]*)`\\)")
	tsOpName   = regexp.MustCompile(`^\s*(?:query|mutation|subscription)\s+(\w+)`)
)

// tsDocuments returns the documents of the TypeScript client's operations
// (clients/typescript/src/operations.ts) by operation name, each with every
// fragment of the file, as one document.
func tsDocuments(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile("../clients/typescript/src/operations.ts")
	if err != nil {
		t.Fatal(err)
	}
	var fragments []string
	ops := map[string]string{}
	for _, m := range tsDocument.FindAllStringSubmatch(string(src), -1) {
		if o := tsOpName.FindStringSubmatch(m[1]); o != nil {
			ops[o[1]] = m[1]
		} else {
			fragments = append(fragments, m[1])
		}
	}
	for name, op := range ops {
		used := []string{op}
		for _, f := range fragments {
			name := strings.Fields(f)[1]
			if strings.Contains(strings.Join(used, "\n"), "..."+name) || slices.ContainsFunc(fragments, func(g string) bool {
				return strings.Contains(op, "..."+strings.Fields(g)[1]) && strings.Contains(g, "..."+name)
			}) {
				used = append(used, f)
			}
		}
		ops[name] = strings.Join(used, "\n")
	}
	return ops
}

// complexityOf returns the complexity of the operation doc, with vars, as
// the server's limit counts it.
func complexityOf(t *testing.T, doc string, vars map[string]any) int {
	t.Helper()
	cfg := Config{Resolvers: &Resolver{}}
	withComplexity(&cfg.Complexity)
	es := NewExecutableSchema(cfg)
	q, errs := gqlparser.LoadQueryWithRules(es.Schema(), doc, nil)
	if errs != nil {
		t.Fatalf("%v\n%s", errs, doc)
	}
	var op *ast.OperationDefinition = q.Operations[0]
	return gqlhttp.Complexity(context.Background(), es, op, vars)
}

// TestTypeScriptPagesFitTheComplexityLimit computes the complexity of each
// operation the TypeScript client ships, with the largest page sizes the
// API takes (the client asks 20 posts a page), and of its post page with
// a full page of replies (50 comments with 10 replies each, their
// writers, previous and next), and checks that each fits under
// DefaultComplexityLimit with room to spare: 40 % of it at least.
func TestTypeScriptPagesFitTheComplexityLimit(t *testing.T) {
	const fits = DefaultComplexityLimit * 6 / 10
	ops := tsDocuments(t)
	lists := map[string]any{"first": storage.MaxPageSize}
	cases := map[string]map[string]any{
		"CategoryPage": lists,
		"AuthorPage":   lists,
		"TagPage":      lists,
		"SeriesPage":   lists,
		"MonthArchive": lists,
		"HomePage":     {"featured": storage.MaxPageSize, "first": storage.MaxPageSize},
		"SearchPage":   {"query": "dynamodb single table design", "first": search.MaxFirst},
		"PostPage":     {},
		"PreviewPage":  {},
		"StaticPage":   {},
		"PostSeries":   {},
		"LiveCursor":   {},
		// Numbered pages at their largest size.
		"NumberedCategoryPage": {"size": storage.MaxPageSize},
		"NumberedAuthorPage":   {"size": storage.MaxPageSize},
		"NumberedSeriesPage":   {"size": storage.MaxPageSize},
		"NumberedMonthPage":    {"size": storage.MaxPageSize},
	}
	for name, doc := range ops {
		if _, ok := cases[name]; !ok {
			cases[name] = map[string]any{} // a mutation or a subscription: no page
			if kind := strings.Fields(doc)[0]; kind == "query" {
				t.Errorf("the client's query %s has no case here", name)
			}
		}
	}
	ops["PostPage with 10 replies a comment"] = strings.Replace(ops["PostPage"], threeReplies, "replyConnection(first: 10)", 1)
	cases["PostPage with 10 replies a comment"] = map[string]any{}
	for name, vars := range cases {
		doc, ok := ops[name]
		if !ok {
			t.Errorf("no operation %s in the client", name)
			continue
		}
		c := complexityOf(t, doc, vars)
		t.Logf("%s: %d", name, c)
		if c > fits {
			t.Errorf("%s: complexity %d, over %d (the limit is %d)", name, c, fits, DefaultComplexityLimit)
		}
	}
}

// threeReplies is what the client's post page asks of each comment's
// replies.
const threeReplies = "replyConnection(first: 3)"

// TestPostPagesAndSeriesBadgesFitTheComplexityLimit: a post page with 100
// comments and their first replies (a full page each, as a comment holds
// them), the post's series and its neighbours there, and related posts,
// and listings that show each post's series, fit with 30 % of the limit to
// spare.
func TestPostPagesAndSeriesBadgesFitTheComplexityLimit(t *testing.T) {
	const fits = DefaultComplexityLimit * 7 / 10
	ops := tsDocuments(t)
	if !strings.Contains(ops["PostPage"], threeReplies) || !strings.Contains(ops["PostPage"], "comments(first: 50)") {
		t.Fatalf("the post page does not ask %s of 50 comments", threeReplies)
	}
	const badge = "readingTimeMinutes\n"
	withBadges := func(doc string) string {
		return strings.Replace(doc, badge, badge+" series { position series { slug title } }\n", 1)
	}
	for _, c := range []struct {
		name, doc string
		vars      map[string]any
	}{
		{"a post page with 100 comments, 10 replies each, its series and related posts",
			strings.NewReplacer(threeReplies, "replyConnection(first: 10)", "comments(first: 50)", "comments(first: 100)",
				"version\n", "version\n series { position series { slug title } previous { slug title } next { slug title } }\n related(first: 3) { ...PostSummary }\n",
			).Replace(ops["PostPage"]), nil},
		{"a post page with 100 comments and their first replies listed",
			`{ post(slug: "x") { title bodyHtml comments(first: 100) { edges { node {
				id body createdAt editedAt status commenter { name avatarUrl isAuthor }
				replies { id body createdAt editedAt status commenter { name avatarUrl isAuthor } } } } } } }`, nil},
		{"20 cards with series badges", withBadges(ops["CategoryPage"]), map[string]any{"first": 20}},
		{"100 cards with series badges", withBadges(ops["CategoryPage"]), map[string]any{"first": storage.MaxPageSize}},
	} {
		n := complexityOf(t, c.doc, c.vars)
		t.Logf("%s: %d", c.name, n)
		if n > fits {
			t.Errorf("%s: complexity %d, over %d (the limit is %d)", c.name, n, fits, DefaultComplexityLimit)
		}
	}
}

// TestExpensiveDocumentsStayOverTheComplexityLimit: what the complexity
// limit refuses follows the requests and the items an operation reads.
func TestExpensiveDocumentsStayOverTheComplexityLimit(t *testing.T) {
	for _, c := range []struct{ name, doc string }{
		{"a page of posts with 32 comments each (a Query each)",
			`{ posts(first: 100) { edges { node { comments(first: 32) { edges { node { id } } } } } } }`},
		{"a page of posts with the count of their comments (a Query each)",
			`{ posts(first: 100) { edges { node { id comments(first: 1) { totalCount } } } } }`},
		{"a page of posts with the ids of 100 comments each",
			`{ posts(first: 100) { edges { node { comments(first: 100) { edges { node { id } } } } } } }`},
		{"a list that asks each post for its neighbours",
			`{ posts(first: 20) { edges { node { previous { id } } } } }`},
		{"two pages of bodies",
			`{ a: posts(first: 100) { edges { node { body } } } b: posts(first: 100, after: "x") { edges { node { body bodyHtml } } } }`},
		{"a page of tags with their posts (a Query each)",
			`{ tags(first: 100) { edges { node { posts(first: 1) { edges { node { id } } } } } } }`},
		{"a page of posts with their neighbours in their series (a BatchGetItem each)",
			`{ posts(first: 100) { edges { node { series { previous { slug } } } } } }`},
		{"the next pages of replies of 100 comments (a Query each)",
			`{ post(slug: "x") { comments(first: 100) { edges { node { replyConnection(first: 1, after: "x") { edges { node { id } } } } } } } }`},
	} {
		if n := complexityOf(t, c.doc, nil); n <= DefaultComplexityLimit {
			t.Errorf("%s: complexity %d, within the limit %d", c.name, n, DefaultComplexityLimit)
		} else {
			t.Logf("%s: %d", c.name, n)
		}
	}
}

// BenchmarkComplexity measures counting the complexity of the client's
// post page, which every operation pays, and naming the dearest fields of
// a refused document, which only a refusal pays.
func BenchmarkComplexity(b *testing.B) {
	cfg := Config{Resolvers: &Resolver{}}
	withComplexity(&cfg.Complexity)
	es := NewExecutableSchema(cfg)
	src, err := os.ReadFile("../clients/typescript/src/operations.ts")
	if err != nil {
		b.Fatal(err)
	}
	var page string
	for _, m := range tsDocument.FindAllStringSubmatch(string(src), -1) {
		if strings.Contains(m[1], "query PostPage") || strings.Contains(m[1], "fragment PostSummary") {
			page += m[1] + "\n"
		}
	}
	for _, c := range []struct {
		name, doc string
		dearest   bool
	}{
		{"post page", page, false},
		{"refused, dearest fields", `{ posts(first: 100) { edges { node { title previous { id } comments(first: 100) { edges { node { id body } } } } } } }`, true},
	} {
		q, errs := gqlparser.LoadQueryWithRules(es.Schema(), c.doc, nil)
		if errs != nil {
			b.Fatal(errs)
		}
		op := q.Operations[0]
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				gqlhttp.Complexity(context.Background(), es, op, nil)
				if c.dearest {
					gqlhttp.DearestFields(context.Background(), es, op, nil, 3)
				}
			}
		})
	}
}
