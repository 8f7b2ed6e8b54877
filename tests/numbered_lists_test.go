package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/blogql/blog/auth"
)

// numberedCase is one page a test reads, and what it must hold.
type numberedCase struct {
	name   string
	number int
}

// pagesOf returns the cases of a list of n posts in pages of size: the
// first page, a middle one, the last and the first past the end.
func pagesOf(n, size int) []numberedCase {
	last := (n + size - 1) / size
	return []numberedCase{{"first", 1}, {"middle", (last + 1) / 2}, {"last", last}, {"past the end", last + 1}}
}

// TestNumberedAuthorPages reads an author's numbered pages, co-written
// posts included, and compares them with author.posts walked by cursor:
// the same posts, oldest first, the first page, a middle one, the last
// and one past the end (no posts, the list's totalPages), each within two
// DynamoDB requests for the author and the page.
func TestNumberedAuthorPages(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ada := b.writers[0]
	for i := range 10 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: fmt.Sprintf("More %d", i), Slug: fmt.Sprintf("more-%d", i), Categories: []string{"go"}})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
	}
	// Grace's post 1 is co-written by Ada: on Ada's list too.
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: b.published[1], ExpectedVersion: 2, CoAuthors: []string{b.authors[0]}}))
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for after := (*string)(nil); ; {
		first := 9
		r := ok[*AuthorPageResponse](t)(AuthorPage(ctx, s.client, b.authors[0], &first, after)).Author.Posts
		for _, e := range r.Edges {
			want = append(want, e.Node.Id)
		}
		if !r.PageInfo.HasNextPage {
			break
		}
		after = r.PageInfo.EndCursor
	}
	slices.Reverse(want)
	if len(want) != 24 || !slices.Contains(want, b.published[1]) {
		t.Fatalf("Ada's posts by cursor: %d, want 24 with Grace's post 1", len(want))
	}
	size := 10
	for _, c := range pagesOf(len(want), size) {
		r := ok[*NumberedAuthorPageResponse](t)(NumberedAuthorPage(ctx, s.client, b.authors[0], c.number, &size)).Author
		if got := total(s.requests()); got > 2 {
			t.Errorf("%s page (%d): %d DynamoDB requests %v, budget 2", c.name, c.number, got, s.requests())
		}
		equal(t, c.name+" page name", r.Name, "Ada Lovelace")
		pg := r.PostPage
		equal(t, c.name+" page totalPages", pg.TotalPages, 3)
		equal(t, c.name+" page totalCount", pg.TotalCount, len(want))
		var got []string
		for _, p := range pg.Nodes {
			got = append(got, p.Id)
		}
		from, to := min((c.number-1)*size, len(want)), min(c.number*size, len(want))
		if !slices.Equal(got, want[from:to]) {
			t.Errorf("%s page (%d) holds %v, want %v", c.name, c.number, got, want[from:to])
		}
	}
	// An author that does not exist is NOT_FOUND, a bad size
	// BAD_USER_INPUT with no request.
	if _, err := NumberedAuthorPage(ctx, s.client, "QXV0aG9yOm5vYm9keQ", 1, &size); code(err) != "NOT_FOUND" {
		t.Errorf("page of an author that does not exist: %v, want NOT_FOUND", err)
	}
	bad := 15
	if _, err := NumberedAuthorPage(ctx, s.client, b.authors[0], 1, &bad); code(err) != "BAD_USER_INPUT" {
		t.Errorf("size 15: %v, want BAD_USER_INPUT", err)
	}
	s.consistent()
}

// TestNumberedSeriesPages reads a series' numbered pages: by place in
// its order, a draft's place kept (a reader's page is one post short), in
// two DynamoDB requests for the series and the page.
func TestNumberedSeriesPages(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ada := b.writers[0]
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, ada, CreateSeriesInput{Slug: "tour", Title: "Tour"}))
	var order []string
	for i := range 22 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: fmt.Sprintf("Part %d", i), Slug: fmt.Sprintf("part-%d", i)})).CreatePost.Post
		if i != 13 { // part 13 stays a draft
			ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
		}
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "tour", PostId: p.Id}))
		order = append(order, p.Id)
	}
	size := 10
	for _, c := range pagesOf(len(order), size) {
		r := ok[*NumberedSeriesPageResponse](t)(NumberedSeriesPage(ctx, s.client, "tour", c.number, &size)).Series
		if got := total(s.requests()); got > 2 {
			t.Errorf("%s page (%d): %d DynamoDB requests %v, budget 2", c.name, c.number, got, s.requests())
		}
		equal(t, c.name+" page title", r.Title, "Tour")
		equal(t, c.name+" page totalPages", r.PostPage.TotalPages, 3)
		equal(t, c.name+" page totalCount", r.PostPage.TotalCount, len(order))
		var got []string
		for _, p := range r.PostPage.Nodes {
			got = append(got, p.Id)
		}
		from, to := min((c.number-1)*size, len(order)), min(c.number*size, len(order))
		want := slices.DeleteFunc(slices.Clone(order[from:to]), func(id string) bool { return id == order[13] })
		if !slices.Equal(got, want) {
			t.Errorf("%s page (%d) holds %v, want %v", c.name, c.number, got, want)
		}
	}
	// The draft's author sees it in its place.
	r := ok[*NumberedSeriesPageResponse](t)(NumberedSeriesPage(ctx, ada, "tour", 2, &size)).Series.PostPage
	if len(r.Nodes) != 10 || r.Nodes[3].Id != order[13] {
		t.Errorf("page 2 for the draft's author holds %v, want the draft fourth of 10", r.Nodes)
	}
}

// TestNumberedMonthPages reads the numbered pages of each month of the
// blog's archive: together, month after month, they hold the feed's
// posts oldest first; each month's count is the archive's, and any page
// is two DynamoDB requests.
// A month not YYYY-MM, or given with a category, is BAD_USER_INPUT with
// no request.
func TestNumberedMonthPages(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	size := 10
	archive := ok[*ArchiveResponse](t)(Archive(ctx, s.client, nil, nil)).Archive
	if len(archive) < 2 {
		t.Fatalf("the seeded blog spans %d months, want 2 or more", len(archive))
	}
	var got []string
	for _, m := range slices.Backward(archive) {
		month := fmt.Sprintf("%04d-%02d", m.Year, m.Month)
		pages := (m.PostCount + size - 1) / size
		for n := 1; n <= pages+1; n++ {
			r := ok[*NumberedMonthPageResponse](t)(NumberedMonthPage(ctx, s.client, month, n, &size)).PostPage
			if got := total(s.requests()); got > 2 {
				t.Errorf("%s page %d: %d DynamoDB requests %v, budget 2", month, n, got, s.requests())
			}
			equal(t, month+" totalCount", r.TotalCount, m.PostCount)
			equal(t, month+" totalPages", r.TotalPages, pages)
			if n > pages {
				equal(t, month+" posts of a page past the end", len(r.Nodes), 0)
			}
			for _, p := range r.Nodes {
				if p.PublishedAt.UTC().Format("2006-01") != month {
					t.Errorf("%s page %d holds %s, published %s", month, n, p.Slug, p.PublishedAt)
				}
				got = append(got, p.Id)
			}
		}
	}
	if !slices.Equal(got, b.published) {
		t.Errorf("the months' pages hold %v, want the feed oldest first %v", got, b.published)
	}
	for _, month := range []string{"2026-2", "2026-13", "26-02", "february"} {
		if _, err := NumberedMonthPage(ctx, s.client, month, 1, &size); code(err) != "BAD_USER_INPUT" {
			t.Errorf("month %q: %v, want BAD_USER_INPUT", month, err)
		}
		if got := s.requests(); got["Query"]+got["BatchGetItem"] != 0 {
			t.Errorf("month %q: %v DynamoDB requests for the page, want none", month, got)
		}
	}
	s.consistent()
}

// TestNumberedAuthorPagesFollowTheChangeFeed: on the server with its
// change feed, the pages worker rebuilds an author's and a month's page
// index after posts are published and unpublished and after a co-author
// joins and leaves a post, and the numbered pages show it.
func TestNumberedAuthorPagesFollowTheChangeFeed(t *testing.T) {
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	root := s.as("root", auth.RoleAdmin)
	me := ok[*ViewerResponse](t)(Viewer(ctx, writer)).Viewer.Id
	co := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, root, CreateAuthorInput{Subject: ptr("co"), Name: "Cory Co"})).CreateAuthor.Author.Id
	ten := 10
	page := func(id string, n int) *NumberedAuthorPageAuthorPostPage {
		return &ok[*NumberedAuthorPageResponse](t)(NumberedAuthorPage(ctx, writer, id, n, &ten)).Author.PostPage
	}
	var ids []string
	months := map[string]int{}
	for i := range 11 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i)})).CreatePost.Post
		pub := ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: p.Id})).PublishPost.Post
		ids = append(ids, p.Id)
		months[pub.PublishedAt.UTC().Format("2006-01")]++
	}
	inMonths := func() int {
		n := 0
		for m := range months {
			n += ok[*NumberedMonthPageResponse](t)(NumberedMonthPage(ctx, writer, m, 1, &ten)).PostPage.TotalCount
		}
		return n
	}
	waitFor(t, func() bool { return page(me, 2).TotalPages == 2 })
	waitFor(t, func() bool { return inMonths() == 11 })
	if p := page(me, 2); len(p.Nodes) != 1 || p.Nodes[0].Id != ids[10] {
		t.Errorf("page 2 after 11 posts holds %+v, want the newest alone", p.Nodes)
	}
	// Unpublishing the oldest shifts every page by one.
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, writer, UnpublishPostInput{Id: ids[0]}))
	waitFor(t, func() bool { return page(me, 1).TotalCount == 10 })
	waitFor(t, func() bool { return inMonths() == 10 })
	if p := page(me, 1); len(p.Nodes) != 10 || p.Nodes[0].Id != ids[1] || p.TotalPages != 1 {
		t.Errorf("page 1 after unpublishing the oldest: %+v, want posts 1 to 10 on one page", p)
	}
	// A co-author joins a post, then leaves it.
	post := ok[*CoAuthoredPostResponse](t)(CoAuthoredPost(ctx, writer, "post-5")).Post
	up := ok[*UpdatePostResponse](t)(UpdatePost(ctx, writer, UpdatePostInput{Id: post.Id, ExpectedVersion: post.Version, CoAuthors: []string{co}})).UpdatePost.Post
	waitFor(t, func() bool { return page(co, 1).TotalCount == 1 })
	if p := page(co, 1); len(p.Nodes) != 1 || p.Nodes[0].Id != post.Id {
		t.Errorf("the co-author's page 1: %+v, want the co-written post", p)
	}
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, writer, UpdatePostInput{Id: post.Id, ExpectedVersion: up.Version, CoAuthors: []string{}}))
	waitFor(t, func() bool { return page(co, 1).TotalCount == 0 })
	equal(t, "the co-author's totalPages once they left", page(co, 1).TotalPages, 0)
	equal(t, "the author's totalCount", page(me, 1).TotalCount, 10)
}
