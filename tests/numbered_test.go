package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestNumberedPages reads every numbered page of a category and of the
// feed and compares them with the lists walked by cursor: the same
// posts, oldest first, in pages of the size asked for, within two
// DynamoDB requests for the list whatever the number.
func TestNumberedPages(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	walked := func(slug string) []string {
		var ids []string
		var after *string
		for {
			first := 7
			r := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, slug, &first, after))
			for _, e := range r.Category.Posts.Edges {
				ids = append(ids, e.Node.Id)
			}
			if !r.Category.Posts.PageInfo.HasNextPage {
				break
			}
			after = r.Category.Posts.PageInfo.EndCursor
		}
		slices.Reverse(ids) // numbered pages run oldest first
		return ids
	}
	for _, slug := range []string{"go", "dynamodb"} {
		want := walked(slug)
		for _, size := range []int{10, 20} {
			var got []string
			pages := (len(want) + size - 1) / size
			for n := 1; n <= pages+1; n++ {
				r := ok[*NumberedCategoryPageResponse](t)(NumberedCategoryPage(ctx, s.client, slug, n, &size)).Category.PostPage
				equal(t, fmt.Sprintf("%s size %d page %d totalPages", slug, size, n), r.TotalPages, pages)
				equal(t, fmt.Sprintf("%s size %d page %d totalCount", slug, size, n), r.TotalCount, len(want))
				if n > pages {
					equal(t, "posts of a page past the end", len(r.Nodes), 0)
					continue
				}
				equal(t, fmt.Sprintf("%s page %d size", slug, n), len(r.Nodes), min(size, len(want)-(n-1)*size))
				for _, p := range r.Nodes {
					got = append(got, p.Id)
				}
				// The category read with the page index, then the page.
				if got := total(s.requests()); got > 2 {
					t.Errorf("%s size %d page %d: %d DynamoDB requests %v, budget 2", slug, size, n, got, s.requests())
				}
				// The same page without the category: two requests.
				top := ok[*NumberedFeedPageResponse](t)(NumberedFeedPage(ctx, s.client, n, &size, &slug, nil)).PostPage
				equal(t, fmt.Sprintf("%s page %d by postPage(category:) totalPages", slug, n), top.TotalPages, pages)
				if len(top.Nodes) != len(r.Nodes) || len(r.Nodes) > 0 && top.Nodes[0].Id != r.Nodes[0].Id {
					t.Errorf("%s page %d: postPage(category:) holds %v, category.postPage %v", slug, n, top.Nodes, r.Nodes)
				}
				if got := total(s.requests()); got > 2 {
					t.Errorf("%s size %d page %d by postPage(category:): %d DynamoDB requests %v, budget 2", slug, size, n, got, s.requests())
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s size %d: numbered pages hold %v, the cursor walk %v", slug, size, got, want)
			}
		}
	}
	// The feed: 25 posts, pages of 10: the first, a middle and the last.
	ten := 10
	var feed []string
	for n := 1; n <= 3; n++ {
		r := ok[*NumberedFeedPageResponse](t)(NumberedFeedPage(ctx, s.client, n, &ten, nil, nil)).PostPage
		equal(t, "feed totalPages", r.TotalPages, 3)
		for _, p := range r.Nodes {
			feed = append(feed, p.Id)
		}
		if got := total(s.requests()); got > 2 {
			t.Errorf("feed page %d: %d DynamoDB requests %v, budget 2", n, got, s.requests())
		}
	}
	// A category that cannot exist has no pages, with no read.
	for _, slug := range []string{"not_a_slug", "favicon.ico"} {
		r := ok[*NumberedFeedPageResponse](t)(NumberedFeedPage(ctx, s.client, 1, &ten, &slug, nil)).PostPage
		equal(t, slug+" totalPages", r.TotalPages, 0)
		equal(t, slug+" requests", total(s.requests()), 0)
	}
	if !slices.Equal(feed, b.published) {
		t.Errorf("feed pages hold %v, want the posts oldest first %v", feed, b.published)
	}
	s.consistent()
}

// TestNumberedPagesRefuseBadNumbers checks that a page number or size a
// numbered page does not take is BAD_USER_INPUT, with no request.
func TestNumberedPagesRefuseBadNumbers(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	for _, c := range []struct{ number, size int }{{0, 20}, {-1, 20}, {100001, 20}, {2147483647, 20}, {1, 0}, {1, 15}, {1, 110}} {
		_, err := NumberedFeedPage(ctx, s.client, c.number, &c.size, nil, nil)
		if code(err) != "BAD_USER_INPUT" {
			t.Errorf("page %d size %d: %v, want BAD_USER_INPUT", c.number, c.size, err)
		}
		if got := total(s.requests()); got != 0 {
			t.Errorf("page %d size %d: %d DynamoDB requests, want none", c.number, c.size, got)
		}
	}
}

// TestNumberedPagesStayPut checks that publishing a new post leaves every
// full page as it was (pages are numbered from the oldest post), and that
// after concurrent publications and deletions the page indexes, rebuilt,
// agree with the lists.
func TestNumberedPagesStayPut(t *testing.T) {
	// The checker lets a page index lag its list for a millisecond.
	s := newServerOn(t, []storage.Option{storage.WithCountLag(time.Millisecond)}, nil)
	b := s.seedBlog(t)
	ctx := context.Background()
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	ten := 10
	page := func(n int) []string {
		var ids []string
		for _, p := range ok[*NumberedCategoryPageResponse](t)(NumberedCategoryPage(ctx, s.client, "go", n, &ten)).Category.PostPage.Nodes {
			ids = append(ids, p.Id)
		}
		return ids
	}
	before := [][]string{page(1), page(2)}
	s.clock.Advance(time.Minute)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{Title: "New", Slug: "new", Body: ptr("New."), Categories: []string{"go"}, Tags: []string{"news"}})).CreatePost.Post
	pub := ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[0], PublishPostInput{Id: p.Id})).PublishPost.Post
	// The pages worker, given the post's event, rebuilds the lists it
	// names from the last start before the post: a few keys read,
	// whatever the lists' lengths.
	worker := s.store.NewPageSync()
	read := map[string]int{}
	worker.OnSync = func(list string, did storage.PagesSynced, err error) {
		if err != nil || did.Behind {
			t.Errorf("rebuild of %s: %+v, %v", list, did, err)
		}
		read[list] = did.Read
	}
	event := storage.LoggedEvent{Position: 1, Event: storage.Event{Type: storage.EventPostPublished, Data: storage.EventData{
		PostID: rawID(t, p.Id, "Post"), PublishedAt: *pub.PublishedAt, Categories: []string{"go"}, Tags: []string{"news"},
	}}}
	if err := worker.Events(ctx, []storage.LoggedEvent{event}); err != nil {
		t.Fatal(err)
	}
	month := storage.FeedMonthList(*pub.PublishedAt)
	if len(read) != 4 || read["CAT#go"] > storage.PageStep+1 || read["FEED"] > storage.PageStep+1 || read[month] > storage.PageStep+1 {
		t.Errorf("the rebuilds after a new post read %v sort keys, want at most %d a list", read, storage.PageStep+1)
	}
	for i, want := range before {
		if got := page(i + 1); !slices.Equal(got, want) {
			t.Errorf("page %d after a new post: %v, was %v", i+1, got, want)
		}
	}
	tag := ok[*NumberedTagPageResponse](t)(NumberedTagPage(ctx, s.client, "news", 1)).Tag.PostPage
	if tag.TotalPages != 1 || len(tag.Nodes) != 1 || tag.Nodes[0].Id != p.Id {
		t.Errorf("tag news page 1 = %+v, want the new post alone", tag)
	}
	if last := page(3); len(last) == 0 || last[len(last)-1] != p.Id {
		t.Errorf("last page %v does not end with the new post %s", last, p.Id)
	}

	// Publications and deletions at once, then the indexes rebuilt.
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			w := b.writers[i%2]
			if i%2 == 0 {
				_, _ = DeletePost(ctx, s.admin, DeletePostInput{Id: b.published[i]})
				return
			}
			r, err := CreatePost(ctx, w, CreatePostInput{Title: fmt.Sprintf("Mix %d", i), Slug: fmt.Sprintf("mix-%d", i), Body: ptr("Mix."), Categories: []string{"go", "dynamodb"}})
			if err == nil {
				_, _ = PublishPost(ctx, w, PublishPostInput{Id: r.CreatePost.Post.Id})
			}
		})
	}
	wg.Wait()
	// Until the pages worker has run, the checker sees the indexes lag
	// their lists.
	if err := s.store.SyncAllCounts(ctx); err != nil {
		t.Fatal(err)
	}
	bad, err := s.store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, "page index of CAT#go ") }) {
		t.Errorf("Check before the indexes are rebuilt found %q, want the index of category go", bad)
	}
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	s.consistent()
}

// TestNumberedPagesFollowTheChangeFeed: on the server with its change
// feed, the pages worker rebuilds a category's page index after its posts
// are published, which is post.pages.updated to webhooks, and the pages
// read before it (the answer cache's included) show the new count.
func TestNumberedPagesFollowTheChangeFeed(t *testing.T) {
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	r := newFeedReceiver(t)
	s.hook(writer, r, "post.pages.updated")
	ten, feeds := 10, "feeds"
	pages := func() int {
		return ok[*NumberedFeedPageResponse](t)(NumberedFeedPage(ctx, writer, 1, &ten, &feeds, nil)).PostPage.TotalPages
	}
	equal(t, "pages of an empty category", pages(), 0)
	var last string
	for i := range 11 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i), Categories: []string{"feeds"}})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: p.Id}))
		last = p.Id
	}
	d := r.waitEvent(t, "post.pages.updated", func(e storage.EventData) bool { return slices.Contains(e.Categories, "feeds") })
	if !slices.Contains(d.Data.CacheTags, "category:feeds") {
		t.Errorf("post.pages.updated data %+v, want the tag category:feeds", d.Data)
	}
	waitFor(t, func() bool { return pages() == 2 })
	page2 := ok[*NumberedFeedPageResponse](t)(NumberedFeedPage(ctx, writer, 2, &ten, &feeds, nil)).PostPage
	if len(page2.Nodes) != 1 || page2.Nodes[0].Id != last {
		t.Errorf("page 2 holds %+v, want the newest post alone", page2.Nodes)
	}
}
