package tests

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// gate is an http.RoundTripper in front of DynamoDB that lets the
// requests of one page through in rounds: each round opens when as many
// requests as it holds are waiting at once. A page whose independent
// reads go out together passes every round; one that waits for a read's
// answer before it sends the next would wait for that round until the
// request's deadline, and fail.
type gate struct {
	next http.RoundTripper

	mu      sync.Mutex
	rounds  []int // the sizes of the rounds still to open
	waiting []chan struct{}
}

// expect makes the next requests go through in rounds of the given sizes;
// after them, requests pass freely again.
func (g *gate) expect(rounds ...int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rounds, g.waiting = rounds, nil
}

// left returns the sizes of the rounds that did not open.
func (g *gate) left() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rounds
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	g.mu.Lock()
	if len(g.rounds) == 0 {
		g.mu.Unlock()
		return g.next.RoundTrip(r)
	}
	open := make(chan struct{})
	g.waiting = append(g.waiting, open)
	if len(g.waiting) == g.rounds[0] {
		for _, w := range g.waiting {
			close(w)
		}
		g.rounds, g.waiting = g.rounds[1:], nil
	}
	g.mu.Unlock()
	select {
	case <-open:
		return g.next.RoundTrip(r)
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// TestIndependentReadsGoOutTogether checks the round trips of the
// frontend's pages: requests that depend only on the page's arguments go
// out at once (a category and its posts, an author and theirs, the feed's
// shards and the blog's counts, a post its slug names as public and its
// comments). A post's comments wait for the post when the slug does not
// say it is public: it may be hidden from the reader, whose answer must
// then cost what a missing post's does
// (TestHiddenPostsReadNothingBelowThem). The commenters of a post's page
// go out with its comments once the server has read that page before
// (commenterHints): a commenter it has not seen on the page is read after
// the comments, once. Each page must pass a gate that opens only for
// exactly those rounds.
func TestIndependentReadsGoOutTogether(t *testing.T) {
	g := &gate{}
	s := newServer(t, inFront(func(backend http.RoundTripper) http.RoundTripper { g.next = backend; return g }), func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		// A page that waits for a round that never opens fails at this
		// deadline instead of passing.
		o.HTTP.RequestTimeout = 5 * time.Second
	})
	b := s.seedBlog(t)
	ctx := context.Background()
	first := 20
	// A post whose slug changed: its new slug's reservation knows it is
	// public, its old one (a redirect) does not.
	p := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-3")).Post
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: p.Id, ExpectedVersion: p.Version, Slug: ptr("post-three")}))
	// An author who has not commented yet, for a page that gains a
	// commenter the server has not seen on it.
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("kay"), Name: "Kay Lagos"}))
	kay := s.as("kay", auth.RoleAuthor)
	var commentedID string
	for _, e := range ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", &first, nil)).Category.Posts.Edges {
		if e.Node.Slug == b.commented {
			commentedID = e.Node.Id
		}
	}
	postPage := func(comments int, last string) func() error {
		return func() error {
			r, err := PostPage(ctx, s.client, b.commented)
			if err == nil {
				equal(t, "comments", len(r.Post.Comments.Edges), comments)
				equal(t, "last commenter", r.Post.Comments.Edges[comments-1].Node.Author.Name, last)
			}
			return err
		}
	}
	cases := []struct {
		name   string
		before func()
		rounds []int
		run    func() error
	}{
		{"category page: the category and its posts", nil, []int{2}, func() error {
			r, err := CategoryPage(ctx, s.client, "go", &first, nil)
			if err == nil {
				equal(t, "posts", len(r.Category.Posts.Edges), 20)
			}
			return err
		}},
		{"author page: the author and their posts", nil, []int{2}, func() error {
			r, err := AuthorPage(ctx, s.client, b.authors[0], &first, nil)
			if err == nil {
				equal(t, "posts", len(r.Author.Posts.Edges), 13)
			}
			return err
		}},
		{"author page by slug: the slug, then the author and their posts", nil, []int{1, 2}, func() error {
			r, err := AuthorBySlug(ctx, s.client, "ada-lovelace", &first, nil, nil, nil, nil, nil)
			if err == nil {
				equal(t, "posts", len(r.Author.Posts.Edges), 13)
			}
			return err
		}},
		{"post page: the slug, then the post and its comments, then the commenters", nil, []int{1, 2, 1}, postPage(6, "Alan Turing")},
		{"post page again: the slug, then the post, its comments and the commenters the server saw on it", nil, []int{1, 3}, postPage(6, "Alan Turing")},
		{"post page with a new commenter: the slug, then the post, its comments and the commenters seen, then the new one", func() {
			s.clock.Advance(time.Minute)
			ok[*AddCommentResponse](t)(AddComment(ctx, kay, AddCommentInput{PostId: commentedID, Body: "Late to this"}))
		}, []int{1, 3, 1}, postPage(7, "Kay Lagos")},
		{"post page after it: the slug, then the rest together", nil, []int{1, 3}, postPage(7, "Kay Lagos")},
		{"post page by a new slug: the slug, then the post and its comments (none)", nil, []int{1, 2}, func() error {
			_, err := PostPage(ctx, s.client, "post-three")
			return err
		}},
		{"post page by an old slug: the slug, the post, then its comments", nil, []int{1, 1, 1}, func() error {
			_, err := PostPage(ctx, s.client, "post-3")
			return err
		}},
		{"feed: the feed and the counts, then the bodies", nil, []int{2, 1}, func() error {
			r, err := Feed(ctx, s.client, &first, nil)
			if err == nil {
				equal(t, "posts", len(r.Posts.Edges), 20)
			}
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before()
			}
			g.expect(c.rounds...)
			if err := c.run(); err != nil {
				t.Fatal(err)
			}
			if left := g.left(); len(left) > 0 {
				t.Errorf("rounds %v never opened", left)
			}
		})
	}
}
