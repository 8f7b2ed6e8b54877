package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
)

// seedBodies publishes n posts of ada's whose bodies have about size
// bytes each.
func (s *server) seedBodies(t *testing.T, n, size int) {
	t.Helper()
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	ada := s.as("ada", auth.RoleAuthor)
	body := strings.Repeat("Twenty kilobytes of \"Markdown\".\n", size/32)
	for i := range n {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: fmt.Sprint("Post ", i), Slug: fmt.Sprint("post-", i), Body: &body})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
		s.clock.Advance(time.Second)
	}
}

// TestLargeAnswersStopAtTheLimit sends the worst request within the
// complexity limit: the same page of bodies under three aliases, whose
// answer would be six times the response limit. It is one
// RESPONSE_TOO_LARGE error, as before, but the server stops building it
// at the limit (the bytes its resolvers put in the answer pass the limit
// by one body at most) and reads the page's bodies once, not once for
// each alias.
func TestLargeAnswersStopAtTheLimit(t *testing.T) {
	const limit, size = 100_000, 20_000
	var answered atomic.Int64
	s := newServer(t, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) {
		o.HTTP.MaxResponseBytes = limit
		o.HTTP.ObserveBytes = func(a, _ int64) { answered.Store(a) }
	})
	s.seedBodies(t, 10, size)

	resp := s.send(t, request("{ "+aliases(3, "posts(first: 10) { edges { node { body } } }")+"}", nil), false)
	if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "RESPONSE_TOO_LARGE" || string(resp.Data) != "null" {
		t.Fatalf("errors %v, data %.100s", resp.Errors, resp.Data)
	}
	if a := answered.Load(); a <= limit || a > limit+size {
		t.Errorf("the answer was built to %d bytes; want past %d by one body (%d) at most", a, limit, size)
	}
	equal(t, "BatchGetItem requests", s.requests()["BatchGetItem"], 1)

	t.Run("an answer within the limit is whole", func(t *testing.T) {
		resp := s.send(t, request("{ "+aliases(2, "posts(first: 2) { edges { node { body } } }")+"}", nil), false)
		if len(resp.Errors) > 0 || strings.Count(string(resp.Data), "Twenty kilobytes") < 4*(size/32)-4 {
			t.Errorf("errors %v", resp.Errors)
		}
		equal(t, "BatchGetItem requests", s.requests()["BatchGetItem"], 1)
	})
}

// holdFirstQuery returns a configure function for newServer that holds
// the first Query the server makes once armed until release is closed,
// and closes held when it is holding it.
func holdFirstQuery(armed *atomic.Bool, held, release chan struct{}) func(*storage.ClientConfig, *graphpkg.HandlerOptions) {
	return inFront(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.Header.Get(dynamoTargetHeader), ".Query") && armed.CompareAndSwap(true, false) {
				close(held)
				<-release
			}
			return next.RoundTrip(r)
		})
	})
}

// TestBudgetRefusesRequestsItCannotHold fills a small memory budget with
// one large request held in flight (its first DynamoDB request waits):
// another large request, then a feed of full posts, wait their turn and
// are answered 503 with Retry-After and SERVER_BUSY, and build nothing;
// a small page still has room and is answered; the large request, once
// it goes on, is answered whole, and the budget is given back.
func TestBudgetRefusesRequestsItCannotHold(t *testing.T) {
	var armed atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	// A large request may hold 3 MiB of it, leaving 1 MiB to small ones.
	budget := inflight.NewBudget(4<<20, time.Millisecond)
	s := newServer(t, holdFirstQuery(&armed, held, release), func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) {
		o.HTTP.Budget = budget
	})
	s.seedBodies(t, 10, 20_000)
	s.clock.Advance(time.Minute)
	feeds := newSyndicationServer(t, s, func(o *syndication.Options) { o.Budget = budget })

	large := request("{ posts(first: 100) { edges { node { title body } } } }", nil)
	armed.Store(true)
	first := make(chan response, 1)
	go func() { first <- s.send(t, large, false) }()
	<-held

	t.Run("a second large request is refused", func(t *testing.T) {
		resp := s.send(t, large, false)
		equal(t, "status", resp.status, http.StatusServiceUnavailable)
		equal(t, "Retry-After", resp.header.Get("Retry-After"), "1")
		equal(t, "Cache-Control", resp.header.Get("Cache-Control"), "no-store")
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "SERVER_BUSY" {
			t.Errorf("errors %v", resp.Errors)
		}
		equal(t, "DynamoDB requests", total(s.requests()), 0)
	})
	t.Run("a feed of full posts is refused", func(t *testing.T) {
		a, _ := feeds.get(t, "/feed.json?limit=100")
		equal(t, "status", a.status, http.StatusServiceUnavailable)
		if a.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	})
	t.Run("a small page has room", func(t *testing.T) {
		resp := s.send(t, request("{ posts(first: 3) { edges { node { title } } } }", nil), false)
		if resp.status != http.StatusOK || len(resp.Errors) > 0 {
			t.Errorf("status %d, errors %v", resp.status, resp.Errors)
		}
	})

	close(release)
	resp := <-first
	if resp.status != http.StatusOK || len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), "Twenty kilobytes") {
		t.Fatalf("the large request: status %d, errors %v", resp.status, resp.Errors)
	}
	equal(t, "budget used once all ended", budget.Used(), int64(0))
	resp = s.send(t, large, false)
	if resp.status != http.StatusOK || len(resp.Errors) > 0 {
		t.Errorf("the large request again: status %d, errors %v", resp.status, resp.Errors)
	}
}

// fillBudget takes every byte of budget, in reservations small enough to
// reach its last quarter, until the test ends.
func fillBudget(t *testing.T, budget *inflight.Budget) {
	t.Helper()
	ctx, m := inflight.Start(context.Background(), budget, 0)
	t.Cleanup(m.Done)
	for range 8 {
		if err := inflight.Reserve(ctx, budget.Limit()/8); err != nil {
			t.Fatal(err)
		}
	}
	equal(t, "budget used", budget.Used(), budget.Limit())
}

// TestCachedAnswersNeedNoRoomInTheBudget fills the memory budget: an
// answer the answer cache holds is still sent, by POST, GET and a
// persisted query's hash alike, since it holds no memory to build; a read
// it does not hold is answered 503 with Retry-After and SERVER_BUSY, and
// builds nothing.
func TestCachedAnswersNeedNoRoomInTheBudget(t *testing.T) {
	budget := inflight.NewBudget(1<<20, 0) // no wait: a request without room is refused at once
	s := newServer(t, withAnswers(0), func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) {
		o.HTTP.Budget = budget
	})
	s.seedAnswers(t)
	sum := sha256.Sum256([]byte(answersCategoryPage))
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	first := s.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	s.fetch(t, http.MethodGet, s.getQueryURL(answersCategoryPage, `{"slug":"go"}`, ext), "", nil) // registers the hash
	s.requests()
	fillBudget(t, budget)

	for _, c := range []struct{ name, method, url, body string }{
		{"POST", http.MethodPost, s.url, `{"query":` + jsonString(answersCategoryPage) + `,"variables":{"slug":"go"}}`},
		{"GET", http.MethodGet, s.getQueryURL(answersCategoryPage, `{"slug":"go"}`, ""), ""},
		{"GET of a persisted query's hash", http.MethodGet, s.getQueryURL("", `{"slug":"go"}`, ext), ""},
		{"POST of a persisted query's hash", http.MethodPost, s.url, `{"variables":{"slug":"go"},"extensions":` + ext + `}`},
	} {
		t.Run("a cached answer by "+c.name+" is sent", func(t *testing.T) {
			a := s.fetch(t, c.method, c.url, c.body, nil)
			equal(t, "status", a.status, http.StatusOK)
			s.hit(t, a)
			equal(t, "body", a.body, first.body)
		})
	}
	t.Run("a read the cache does not hold is refused", func(t *testing.T) {
		a := s.fetch(t, http.MethodPost, s.url, `{"query":`+jsonString(answersFeed)+`}`, nil)
		equal(t, "status", a.status, http.StatusServiceUnavailable)
		equal(t, "Retry-After", a.header.Get("Retry-After"), "1")
		if !strings.Contains(a.body, `"SERVER_BUSY"`) {
			t.Errorf("body %s", a.body)
		}
		equal(t, "DynamoDB requests", total(s.requests()), 0)
	})
	equal(t, "budget used", budget.Used(), budget.Limit())
}
