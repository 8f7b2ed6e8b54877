package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
)

// TestEmptyCursorsAreRefused gives every connection an empty after, and
// an empty before: each is BAD_USER_INPUT naming the argument, as a
// malformed cursor is, never the first page.
func TestEmptyCursorsAreRefused(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ada := b.writers[0]
	connections := []struct {
		name  string
		query string // $c is the cursor; each gives first or last with it
		as    graphql.Client
	}{
		{"the feed", `posts(%s) { totalCount }`, s.client},
		{"the static pages", `pages(%s) { edges { cursor } }`, s.client},
		{"a month's archive", `posts(publishedAfter: "2026-02-01T00:00:00Z", publishedBefore: "2026-03-01T00:00:00Z", %s) { totalCount }`, s.client},
		{"a category's posts", `category(slug: "go") { posts(%s) { totalCount } }`, s.client},
		{"an author's posts", `author(id: "` + b.authors[0] + `") { posts(%s) { totalCount } }`, s.client},
		{"an author's drafts", `author(id: "` + b.authors[0] + `") { drafts(%s) { edges { cursor } } }`, ada},
		{"authors", `authors(%s) { totalCount }`, s.client},
		{"a post's comments", `post(slug: "post-24") { comments(%s) { totalCount } }`, s.client},
		{"a comment's replies", `post(slug: "post-24") { comments(first: 1) { edges { node { replyConnection(%s) { totalCount } } } } }`, s.client},
		{"the moderation queue", `moderationQueue(%s) { edges { cursor } }`, ada},
	}
	for _, c := range connections {
		for _, arg := range []struct{ field, args string }{
			{"after", "first: 1, after: $c"},
			{"after", "after: $c"},
			{"before", "last: 1, before: $c"},
			{"before", "before: $c"},
		} {
			t.Run(c.name+"/"+arg.args, func(t *testing.T) {
				query := `query($c: String) { ` + fmt.Sprintf(c.query, arg.args) + ` }`
				var resp graphql.Response
				err := c.as.MakeRequest(ctx, &graphql.Request{Query: query, Variables: map[string]any{"c": ""}}, &resp)
				equal(t, "code", code(err), "BAD_USER_INPUT")
				equal(t, "field", errField(err), arg.field)
				// null is no cursor: the first page.
				err = c.as.MakeRequest(ctx, &graphql.Request{Query: query, Variables: map[string]any{"c": nil}}, &graphql.Response{})
				if err != nil {
					t.Errorf("with a null cursor: %v", err)
				}
			})
		}
	}
}

// TestPagesReadPastOneMegabyte fills the feed, a category and an author's
// drafts with posts so large that 100 of them are far more than DynamoDB
// returns in one Query page (1 MB, which the embedded engine keeps too):
// every page still holds `first` (or `last`) posts whenever that many
// follow, read on with more Queries, and says truly whether more follow.
func TestPagesReadPastOneMegabyte(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "large", Name: "Large"}))
	// About 40 KB a post item (the Markdown and its HTML): 4 MB in all,
	// four times what one Query page holds.
	body := strings.Repeat("Twenty kilobytes of Markdown, a line at a time.\n", 20_000/48)
	const n = 105
	var ids []string
	for i := range n {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: fmt.Sprint("Large ", i), Slug: fmt.Sprint("large-", i),
			Body: &body, Categories: []string{"large"}})).CreatePost.Post
		ids = append(ids, p.Id)
	}
	ada := ok[*ViewerResponse](t)(Viewer(ctx, b.ada)).Viewer.Id
	drafts := ok[*AuthorDraftsResponse](t)(AuthorDrafts(ctx, b.ada, ada, ptr(100), nil)).Author.Drafts
	equal(t, "drafts on the first page", len(drafts.Edges), 100)
	equal(t, "more drafts", drafts.PageInfo.HasNextPage, true)
	t.Logf("a page of 100 large drafts: %v", s.requests())

	for _, id := range ids {
		s.clock.Advance(time.Second)
		ok[*PublishPostResponse](t)(PublishPost(ctx, b.ada, PublishPostInput{Id: id}))
	}
	first := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(100), nil, nil, nil, nil, nil)).Posts
	t.Logf("a page of 100 large posts of the feed: %v", s.requests())
	equal(t, "feed posts on the first page", len(first.Edges), 100)
	equal(t, "more posts", first.PageInfo.HasNextPage, true)
	if len(first.Edges) > 0 {
		equal(t, "newest first", first.Edges[0].Node.Id, ids[n-1])
		rest := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(100), first.PageInfo.EndCursor, nil, nil, nil, nil)).Posts
		equal(t, "feed posts on the second page (with the blog's own post)", len(rest.Edges), n+1-len(first.Edges))
		equal(t, "more posts after the second page", rest.PageInfo.HasNextPage, false)
	}
	last := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, nil, nil, ptr(100), nil, nil, nil)).Posts
	equal(t, "feed posts on the last page", len(last.Edges), 100)
	equal(t, "more before the last page", last.PageInfo.HasPreviousPage, true)
	if len(last.Edges) > 0 {
		equal(t, "oldest last", last.Edges[len(last.Edges)-1].Node.Id, b.post)
		equal(t, "then the first large post", last.Edges[len(last.Edges)-2].Node.Id, ids[0])
	}
	category := ok[*CategoryFeedResponse](t)(CategoryFeed(ctx, s.client, "large", ptr(100), nil, nil, nil, nil, nil)).Category.Posts
	equal(t, "category posts on the first page", len(category.Edges), 100)
	s.consistent()
}
