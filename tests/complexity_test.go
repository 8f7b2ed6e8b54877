package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
)

// The complexity of operations, as a frontend sees it: every answer says
// what its operation cost and what the limit is, a refusal names the
// fields that cost the most, and the pages a blog shows fit.

// complexityReport is extensions.complexity.
type complexityReport struct {
	Cost, Limit int
	Fields      []fieldCost
}

// fieldCost is a field of a refusal's extensions.complexity.
type fieldCost struct {
	Path string
	Cost int
}

// complexityAnswer is what a test reads of an answer: its errors with
// their extensions.complexity, and its own.
type complexityAnswer struct {
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions struct {
			Code       string
			Complexity *complexityReport
		}
	}
	Extensions struct {
		Complexity *complexityReport
		Cost       *graph.Cost
	}
}

func decodeComplexity(t *testing.T, a httpAnswer) complexityAnswer {
	t.Helper()
	var out complexityAnswer
	if err := json.Unmarshal([]byte(a.body), &out); err != nil {
		t.Fatalf("status %d, body %.300q: %v", a.status, a.body, err)
	}
	return out
}

// TestAnswersShowTheirComplexity: every answer to a query or a mutation
// carries extensions.complexity, the operation's cost and the limit, the
// same whether the operation ran or the answer cache answered it, over
// GET or POST; an answer kept for one page size is never sent for
// another; an admin's answer that asks for its DynamoDB cost shows both.
func TestAnswersShowTheirComplexity(t *testing.T) {
	s := newServer(t, withAnswers(0))
	ids := s.seedAnswers(t)
	const feed = `query Feed($first: Int) { posts(first: $first) { totalCount } }`
	// A list costs its request (400), its own fields once (6) and at
	// least 3 for each item of its page.
	for _, c := range []struct {
		first, cost int
	}{{10, 436}, {20, 466}} {
		vars := fmt.Sprintf(`{"first":%d}`, c.first)
		ran := s.post(t, feed, vars, nil)
		equal(t, "X-Cache", ran.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
		kept := s.post(t, feed, vars, nil)
		s.hit(t, kept)
		got := s.fetch(t, http.MethodGet, s.url+"?query="+url.QueryEscape(feed)+"&variables="+url.QueryEscape(vars), "", nil)
		s.hit(t, got)
		for name, a := range map[string]httpAnswer{"ran": ran, "from the answer cache": kept, "over GET": got} {
			r := decodeComplexity(t, a).Extensions.Complexity
			if r == nil || r.Cost != c.cost || r.Limit != graph.DefaultComplexityLimit || len(r.Fields) > 0 {
				t.Errorf("first %d, %s: extensions.complexity %+v, want cost %d of %d; body %s", c.first, name, r, c.cost, graph.DefaultComplexityLimit, a.body)
			}
		}
		equal(t, "the kept answer", kept.body, ran.body)
	}

	admin := map[string]string{"Authorization": "Bearer " + s.signed(s.claims("admin", auth.RoleAdmin)), graph.CostHeader: "1"}
	write := decodeComplexity(t, s.post(t, `mutation($id: ID!) { setPostFeatured(input: {id: $id, featured: true}) { post { id featured } } }`,
		`{"id":`+jsonString(ids[0])+`}`, admin))
	if r := write.Extensions.Complexity; r == nil || r.Cost < 1 || r.Limit != graph.DefaultComplexityLimit {
		t.Errorf("a mutation's extensions.complexity %+v", r)
	}
	if write.Extensions.Cost == nil || write.Extensions.Cost.DynamoDBRequests == 0 {
		t.Errorf("a mutation asked with the cost header: extensions.cost %+v", write.Extensions.Cost)
	}
}

// TestRefusalsNameTheDearestFields: an operation over the complexity limit
// is refused before any read, and its error names the three fields that
// cost the most, with what each adds, in its message and in
// extensions.complexity.
func TestRefusalsNameTheDearestFields(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	a := s.fetch(t, http.MethodPost, s.url, request(`{ posts(first: 20) { totalCount edges { node { title
		previous { slug } next { slug } comments(first: 5) { edges { node { id } } } } } } }`, nil), nil)
	equal(t, "DynamoDB requests", total(s.requests()), 0)
	resp := decodeComplexity(t, a)
	if len(resp.Errors) != 1 || resp.Errors[0].Extensions.Code != gqlhttp.CodeComplexityLimit {
		t.Fatalf("errors %+v", resp.Errors)
	}
	e := resp.Errors[0]
	r := e.Extensions.Complexity
	// previous and next cost 2000 each (they query on their own), for
	// each of 20 posts; comments 406 for each post, and their ids 1 each.
	want := []fieldCost{
		{Path: "posts.edges.node.next", Cost: 20 * 2000},
		{Path: "posts.edges.node.previous", Cost: 20 * 2000},
		{Path: "posts.edges.node.comments", Cost: 20 * (400 + 6 + 5*2)},
	}
	if r == nil || r.Cost <= r.Limit || r.Limit != graph.DefaultComplexityLimit || len(r.Fields) != len(want) {
		t.Fatalf("extensions.complexity %+v", r)
	}
	if top := resp.Extensions.Complexity; top == nil || top.Cost != r.Cost || top.Limit != r.Limit {
		t.Errorf("the refusal's extensions.complexity %+v, want %+v without its fields", top, r)
	}
	for i, f := range want {
		equal(t, "field", r.Fields[i], f)
		if !strings.Contains(e.Message, f.Path) {
			t.Errorf("message %q does not name %s", e.Message, f.Path)
		}
	}
}

// TestPostPagesAndSeriesBadgesFit: a post page with 100 comments and
// their first replies, its series and related posts, and a listing of 20
// cards with their series' badges are within the complexity limit, and
// the listing reads each post's series in one request for the page.
func TestPostPagesAndSeriesBadgesFit(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, b.writers[0], CreateSeriesInput{Slug: "tour", Title: "Tour"}))
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, b.writers[1], CreateSeriesInput{Slug: "deep-dive", Title: "Deep dive"}))
	for i := 10; i < 25; i++ {
		slug := []string{"tour", "deep-dive"}[i%2]
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: slug, PostId: b.published[i]}))
	}
	commenter := "commenter { name avatarUrl isAuthor }"
	reply := "id body createdAt editedAt status " + commenter
	for _, c := range []struct{ name, doc string }{
		{"100 comments with 10 replies each, the series and related posts", `{ post(slug: "post-24") {
			title bodyHtml toc { level text anchor } previous { slug title } next { slug title }
			series { position series { slug title } previous { slug title } next { slug title } }
			related(first: 3) { slug title excerpt }
			comments(first: 100) { totalCount edges { node { ` + reply + `
				replyConnection(first: 10) { totalCount pageInfo { hasNextPage endCursor } edges { node { ` + reply + ` } } } } } } } }`},
		{"100 comments with their first replies listed", `{ post(slug: "post-24") { comments(first: 100) { edges { node { ` + reply + `
			replies { ` + reply + ` } } } } } }`},
	} {
		resp := decodeComplexity(t, s.fetch(t, http.MethodPost, s.url, request(c.doc, nil), nil))
		if len(resp.Errors) > 0 {
			t.Errorf("%s: errors %+v", c.name, resp.Errors)
		}
		if r := resp.Extensions.Complexity; r == nil || r.Cost > r.Limit*7/10 {
			t.Errorf("%s: extensions.complexity %+v, want 30 %% of the limit to spare", c.name, r)
		}
	}

	list := `{ posts(first: 20) { totalCount edges { node { slug title excerpt publishedAt author { name }
		categories { name } series { position series { slug title } } } } } }`
	a := s.fetch(t, http.MethodPost, s.url, request(list, nil), nil)
	resp := decodeComplexity(t, a)
	if len(resp.Errors) > 0 {
		t.Fatalf("20 cards with series badges: errors %+v", resp.Errors)
	}
	if r := resp.Extensions.Complexity; r == nil || r.Cost > r.Limit/10 {
		t.Errorf("20 cards with series badges: extensions.complexity %+v, want a tenth of the limit at most", r)
	}
	badges := strings.Count(string(resp.Data), `"position"`)
	equal(t, "posts with a series badge", badges, 15)
	// The page (one Query) and its count (one GetItem), the posts
	// themselves (one BatchGetItem: a summary names no series), their
	// series (one BatchGetItem), never a request for each post.
	got := s.requests()
	if total(got) > 4 {
		t.Errorf("20 cards with series badges: %d DynamoDB requests %v, want one for each kind of item", total(got), got)
	}
}
