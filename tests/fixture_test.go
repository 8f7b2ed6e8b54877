package tests

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// blog is a small blog written through the API: authors, categories, 25
// published posts in two categories, a draft, a scheduled post, and a
// commented post.
type blog struct {
	authors   []string // global ids
	commented string   // slug of the post with comments
	published []string // global ids, oldest first
	draft     string
	scheduled string
}

func (s *server) seedBlog(t *testing.T) *blog {
	t.Helper()
	ctx := context.Background()
	b := &blog{}
	for _, name := range []string{"Ada Lovelace", "Grace Hopper", "Alan Turing"} {
		r := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.client, CreateAuthorInput{Name: name, Bio: ptr("Writes about " + name)}))
		b.authors = append(b.authors, r.CreateAuthor.Author.Id)
	}
	for _, c := range [][2]string{{"go", "Go"}, {"dynamodb", "DynamoDB"}} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.client, CreateCategoryInput{Slug: c[0], Name: c[1]}))
	}
	for i := range 25 {
		cats := []string{"go"}
		if i%3 == 0 {
			cats = append(cats, "dynamodb")
		}
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, s.client, CreatePostInput{
			AuthorId: b.authors[i%2], Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i),
			Excerpt: ptr("Excerpt"), Body: ptr(fmt.Sprintf("# Post %d\n\nBody.", i)), Categories: cats,
		})).CreatePost.Post
		at := start.Add(-time.Duration(25-i) * time.Hour)
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.client, PublishPostInput{Id: p.Id, At: &at}))
		b.published = append(b.published, p.Id)
	}
	b.commented = "post-24"
	last := b.published[24]
	for i := range 6 {
		s.clock.advance(time.Minute)
		c := ok[*AddCommentResponse](t)(AddComment(ctx, s.client, AddCommentInput{
			PostId: last, AuthorId: b.authors[i%3], Body: fmt.Sprintf("Comment %d", i),
		})).AddComment.Comment
		ok[*AddCommentResponse](t)(AddComment(ctx, s.client, AddCommentInput{
			PostId: last, AuthorId: b.authors[(i+1)%3], Body: "Reply", ParentId: &c.Id,
		}))
		s.clock.advance(time.Minute)
	}
	d := ok[*CreatePostResponse](t)(CreatePost(ctx, s.client, CreatePostInput{
		AuthorId: b.authors[0], Title: "Draft", Slug: "a-draft", Categories: []string{"go"},
	})).CreatePost.Post
	b.draft = d.Id
	sc := ok[*CreatePostResponse](t)(CreatePost(ctx, s.client, CreatePostInput{
		AuthorId: b.authors[0], Title: "Soon", Slug: "soon", Categories: []string{"go"},
	})).CreatePost.Post
	soon := start.Add(2 * time.Hour)
	ok[*PublishPostResponse](t)(PublishPost(ctx, s.client, PublishPostInput{Id: sc.Id, At: &soon}))
	b.scheduled = sc.Id
	return b
}
