package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/blogql/blog/graph"
)

// costOf sends query with vars as an admin asking for the cost
// (X-Request-Cost) and returns the answer's data and extensions.cost.
func (s *server) costOf(t *testing.T, query string, vars map[string]any) (json.RawMessage, graph.Cost) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	r := s.fetch(t, http.MethodPost, s.url, string(body), map[string]string{
		graph.CostHeader: "1", "Authorization": "Bearer " + s.signed(s.claims("ada", "author", "admin")),
	})
	var a struct {
		Data       json.RawMessage
		Errors     []any
		Extensions struct{ Cost *graph.Cost }
	}
	if err := json.Unmarshal([]byte(r.body), &a); err != nil || len(a.Errors) > 0 || a.Extensions.Cost == nil {
		t.Fatalf("answer %s (%v), want data and its cost", r.body, err)
	}
	return a.Data, *a.Extensions.Cost
}

// longMarkdown is about 26 KB of Markdown with headings, lists and code,
// as a long post has.
func longMarkdown() string {
	var b strings.Builder
	for i := 0; b.Len() < 26_000; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nA paragraph about single-table design, with *emphasis*, `code` and a [link](https://example.com/%d). ", i, i)
		b.WriteString(strings.Repeat("Words that fill the section and make it long enough to read. ", 4))
		b.WriteString("\n\n- one item\n- another item\n\n```go\nfunc main() { println(\"hi\") }\n```\n\n")
	}
	return b.String()
}

// TestWritesPayForWhatTheyChange measures, as an admin sees it in
// extensions.cost, what the writes of a post of about 26 KB of Markdown
// in three categories cost: a publish, an unpublish and an edit of the
// title pay for the small items they touch (the post, its copies, its
// slug, the title edit's revision) and nothing for the body; an edit of the body pays for the body
// once; a comment is one request of at most 4 write units (the comment
// and the post's count item), and so are its approval and its deletion.
func TestWritesPayForWhatTheyChange(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	s.costOf(t, `mutation { createCategory(input: {slug: "aws", name: "AWS"}) { category { slug } } }`, nil)
	long := longMarkdown()
	type figure struct {
		name string
		cost graph.Cost
	}
	var figures []figure
	measure := func(name, query string, vars map[string]any) json.RawMessage {
		data, c := s.costOf(t, query, vars)
		figures = append(figures, figure{name, c})
		return data
	}
	data := measure("createPost", `mutation($body: String!) { createPost(input: {title: "Long", slug: "long", body: $body, categories: ["go", "dynamodb", "aws"]}) { post { id version } } }`,
		map[string]any{"body": long})
	var created struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	if err := json.Unmarshal(data, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreatePost.Post.ID
	measure("publishPost", `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": id})
	measure("updatePost (title)", `mutation($id: ID!) { updatePost(input: {id: $id, expectedVersion: 2, title: "Longer"}) { post { id } } }`, map[string]any{"id": id})
	measure("updatePost (body)", `mutation($id: ID!, $body: String!) { updatePost(input: {id: $id, expectedVersion: 3, body: $body}) { post { id } } }`,
		map[string]any{"id": id, "body": long + "\n\nOne more line."})
	data = measure("addComment", `mutation($id: ID!) { addComment(input: {postId: $id, body: "A short comment."}) { comment { id } } }`, map[string]any{"id": id})
	var added struct {
		AddComment struct{ Comment struct{ ID string } }
	}
	if err := json.Unmarshal(data, &added); err != nil {
		t.Fatal(err)
	}
	measure("deleteComment", `mutation($id: ID!) { deleteComment(input: {id: $id}) { comment { id } } }`, map[string]any{"id": added.AddComment.Comment.ID})
	measure("unpublishPost", `mutation($id: ID!) { unpublishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": id})
	measure("deletePost", `mutation($id: ID!) { deletePost(input: {id: $id}) { post { id } } }`, map[string]any{"id": id})

	byName := map[string]graph.Cost{}
	for _, f := range figures {
		t.Logf("%-20s %d requests, %5.1f read units, %6.1f write units", f.name, f.cost.DynamoDBRequests, f.cost.ReadCapacityUnits, f.cost.WriteCapacityUnits)
		byName[f.name] = f.cost
	}
	// The items each write must touch: the post, its author copy and 3
	// category copies, its slug (and the counters it moves, small too),
	// at 4 write units each at most, the largest a transaction bills.
	for name, items := range map[string]float64{
		"publishPost":   1 + 1 + 3 + 1 + 1 + 3 + 1 + 1, // post, copies, slug, counters (author, 3 categories, STATS), count item
		"unpublishPost": 1 + 1 + 3 + 1 + 1 + 3 + 1 + 1,
		// The post, its author, category and feed copies, and its
		// revision, which keeps the old title but not the body.
		"updatePost (title)": 1 + 1 + 3 + 1 + 1,
	} {
		if c := byName[name]; c.WriteCapacityUnits > 4*items {
			t.Errorf("%s: %.1f write units, want at most %.0f (4 an item it touches)", name, c.WriteCapacityUnits, 4*items)
		}
	}
	// An edit of the title writes the post and its copies, small, and
	// its revision, which keeps the title as it was but not the body (a
	// later revision or the post holds it): far less than an edit of the
	// body, which writes the body item and the revision with the old body.
	if title, body := byName["updatePost (title)"], byName["updatePost (body)"]; title.WriteCapacityUnits*2 > body.WriteCapacityUnits {
		t.Errorf("an edit of the title costs %.1f write units, one of the body %.1f", title.WriteCapacityUnits, body.WriteCapacityUnits)
	}
	if c := byName["updatePost (body)"]; c.WriteCapacityUnits > 2*byName["createPost"].WriteCapacityUnits {
		t.Errorf("a body edit costs %.1f write units, a creation %.1f", c.WriteCapacityUnits, byName["createPost"].WriteCapacityUnits)
	}
	for _, name := range []string{"addComment", "deleteComment"} {
		if c := byName[name]; c.DynamoDBRequests > 2 || c.WriteCapacityUnits > 4 {
			t.Errorf("%s: %d requests, %.1f write units; want one transaction of two small items (at most 4 units)", name, c.DynamoDBRequests, c.WriteCapacityUnits)
		}
	}
	if c := byName["addComment"]; c.DynamoDBRequests != 1 {
		t.Errorf("addComment: %d requests, want 1 (the post's count item known from its writes)", c.DynamoDBRequests)
	}
}

// TestFeedCostsWhatACategoryPageDoes compares a 20-card page of the whole
// blog's feed with the same cards of a category page, as extensions.cost
// shows them: at most 3 requests and 1.5 times the category page's read
// units; the feed's totalCount alone reads only STATS.
func TestFeedCostsWhatACategoryPageDoes(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	const card = `title slug excerpt publishedAt author { name } categories { name } commentCount`
	_, feed := s.costOf(t, `{ posts(first: 20) { edges { node { `+card+` } } } }`, nil)
	_, cat := s.costOf(t, `{ category(slug: "go") { posts(first: 20) { edges { node { `+card+` } } } } }`, nil)
	_, count := s.costOf(t, `{ posts(first: 20) { totalCount } }`, nil)
	t.Logf("feed page %+v, category page %+v, feed's totalCount %+v", feed, cat, count)
	if feed.DynamoDBRequests > 3 || feed.ReadCapacityUnits > 1.5*cat.ReadCapacityUnits {
		t.Errorf("feed page: %d requests, %.1f read units; want at most 3 and %.2f (1.5 times a category page's)", feed.DynamoDBRequests, feed.ReadCapacityUnits, 1.5*cat.ReadCapacityUnits)
	}
	if count.DynamoDBRequests != 1 || count.ReadCapacityUnits > 1 {
		t.Errorf("totalCount alone: %+v, want one read of STATS", count)
	}
}

// TestPostPageReadsItsBodyOnlyWhenAsked reads the page of a post of
// about 26 KB of Markdown with and without its body: one request either
// way, the post's count item giving its exact comment count, and the
// body's read units only when the answer shows the body.
func TestPostPageReadsItsBodyOnlyWhenAsked(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	data, _ := s.costOf(t, `mutation($body: String!) { createPost(input: {title: "Long", slug: "long", body: $body, categories: ["go"]}) { post { id } } }`,
		map[string]any{"body": longMarkdown()})
	var created struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	if err := json.Unmarshal(data, &created); err != nil {
		t.Fatal(err)
	}
	id := created.CreatePost.Post.ID
	s.costOf(t, `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": id})
	s.costOf(t, `mutation($id: ID!) { addComment(input: {postId: $id, body: "First."}) { comment { id } } }`, map[string]any{"id": id})
	summary, without := s.costOf(t, `query($id: ID!) { post(id: $id) { title commentCount wordCount } }`, map[string]any{"id": id})
	page, with := s.costOf(t, `query($id: ID!) { post(id: $id) { title commentCount body bodyHtml toc { anchor } } }`, map[string]any{"id": id})
	t.Logf("post without its body %+v, with it %+v", without, with)
	for _, answer := range []json.RawMessage{summary, page} {
		if !strings.Contains(string(answer), `"commentCount":1`) {
			t.Errorf("answer %s, want the comment counted", answer)
		}
	}
	if !strings.Contains(string(page), `"body":"## Section 0`) {
		t.Errorf("answer %.200s, want the body", page)
	}
	if without.DynamoDBRequests != 1 || with.DynamoDBRequests != 1 {
		t.Errorf("requests %d without the body, %d with it; want 1 each", without.DynamoDBRequests, with.DynamoDBRequests)
	}
	if without.ReadCapacityUnits > 0.5 || with.ReadCapacityUnits < 2 {
		t.Errorf("read units %.1f without the body, %.1f with it; want the body's only with it", without.ReadCapacityUnits, with.ReadCapacityUnits)
	}
}

// TestPostWriteLeavingTheBodyReadsNoBody edits the title of a post of
// about 26 KB of Markdown as an admin sees it in extensions.cost: the
// write reads the post item and its count item, not the body item, so
// its read units are those of a title edit of a short post (1, the
// Query of both), while an edit of the body reads the body (8 units
// more); it makes the same 2 requests, a Query and a TransactWriteItems,
// whether or not the answer shows the body. The body, its HTML and its
// table of contents in the answer, in a repeat of it with the same
// idempotency key and in a later read of the post are those the post had.
func TestPostWriteLeavingTheBodyReadsNoBody(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	create := func(slug, body string) (string, json.RawMessage) {
		data, _ := s.costOf(t, `mutation($slug: String!, $body: String!) { createPost(input: {title: "Long", slug: $slug, body: $body, categories: ["go"]}) { post { id body bodyHtml toc { anchor } } } }`,
			map[string]any{"slug": slug, "body": body})
		var created struct {
			CreatePost struct {
				Post struct{ ID string }
			}
		}
		if err := json.Unmarshal(data, &created); err != nil {
			t.Fatal(err)
		}
		id := created.CreatePost.Post.ID
		s.costOf(t, `mutation($id: ID!) { publishPost(input: {id: $id}) { post { id } } }`, map[string]any{"id": id})
		var whole struct {
			CreatePost struct{ Post json.RawMessage }
		}
		if err := json.Unmarshal(data, &whole); err != nil {
			t.Fatal(err)
		}
		return id, whole.CreatePost.Post
	}
	long := longMarkdown()
	id, created := create("long", long)
	shortID, _ := create("short", "A short post.")
	const edit = `mutation($id: ID!, $v: Int!, $title: String!) { updatePost(input: {id: $id, expectedVersion: $v, title: $title}) { post { id title } } }`
	_, short := s.costOf(t, edit, map[string]any{"id": shortID, "v": 2, "title": "Short"})
	_, title := s.costOf(t, edit, map[string]any{"id": id, "v": 2, "title": "Longer"})
	const shows = `mutation($id: ID!, $v: Int!, $title: String!, $key: String) { updatePost(input: {id: $id, expectedVersion: $v, title: $title, idempotencyKey: $key}) { post { id body bodyHtml toc { anchor } } } }`
	answer, shown := s.costOf(t, shows, map[string]any{"id": id, "v": 3, "title": "Longest"})
	keyed, recorded := s.costOf(t, shows, map[string]any{"id": id, "v": 4, "title": "Longer", "key": "title-4"})
	repeat, _ := s.costOf(t, shows, map[string]any{"id": id, "v": 4, "title": "Longer", "key": "title-4"})
	later, _ := s.costOf(t, `query($id: ID!) { post(id: $id) { id body bodyHtml toc { anchor } } }`, map[string]any{"id": id})
	_, body := s.costOf(t, `mutation($id: ID!, $body: String!) { updatePost(input: {id: $id, expectedVersion: 5, body: $body}) { post { id } } }`,
		map[string]any{"id": id, "body": long + "\n\nOne more line."})
	t.Logf("title edit of a short post %+v, of the long one %+v, showing the body %+v, with an idempotency key %+v; body edit %+v", short, title, shown, recorded, body)

	if title.DynamoDBRequests != 2 || shown.DynamoDBRequests != 2 {
		t.Errorf("title edit: %d requests, %d showing the body; want 2 (a Query, a TransactWriteItems)", title.DynamoDBRequests, shown.DynamoDBRequests)
	}
	if title.ReadCapacityUnits != 1 || short.ReadCapacityUnits != 1 {
		t.Errorf("title edit: %.1f read units on the long post, %.1f on a short one; want 1 (its post item and count item)", title.ReadCapacityUnits, short.ReadCapacityUnits)
	}
	if body.ReadCapacityUnits < title.ReadCapacityUnits+6 || shown.ReadCapacityUnits < title.ReadCapacityUnits+6 {
		t.Errorf("body edit %.1f read units, title edit showing the body %.1f; want the body's (6 units more at least)", body.ReadCapacityUnits, shown.ReadCapacityUnits)
	}
	var got []json.RawMessage
	if recorded.WriteCapacityUnits > title.WriteCapacityUnits+4 {
		t.Errorf("title edit with an idempotency key: %.1f write units, without %.1f; want its record without the body (4 units more at most)", recorded.WriteCapacityUnits, title.WriteCapacityUnits)
	}
	for _, a := range []json.RawMessage{answer, keyed, repeat} {
		var p struct {
			UpdatePost struct{ Post json.RawMessage }
		}
		if err := json.Unmarshal(a, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.UpdatePost.Post)
	}
	var read struct{ Post json.RawMessage }
	if err := json.Unmarshal(later, &read); err != nil {
		t.Fatal(err)
	}
	for i, p := range append(got, read.Post) {
		if string(p) != string(created) {
			t.Errorf("post %d (answers, repeat, later read): %.300s, want the body, HTML and contents created: %.300s", i, p, created)
		}
	}
}
