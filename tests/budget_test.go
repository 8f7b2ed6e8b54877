package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// TestCallBudgets checks the DynamoDB requests of each frontend operation
// against the budgets in the design, at two page sizes: the count must not
// depend on the page size.
func TestCallBudgets(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	preview := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, b.writers[0], CreatePreviewLinkInput{PostId: b.draft})).CreatePreviewLink.Token
	for i := range 25 {
		pg := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: fmt.Sprintf("Page %d", i), Slug: fmt.Sprintf("page-%d", i), Body: ptr("# Page\n\nText."), Order: &i})).CreatePage.Page
		ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: pg.Id}))
	}
	ok[*SiteResponse](t)(Site(ctx, s.client)) // the server reads the settings once, then holds them
	for _, first := range []int{20, 100} {
		cases := []struct {
			name   string
			run    func() error
			budget int
		}{
			{"category page", func() error {
				r, err := CategoryPage(ctx, s.client, "go", &first, nil)
				if err == nil {
					equal(t, "category page posts", len(r.Category.Posts.Edges), min(first, 25))
					n := r.Category.Posts.Edges[0].Node
					equal(t, "author name", n.Author.Name, "Ada Lovelace")
					// A list shows the count its summaries hold, which
					// follows the post's count item from the change feed.
					if n.CommentCount > 12 {
						t.Errorf("commentCount = %d, more than the 12 comments", n.CommentCount)
					}
					equal(t, "category name", n.Categories[0].Name, "Go")
				}
				return err
			}, 2},
			{"category page with bodies", func() error {
				r, err := CategoryPageWithBodies(ctx, s.client, "go", &first)
				if err == nil {
					equal(t, "body", r.Category.Posts.Edges[0].Node.Body, "# Post 24\n\nBody.")
				}
				return err
			}, 3},
			{"post page", func() error {
				r, err := PostPage(ctx, s.client, b.commented)
				if err == nil {
					equal(t, "comments", len(r.Post.Comments.Edges), 6)
					equal(t, "comment author", r.Post.Comments.Edges[0].Node.Author.Name, "Ada Lovelace")
				}
				return err
			}, 4},
			{"post page with replies", func() error {
				r, err := PostThreads(ctx, s.client, b.commented)
				if err == nil {
					c := r.Post.Comments.Edges[0].Node
					equal(t, "replies", len(c.Replies), 1)
					equal(t, "reply author", c.Replies[0].Author.Name, "Grace Hopper")
					equal(t, "reply parent", c.Replies[0].Parent.Id, c.Id)
				}
				return err
			}, 5},
			{"author page", func() error {
				r, err := AuthorPage(ctx, s.client, b.authors[0], &first, nil)
				if err == nil {
					equal(t, "author posts", len(r.Author.Posts.Edges), min(first, 13))
				}
				return err
			}, 2},
			{"feed", func() error {
				r, err := Feed(ctx, s.client, &first, nil)
				if err == nil {
					equal(t, "feed posts", len(r.Posts.Edges), min(first, 25))
				}
				return err
			}, 3}, // the feed's summaries and STATS, then the bodies
			{"author page by slug", func() error {
				r, err := AuthorBySlug(ctx, s.client, "ada-lovelace", &first, nil, nil, nil, nil, nil)
				if err == nil {
					equal(t, "author posts", len(r.Author.Posts.Edges), min(first, 13))
					equal(t, "archive", len(r.Author.Archive), 2)
				}
				return err
			}, 3},
			{"author page by slug, backward", func() error {
				r, err := AuthorBySlug(ctx, s.client, "ada-lovelace", nil, nil, &first, nil, nil, nil)
				if err == nil {
					equal(t, "author posts", len(r.Author.Posts.Edges), min(first, 13))
				}
				return err
			}, 3},
			{"post page with HTML, table of contents, cover and SEO", func() error {
				r, err := FullPostPage(ctx, s.client, b.commented)
				if err == nil {
					equal(t, "toc", r.Post.Toc[0].Anchor, "h-post-24")
					equal(t, "comments", len(r.Post.Comments.Edges), 6)
				}
				return err
			}, 4},
			{"post page with previous and next, in the blog and a category", func() error {
				r, err := PostArticle(ctx, s.client, "post-12", "go")
				if err == nil {
					equal(t, "previous", r.Post.Previous.Slug, "post-11")
					equal(t, "next in category", r.Post.NextInCategory.Slug, "post-13")
				}
				return err
			}, 2 + 1 + 1 + 1 + 1},
			{"month archive", func() error {
				from, to := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
				r, err := MonthArchivePage(ctx, s.client, from, to, &first, nil)
				if err == nil {
					equal(t, "february", r.Posts.TotalCount, 13)
					equal(t, "months", len(r.Archive), 2)
				}
				return err
			}, 2},
			{"feed backward", func() error {
				r, err := FeedPage(ctx, s.client, nil, nil, &first, nil, nil, nil)
				if err == nil {
					equal(t, "feed posts", len(r.Posts.Edges), min(first, 25))
				}
				return err
			}, 2},
			{"category page with rendered bodies", func() error {
				r, err := CategoryPageWithHTML(ctx, s.client, "go", &first)
				if err == nil && !strings.Contains(r.Category.Posts.Edges[0].Node.BodyHtml, "<h1") {
					t.Errorf("bodyHtml %q", r.Category.Posts.Edges[0].Node.BodyHtml)
				}
				return err
			}, 3},
			{"preview", func() error {
				r, err := Preview(ctx, s.client, preview)
				if err == nil {
					equal(t, "previewed", r.Post.Id, b.draft)
				}
				return err
			}, 1},
			{"static page by slug", func() error {
				r, err := PageBySlug(ctx, s.client, "page-3")
				if err == nil && !strings.Contains(r.Page.BodyHtml, "<h1") {
					t.Errorf("bodyHtml %q", r.Page.BodyHtml)
				}
				return err
			}, 2},
			{"static pages for a menu", func() error {
				r, err := Pages(ctx, s.client, &first, nil, nil, nil, nil)
				if err == nil {
					equal(t, "pages", len(r.Pages.Edges), min(first, 25))
				}
				return err
			}, 1},
			{"site settings, held by the server", func() error {
				_, err := Site(ctx, s.client)
				return err
			}, 0},
		}
		for _, c := range cases {
			if err := c.run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := s.requests()
			t.Logf("first=%d %s: %d requests %v (budget %d)", first, c.name, total(got), got, c.budget)
			if total(got) > c.budget {
				t.Errorf("first=%d %s: %d DynamoDB requests %v, budget %d", first, c.name, total(got), got, c.budget)
			}
		}
	}
}

// checkReadCost checks the cost an answer to a query shows: the requests
// the server counted, within the budget, read capacity in the half units
// DynamoDB bills, and no write capacity.
func checkReadCost(t *testing.T, what string, cost graph.Cost, requests, budget int) {
	t.Helper()
	if cost.DynamoDBRequests != requests || cost.DynamoDBRequests > budget {
		t.Errorf("%s: extensions.cost shows %d DynamoDB requests; the server counted %d, budget %d", what, cost.DynamoDBRequests, requests, budget)
	}
	units := cost.ReadCapacityUnits * 2
	if units <= 0 || units != float64(int(units)) || cost.WriteCapacityUnits != 0 {
		t.Errorf("%s: extensions.cost %+v, want read units in halves and no write units", what, cost)
	}
}

// TestCallBudgetsWithReaders checks the post page when readers comment:
// the commenters of a page, authors and readers, are one BatchGetItem,
// and the first replies of every thread come with their comments, so a
// page with 50 threads, some longer than a page of replies, stays within
// the budget. Every comment and reply, by an author or by a reader on
// their first comment or a later one, is one DynamoDB request: the
// server knows the post, the parent and the commenter from its own reads
// and writes, and its transaction checks that they have not changed.
func TestCallBudgetsWithReaders(t *testing.T) {
	s := newServer(t, publishReaders)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	writers := []graphql.Client{b.ada, b.grace}
	for i := range 30 {
		writers = append(writers, s.reader(fmt.Sprintf("reader-%d", i), fmt.Sprintf("Reader %d", i), ""))
	}
	var long []string
	for i := range 50 {
		c := ok[*PostCommentResponse](t)(PostComment(ctx, writers[i%len(writers)], AddCommentInput{PostId: b.post, Body: fmt.Sprintf("Comment %d", i)})).AddComment.Comment
		oneRequest(t, fmt.Sprintf("comment %d", i), s.requests())
		if i%10 == 0 {
			long = append(long, c.Id)
		}
		s.clock.Advance(time.Second)
	}
	for _, id := range long {
		for j := range storage.MaxReplyPage + 3 {
			ok[*PostCommentResponse](t)(PostComment(ctx, writers[(j+7)%len(writers)], AddCommentInput{PostId: b.post, Body: fmt.Sprintf("Reply %d", j), ParentId: &id}))
			oneRequest(t, fmt.Sprintf("reply %d to %s", j, id), s.requests())
			s.clock.Advance(time.Second)
		}
	}
	s.clock.Advance(time.Minute)
	cases := []struct {
		name   string
		run    func() error
		budget int
	}{
		{"post page with commenters", func() error {
			r, err := PostComments(ctx, s.client, b.slug, ptr(50), nil)
			if err == nil {
				equal(t, "comments", len(r.Post.Comments.Edges), 50)
				equal(t, "an author", r.Post.Comments.Edges[0].Node.Commenter.IsAuthor, true)
				equal(t, "a reader", r.Post.Comments.Edges[2].Node.Commenter.Name, "Reader 0")
			}
			return err
		}, 4},
		{"post page with replies", func() error {
			r, err := PostReplyPages(ctx, s.client, b.slug, ptr(3))
			if err == nil {
				thread := r.Post.Comments.Edges[0].Node.ReplyConnection
				equal(t, "replies", len(thread.Edges), 3)
				equal(t, "all replies", thread.TotalCount, storage.MaxReplyPage+3)
				equal(t, "more replies", thread.PageInfo.HasNextPage, true)
				equal(t, "reply by", thread.Edges[0].Node.Commenter.Name, "Reader 5")
			}
			return err
		}, 5},
		{"post page with the first replies listed (deprecated field)", func() error {
			r, err := PostThreads(ctx, s.client, b.slug)
			if err == nil {
				equal(t, "replies", len(r.Post.Comments.Edges[0].Node.Replies), storage.MaxReplyPage)
			}
			return err
		}, 5},
		{"the next replies of a thread", func() error {
			page := ok[*MoreRepliesResponse](t)(MoreReplies(ctx, s.client, long[0], ptr(storage.MaxReplyPage), nil))
			end := (*page.Node).(*MoreRepliesNodeComment).ReplyConnection.PageInfo.EndCursor
			r, err := MoreReplies(ctx, s.client, long[0], ptr(storage.MaxReplyPage), end)
			if err == nil {
				more := (*r.Node).(*MoreRepliesNodeComment).ReplyConnection
				equal(t, "the rest", len(more.Edges), 3)
				equal(t, "no more", more.PageInfo.HasNextPage, false)
			}
			return err
		}, 4}, // the comment and its post by id, the replies, their commenters
	}
	for _, c := range cases {
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := s.requests()
		t.Logf("%s: %d requests %v (budget %d)", c.name, total(got), got, c.budget)
		if total(got) > c.budget {
			t.Errorf("%s: %d DynamoDB requests %v, budget %d", c.name, total(got), got, c.budget)
		}
	}
}

// TestCostOnRequest checks extensions.cost where the server shows it only
// to requests that ask (X-Request-Cost), as outside the embedded mode, and
// only to admins: an answer without the header has none, nor has one to
// anyone else with it; an admin's with it has the cost of its
// operation and is never stored by caches, a write shows the write
// capacity it consumed, and a request that fails before it runs shows
// that it cost nothing.
func TestCostOnRequest(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.CacheMaxAge = time.Minute })
	b := s.seedBlog(t)
	const query = `query($slug: String!) { category(slug: $slug) { name posts(first: 5) { edges { node { title } } } } }`
	get := s.getQueryURL(query, `{"slug":"go"}`, "")
	type answer struct {
		Errors     []any
		Extensions struct{ Cost *graph.Cost }
	}
	decode := func(r httpAnswer) answer {
		t.Helper()
		var a answer
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			t.Fatalf("answer %s: %v", r.body, err)
		}
		return a
	}

	admin := map[string]string{"Authorization": "Bearer " + s.signed(s.claims("operator", "admin"))}
	plain := s.fetch(t, http.MethodGet, get, "", admin)
	if a := decode(plain); a.Extensions.Cost != nil || len(a.Errors) > 0 {
		t.Errorf("answer without the header: %s, want no cost", plain.body)
	}

	// Only an admin's answer shows the cost: anyone else could tell from
	// it what the answer leaves out.
	for _, who := range []map[string]string{{}, {"Authorization": "Bearer " + s.signed(s.claims("ada", "author"))}} {
		who[graph.CostHeader] = "1"
		if r := s.fetch(t, http.MethodGet, get, "", who); decode(r).Extensions.Cost != nil {
			t.Errorf("answer to %v: %s, want no cost", who, r.body)
		}
	}
	anonymous := s.fetch(t, http.MethodGet, get, "", nil)
	equal(t, "Cache-Control without the header", anonymous.header.Get("Cache-Control"), "public, max-age=60")

	asked := s.fetch(t, http.MethodGet, get, "", map[string]string{graph.CostHeader: "1", "Authorization": admin["Authorization"]})
	a := decode(asked)
	if a.Extensions.Cost == nil {
		t.Fatalf("answer with the header: %s, want a cost", asked.body)
	}
	checkReadCost(t, "category page", *a.Extensions.Cost, total(s.requests()), 2)
	equal(t, "Cache-Control with the header", asked.header.Get("Cache-Control"), "no-store")

	body := `{"query":` + jsonString(`mutation($id: ID!) { addComment(input: {postId: $id, body: "Costs?"}) { comment { id } } }`) +
		`,"variables":{"id":` + jsonString(b.published[0]) + `}}`
	write := s.fetch(t, http.MethodPost, s.url, body, map[string]string{
		graph.CostHeader: "true", "Authorization": "Bearer " + s.signed(s.claims("ada", "author", "admin")),
	})
	wa := decode(write)
	switch c := wa.Extensions.Cost; {
	case c == nil || len(wa.Errors) > 0:
		t.Fatalf("addComment: %s, want its cost", write.body)
	case c.DynamoDBRequests != total(s.requests()) || c.WriteCapacityUnits < 2:
		t.Errorf("addComment cost %+v, want the %d requests counted and 2 write units at least (a transaction)", *c, total(s.requests()))
	}

	refused := s.fetch(t, http.MethodPost, s.url, `{"query":"{ nope }"}`, map[string]string{graph.CostHeader: "1", "Authorization": admin["Authorization"]})
	if c := decode(refused).Extensions.Cost; c == nil || *c != (graph.Cost{}) {
		t.Errorf("a request that does not validate: %s, want a cost of nothing", refused.body)
	}
}

// oneRequest fails the test unless a write made one DynamoDB request, its
// TransactWriteItems.
func oneRequest(t *testing.T, what string, got map[string]int) {
	t.Helper()
	if total(got) != 1 || got["TransactWriteItems"] != 1 {
		t.Errorf("%s: DynamoDB requests %v, want one TransactWriteItems", what, got)
	}
}

// TestPageAndSiteWriteBudgets checks the requests of the writes of static
// pages and site settings: a read of what the write depends on (the page
// with the slug it takes, in one BatchGetItem; the site item) and one
// TransactWriteItems.
func TestPageAndSiteWriteBudgets(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	want := map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}
	pg := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "About", Slug: "about", Body: ptr("Text.")})).CreatePage.Page
	sameRequests(t, "createPage", s.requests(), want)
	ok[*UpdatePageResponse](t)(UpdatePage(ctx, s.admin, UpdatePageInput{Id: pg.Id, ExpectedVersion: 1, Slug: ptr("about-us"), Body: ptr("More.")}))
	sameRequests(t, "updatePage with a new slug", s.requests(), want)
	ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: pg.Id}))
	sameRequests(t, "publishPage", s.requests(), want)
	ok[*UnpublishPageResponse](t)(UnpublishPage(ctx, s.admin, UnpublishPageInput{Id: pg.Id}))
	sameRequests(t, "unpublishPage", s.requests(), want)
	ok[*DeletePageResponse](t)(DeletePage(ctx, s.admin, DeletePageInput{Id: pg.Id}))
	sameRequests(t, "deletePage", s.requests(), want)
	ok[*UpdateSiteResponse](t)(UpdateSite(ctx, s.admin, UpdateSiteInput{ExpectedVersion: 0, Title: ptr("Notes")}))
	sameRequests(t, "updateSite", s.requests(), map[string]int{"GetItem": 1, "TransactWriteItems": 1})
}

// TestCallBudgetsOfTagsAndCoAuthors checks the requests of the pages that
// co-authors and tags add, at two page sizes: a tag's page is the tag and
// one Query of its posts, forward or backward; the list of tags one Query;
// a co-authored post's bylines and tags come with it; a co-author's page
// lists the posts they co-wrote from their own copies.
func TestCallBudgetsOfTagsAndCoAuthors(t *testing.T) {
	s := newServer(t)
	s.seedCoBlog(t)
	ctx := context.Background()
	for _, first := range []int{20, 100} {
		cases := []struct {
			name   string
			run    func() error
			budget int
		}{
			{"tag page", func() error {
				r, err := TagPage(ctx, s.client, "go", &first, nil, nil, nil)
				if err == nil {
					equal(t, "tag page posts", len(r.Tag.Posts.Edges), 6)
					equal(t, "bylines", len(r.Tag.Posts.Edges[1].Node.Authors), 3)
					equal(t, "totalCount", r.Tag.Posts.TotalCount, 6)
				}
				return err
			}, 2},
			{"tag page backward", func() error {
				r, err := TagPage(ctx, s.client, "dynamodb", nil, nil, &first, nil)
				if err == nil {
					equal(t, "tag page posts", len(r.Tag.Posts.Edges), 5)
				}
				return err
			}, 2},
			{"tags", func() error {
				r, err := TagList(ctx, s.client, &first, nil)
				if err == nil {
					equal(t, "tags", len(r.Tags.Edges), 2)
				}
				return err
			}, 1},
			{"co-authored post page with bylines and tags", func() error {
				r, err := CoAuthoredPost(ctx, s.client, "together-3")
				if err == nil {
					equal(t, "authors", len(r.Post.Authors), 3)
				}
				return err
			}, 2},
			{"co-author's page by slug", func() error {
				r, err := CoAuthorPage(ctx, s.client, "ada-lovelace", &first)
				if err == nil {
					equal(t, "co-written posts", len(r.Author.Posts.Edges), 5)
				}
				return err
			}, 3},
		}
		s.requests()
		for _, c := range cases {
			if err := c.run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := s.requests()
			t.Logf("first=%d %s: %d requests %v (budget %d)", first, c.name, total(got), got, c.budget)
			if total(got) > c.budget {
				t.Errorf("first=%d %s: %d DynamoDB requests %v, budget %d", first, c.name, total(got), got, c.budget)
			}
		}
	}
}

// TestCallBudgetsOfFeaturedSeriesAndRevisions checks the requests of the
// featured list, a series page, a post's place in its series and its
// revisions, and of their writes, at two page sizes (docs/table.md).
func TestCallBudgetsOfFeaturedSeriesAndRevisions(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ada := b.writers[0]
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, ada, CreateSeriesInput{Slug: "tour", Title: "Tour"}))
	writes := []struct {
		name   string
		run    func() error
		budget int
	}{
		{"setPostFeatured", func() error {
			_, err := SetPostFeatured(ctx, s.admin, SetPostFeaturedInput{Id: b.published[0], Featured: true})
			return err
		}, 2},
		{"setPostFeatured by the post's author", func() error {
			_, err := SetPostFeatured(ctx, ada, SetPostFeaturedInput{Id: b.published[2], Featured: true})
			return err
		}, 3},
		{"addPostToSeries by an admin", func() error {
			_, err := AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "tour", PostId: b.published[0]})
			return err
		}, 3},
		{"addPostToSeries by the series' owner", func() error {
			_, err := AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "tour", PostId: b.published[2]})
			return err
		}, 5},
		{"moveSeriesPost", func() error {
			_, err := MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "tour", PostId: b.published[2], Position: 1})
			return err
		}, 3},
		{"updatePost keeping a revision", func() error {
			_, err := UpdatePost(ctx, s.admin, UpdatePostInput{Id: b.published[4], ExpectedVersion: 2, Title: ptr("Edited")})
			return err
		}, 2},
	}
	for _, w := range writes {
		if err := w.run(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		got := s.requests()
		t.Logf("%s: %d requests %v (budget %d)", w.name, total(got), got, w.budget)
		if total(got) > w.budget {
			t.Errorf("%s: %d DynamoDB requests %v, budget %d", w.name, total(got), got, w.budget)
		}
	}
	for i := 4; i <= 24; i += 2 {
		ok[*SetPostFeaturedResponse](t)(SetPostFeatured(ctx, s.admin, SetPostFeaturedInput{Id: b.published[i], Featured: true}))
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "tour", PostId: b.published[i]}))
	}
	revised := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, s.admin, b.published[4], nil, nil)).Post
	rev := revised.Revisions.Edges[0].Node.Id
	for _, first := range []int{20, 100} {
		reads := []struct {
			name   string
			run    func() error
			budget int
		}{
			{"home page: 3 featured posts and the feed", func() error {
				r, err := HomePage(ctx, s.client, ptr(3), &first)
				if err == nil {
					equal(t, "featured", len(r.FeaturedPosts.Edges), 3)
					equal(t, "feed", len(r.Posts.Edges), min(first, 25))
				}
				return err
			}, 1 + 1},
			{"featured posts", func() error {
				r, err := HomePage(ctx, s.client, &first, ptr(1))
				if err == nil {
					equal(t, "featured", len(r.FeaturedPosts.Edges), 13)
				}
				return err
			}, 1 + 1},
			{"series page", func() error {
				r, err := SeriesPosts(ctx, s.client, "tour", &first, nil)
				if err == nil {
					equal(t, "series posts", len(r.Series.Posts.Edges), 13)
				}
				return err
			}, 3},
			{"post page with its place in its series", func() error {
				r, err := PostInSeries(ctx, s.client, "post-6")
				if err == nil && (r.Post.Series == nil || r.Post.Series.Previous == nil || r.Post.Series.Next == nil) {
					t.Errorf("post-6 in its series: %+v", r.Post.Series)
				}
				return err
			}, 4},
			{"post with its revisions", func() error {
				_, err := PostRevisions(ctx, s.admin, b.published[4], &first, nil)
				return err
			}, 2 + 1}, // the newest revision, a title edit's, holds no body: +1 GetItem of the post's body item
		}
		for _, c := range reads {
			if err := c.run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := s.requests()
			t.Logf("first=%d %s: %d requests %v (budget %d)", first, c.name, total(got), got, c.budget)
			if total(got) > c.budget {
				t.Errorf("first=%d %s: %d DynamoDB requests %v, budget %d", first, c.name, total(got), got, c.budget)
			}
		}
	}
	ok[*RestorePostRevisionResponse](t)(RestorePostRevision(ctx, s.admin, RestorePostRevisionInput{PostId: b.published[4], RevisionId: rev, ExpectedVersion: revised.Version}))
	got := s.requests()
	t.Logf("restorePostRevision: %d requests %v", total(got), got)
	// The revision, a title edit's, holds no body: +1 Query past it (none)
	// and +1 GetItem of the post's body item.
	if total(got) > 3+2 {
		t.Errorf("restorePostRevision: %d DynamoDB requests %v, budget 5", total(got), got)
	}
	s.consistent()
}
