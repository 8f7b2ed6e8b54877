package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
)

// blog is a small blog written through the API: three authors (ada, grace
// and alan, each with a client signed in as them), categories written by
// an admin, 25 published posts in two categories, a draft and a scheduled
// post by ada, and a commented post.
type blog struct {
	authors   []string         // global ids
	writers   []graphql.Client // signed in as authors[i]
	commented string           // slug of the post with comments
	published []string         // global ids, oldest first
	draft     string
	scheduled string
}

func (s *server) seedBlog(t *testing.T) *blog {
	t.Helper()
	ctx := context.Background()
	b := &blog{}
	for _, a := range [][2]string{{"ada", "Ada Lovelace"}, {"grace", "Grace Hopper"}, {"alan", "Alan Turing"}} {
		r := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &a[0], Name: a[1], Bio: ptr("Writes about " + a[1])}))
		b.authors = append(b.authors, r.CreateAuthor.Author.Id)
		b.writers = append(b.writers, s.as(a[0], auth.RoleAuthor))
	}
	for _, c := range [][2]string{{"go", "Go"}, {"dynamodb", "DynamoDB"}} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c[0], Name: c[1]}))
	}
	for i := range 25 {
		cats := []string{"go"}
		if i%3 == 0 {
			cats = append(cats, "dynamodb")
		}
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[i%2], CreatePostInput{
			Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i),
			Excerpt: ptr("Excerpt"), Body: ptr(fmt.Sprintf("# Post %d\n\nBody.", i)), Categories: cats,
		})).CreatePost.Post
		at := start.Add(-time.Duration(25-i) * time.Hour)
		ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[i%2], PublishPostInput{Id: p.Id, At: &at}))
		b.published = append(b.published, p.Id)
	}
	b.commented = "post-24"
	last := b.published[24]
	for i := range 6 {
		s.clock.Advance(time.Minute)
		c := ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[i%3], AddCommentInput{
			PostId: last, Body: fmt.Sprintf("Comment %d", i),
		})).AddComment.Comment
		ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[(i+1)%3], AddCommentInput{
			PostId: last, Body: "Reply", ParentId: &c.Id,
		}))
		s.clock.Advance(time.Minute)
	}
	d := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{
		Title: "Draft", Slug: "a-draft", Categories: []string{"go"},
	})).CreatePost.Post
	b.draft = d.Id
	sc := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{
		Title: "Soon", Slug: "soon", Categories: []string{"go"},
	})).CreatePost.Post
	soon := start.Add(2 * time.Hour)
	ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[0], PublishPostInput{Id: sc.Id, At: &soon}))
	b.scheduled = sc.Id
	return b
}
