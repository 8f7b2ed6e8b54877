package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// One id a frontend can use everywhere: a webhook delivery carries the
// raw ids cache tags name (data.postId) and the GraphQL ids answers show
// (data.graphqlIds.postId), and GraphQL's id arguments take either.

// graphQLIDsOf returns the graphqlIds of a delivery's data.
func graphQLIDsOf(t *testing.T, d delivery) map[string]any {
	t.Helper()
	var p struct {
		Data struct {
			GraphQLIDs map[string]any `json:"graphqlIds"`
		} `json:"data"`
	}
	if err := json.Unmarshal(d.Body, &p); err != nil {
		t.Fatal(err)
	}
	return p.Data.GraphQLIDs
}

// idOf sends query with the variable id to c and returns the id of its
// field, or the error's code.
func idOf(t *testing.T, c graphql.Client, query, field, id string) (string, string) {
	t.Helper()
	var out map[string]*struct{ ID string }
	err := c.MakeRequest(context.Background(), &graphql.Request{Query: query, Variables: map[string]any{"id": id}}, &graphql.Response{Data: &out})
	if err != nil {
		return "", code(err)
	}
	if out[field] == nil {
		return "", "null"
	}
	return out[field].ID, ""
}

// TestOneIDEverywhere takes the ids of webhook deliveries, raw and
// GraphQL, to GraphQL's id arguments, which find the same objects, and
// checks that an id of another kind is still an error.
func TestOneIDEverywhere(t *testing.T) {
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	anon := graphql.NewClient(s.base+"/graphql", http.DefaultClient)
	r := newFeedReceiver(t)
	s.hook(writer, r, "post.published", "comment.added", "page.published")

	post := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "First", Slug: "first", Categories: []string{"feeds"}})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: post.Id}))
	published := r.waitEvent(t, "post.published", func(e storage.EventData) bool { return e.Slug == "first" })
	rawPost := published.Data.PostID
	// A comment on the post by the raw id its delivery names.
	comment := ok[*PostCommentResponse](t)(PostComment(ctx, writer, AddCommentInput{PostId: rawPost, Body: "Thanks for reading."})).AddComment.Comment
	commented := r.waitEvent(t, "comment.added", func(e storage.EventData) bool { return e.PostID == rawPost })
	page := ok[*CreatePageResponse](t)(CreatePage(ctx, writer, CreatePageInput{Title: "About", Slug: "about"})).CreatePage.Page
	ok[*PublishPageResponse](t)(PublishPage(ctx, writer, PublishPageInput{Id: page.Id}))
	pagePublished := r.waitEvent(t, "page.published", func(e storage.EventData) bool { return e.Slug == "about" })
	author := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.as("root", auth.RoleAdmin), CreateAuthorInput{Subject: ptr("rose"), Name: "Rose"})).CreateAuthor.Author

	t.Run("deliveries carry the GraphQL ids", func(t *testing.T) {
		ids := graphQLIDsOf(t, published)
		equal(t, "post.published graphqlIds.postId", ids["postId"], any(post.Id))
		equal(t, "post.published graphqlIds.authorId", ids["authorId"], any(authorGIDOf("writer")))
		ids = graphQLIDsOf(t, commented)
		equal(t, "comment.added graphqlIds.commentId", ids["commentId"], any(comment.Id))
		equal(t, "comment.added graphqlIds.postId", ids["postId"], any(post.Id))
		equal(t, "page.published graphqlIds.pageId", graphQLIDsOf(t, pagePublished)["pageId"], any(page.Id))
	})

	const (
		postQuery     = `query($id: ID!) { post(id: $id) { id } }`
		authorQuery   = `query($id: ID!) { author(id: $id) { id } }`
		categoryQuery = `query($id: ID!) { category(id: $id) { id } }`
		pageQuery     = `query($id: ID!) { page(id: $id) { id } }`
		nodeQuery     = `query($id: ID!) { node(id: $id) { id } }`
	)
	for _, c := range []struct {
		name, query, field, id string
		want, code             string
	}{
		{"a post by its GraphQL id", postQuery, "post", post.Id, post.Id, ""},
		{"a post by its raw id", postQuery, "post", rawPost, post.Id, ""},
		{"a post by the GraphQL id of its delivery", postQuery, "post", graphQLIDsOf(t, published)["postId"].(string), post.Id, ""},
		{"an author by their raw id", authorQuery, "author", "writer", authorGIDOf("writer"), ""},
		{"an author made without a subject, by their raw id", authorQuery, "author", rawID(t, author.Id, "Author"), author.Id, ""},
		{"a category by its slug", categoryQuery, "category", "feeds", base64.RawURLEncoding.EncodeToString([]byte("Category:feeds")), ""},
		{"a page by its raw id", pageQuery, "page", pagePublished.Data.PageID, page.Id, ""},
		{"a comment by the GraphQL id of its delivery", nodeQuery, "node", graphQLIDsOf(t, commented)["commentId"].(string), comment.Id, ""},
		{"a comment's GraphQL id as a post's", postQuery, "post", comment.Id, "", graph.CodeBadUserInput},
		{"an author's GraphQL id as a post's", postQuery, "post", authorGIDOf("writer"), "", graph.CodeBadUserInput},
		{"a comment's raw id as a post's: no such post", postQuery, "post", commented.Data.CommentID, "", graph.CodeNotFound},
		{"a post's raw id as an author's: no such author", authorQuery, "author", rawPost, "", graph.CodeNotFound},
		{"neither kind of id", postQuery, "post", "no/pe", "", graph.CodeBadUserInput},
		{"a raw id to node, which cannot tell its kind", nodeQuery, "node", rawPost, "", graph.CodeBadUserInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, code := idOf(t, anon, c.query, c.field, c.id)
			equal(t, "id", got, c.want)
			equal(t, "code", code, c.code)
		})
	}
}
