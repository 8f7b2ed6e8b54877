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
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
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

// forgeCursor builds a cursor the way the server does, as anyone who reads
// its source can: the checksum is no secret.
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
		{name: "body over 1 MiB", body: request("{ __typename }", map[string]any{"pad": strings.Repeat("x", graphpkg.MaxBodyBytes)}),
			status: http.StatusRequestEntityTooLarge, code: "BAD_REQUEST"},
		{name: "body over 1 MiB without a length", body: request("{ __typename }", map[string]any{"pad": strings.Repeat("x", graphpkg.MaxBodyBytes)}),
			chunked: true, status: http.StatusRequestEntityTooLarge, code: "BAD_REQUEST"},
		{name: "body that is not JSON", body: `{"query": "{ posts { `, status: http.StatusBadRequest, code: "BAD_REQUEST"},
		{name: "batch of requests", body: `[{"query": "{ __typename }"}]`, status: http.StatusBadRequest, code: "BAD_REQUEST"},
		{name: "variables that are not an object", body: `{"query": "{ __typename }", "variables": "first=1"}`,
			status: http.StatusBadRequest, code: "BAD_REQUEST"},
		// The document.
		{name: "syntax error", body: request("{ posts(first: ) }", nil), code: parse},
		{name: "more tokens than allowed", body: request("{"+strings.Repeat(" __typename", graphpkg.MaxTokens)+" }", nil), code: parse},
		{name: "unknown field", body: request("{ posts { edges { node { password } } } }", nil), code: validation},
		{name: "string for an Int variable", body: request(feed, map[string]any{"first": "ten"}), code: validation},
		{name: "Int variable beyond 32 bits", body: request(feed, map[string]any{"first": 1 << 40}), code: "BAD_USER_INPUT", reads: true},
		{name: "object for a String variable", body: request(feed, map[string]any{"after": map[string]any{"$gt": ""}}), code: validation},
		{name: "missing required variable", body: request("query($slug: String!) { post(slug: $slug) { title } }", nil), code: validation},
		{name: "Int literal beyond 32 bits", body: request("{ posts(first: 99999999999) { totalCount } }", nil), code: "BAD_USER_INPUT", reads: true},
		// Limits on the operation.
		{name: "too deep", body: request(nested(graphpkg.MaxDepth+1), nil), code: "DEPTH_LIMIT_EXCEEDED"},
		{name: "alias flood", body: request("{ posts(first: 1) { edges { node { "+aliases(graphpkg.MaxAliases+1, "title")+"} } } }", nil),
			code: "ALIAS_LIMIT_EXCEEDED"},
		{name: "too many root fields", body: request("{ "+aliases(graphpkg.MaxRootFields+1, "__typename")+"}", nil),
			code: "ROOT_FIELD_LIMIT_EXCEEDED"},
		{name: "100 posts with 100 comments each", body: request("{ posts(first: 100) { edges { node { comments(first: 100) { edges { node { id } } } } } } }", nil),
			code: "COMPLEXITY_LIMIT_EXCEEDED"},
		{name: "fragments that expand to 2^30 fields", body: request(fragmentBomb(30), nil), code: "COMPLEXITY_LIMIT_EXCEEDED"},
		// Arguments, after the document was accepted.
		{name: "huge first", body: request(feed, map[string]any{"first": 1_000_000}), code: "BAD_USER_INPUT", reads: true},
		{name: "negative first", body: request(feed, map[string]any{"first": -1}), code: "BAD_USER_INPUT", reads: true},
		{name: "tampered cursor", body: request(feed, map[string]any{"after": string(tampered)}), code: "BAD_USER_INPUT", reads: true},
		{name: "cursor of another list", body: request(`query($after: String) { author(id: "`+b.authors[0]+`") { posts(after: $after) { totalCount } } }`,
			map[string]any{"after": *first}), code: "BAD_USER_INPUT", reads: true},
		{name: "forged cursor with extra attributes", body: request(feed, map[string]any{"after": forgeCursor("feed", map[string]string{
			"GSI1SK": "POST#2026-03-01T12:00:00.000Z#x", "PK": "AUTHOR#ada"})}), code: "BAD_USER_INPUT", reads: true},
		{name: "SQL-shaped cursor", body: request(feed, map[string]any{"after": "' OR '1'='1"}), code: "BAD_USER_INPUT", reads: true},
		{name: "SQL-shaped slug", body: request(`{ post(slug: "x' OR '1'='1") { title } }`, nil), code: "BAD_USER_INPUT", reads: true},
		{name: "expression-shaped category slug", body: request(`{ category(slug: "go OR attribute_exists(PK)") { name } }`, nil),
			code: "BAD_USER_INPUT", reads: true},
		{name: "category slug over the key size", body: request(`{ category(slug: "`+strings.Repeat("a", 3000)+`") { name } }`, nil),
			code: "BAD_USER_INPUT", reads: true},
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

	t.Run("a query at the depth limit is answered", func(t *testing.T) {
		resp := s.send(t, request(nested(graphpkg.MaxDepth), nil), false)
		if len(resp.Errors) > 0 {
			t.Errorf("errors %v", resp.Errors)
		}
	})
	t.Run("a cursor forged into another category finds nothing of it", func(t *testing.T) {
		// DynamoDB refuses a start key outside the query's partition.
		forged := forgeCursor("category-posts:go", map[string]string{
			"PK": "POST#x", "SK": "CAT#dynamodb", "GSI1PK": "CAT#dynamodb", "GSI1SK": "POST#2026-03-01T00:00:00.000Z#x"})
		_, err := CategoryPage(ctx, s.client, "go", ptr(100), &forged)
		equal(t, "code", code(err), "BAD_USER_INPUT")
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
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
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
	}
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

// TestIntrospectionCanBeTurnedOff checks a server configured as outside
// the embedded mode: the schema cannot be read, and validation errors do
// not suggest field names.
func TestIntrospectionCanBeTurnedOff(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) { o.Introspection = false })
	for _, q := range []string{"{ __schema { types { name } } }", `{ __type(name: "Post") { fields { name } } }`} {
		resp := s.send(t, request(q, nil), false)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("%s: %+v, want GRAPHQL_VALIDATION_FAILED", q, resp.Errors)
		}
	}
	resp := s.send(t, request("{ postz(first: 1) { totalCount } }", nil), false)
	if len(resp.Errors) == 0 || strings.Contains(resp.Errors[0].Message, "Did you mean") {
		t.Errorf("errors %+v, want one without suggestions", resp.Errors)
	}
	resp = s.send(t, request("{ __typename }", nil), false)
	if len(resp.Errors) > 0 || !bytes.Contains(resp.Data, []byte("Query")) {
		t.Errorf("__typename: %s %v", resp.Data, resp.Errors)
	}
	on := newServer(t)
	resp = on.send(t, request("{ postz(first: 1) { totalCount } }", nil), false)
	if len(resp.Errors) == 0 || !strings.Contains(resp.Errors[0].Message, "Did you mean") {
		t.Errorf("with introspection on: errors %+v, want a suggestion", resp.Errors)
	}
}

var _ graphql.Client // the typed client is the harness's; raw requests are built here
