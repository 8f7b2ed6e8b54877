package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The answer cache: anonymous reads answered from memory until a write
// changes what they show.

const (
	answersCategoryPage = `query CategoryPage($slug: String!) {
  category(slug: $slug) { name posts(first: 20) { edges { node { title slug commentCount author { name } categories { name } } } } }
}`
	answersPostPage = `query PostPage($slug: String!) {
  post(slug: $slug) { title body commentCount comments(first: 50) { edges { node { body author { name } } } } }
}`
	answersFeed = `query Feed { posts(first: 20) { edges { node { title slug } } } }`
)

// withAnswers gives the server an answer cache of max bytes.
func withAnswers(max int64) func(*storage.ClientConfig, *graph.HandlerOptions) {
	return func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.HTTP.Answers = gqlhttp.NewAnswerCache(max, nil)
	}
}

// seedAnswers writes a category "go" with three posts by ada and returns
// the posts' global ids, oldest first.
func (s *server) seedAnswers(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "go", Name: "Go"}))
	ada := s.as("ada", auth.RoleAuthor)
	var ids []string
	for i := range 3 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{
			Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i), Body: ptr("Body."), Categories: []string{"go"},
		})).CreatePost.Post
		at := start.Add(-time.Duration(3-i) * time.Hour)
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id, At: &at}))
		ids = append(ids, p.Id)
	}
	return ids
}

// post sends query with variables as an anonymous POST, with headers.
func (s *server) post(t *testing.T, query, variables string, headers map[string]string) httpAnswer {
	t.Helper()
	body := `{"query":` + jsonString(query) + `,"variables":` + variables + `}`
	a := s.fetch(t, http.MethodPost, s.url, body, headers)
	if a.status != http.StatusOK || strings.Contains(a.body, `"errors"`) {
		t.Fatalf("%s: status %d, body %s", query, a.status, a.body)
	}
	return a
}

// hit fails the test unless the answer came from the answer cache, with no
// DynamoDB request.
func (s *server) hit(t *testing.T, a httpAnswer) {
	t.Helper()
	if got := a.header.Get(gqlhttp.AnswerCacheHeader); got != "HIT" {
		t.Fatalf("X-Cache %q, want HIT", got)
	}
	if n := total(s.requests()); n != 0 {
		t.Fatalf("a cached answer made %d DynamoDB requests", n)
	}
}

func TestAnswerCacheAnswersRepeatedReadsFromMemory(t *testing.T) {
	s := newServer(t, withAnswers(0))
	ids := s.seedAnswers(t)

	first := s.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	equal(t, "first X-Cache", first.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
	if total(s.requests()) == 0 {
		t.Fatal("the first answer made no DynamoDB request")
	}
	t.Run("the same read again is answered from memory", func(t *testing.T) {
		again := s.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
		s.hit(t, again)
		equal(t, "body", again.body, first.body)
	})
	t.Run("whitespace, comments and the order of variables do not matter", func(t *testing.T) {
		spaced := "# the category page\n" + strings.ReplaceAll(answersCategoryPage, " ", "\n ,") + "\n# end"
		again := s.post(t, spaced, `{ "slug" : "go" }`, nil)
		s.hit(t, again)
		equal(t, "body", again.body, first.body)
	})
	t.Run("other variables are another answer", func(t *testing.T) {
		other := s.fetch(t, http.MethodPost, s.url, `{"query":`+jsonString(answersCategoryPage)+`,"variables":{"slug":"dynamodb"}}`, nil)
		equal(t, "X-Cache", other.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
	})
	t.Run("a GET of the same read is answered from memory too", func(t *testing.T) {
		get := s.fetch(t, http.MethodGet, s.getQueryURL(answersCategoryPage, `{"slug":"go"}`, ""), "", nil)
		s.hit(t, get)
		equal(t, "body", get.body, first.body)
	})
	t.Run("a persisted query's hash alone is answered from memory", func(t *testing.T) {
		sum := sha256.Sum256([]byte(answersCategoryPage))
		ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
		// The registration runs the operation already answered: the hash
		// is kept (written to the table) before the answer is looked up.
		register := s.fetch(t, http.MethodGet, s.getQueryURL(answersCategoryPage, `{"slug":"go"}`, ext), "", nil)
		equal(t, "X-Cache of the registration", register.header.Get(gqlhttp.AnswerCacheHeader), "HIT")
		// The hash stands for the same document: the same answer.
		again := s.fetch(t, http.MethodGet, s.getQueryURL("", `{"slug":"go"}`, ext), "", nil)
		s.hit(t, again)
		equal(t, "body", again.body, first.body)
	})
	t.Run("answers with errors are not kept", func(t *testing.T) {
		for range 2 {
			a := s.fetch(t, http.MethodPost, s.url, `{"query":"{ post(slug: \"nope\") { title } }"}`, nil)
			equal(t, "X-Cache", a.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
		}
	})
	t.Run("what no tag names is not kept", func(t *testing.T) {
		for range 2 {
			a := s.post(t, `query($id: ID!) { node(id: $id) { id } }`, `{"id":`+jsonString(ids[0])+`}`, nil)
			equal(t, "X-Cache", a.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
		}
	})
}

func TestAnswerCacheIsBypassedByTokensPreviewsAndTheCostHeader(t *testing.T) {
	s := newServer(t, withAnswers(0))
	ids := s.seedAnswers(t)
	admin := "Bearer " + s.signed(s.claims("admin", auth.RoleAdmin))
	for _, c := range []struct {
		name    string
		headers map[string]string
	}{
		{"a token", map[string]string{"Authorization": admin}},
		{"the cost header", map[string]string{"Authorization": admin, graph.CostHeader: "1"}},
		{"the cost header alone", map[string]string{graph.CostHeader: "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 2 {
				a := s.post(t, answersCategoryPage, `{"slug":"go"}`, c.headers)
				equal(t, "X-Cache", a.header.Get(gqlhttp.AnswerCacheHeader), "BYPASS")
				if total(s.requests()) == 0 {
					t.Fatal("a bypassing request was answered without DynamoDB")
				}
			}
		})
	}
	t.Run("a preview token", func(t *testing.T) {
		ctx := context.Background()
		ada := s.as("ada", auth.RoleAuthor)
		link := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, ada, CreatePreviewLinkInput{PostId: ids[0]}))
		q := `query($t: String!) { post(previewToken: $t) { title } }`
		vars := `{"t":` + jsonString(link.CreatePreviewLink.Token) + `}`
		for range 2 {
			a := s.post(t, q, vars, nil)
			equal(t, "X-Cache", a.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
			if total(s.requests()) == 0 {
				t.Fatal("a preview was answered without DynamoDB")
			}
		}
	})
}

func TestAnswerCacheNeverServesAnAnswerMissingAnAcknowledgedWrite(t *testing.T) {
	s := newServer(t, withAnswers(0))
	ids := s.seedAnswers(t)
	ctx := context.Background()
	ada := s.as("ada", auth.RoleAuthor)
	pages := []struct{ name, query, vars string }{
		{"post page", answersPostPage, `{"slug":"post-2"}`},
		{"category page", answersCategoryPage, `{"slug":"go"}`},
		{"feed", answersFeed, `{}`},
	}
	for _, p := range pages {
		s.post(t, p.query, p.vars, nil)
		s.hit(t, s.post(t, p.query, p.vars, nil))
	}

	t.Run("a refused write drops nothing", func(t *testing.T) {
		create := `mutation { createPost(input: {title: "Spam", slug: "spam", categories: ["go"]}) { post { id } } }`
		a := s.fetch(t, http.MethodPost, s.url, `{"query":`+jsonString(create)+`}`, nil)
		if !strings.Contains(a.body, "UNAUTHENTICATED") {
			t.Fatalf("an anonymous createPost: %s", a.body)
		}
		for _, p := range pages {
			s.hit(t, s.post(t, p.query, p.vars, nil))
		}
	})
	t.Run("a post's edit", func(t *testing.T) {
		got := ok[*PostByIDResponse](t)(PostByID(ctx, s.admin, ids[2]))
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: ids[2], ExpectedVersion: got.Post.Version, Title: ptr("Edited")}))
		for _, p := range pages {
			a := s.post(t, p.query, p.vars, nil)
			if !strings.Contains(a.body, `"title":"Edited"`) {
				t.Errorf("%s after the edit (X-Cache %s): %s", p.name, a.header.Get(gqlhttp.AnswerCacheHeader), a.body)
			}
		}
	})
	t.Run("a comment", func(t *testing.T) {
		s.post(t, answersPostPage, `{"slug":"post-2"}`, nil)
		s.hit(t, s.post(t, answersPostPage, `{"slug":"post-2"}`, nil))
		ok[*AddCommentResponse](t)(AddComment(ctx, ada, AddCommentInput{PostId: ids[2], Body: "First!"}))
		a := s.post(t, answersPostPage, `{"slug":"post-2"}`, nil)
		if !strings.Contains(a.body, `"body":"First!"`) || !strings.Contains(a.body, `"commentCount":1`) {
			t.Errorf("post page after the comment (X-Cache %s): %s", a.header.Get(gqlhttp.AnswerCacheHeader), a.body)
		}
		// The category page was not dropped by the comment: the count its
		// summaries hold follows with the counts worker's
		// post.counts.updated (TestAnswerCacheOfAnotherServerFollowsTheChangeFeed).
		s.hit(t, s.post(t, answersCategoryPage, `{"slug":"go"}`, nil))
	})
}

// answerFollower is a second server on s's table with an answer cache of
// its own and a change feed that invalidates it, whose events are handed
// to the test after they did.
type answerFollower struct {
	*server
	events chan storage.LoggedEvent
}

func (s *server) answerFollower(t *testing.T) *answerFollower {
	t.Helper()
	o := &server{t: t, db: s.db, table: s.table, store: s.store, clock: s.clock, opts: s.opts}
	answers := gqlhttp.NewAnswerCache(0, nil)
	o.opts.HTTP.Answers = answers
	o.serve()
	return &answerFollower{server: o, events: s.follow(t, graph.InvalidateAnswers(answers))}
}

// follow runs a change feed of a second server on s's table, which hands
// each batch of events to handle, then to the channel it returns. It
// returns once the feed hands over every event logged from then on.
func (s *server) follow(t *testing.T, handle func([]storage.LoggedEvent)) chan storage.LoggedEvent {
	t.Helper()
	events := make(chan storage.LoggedEvent, 1024)
	streams, err := storage.NewStreamsClient(context.Background(), s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	feedOpts := liveFeedOptions
	started := make(chan struct{})
	feedOpts.Logger = slog.New(startedHandler{slog.NewTextHandler(liveLogOutput(), nil), started, new(sync.Once)})
	feed := changefeed.New(s.store, streams, feedOpts)
	feed.Subscribe(func(batch []storage.LoggedEvent) {
		handle(batch)
		for _, e := range batch {
			events <- e
		}
	})
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	<-started // the feed hands over every event logged from now on
	return events
}

// startedHandler closes started when the change feed logs that it
// started: it tails the log from the head it read then.
type startedHandler struct {
	slog.Handler
	started chan struct{}
	once    *sync.Once
}

func (h startedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(attrs)
	return h
}

func (h startedHandler) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}

func (h startedHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "change feed started" {
		h.once.Do(func() { close(h.started) })
	}
	return h.Handler.Handle(ctx, r)
}

// await returns once the follower's feed handed over an event of type typ
// about postID: its answers are invalidated by then.
func (f *answerFollower) await(t *testing.T, typ storage.EventType, postID string) {
	t.Helper()
	deadline := time.After(time.Minute) // a guard against a hang, not a measure
	for {
		select {
		case e := <-f.events:
			if e.Type == typ && e.Data.PostID == postID {
				return
			}
		case <-deadline:
			t.Fatalf("no %s event for post %s", typ, postID)
		}
	}
}

func TestAnswerCacheOfAnotherServerFollowsTheChangeFeed(t *testing.T) {
	s := newServerOn(t, []storage.Option{storage.WithStream()}, nil, withAnswers(0))
	ids := s.seedAnswers(t)
	b := s.answerFollower(t)
	ctx := context.Background()
	ada := s.as("ada", auth.RoleAuthor)
	// The seed's events first, so that none of them drops what follows.
	b.await(t, storage.EventPostPublished, postIDOf(t, ids[2]))

	b.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	b.hit(t, b.post(t, answersCategoryPage, `{"slug":"go"}`, nil))
	b.post(t, answersPostPage, `{"slug":"post-1"}`, nil)
	b.hit(t, b.post(t, answersPostPage, `{"slug":"post-1"}`, nil))

	got := ok[*PostByIDResponse](t)(PostByID(ctx, s.admin, ids[1]))
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: ids[1], ExpectedVersion: got.Post.Version, Title: ptr("Seen everywhere")}))
	postID := postIDOf(t, ids[1])
	b.await(t, storage.EventPostEdited, postID)
	for _, p := range [][2]string{{answersCategoryPage, `{"slug":"go"}`}, {answersPostPage, `{"slug":"post-1"}`}} {
		a := b.post(t, p[0], p[1], nil)
		if !strings.Contains(a.body, `"title":"Seen everywhere"`) {
			t.Errorf("the second server after the event (X-Cache %s): %s", a.header.Get(gqlhttp.AnswerCacheHeader), a.body)
		}
	}

	ok[*AddCommentResponse](t)(AddComment(ctx, ada, AddCommentInput{PostId: ids[1], Body: "Across the fleet"}))
	b.await(t, storage.EventCommentAdded, postID)
	a := b.post(t, answersPostPage, `{"slug":"post-1"}`, nil)
	if !strings.Contains(a.body, `"body":"Across the fleet"`) {
		t.Errorf("the second server's post page after the comment's event: %s", a.body)
	}

	// The counts worker's sync of the post's summaries drops the lists
	// that show its count.
	b.hit(t, b.post(t, answersCategoryPage, `{"slug":"go"}`, nil))
	if _, err := s.store.SyncCounts(ctx, postID); err != nil {
		t.Fatal(err)
	}
	b.await(t, storage.EventPostCountsUpdated, postID)
	c := b.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	if !strings.Contains(c.body, `"title":"Seen everywhere","slug":"post-1","commentCount":1`) {
		t.Errorf("the second server's category page after post.counts.updated (X-Cache %s): %s", c.header.Get(gqlhttp.AnswerCacheHeader), c.body)
	}
}

func TestAnswerCacheDoesNotKeepAnAnswerWhoseReadRacedAnInvalidation(t *testing.T) {
	var answers atomic.Pointer[gqlhttp.AnswerCache]
	var armed atomic.Bool
	s := newServer(t, withAnswers(0), inFront(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(r)
			if armed.CompareAndSwap(true, false) {
				// The category's event arrives while the page is read.
				answers.Load().Invalidate(frontend.TagCategory("go"))
			}
			return resp, err
		})
	}))
	answers.Store(s.opts.HTTP.Answers)
	s.seedAnswers(t)

	armed.Store(true)
	s.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	a := s.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	equal(t, "X-Cache of the read after a raced one", a.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
	if total(s.requests()) == 0 {
		t.Fatal("the raced answer was kept")
	}
	s.hit(t, s.post(t, answersCategoryPage, `{"slug":"go"}`, nil))
}

func TestAnswerCacheIsBoundedByBytes(t *testing.T) {
	s := newServer(t, withAnswers(0))
	s.seedAnswers(t)
	one := s.post(t, answersPostPage, `{"slug":"post-0"}`, nil)
	// Room for about one post page: the second does not fit beside the
	// first, and one of them is dropped (the one less likely to be used
	// again: the cache weighs how recently and how often each was).
	small := newServer(t, withAnswers(int64(len(one.body))+2048))
	small.seedAnswers(t)
	small.post(t, answersPostPage, `{"slug":"post-0"}`, nil)
	small.hit(t, small.post(t, answersPostPage, `{"slug":"post-0"}`, nil))
	small.post(t, answersPostPage, `{"slug":"post-1"}`, nil)
	entries, bytes := small.opts.HTTP.Answers.Size()
	if entries != 1 || bytes > int64(len(one.body))+2048 {
		t.Errorf("%d answers in %d bytes, want 1 within the bound", entries, bytes)
	}
	// Not both are answered from memory.
	a := small.post(t, answersPostPage, `{"slug":"post-0"}`, nil)
	if a.header.Get(gqlhttp.AnswerCacheHeader) == "HIT" {
		b := small.post(t, answersPostPage, `{"slug":"post-1"}`, nil)
		equal(t, "X-Cache of the answer not kept", b.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
	}
}

func TestAnswerCacheHeaders(t *testing.T) {
	s := newServer(t, withAnswers(0), func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.HTTP.CacheMaxAge, o.HTTP.CacheSMaxAge, o.HTTP.CacheStaleWhileRevalidate = 60*time.Second, 10*time.Minute, 30*time.Second
	})
	ids := s.seedAnswers(t)
	get := s.getQueryURL(answersCategoryPage, `{"slug":"go"}`, "")
	first := s.fetch(t, http.MethodGet, get, "", nil)
	second := s.fetch(t, http.MethodGet, get, "", nil)
	s.hit(t, second)
	for _, a := range []httpAnswer{first, second} {
		equal(t, "Cache-Control", a.header.Get("Cache-Control"), "public, max-age=60, s-maxage=600, stale-while-revalidate=30")
		keys := strings.Fields(a.header.Get(gqlhttp.SurrogateKeyHeader))
		for _, want := range []string{"category:go", "post:" + postIDOf(t, ids[0]), "counts:" + postIDOf(t, ids[2]), "author:" + authorIDOf(t, s)} {
			if !slices.Contains(keys, want) {
				t.Errorf("Surrogate-Key %q lacks %s", keys, want)
			}
		}
		equal(t, "Cache-Tag", a.header.Get(gqlhttp.CacheTagHeader), strings.Join(keys, ","))
		equal(t, "ETag", a.header.Get("ETag"), first.header.Get("ETag"))
	}
	t.Run("a hit revalidates with 304", func(t *testing.T) {
		r := s.fetch(t, http.MethodGet, get, "", map[string]string{"If-None-Match": first.header.Get("ETag")})
		equal(t, "status", r.status, http.StatusNotModified)
		equal(t, "X-Cache", r.header.Get(gqlhttp.AnswerCacheHeader), "HIT")
	})
	t.Run("a POST's answer is kept but not public", func(t *testing.T) {
		a := s.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
		s.hit(t, a)
		equal(t, "Cache-Control", a.header.Get("Cache-Control"), "no-store")
		equal(t, "Surrogate-Key", a.header.Get(gqlhttp.SurrogateKeyHeader), "")
	})
}

// postIDOf returns the storage id in the global id of a post.
func postIDOf(t *testing.T, gid string) string { return rawID(t, gid, "Post") }

// authorIDOf returns the storage id of ada.
func authorIDOf(t *testing.T, s *server) string {
	t.Helper()
	a := s.post(t, `{ author(slug: "ada-lovelace") { id } }`, `{}`, nil)
	var r struct {
		Data struct{ Author struct{ ID string } } `json:"data"`
	}
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatal(err)
	}
	return rawID(t, r.Data.Author.ID, "Author")
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
