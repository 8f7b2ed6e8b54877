package tests

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// seedBlog writes the blog into s's table. The first server that asks
// writes it through the API, some 70 mutations of several requests each;
// a later one whose store has no option (no stream to follow the writes)
// and whose clock has not moved gets a copy of the items they left, in a
// few batch writes: the same items, ids included, in a table of its own.
func (s *server) seedBlog(t *testing.T) *blog {
	t.Helper()
	seeded.mu.Lock()
	defer seeded.mu.Unlock()
	copyable := s.plainStore && s.clock.Now().Equal(start)
	if copyable && seeded.items != nil {
		b := seeded.blog
		b.authors, b.published = slices.Clone(b.authors), slices.Clone(b.published)
		b.writers = s.writers()
		s.putItems(t, seeded.items)
		s.clock.Advance(seeded.advance)
		return &b
	}
	b := s.writeBlog(t)
	if copyable {
		seeded.items, seeded.advance = s.items(t), s.clock.Now().Sub(start)
		seeded.blog = *b
		seeded.blog.writers = nil
	}
	return b
}

// seeded is the blog as seedBlog first wrote it: its items, how far the
// clock moved while it wrote them, and its ids.
var seeded struct {
	mu      sync.Mutex
	items   []map[string]types.AttributeValue
	advance time.Duration
	blog    blog
}

// writers returns the clients of the blog's authors, ada, grace and alan.
func (s *server) writers() []graphql.Client {
	return []graphql.Client{s.as("ada", auth.RoleAuthor), s.as("grace", auth.RoleAuthor), s.as("alan", auth.RoleAuthor)}
}

// items returns every item of s's table.
func (s *server) items(t *testing.T) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	return items
}

// putItems writes items into s's table.
func (s *server) putItems(t *testing.T, items []map[string]types.AttributeValue) {
	t.Helper()
	for len(items) > 0 {
		n := min(len(items), 25)
		var reqs []types.WriteRequest
		for _, it := range items[:n] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		items = items[n:]
		for pending := map[string][]types.WriteRequest{s.table: reqs}; len(pending) > 0; {
			out, err := s.db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				t.Fatal(err)
			}
			pending = out.UnprocessedItems
		}
	}
}

// writeBlog writes the blog of seedBlog through the API.
func (s *server) writeBlog(t *testing.T) *blog {
	t.Helper()
	ctx := context.Background()
	b := &blog{writers: s.writers()}
	for _, a := range [][2]string{{"ada", "Ada Lovelace"}, {"grace", "Grace Hopper"}, {"alan", "Alan Turing"}} {
		r := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &a[0], Name: a[1], Bio: ptr("Writes about " + a[1])}))
		b.authors = append(b.authors, r.CreateAuthor.Author.Id)
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
