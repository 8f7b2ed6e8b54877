package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
)

// TestOperationsDoNotWaitForABatchWindow: pages, node(id:) and mutation
// payloads that ask for what only other items hold (an author's bio, a
// category's count, a comment's writer or post) get it from reads started
// as soon as the list, the id or the write is known, not from loads that
// wait for the loaders' batch window (blog_dataloader_waits_total stays
// put). They make the requests the loaders would: one read of each kind.
func TestOperationsDoNotWaitForABatchWindow(t *testing.T) {
	m := metrics.New()
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.Metrics = m })
	// Written through the API, not copied: the requests counted are those
	// of a server that served the blog's writes and keeps what it read
	// for them (a copy leaves a reader's first comment one read more).
	b := s.writeBlog(t)
	scrape := scraper(t, m.Handler())
	ctx := context.Background()
	waits := func() float64 {
		n := 0.0
		for series, v := range scrape() {
			if strings.HasPrefix(series, "blog_dataloader_waits_total") {
				n += v
			}
		}
		return n
	}
	ask := func(t *testing.T, c graphql.Client, query string, vars map[string]any) (data json.RawMessage, requests int, waited float64) {
		t.Helper()
		before := waits()
		var resp graphql.Response
		resp.Data = &data
		if err := c.MakeRequest(ctx, &graphql.Request{Query: query, Variables: vars}, &resp); err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		return data, total(s.requests()), waits() - before
	}
	comment := func(t *testing.T, c graphql.Client, post string) string {
		t.Helper()
		return ok[*AddCommentResponse](t)(AddComment(ctx, c, AddCommentInput{PostId: post, Body: "A comment to change."})).AddComment.Comment.Id
	}
	reader := s.reader("reader-1", "Rita Reader", "https://example.com/rita.png")
	author := b.writers[0]

	const card = `title author { name bio avatarUrl } categories { name postCount }`
	const written = `comment { body author { name bio } commenter { name avatarUrl isAuthor } post { title commentCount } }`
	const post = `post { title author { name bio } categories { name description } }`
	cases := []struct {
		name     string
		client   graphql.Client
		query    string
		vars     func(t *testing.T) map[string]any
		requests int
		want     string // in the answer
	}{{
		// The category and its posts at once, then the authors and the
		// categories at once.
		name: "category page", want: `"bio":"Writes about`, client: reader, requests: 4,
		query: `query($slug: String!) { category(slug: $slug) { name posts(first: 10) { edges { node { ` + card + ` } } } } }`,
		vars:  func(*testing.T) map[string]any { return map[string]any{"slug": "go"} },
	}, {
		name: "author page", want: `"bio":"Writes about`, client: reader, requests: 4,
		query: `query($id: ID!) { author(id: $id) { name posts(first: 10) { edges { node { ` + card + ` } } } } }`,
		vars:  func(*testing.T) map[string]any { return map[string]any{"id": b.authors[1]} },
	}, {
		// Four shards, the authors and the categories.
		name: "feed", want: `"bio":"Writes about`, client: reader, requests: 3,
		query: `{ posts(first: 10) { edges { node { ` + card + ` } } } }`,
		vars:  func(*testing.T) map[string]any { return nil },
	}, {
		// The slug, then the post and its comments at once, then the
		// post's author, its categories and the commenters at once.
		name: "post page", want: `"bio":"Writes about`, client: reader, requests: 6,
		query: `query($slug: String!) { post(slug: $slug) { title author { bio } categories { description }
			comments(first: 10) { edges { node { body author { name } commenter { name avatarUrl } } } } } }`,
		vars: func(*testing.T) map[string]any { return map[string]any{"slug": b.commented} },
	}, {
		name: "an author's drafts", want: `"categories":[{"name":"Go"}]`, client: author, requests: 3,
		query: `query($id: ID!) { author(id: $id) { drafts(first: 10) { edges { node { title categories { name } } } } } }`,
		vars:  func(*testing.T) map[string]any { return map[string]any{"id": b.authors[0]} },
	}, {
		// A transaction (the post is known to this server), then the
		// writer and the post at once.
		name: "addComment by a reader", want: `"avatarUrl":"https://example.com/rita.png"`, client: reader, requests: 3,
		query: `mutation($post: ID!) { addComment(input: {postId: $post, body: "Primed."}) { ` + written + ` } }`,
		vars:  func(*testing.T) map[string]any { return map[string]any{"post": b.published[20]} },
	}, {
		name: "addComment by an author", want: `"bio":"Writes about`, client: author, requests: 3,
		query: `mutation($post: ID!) { addComment(input: {postId: $post, body: "Primed."}) { ` + written + ` } }`,
		vars:  func(*testing.T) map[string]any { return map[string]any{"post": b.published[20]} },
	}, {
		name: "updateComment", want: `"avatarUrl":"https://example.com/rita.png"`, client: reader, requests: 5,
		query: `mutation($id: ID!) { updateComment(input: {id: $id, body: "Changed."}) { ` + written + ` } }`,
		vars: func(t *testing.T) map[string]any {
			return map[string]any{"id": comment(t, reader, b.published[21])}
		},
	}, {
		name: "deleteComment", want: `"title":"Post 21"`, client: author, requests: 4,
		query: `mutation($id: ID!) { deleteComment(input: {id: $id}) { ` + written + ` } }`,
		vars: func(t *testing.T) map[string]any {
			return map[string]any{"id": comment(t, author, b.published[21])}
		},
	}, {
		// A draft's categories are read: they keep the names they were
		// saved with.
		name: "createPost", want: `"bio":"Writes about`, client: author, requests: 4,
		query: `mutation { createPost(input: {title: "Primed", slug: "primed", categories: ["go", "dynamodb"]}) { ` + post + ` } }`,
		vars:  func(*testing.T) map[string]any { return nil },
	}, {
		name: "updatePost", want: `"bio":"Writes about`, client: author, requests: 5,
		query: `mutation($id: ID!, $version: Int!) { updatePost(input: {id: $id, expectedVersion: $version, title: "Primed again"}) { ` + post + ` } }`,
		vars: func(t *testing.T) map[string]any {
			var got struct{ Post struct{ Version int } }
			if err := author.MakeRequest(ctx, &graphql.Request{Query: `query($id: ID!) { post(id: $id) { version } }`, Variables: map[string]any{"id": b.draft}}, &graphql.Response{Data: &got}); err != nil {
				t.Fatal(err)
			}
			return map[string]any{"id": b.draft, "version": got.Post.Version}
		},
	}, {
		name: "publishPost", want: `"bio":"Writes about`, client: author, requests: 5,
		query: `mutation($id: ID!) { publishPost(input: {id: $id}) { ` + post + ` } }`,
		vars:  func(*testing.T) map[string]any { return map[string]any{"id": b.draft} },
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, requests, waited := ask(t, c.client, c.query, c.vars(t))
			if waited != 0 {
				t.Errorf("%g loads waited for the batch window; answer %s", waited, data)
			}
			equal(t, "DynamoDB requests", requests, c.requests)
			if !strings.Contains(string(data), c.want) {
				t.Errorf("answer %s lacks %s", data, c.want)
			}
		})
	}

	// node(id:) reads at once, whether it is the operation's only node
	// field or one of several: the first of several reads what all of them
	// name.
	t.Run("node", func(t *testing.T) {
		first, second := comment(t, author, b.published[22]), comment(t, reader, b.published[22])
		const comment = `... on Comment { body author { name bio } commenter { name avatarUrl } post { title } }`
		for _, c := range []struct {
			name, query string
			vars        map[string]any
			requests    int
			waits       bool
			want        string
		}{
			// The comment and its post at once, then its writer.
			{name: "a comment", query: `query($id: ID!) { node(id: $id) { ` + comment + ` } }`, vars: map[string]any{"id": first},
				requests: 3, want: `"bio":"Writes about`},
			// The post, then its author and categories at once.
			{name: "a post", query: `query($id: ID!) { node(id: $id) { ... on Post { title author { bio } categories { description } } ... on Comment { post { title } } } }`,
				vars: map[string]any{"id": b.published[22]}, requests: 3, want: `"bio":"Writes about`},
			{name: "an author", query: `query($id: ID!) { node(id: $id) { ... on Author { name bio } } }`, vars: map[string]any{"id": b.authors[2]},
				requests: 1, want: `"bio":"Writes about Alan Turing"`},
			// One batch read of comments and one of posts for both at
			// once, then one of their writers, authors and commenters.
			{name: "two comments", query: `query($a: ID!, $b: ID!) { a: node(id: $a) { ` + comment + ` } b: node(id: $b) { ` + comment + ` } }`,
				vars: map[string]any{"a": first, "b": second}, requests: 3, want: `"avatarUrl":"https://example.com/rita.png"`},
		} {
			t.Run(c.name, func(t *testing.T) {
				data, requests, waited := ask(t, reader, c.query, c.vars)
				if c.waits != (waited > 0) {
					t.Errorf("%g loads waited for the batch window, want waits %t; answer %s", waited, c.waits, data)
				}
				equal(t, "DynamoDB requests", requests, c.requests)
				if !strings.Contains(string(data), c.want) {
					t.Errorf("answer %s lacks %s", data, c.want)
				}
			})
		}
	})
}
