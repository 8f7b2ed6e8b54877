package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// writeOps are the DynamoDB operations that change items.
var writeOps = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

// response is a GraphQL response as it arrived over HTTP.
type response struct {
	status int
	header http.Header
	Errors gqlerror.List   `json:"errors"`
	Data   json.RawMessage `json:"data"`
}

// send posts body to the endpoint as JSON, with a declared length unless
// chunked, and decodes the answer.
func (s *server) send(t *testing.T, body string, chunked bool) response {
	t.Helper()
	var r io.Reader = strings.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length, so the request is chunked
	}
	req, err := http.NewRequest(http.MethodPost, s.url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	a := roundTrip(t, req)
	out := response{status: a.status, header: a.header}
	if err := json.Unmarshal([]byte(a.body), &out); err != nil {
		t.Fatalf("status %d, body %.300q: %v", a.status, a.body, err)
	}
	return out
}

// request returns the JSON body of a GraphQL request.
func request(query string, variables map[string]any) string {
	b, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// forgeCursor builds a cursor the way the server once did, with a checksum
// anyone who read its source could compute: a position of the client's
// choosing, and the table's key attributes in plain sight.
func forgeCursor(list string, pos map[string]string) string {
	type body struct {
		List string            `json:"l"`
		Pos  map[string]string `json:"p"`
		Sum  string            `json:"s,omitempty"`
	}
	raw, _ := json.Marshal(body{List: list, Pos: pos})
	sum := sha256.Sum256(append([]byte("blog-cursor-v1\n"), raw...))
	raw, _ = json.Marshal(body{List: list, Pos: pos, Sum: base64.RawURLEncoding.EncodeToString(sum[:9])})
	return base64.RawURLEncoding.EncodeToString(raw)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// nested returns a query whose fields nest depth deep: posts, edges, node,
// author, posts, edges, node, … ending in a scalar.
func nested(depth int) string {
	path := []string{"posts(first: 1)", "edges", "node", "author"}
	var open strings.Builder
	for i := range depth - 1 {
		open.WriteString(path[i%len(path)] + " { ")
	}
	// The scalar the last field's parent has: a connection's, an edge's, a
	// post's or an author's.
	leaf := []string{"totalCount", "cursor", "title", "name"}[(depth-2)%len(path)]
	return "{ " + open.String() + leaf + strings.Repeat(" }", depth-1) + " }"
}

// aliases returns n aliased copies of field.
func aliases(n int, field string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s ", i, field)
	}
	return b.String()
}

// fragmentBomb returns a query of a few hundred bytes whose fragments, each
// spreading the next one twice, expand to 2^n fields.
func fragmentBomb(n int) string {
	var b strings.Builder
	b.WriteString("query Bomb { ...F0 }\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { __typename }\n", n)
	return b.String()
}

// fragmentChain returns the document of a hostile probe: a page of posts
// whose node spreads a chain of n fragments, each spreading the next one
// twice beside a field with a selection of its own. It expands to 2^n
// fields; checked pair by pair, it takes time doubling with each link.
func fragmentChain(n int) string {
	var b strings.Builder
	b.WriteString("{posts(first:100){edges{node{...F0}}}}\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment F%d on Post { ...F%d ...F%d author { ...A%d } }\n", i, i+1, i+1, i)
		fmt.Fprintf(&b, "fragment A%d on Author { name }\n", i)
	}
	fmt.Fprintf(&b, "fragment F%d on Post { title }\n", n)
	return b.String()
}

// introspectionChain is the same chain below __schema.
func introspectionChain(n int) string {
	var b strings.Builder
	b.WriteString("{__schema{types{...T0}}}\n")
	for i := range n {
		fmt.Fprintf(&b, "fragment T%d on __Type { ...T%d ...T%d ofType { name } }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment T%d on __Type { name }\n", n)
	return b.String()
}

// TestBadRequestsAreRefused sends requests a hostile or broken client
// would: oversized and malformed bodies, wrong variable types, documents
// too large, deep, wide or costly, injection-shaped strings, forged and
// tampered cursors and ids. Each gets its documented error code; none
// makes the server fail (no 5xx) or write anything, and those refused
// before execution send no DynamoDB request at all.
func TestBadRequestsAreRefused(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	first := ok[*FeedResponse](t)(Feed(ctx, s.client, ptr(1), nil)).Posts.PageInfo.EndCursor
	tampered := []byte(*first)
	tampered[len(tampered)/2] ^= 1
	before := s.snapshot()

	const (
		parse      = "GRAPHQL_PARSE_FAILED"
		validation = "GRAPHQL_VALIDATION_FAILED"
	)
	feed := "query($first: Int, $after: String) { posts(first: $first, after: $after) { edges { node { title } } } }"
	cases := []struct {
		name    string
		body    string
		chunked bool
		status  int    // the HTTP status, when it matters
		code    string // extensions.code of the first error
		reads   bool   // the error comes from a resolver, after reads
	}{
		// The request itself.
		{name: "body over 1 MiB", body: request("{ __typename }", map[string]any{"pad": strings.Repeat("x", gqlhttp.MaxBodyBytes)}),
			status: http.StatusRequestEntityTooLarge, code: "BAD_REQUEST"},
		{name: "body over 1 MiB without a length", body: request("{ __typename }", map[string]any{"pad": strings.Repeat("x", gqlhttp.MaxBodyBytes)}),
			chunked: true, status: http.StatusRequestEntityTooLarge, code: "BAD_REQUEST"},
		{name: "body that is not JSON", body: `{"query": "{ posts { `, status: http.StatusBadRequest, code: "BAD_REQUEST"},
		{name: "batch of requests", body: `[{"query": "{ __typename }"}]`, status: http.StatusBadRequest, code: "BAD_REQUEST"},
		{name: "variables that are not an object", body: `{"query": "{ __typename }", "variables": "first=1"}`,
			status: http.StatusBadRequest, code: "BAD_REQUEST"},
		// The document.
		{name: "syntax error", body: request("{ posts(first: ) }", nil), code: parse},
		{name: "more tokens than allowed", body: request("{"+strings.Repeat(" __typename", gqlhttp.MaxTokens)+" }", nil), code: parse},
		{name: "unknown field", body: request("{ posts { edges { node { password } } } }", nil), code: validation},
		{name: "string for an Int variable", body: request(feed, map[string]any{"first": "ten"}), code: validation},
		{name: "Int variable beyond 32 bits", body: request(feed, map[string]any{"first": 1 << 40}), code: validation},
		{name: "object for a String variable", body: request(feed, map[string]any{"after": map[string]any{"$gt": ""}}), code: validation},
		{name: "missing required variable", body: request("query($slug: String!) { post(slug: $slug) { title } }", nil), code: validation},
		{name: "Int literal beyond 32 bits", body: request("{ posts(first: 99999999999) { totalCount } }", nil), code: validation},
		{name: "Int literal one past 32 bits", body: request("{ posts(first: 2147483648) { totalCount } }", nil), code: validation},
		// An answer in parts, which no transport here sends.
		{name: "a deferred fragment", body: request("{ posts(first: 2) { edges { node { id ... @defer { author { name } } } } } }", nil), code: validation},
		// Limits on the operation.
		{name: "too deep", body: request(nested(gqlhttp.MaxDepth+1), nil), code: "DEPTH_LIMIT_EXCEEDED"},
		{name: "alias flood", body: request("{ posts(first: 1) { edges { node { "+aliases(gqlhttp.MaxAliases+1, "title")+"} } } }", nil),
			code: "ALIAS_LIMIT_EXCEEDED"},
		{name: "too many root fields", body: request("{ "+aliases(gqlhttp.MaxRootFields+1, "__typename")+"}", nil),
			code: "ROOT_FIELD_LIMIT_EXCEEDED"},
		{name: "100 posts with 100 comments each", body: request("{ posts(first: 100) { edges { node { comments(first: 100) { edges { node { id } } } } } } }", nil),
			code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "fragments that expand to 2^30 fields", body: request(fragmentBomb(30), nil), code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "previous and next of every post of a page", body: request("{ posts(first: 20) { edges { node { previous { id } next { id } } } } }", nil),
			code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "last of 100 posts with 100 comments each", body: request("{ posts(last: 100) { edges { node { comments(last: 100) { edges { node { id } } } } } } }", nil),
			code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "first and last", body: request("{ posts(first: 2, last: 2) { totalCount } }", nil), code: "BAD_USER_INPUT", reads: true},
		{name: "huge last", body: request("{ authors(last: 101) { totalCount } }", nil), code: "BAD_USER_INPUT", reads: true},
		{name: "preview token of nothing", body: request(`{ post(previewToken: "x.y") { title } }`, nil), code: "NOT_FOUND", reads: true},
		// Each of these took minutes or more to validate, a whole CPU.
		{name: "a chain of 21 fragments with fields", body: request(fragmentChain(21), nil), code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "a chain of 30 fragments with fields", body: request(fragmentChain(30), nil), code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "a chain of 60 fragments with fields", body: request(fragmentChain(60), nil), code: parse},
		{name: "100 comments with the next 10 replies each", body: request(`{ post(slug: "post-24") { comments(first: 100) { edges { node {
			replyConnection(first: 10, after: "x") { edges { node { id body createdAt editedAt status commenter { name avatarUrl isAuthor } } } } } } } } }`, nil), code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "the series neighbours of every post of a page", body: request(`{ posts(first: 100) { edges { node { series { previous { slug } next { slug } } } } } }`, nil),
			code: "COMPLEXITY_LIMIT_EXCEEDED"},
		// Arguments, after the document was accepted.
		{name: "huge first", body: request(feed, map[string]any{"first": 1_000_000}), code: "BAD_USER_INPUT", reads: true},
		{name: "a page of 11 replies", body: request(`{ post(slug: "post-24") { comments(first: 1) { edges { node { replyConnection(first: 11) { totalCount } } } } } }`, nil),
			code: "BAD_USER_INPUT", reads: true},
		{name: "negative first", body: request(feed, map[string]any{"first": -1}), code: "BAD_USER_INPUT", reads: true},
		{name: "tampered cursor", body: request(feed, map[string]any{"after": string(tampered)}), code: "BAD_USER_INPUT", reads: true},
		{name: "cursor of another list", body: request(`query($after: String) { author(id: "`+b.authors[0]+`") { posts(after: $after) { totalCount } } }`,
			map[string]any{"after": *first}), code: "BAD_USER_INPUT", reads: true},
		{name: "forged cursor with extra attributes", body: request(feed, map[string]any{"after": forgeCursor("feed", map[string]string{
			"GSI1SK": "POST#2026-03-01T12:00:00.000Z#x", "PK": "AUTHOR#ada"})}), code: "BAD_USER_INPUT", reads: true},
		{name: "forged cursor of a position in the list", body: request(feed, map[string]any{"after": forgeCursor("feed", map[string]string{
			"GSI1SK": "POST#2026-03-01T11:30:00.000Z#x"})}), code: "BAD_USER_INPUT", reads: true},
		{name: "SQL-shaped cursor", body: request(feed, map[string]any{"after": "' OR '1'='1"}), code: "BAD_USER_INPUT", reads: true},
		// A slug no item can have is not found, as a missing one, with no read.
		{name: "SQL-shaped slug", body: request(`{ post(slug: "x' OR '1'='1") { title } }`, nil), code: "NOT_FOUND"},
		{name: "expression-shaped category slug", body: request(`{ category(slug: "go OR attribute_exists(PK)") { name } }`, nil),
			code: "NOT_FOUND"},
		{name: "category slug over the key size", body: request(`{ category(slug: "`+strings.Repeat("a", 3000)+`") { name } }`, nil),
			code: "NOT_FOUND"},
		{name: "global id of an unknown type", body: request(`{ node(id: "`+b64("User:1")+`") { id } }`, nil), code: "BAD_USER_INPUT", reads: true},
		{name: "global id with a line break", body: request(`query($id: ID!) { node(id: $id) { id } }`,
			map[string]any{"id": b.published[0][:4] + "\n" + b.published[0][4:]}), code: "BAD_USER_INPUT", reads: true},
		{name: "author id given as post id", body: request(`{ post(id: "`+b.authors[0]+`") { title } }`, nil), code: "BAD_USER_INPUT", reads: true},
		{name: "forged id of a post that does not exist", body: request(`{ node(id: "`+b64("Post:../../etc/passwd")+`") { id } }`, nil),
			code: "NOT_FOUND", reads: true},
		{name: "forged comment id without a post", body: request(`{ node(id: "`+b64("Comment::c1")+`") { id } }`, nil),
			code: "BAD_USER_INPUT", reads: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := s.send(t, c.body, c.chunked)
			if resp.status >= 500 || (c.status != 0 && resp.status != c.status) {
				t.Errorf("status = %d, want %d", resp.status, c.status)
			}
			if len(resp.Errors) == 0 {
				t.Fatalf("no error, data %s", resp.Data)
			}
			equal(t, "code", resp.Errors[0].Extensions["code"], any(c.code))
			if strings.Contains(resp.Errors[0].Message, c.body) {
				t.Errorf("the message quotes the request back: %.200s", resp.Errors[0].Message)
			}
			t.Logf("%d %s: %s", resp.status, resp.Errors[0].Extensions["code"], resp.Errors[0].Message)
			reqs := s.requests()
			if !c.reads && total(reqs) > 0 {
				t.Errorf("refused before execution, yet sent DynamoDB requests %v", reqs)
			}
			for _, op := range writeOps {
				if reqs[op] > 0 {
					t.Errorf("sent %d %s", reqs[op], op)
				}
			}
		})
	}

	t.Run("an introspection query chaining 30 fragments is answered", func(t *testing.T) {
		resp := s.send(t, request(introspectionChain(30), nil), false)
		if len(resp.Errors) > 0 || !bytes.Contains(resp.Data, []byte(`"name":"Post"`)) {
			t.Errorf("errors %v, data %.200s", resp.Errors, resp.Data)
		}
	})
	t.Run("a query at the depth limit is answered", func(t *testing.T) {
		resp := s.send(t, request(nested(gqlhttp.MaxDepth), nil), false)
		if len(resp.Errors) > 0 {
			t.Errorf("errors %v", resp.Errors)
		}
	})
	t.Run("a cursor of another category is refused", func(t *testing.T) {
		other := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "dynamodb", ptr(1), nil)).Category.Posts.PageInfo.EndCursor
		_, err := CategoryPage(ctx, s.client, "go", ptr(100), other)
		equal(t, "code", code(err), "BAD_USER_INPUT")
	})
	t.Run("a cursor of a server with another key is refused", func(t *testing.T) {
		elsewhere := newServer(t)
		elsewhere.seedBlog(t)
		foreign := ok[*FeedResponse](t)(Feed(ctx, elsewhere.client, ptr(1), nil)).Posts.PageInfo.EndCursor
		_, err := Feed(ctx, s.client, ptr(1), foreign)
		equal(t, "code", code(err), "BAD_USER_INPUT")
	})
	t.Run("a cursor shows nothing of the table", func(t *testing.T) {
		raw, err := base64.RawURLEncoding.DecodeString(*first)
		if err != nil {
			t.Fatal(err)
		}
		for _, layout := range []string{"POST#", "GSI1SK", "feed", "2026-"} {
			if bytes.Contains(raw, []byte(layout)) {
				t.Errorf("cursor %q shows %q", *first, layout)
			}
		}
	})
	t.Run("the server is still up", func(t *testing.T) {
		feed := ok[*FeedResponse](t)(Feed(ctx, s.client, ptr(5), nil))
		equal(t, "posts", len(feed.Posts.Edges), 5)
	})
	s.unchanged(before)
}

// TestBadInputsWriteNothing sends mutations whose input breaks a limit of
// the schema: each is BAD_USER_INPUT naming the field, before any DynamoDB
// request. Injection-shaped text that is within the limits is stored and
// returned as it was sent: escaping is the frontend's job.
func TestBadInputsWriteNothing(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ada := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"})).CreateAuthor.Author
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "go", Name: "Go"}))
	writer := s.as("ada", auth.RoleAuthor)
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "T", Slug: "t", Categories: []string{"go"}})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: post.Id}))
	mine := ok[*AddCommentResponse](t)(AddComment(ctx, writer, AddCommentInput{PostId: post.Id, Body: "Mine."})).AddComment.Comment
	before := s.snapshot()

	newPost := func(edit func(*CreatePostInput)) func() error {
		return func() error {
			in := CreatePostInput{Title: "Title", Slug: "slug", Categories: []string{"go"}}
			edit(&in)
			_, err := CreatePost(ctx, writer, in)
			return err
		}
	}
	profile := func(edit func(*UpdateAuthorInput)) func() error {
		return func() error {
			in := UpdateAuthorInput{Id: ada.Id}
			edit(&in)
			_, err := UpdateAuthor(ctx, writer, in)
			return err
		}
	}
	comment := func(body string) func() error {
		return func() error {
			_, err := AddComment(ctx, writer, AddCommentInput{PostId: post.Id, Body: body})
			return err
		}
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf("c%d", i)
	}
	cases := []badInput{
		{"title of 201 characters", newPost(func(p *CreatePostInput) { p.Title = strings.Repeat("é", 201) }), "title"},
		{"title with a line break", newPost(func(p *CreatePostInput) { p.Title = "Hello\nworld" }), "title"},
		{"title with a control character", newPost(func(p *CreatePostInput) { p.Title = "Bell\a" }), "title"},
		{"blank title", newPost(func(p *CreatePostInput) { p.Title = " \t " }), "title"},
		{"SQL-shaped slug", newPost(func(p *CreatePostInput) { p.Slug = "x'; DROP TABLE posts; --" }), "slug"},
		{"path-shaped slug", newPost(func(p *CreatePostInput) { p.Slug = "../admin" }), "slug"},
		{"slug of 101 characters", newPost(func(p *CreatePostInput) { p.Slug = strings.Repeat("a", 101) }), "slug"},
		{"excerpt of 1001 characters", newPost(func(p *CreatePostInput) { p.Excerpt = ptr(strings.Repeat("x", 1001)) }), "excerpt"},
		{"body over 100 000 bytes", newPost(func(p *CreatePostInput) { p.Body = ptr(strings.Repeat("x", storage.MaxBodyBytes+1)) }), "body"},
		{"body with a NUL", newPost(func(p *CreatePostInput) { p.Body = ptr("a\x00b") }), "body"},
		{"eleven categories", newPost(func(p *CreatePostInput) { p.Categories = eleven }), "categories"},
		{"injection-shaped category", newPost(func(p *CreatePostInput) { p.Categories = []string{"go\" OR \"1\"=\"1"} }), "categories"},
		{"idempotency key with spaces", newPost(func(p *CreatePostInput) { p.IdempotencyKey = ptr("a key") }), "idempotencyKey"},
		{"javascript: avatar", profile(func(a *UpdateAuthorInput) { a.AvatarUrl = ptr("javascript:alert(1)") }), "avatarUrl"},
		{"data: avatar", profile(func(a *UpdateAuthorInput) { a.AvatarUrl = ptr("data:text/html,<script>alert(1)</script>") }), "avatarUrl"},
		{"avatar with credentials", profile(func(a *UpdateAuthorInput) { a.AvatarUrl = ptr("https://user:secret@example.com/a.png") }), "avatarUrl"},
		{"avatar with a space", profile(func(a *UpdateAuthorInput) { a.AvatarUrl = ptr("https://example.com/a b.png") }), "avatarUrl"},
		{"protocol-relative avatar", profile(func(a *UpdateAuthorInput) { a.AvatarUrl = ptr("//example.com/a.png") }), "avatarUrl"},
		{"bio of 2001 characters", profile(func(a *UpdateAuthorInput) { a.Bio = ptr(strings.Repeat("b", 2001)) }), "bio"},
		{"name with a line break", profile(func(a *UpdateAuthorInput) { a.Name = ptr("Ada\nLovelace") }), "name"},
		{"comment over 10 000 bytes", comment(strings.Repeat("c", storage.MaxCommentBytes+1)), "body"},
		{"empty comment", comment(" \n "), "body"},
		{"comment with an escape sequence", comment("\x1b[31mred"), "body"},
		{"edit of a comment over 10 000 bytes", func() error {
			_, err := UpdateComment(ctx, writer, UpdateCommentInput{Id: mine.Id, Body: strings.Repeat("c", storage.MaxCommentBytes+1)})
			return err
		}, "body"},
		{"blank edit of a comment", func() error {
			_, err := UpdateComment(ctx, writer, UpdateCommentInput{Id: mine.Id, Body: "\t"})
			return err
		}, "body"},
		{"edit of a post id", func() error {
			_, err := UpdateComment(ctx, writer, UpdateCommentInput{Id: post.Id, Body: "x"})
			return err
		}, "id"},
	}
	s.refusesBadInput(t, cases)
	s.unchanged(before)

	t.Run("injection-shaped text within the limits is kept as sent", func(t *testing.T) {
		for _, text := range []string{"'; DROP TABLE posts; --", "<script>alert(1)</script>", "{{7*7}} ${jndi:ldap://x}", `{"$gt": ""}`} {
			p := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{
				Title: text, Slug: fmt.Sprintf("kept-%x", sha256.Sum256([]byte(text)))[:20], Excerpt: &text, Body: &text,
			})).CreatePost.Post
			equal(t, "title", p.Title, text)
			equal(t, "body", p.Body, text)
		}
		s.consistent()
	})
}

// errField returns extensions.field of the first GraphQL error in err.
func errField(err error) string {
	var list gqlerror.List
	if errors.As(err, &list) && len(list) > 0 {
		f, _ := list[0].Extensions["field"].(string)
		return f
	}
	return ""
}

var _ graphql.Client // the typed client is the harness's; raw requests are built here

// TestAnswersAreBoundedInSize checks both limits on the size of an answer:
// a post's body costs what it may hold, so asking for many pages of bodies
// is refused before anything is read, while one full page is served; and
// an answer that grows past the response limit (set low here) is one
// RESPONSE_TOO_LARGE error, not kept, cached or partly sent.
func TestAnswersAreBoundedInSize(t *testing.T) {
	const limit = 100_000
	s := newServer(t, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) { o.HTTP.MaxResponseBytes = limit })
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	ada := s.as("ada", auth.RoleAuthor)
	body := strings.Repeat("Twenty kilobytes of \"Markdown\".\n", 20_000/32)
	for i := range 10 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: fmt.Sprint("Post ", i), Slug: fmt.Sprint("post-", i), Body: &body})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
		s.clock.Advance(time.Second)
	}

	t.Run("16 pages of 100 bodies cost more than the limit", func(t *testing.T) {
		resp := s.send(t, request("{ "+aliases(16, "posts(first: 100) { edges { node { body } } }")+"}", nil), false)
		if len(resp.Errors) == 0 {
			t.Fatalf("answered: %.200s", resp.Data)
		}
		equal(t, "code", resp.Errors[0].Extensions["code"], any("COMPLEXITY_LIMIT_EXCEEDED"))
		equal(t, "requests", total(s.requests()), 0)
		resp = s.send(t, request("{ "+aliases(4, "posts(first: 100) { edges { node { title excerpt body } } }")+"}", nil), false)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Errorf("four pages of bodies: errors %v", resp.Errors)
		}
	})
	t.Run("one page of 100 posts with their rendered HTML is within the cost", func(t *testing.T) {
		resp := newServer(t).send(t, request("{ posts(first: 100) { totalCount edges { cursor node { id slug title excerpt bodyHtml publishedAt commentCount status wordCount readingTimeMinutes coverImage { url alt width height } author { name slug } categories { slug name } } } } }", nil), false)
		if len(resp.Errors) > 0 {
			t.Errorf("errors %v", resp.Errors)
		}
	})
	t.Run("an answer past the size limit is one error", func(t *testing.T) {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			q := "{ posts(first: 10) { edges { node { title body } } } }"
			var a httpAnswer
			if method == http.MethodGet {
				a = s.fetch(t, method, s.url+"?query="+url.QueryEscape(q), "", nil)
			} else {
				a = s.fetch(t, method, s.url, request(q, nil), nil)
			}
			if len(a.body) > 1000 {
				t.Errorf("%s: answer of %d bytes, want one error", method, len(a.body))
			}
			var resp response
			if err := json.Unmarshal([]byte(a.body), &resp); err != nil {
				t.Fatal(err)
			}
			if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "RESPONSE_TOO_LARGE" || string(resp.Data) != "null" {
				t.Errorf("%s: errors %v, data %.100s", method, resp.Errors, resp.Data)
			}
			equal(t, method+" Cache-Control", a.header.Get("Cache-Control"), "no-store")
		}
	})
	t.Run("an answer within it is whole", func(t *testing.T) {
		resp := s.send(t, request("{ posts(first: 3) { edges { node { title body } } } }", nil), false)
		if len(resp.Errors) > 0 || !bytes.Contains(resp.Data, []byte("Twenty kilobytes")) {
			t.Errorf("errors %v", resp.Errors)
		}
	})
}

// TestUpdatePostRefusesBadInputFirst sends updatePost with bad input, as
// an author who is not an admin and whose write the server must check
// owns the post: each is BAD_USER_INPUT on its field before the ownership
// check reads the post, with no DynamoDB request, and changes nothing;
// good input is read, checked and written as before.
func TestUpdatePostRefusesBadInputFirst(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	before := s.snapshot()
	upd := func(in UpdatePostInput) error {
		in.Id, in.ExpectedVersion = b.draft, 1
		_, err := UpdatePost(ctx, b.writers[0], in)
		return err
	}
	cases := []struct {
		name  string
		in    UpdatePostInput
		field string
	}{
		{"an empty title", UpdatePostInput{Title: ptr("")}, "title"},
		{"a title too long", UpdatePostInput{Title: ptr(strings.Repeat("t", storage.MaxTitleLength+1))}, "title"},
		{"a slug with spaces", UpdatePostInput{Slug: ptr("a slug")}, "slug"},
		{"a body too long", UpdatePostInput{Body: ptr(strings.Repeat("b", storage.MaxBodyBytes+1))}, "body"},
		{"a body that renders to too much HTML", UpdatePostInput{Body: ptr(strings.Repeat("<&", storage.MaxBodyBytes/2))}, "body"},
		{"a category slug with capitals", UpdatePostInput{Categories: []string{"Go"}}, "categories"},
		{"a cover image that is not http", UpdatePostInput{CoverImage: &ImageInput{Url: "javascript:alert(1)"}}, "coverImage"},
		{"an SEO canonical URL that is not one", UpdatePostInput{Seo: &SeoInput{CanonicalUrl: ptr("not a url")}}, "seo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := upd(c.in)
			equal(t, "code", code(err), "BAD_USER_INPUT")
			if f := errField(err); !strings.HasPrefix(f, c.field) {
				t.Errorf("field %q, want %s", f, c.field)
			}
			if reqs := s.requests(); total(reqs) > 0 {
				t.Errorf("bad input sent DynamoDB requests %v", reqs)
			}
		})
	}
	t.Run("the id of an author", func(t *testing.T) {
		_, err := UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: b.authors[0], ExpectedVersion: 1, Title: ptr("T")})
		equal(t, "code", code(err), "BAD_USER_INPUT")
		equal(t, "requests", total(s.requests()), 0)
	})
	t.Run("anonymous, bad input", func(t *testing.T) {
		_, err := UpdatePost(ctx, s.client, UpdatePostInput{Id: b.draft, ExpectedVersion: 1, Title: ptr("")})
		equal(t, "code", code(err), "UNAUTHENTICATED")
		equal(t, "requests", total(s.requests()), 0)
	})
	t.Run("another author's draft, good input", func(t *testing.T) {
		// Read and checked: hidden from them as a missing post is.
		_, err := UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: b.draft, ExpectedVersion: 1, Title: ptr("Taken")})
		equal(t, "code", code(err), "NOT_FOUND")
	})
	s.unchanged(before)
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: b.draft, ExpectedVersion: 1, Title: ptr("Retitled"), Body: ptr("## New\n\nBody.")}))
}

// TestOptionalInputsAreNeverEmpty gives the inputs that are documented as
// 1 to 64 characters, and whose omission means something (no idempotency
// key, a new author id), as empty strings, and one-line fields with
// characters that break a line or turn text around: each is
// BAD_USER_INPUT on its field, before any DynamoDB request.
func TestOptionalInputsAreNeverEmpty(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	before := s.snapshot()
	cases := []badInput{
		{"an empty subject", func() error {
			_, err := CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr(""), Name: "Nobody"})
			return err
		}, "subject"},
		{"an empty idempotency key on createPost", func() error {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "T", Slug: "t", IdempotencyKey: ptr("")})
			return err
		}, "idempotencyKey"},
		{"an empty idempotency key on deletePost", func() error {
			_, err := DeletePost(ctx, b.writers[0], DeletePostInput{Id: b.published[0], IdempotencyKey: ptr("")})
			return err
		}, "idempotencyKey"},
		{"an empty idempotency key on deleteComment", func() error {
			_, err := DeleteComment(ctx, s.admin, DeleteCommentInput{Id: b.published[0], IdempotencyKey: ptr("")})
			return err
		}, "idempotencyKey"},
		{"a title with a line separator", func() error {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "One\u2028Two", Slug: "t"})
			return err
		}, "title"},
		{"a title with a paragraph separator", func() error {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "One\u2029Two", Slug: "t"})
			return err
		}, "title"},
		{"a title that turns right to left", func() error {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "invoice\u202egpj.exe", Slug: "t"})
			return err
		}, "title"},
		{"a name with a direction isolate", func() error {
			_, err := UpdateAuthor(ctx, b.writers[0], UpdateAuthorInput{Id: b.authors[0], Name: ptr("Ada\u2067Lovelace")})
			return err
		}, "name"},
		{"a category name with a right-to-left mark", func() error {
			_, err := CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "rtl", Name: "Go\u200f"})
			return err
		}, "name"},
	}
	s.refusesBadInput(t, cases)
	s.unchanged(before)
	t.Run("right-to-left text itself is fine", func(t *testing.T) {
		ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{Title: "שלום עולם", Slug: "hebrew"}))
	})
}

// badInput is a call that must be refused as bad input on field.
type badInput struct {
	name  string
	call  func() error
	field string
}

// refusesBadInput makes each call as a subtest: BAD_USER_INPUT on its
// field, before any DynamoDB request.
func (s *server) refusesBadInput(t *testing.T, cases []badInput) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			equal(t, "code", code(err), "BAD_USER_INPUT")
			equal(t, "field", errField(err), c.field)
			if reqs := s.requests(); total(reqs) > 0 {
				t.Errorf("bad input sent DynamoDB requests %v", reqs)
			}
		})
	}
}
