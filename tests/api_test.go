package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

func TestPostLifecycleThroughTheAPI(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ada := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{
		Subject: ptr("ada"), Name: "Ada", Bio: ptr("Mathematician"), AvatarUrl: ptr("https://example.com/ada.png"),
	})).CreateAuthor.Author
	equal(t, "avatar", *ada.AvatarUrl, "https://example.com/ada.png")
	asAda := s.as("ada", auth.RoleAuthor)
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "go", Name: "Go", Description: ptr("The language")}))
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "aws", Name: "AWS"}))

	// The publication's first post counts its posts for the quota once;
	// the create measured is one after it.
	first := ok[*CreatePostResponse](t)(CreatePost(ctx, asAda, CreatePostInput{Title: "First", Slug: "first"})).CreatePost.Post
	ok[*DeletePostResponse](t)(DeletePost(ctx, asAda, DeletePostInput{Id: first.Id}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, asAda, CreatePostInput{
		Title: "Hello", Slug: "hello", Body: ptr("# Hi"), Categories: []string{"go"},
	})).CreatePost.Post
	equal(t, "status", p.Status, PostStatusDraft)
	equal(t, "version", p.Version, 1)
	write := s.requests()
	equal(t, "createPost transactions", write["TransactWriteItems"], 1)

	t.Run("a draft is not public", func(t *testing.T) {
		_, err := PostPage(ctx, s.client, "hello")
		equal(t, "code", code(err), "NOT_FOUND")
		_, err = PostByID(ctx, s.client, p.Id)
		equal(t, "code", code(err), "NOT_FOUND")
	})

	pub := ok[*PublishPostResponse](t)(PublishPost(ctx, asAda, PublishPostInput{Id: p.Id, ExpectedVersion: ptr(1)})).PublishPost.Post
	equal(t, "published", pub.Status, PostStatusPublished)
	equal(t, "publishedAt", pub.PublishedAt.Equal(start), true)
	s.consistent()

	t.Run("a stale version is a conflict naming the current one", func(t *testing.T) {
		_, err := UpdatePost(ctx, asAda, UpdatePostInput{Id: p.Id, ExpectedVersion: 1, Title: ptr("Stale")})
		equal(t, "code", code(err), "CONFLICT")
		var list gqlerror.List
		if !errors.As(err, &list) {
			t.Fatalf("err = %v, want GraphQL errors", err)
		}
		equal(t, "currentVersion", list[0].Extensions["currentVersion"], any(float64(2)))
		equal(t, "reason", list[0].Extensions["reason"], any("VERSION_CONFLICT"))
		if !strings.Contains(err.Error(), "version") {
			t.Errorf("message %q does not mention the version", err)
		}
		equal(t, "title after the conflict", ok[*PostByIDResponse](t)(PostByID(ctx, s.client, p.Id)).Post.Title, "Hello")
	})

	upd := ok[*UpdatePostResponse](t)(UpdatePost(ctx, asAda, UpdatePostInput{
		Id: p.Id, ExpectedVersion: 2, Title: ptr("Hello, world"), Slug: ptr("hello-world"), Categories: []string{"aws", "go"},
	})).UpdatePost.Post
	equal(t, "title", upd.Title, "Hello, world")
	equal(t, "categories", len(upd.Categories), 2)
	equal(t, "first category name", upd.Categories[0].Name, "AWS")
	s.consistent()
	page := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "hello-world"))
	equal(t, "body", page.Post.Body, "# Hi")
	old := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "hello"))
	equal(t, "old slug leads to the post, with its new slug", old.Post.Slug, "hello-world")

	c := ok[*AddCommentResponse](t)(AddComment(ctx, asAda, AddCommentInput{PostId: p.Id, Body: "First!"})).AddComment.Comment
	equal(t, "comment author", c.Author.Name, "Ada")
	equal(t, "post comment count", c.Post.CommentCount, 1)
	r := ok[*AddCommentResponse](t)(AddComment(ctx, asAda, AddCommentInput{PostId: p.Id, Body: "Reply", ParentId: &c.Id})).AddComment.Comment
	equal(t, "reply parent", r.Parent.Id, c.Id)
	node := ok[*NodeResponse](t)(Node(ctx, s.client, c.Id))
	equal(t, "comment node", *(*node.Node).GetTypename(), "Comment")
	del := ok[*DeleteCommentResponse](t)(DeleteComment(ctx, asAda, DeleteCommentInput{Id: c.Id})).DeleteComment
	equal(t, "tombstone", del.Comment.Deleted, true)
	equal(t, "deletedCommentId", del.DeletedCommentId, c.Id)
	s.consistent()

	ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, asAda, UpdateAuthorInput{Id: ada.Id, Name: ptr("Ada Lovelace")}))
	ok[*UpdateCategoryResponse](t)(UpdateCategory(ctx, s.admin, UpdateCategoryInput{Slug: ptr("aws"), Name: ptr("Amazon Web Services")}))
	cat := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", nil, nil))
	n := cat.Category.Posts.Edges[0].Node
	equal(t, "renamed author in list", n.Author.Name, "Ada Lovelace")
	equal(t, "renamed category in list", n.Categories[0].Name, "Amazon Web Services")
	s.consistent()

	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, asAda, UnpublishPostInput{Id: p.Id}))
	feed := ok[*FeedResponse](t)(Feed(ctx, s.client, nil, nil))
	equal(t, "feed after unpublish", len(feed.Posts.Edges), 0)
	// A draft's copied category names are not kept up to date; it shows
	// the category's current name all the same.
	ok[*UpdateCategoryResponse](t)(UpdateCategory(ctx, s.admin, UpdateCategoryInput{Slug: ptr("aws"), Name: ptr("AWS")}))
	drafts := ok[*AuthorDraftsResponse](t)(AuthorDrafts(ctx, asAda, ada.Id, nil, nil)).Author.Drafts.Edges
	equal(t, "drafts", len(drafts), 1)
	equal(t, "renamed category of a draft", drafts[0].Node.Categories[0].Name, "AWS")
	ok[*DeletePostResponse](t)(DeletePost(ctx, asAda, DeletePostInput{Id: p.Id}))
	_, err := PostByID(ctx, s.client, p.Id)
	equal(t, "deleted", code(err), "NOT_FOUND")
	s.consistent()
}

func TestScheduledPostAppearsWhenItsTimeComes(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	has := func() bool {
		feed := ok[*FeedResponse](t)(Feed(ctx, s.client, ptr(100), nil))
		for _, e := range feed.Posts.Edges {
			if e.Node.Id == b.scheduled {
				return true
			}
		}
		return false
	}
	// Every count equals what the reader can page through.
	counts := func(when string, public int) {
		t.Helper()
		feed := ok[*FeedResponse](t)(Feed(ctx, s.client, ptr(100), nil)).Posts
		equal(t, "feed "+when, [2]int{feed.TotalCount, len(feed.Edges)}, [2]int{public, public})
		cat := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", ptr(100), nil)).Category
		equal(t, "category "+when, [3]int{cat.PostCount, cat.Posts.TotalCount, len(cat.Posts.Edges)}, [3]int{public, public, public})
		own := 0
		for _, reader := range []graphql.Client{s.client, b.writers[0]} {
			a := ok[*AuthorPageResponse](t)(AuthorPage(ctx, reader, b.authors[0], ptr(100), nil)).Author
			equal(t, "author's list, its count "+when, a.Posts.TotalCount, len(a.Posts.Edges))
			own = len(a.Posts.Edges) - a.PostCount
		}
		if when == "before its time" {
			equal(t, "scheduled posts in the author's own list", own, 1)
		}
	}
	counts("before its time", 25)
	equal(t, "in feed before its time", has(), false)
	_, err := PostByID(ctx, s.client, b.scheduled)
	equal(t, "by id before its time", code(err), "NOT_FOUND")
	// A server's sweep, which makes the post go live for the change feed,
	// finds nothing due before its time.
	equal(t, "posts gone live before its time", ok[int](t)(s.store.GoLive(ctx)), 0)
	equal(t, "in feed after a sweep before its time", has(), false)
	s.clock.Advance(3 * time.Hour)
	equal(t, "in feed after its time", has(), true)
	p := ok[*PostByIDResponse](t)(PostByID(ctx, s.client, b.scheduled))
	equal(t, "status after its time", p.Post.Status, PostStatusPublished)
	counts("after its time", 26)
	// Readers see it from its time on, before the sweep and after it: going
	// live changes nothing they see.
	equal(t, "posts gone live after its time", ok[int](t)(s.store.GoLive(ctx)), 1)
	after := ok[*PostByIDResponse](t)(PostByID(ctx, s.client, b.scheduled))
	equal(t, "the post after it went live", fmt.Sprintf("%+v", *after.Post), fmt.Sprintf("%+v", *p.Post))
	counts("after it went live", 26)
	s.consistent()
}

func TestPaginationToTheEnd(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	var seen []string
	var after *string
	for pages := 0; ; pages++ {
		if pages > 30 {
			t.Fatal("pagination does not end")
		}
		r := ok[*FeedResponse](t)(Feed(ctx, s.client, ptr(4), after))
		equal(t, "totalCount", r.Posts.TotalCount, 25) // the scheduled post not yet
		for _, e := range r.Posts.Edges {
			seen = append(seen, e.Node.Id)
		}
		if !r.Posts.PageInfo.HasNextPage {
			break
		}
		after = r.Posts.PageInfo.EndCursor
	}
	equal(t, "posts seen", len(seen), len(b.published))
	for i, id := range seen {
		if id != b.published[len(b.published)-1-i] {
			t.Fatalf("position %d: %s, want %s", i, id, b.published[len(b.published)-1-i])
		}
	}
	authors := ok[*AuthorsResponse](t)(Authors(ctx, s.client, ptr(2), nil, nil, nil))
	equal(t, "authors totalCount", authors.Authors.TotalCount, 3)
	equal(t, "authors hasNext", authors.Authors.PageInfo.HasNextPage, true)
	rest := ok[*AuthorsResponse](t)(Authors(ctx, s.client, ptr(2), authors.Authors.PageInfo.EndCursor, nil, nil))
	equal(t, "last author page", len(rest.Authors.Edges), 1)
	cats := ok[*CategoriesResponse](t)(Categories(ctx, s.client))
	equal(t, "categories", len(cats.Categories), 2)
}

func TestErrorCodes(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	cursor := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", ptr(1), nil)).Category.Posts.PageInfo.EndCursor
	cases := []struct {
		name string
		call func() error
		code string
	}{
		{"missing post", func() error { _, err := PostPage(ctx, s.client, "no-such-post"); return err }, "NOT_FOUND"},
		{"missing category", func() error { _, err := CategoryPage(ctx, s.client, "nope", nil, nil); return err }, "NOT_FOUND"},
		{"page too large", func() error { _, err := Feed(ctx, s.client, ptr(101), nil); return err }, "BAD_USER_INPUT"},
		{"page too small", func() error { _, err := Feed(ctx, s.client, ptr(0), nil); return err }, "BAD_USER_INPUT"},
		{"cursor of another list", func() error { _, err := CategoryPage(ctx, s.client, "dynamodb", nil, cursor); return err }, "BAD_USER_INPUT"},
		{"garbage cursor", func() error { _, err := Feed(ctx, s.client, nil, ptr("!!!")); return err }, "BAD_USER_INPUT"},
		{"author id used as post id", func() error { _, err := PostByID(ctx, s.client, b.authors[0]); return err }, "BAD_USER_INPUT"},
		{"tampered global id", func() error { _, err := Node(ctx, s.client, "Zm9vOmJhcg"); return err }, "BAD_USER_INPUT"},
		{"bad slug", func() error {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "T", Slug: "Not A Slug"})
			return err
		}, "BAD_USER_INPUT"},
		{"slug taken", func() error {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "T", Slug: "post-1"})
			return err
		}, "CONFLICT"},
		{"stale version", func() error {
			_, err := UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: b.published[0], ExpectedVersion: 1, Title: ptr("x")})
			return err
		}, "CONFLICT"},
		{"comment on a draft", func() error {
			_, err := AddComment(ctx, b.writers[1], AddCommentInput{PostId: b.draft, Body: "x"})
			return err
		}, "NOT_FOUND"},
		{"empty comment", func() error {
			_, err := AddComment(ctx, b.writers[0], AddCommentInput{PostId: b.published[0], Body: " "})
			return err
		}, "BAD_USER_INPUT"},
		{"idempotency key reused with other input", func() error {
			in := CreateCategoryInput{Slug: "k1", Name: "K", IdempotencyKey: ptr("same-key")}
			if _, err := CreateCategory(ctx, s.admin, in); err != nil {
				return err
			}
			in.Name = "Other"
			_, err := CreateCategory(ctx, s.admin, in)
			return err
		}, "BAD_USER_INPUT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			equal(t, "code", code(err), c.code)
		})
	}
	s.consistent()

	t.Run("a body that is not JSON is a bad request", func(t *testing.T) {
		resp, err := http.Post(s.url, "application/json", strings.NewReader(`{bad`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		equal(t, "status", resp.StatusCode, http.StatusBadRequest)
		var body struct {
			Errors gqlerror.List `json:"errors"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Errors) == 0 {
			t.Fatalf("decode: %v", err)
		}
		equal(t, "code", body.Errors[0].Extensions["code"], any("BAD_REQUEST"))
	})

	t.Run("an internal failure says nothing of its cause", func(t *testing.T) {
		db := ok[*dynamodb.Client](t)(storage.NewClient(ctx, dynamotest.ClientConfig(t, nil)))
		h := graph.NewHandler(storage.New(db, "no-such-table"), graph.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"query":"{ category(slug: \"go\") { name } }"}`))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		var resp struct {
			Errors gqlerror.List `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) == 0 {
			t.Fatalf("response %s: %v", rec.Body, err)
		}
		equal(t, "code", resp.Errors[0].Extensions["code"], any("INTERNAL"))
		if strings.Contains(rec.Body.String(), "no-such-table") || strings.Contains(strings.ToLower(rec.Body.String()), "dynamodb") {
			t.Errorf("response leaks the cause: %s", rec.Body)
		}
	})
}

// TestMutationsOfOneRequestSeeEachOthersWrites sends two mutations that
// read a category through the request's loader around a third that renames
// it: the second payload shows the new name, not what the first one read.
func TestMutationsOfOneRequestSeeEachOthersWrites(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	republish := `{ post { categories { slug name description } } }`
	q := fmt.Sprintf(`mutation {
		before: publishPost(input: {id: %[1]q}) %[2]s
		rename: updateCategory(input: {slug: "go", name: "Golang"}) { category { name } }
		after: publishPost(input: {id: %[1]q}) %[2]s
	}`, b.published[0], republish)
	a := s.fetch(t, http.MethodPost, s.url, request(q, nil),
		map[string]string{"Authorization": "Bearer " + s.signed(s.claims("admin", auth.RoleAdmin))})
	var res struct {
		Errors []json.RawMessage
		Data   map[string]struct {
			Post struct{ Categories []struct{ Slug, Name string } }
		}
	}
	if err := json.Unmarshal([]byte(a.body), &res); err != nil || len(res.Errors) > 0 {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	names := func(alias string) map[string]string {
		out := map[string]string{}
		for _, c := range res.Data[alias].Post.Categories {
			out[c.Slug] = c.Name
		}
		return out
	}
	equal(t, "go before the rename", names("before")["go"], "Go")
	equal(t, "go after the rename", names("after")["go"], "Golang")
	s.consistent()
}

// TestExpectedVersionZeroIsAConflict sends expectedVersion 0 (and -1),
// versions no item has, to each mutation that takes one: each fails with
// CONFLICT naming the current version and writes nothing. Only an omitted
// expectedVersion (where it is optional) writes whatever the version.
func TestExpectedVersionZeroIsAConflict(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	post := b.published[0] // ada's, version 2
	mutations := []struct {
		name    string
		call    func(v *int) error
		current int64
	}{
		{"updateAuthor", func(v *int) error {
			_, err := UpdateAuthor(ctx, s.admin, UpdateAuthorInput{Id: b.authors[0], ExpectedVersion: v, Bio: ptr("New bio")})
			return err
		}, 1},
		{"updateCategory", func(v *int) error {
			_, err := UpdateCategory(ctx, s.admin, UpdateCategoryInput{Slug: ptr("go"), ExpectedVersion: v, Description: ptr("New")})
			return err
		}, 1},
		{"publishPost", func(v *int) error {
			_, err := PublishPost(ctx, s.admin, PublishPostInput{Id: post, ExpectedVersion: v})
			return err
		}, 2},
		{"unpublishPost", func(v *int) error {
			_, err := UnpublishPost(ctx, s.admin, UnpublishPostInput{Id: post, ExpectedVersion: v})
			return err
		}, 2},
		{"deletePost", func(v *int) error {
			_, err := DeletePost(ctx, s.admin, DeletePostInput{Id: post, ExpectedVersion: v})
			return err
		}, 2},
		{"updatePost", func(v *int) error {
			_, err := UpdatePost(ctx, s.admin, UpdatePostInput{Id: post, ExpectedVersion: *v, Title: ptr("New title")})
			return err
		}, 2},
	}
	for _, m := range mutations {
		for _, v := range []int{0, -1} {
			t.Run(fmt.Sprintf("%s with %d", m.name, v), func(t *testing.T) {
				before := s.snapshot()
				err := m.call(ptr(v))
				equal(t, "code", code(err), "CONFLICT")
				var list gqlerror.List
				if errors.As(err, &list) && len(list) > 0 {
					equal(t, "currentVersion", fmt.Sprint(list[0].Extensions["currentVersion"]), fmt.Sprint(m.current))
				}
				s.unchanged(before)
			})
		}
	}
	t.Run("omitted, the write happens", func(t *testing.T) {
		for _, m := range []int{0, 1} {
			if err := mutations[m].call(nil); err != nil {
				t.Errorf("%s without expectedVersion: %v", mutations[m].name, err)
			}
		}
	})
}
