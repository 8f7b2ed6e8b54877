package tests

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// Post creates per second in one publication, whose posts' counter every
// create writes, measured on the backend the tests use:
//
//	go test -run '^$' -bench PostCreatesOnePublication -benchtime 400x ./tests
//
// c clients (each an author of its own, so the counter is the one item
// their transactions share) send createPost over HTTP until b.N are
// answered. "serial" is the backend as it is: neither the embedded engine
// nor DynamoDB Local ever cancels a transaction for a conflict. "conflict"
// answers TransactionConflict to a transaction writing the counter while
// another one writing it is in flight, as DynamoDB does, so the store's
// retries show. Reported: creates/s, the share of the counter's
// transactions cancelled by a conflict (retry-%), and the creates answered
// UNAVAILABLE after the store's retries (unavailable-%); ns/op is the
// wall time over b.N.

// counterTraffic is an http.RoundTripper in front of DynamoDB that counts
// the transactions writing a posts' counter and, with conflict, cancels
// one while another is in flight.
type counterTraffic struct {
	next     http.RoundTripper
	conflict bool

	mu                  sync.Mutex
	inFlight            int
	attempts, conflicts int
}

func (c *counterTraffic) RoundTrip(r *http.Request) (*http.Response, error) {
	_, n, at, err := counterAction(r)
	if err != nil || at < 0 {
		return c.next.RoundTrip(r)
	}
	c.mu.Lock()
	c.attempts++
	if c.conflict && c.inFlight > 0 {
		c.conflicts++
		c.mu.Unlock()
		return conflictAt(r, n, at), nil
	}
	c.inFlight++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	return c.next.RoundTrip(r)
}

// counts returns the transactions that wrote the counter and those
// cancelled by a conflict.
func (c *counterTraffic) counts() (attempts, conflicts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts, c.conflicts
}

func BenchmarkPostCreatesOnePublication(b *testing.B) {
	for _, conflict := range []bool{false, true} {
		for _, clients := range []int{1, 16} {
			mode := "serial"
			if conflict {
				mode = "conflict"
			}
			b.Run(fmt.Sprintf("%s/c=%d", mode, clients), func(b *testing.B) {
				benchPostCreates(b, clients, 1, conflict)
			})
		}
	}
	// Four servers on one table, four clients each: each server's writes
	// queue at its own gate, the servers' still conflict.
	b.Run("conflict/c=16/servers=4", func(b *testing.B) { benchPostCreates(b, 16, 4, true) })
}

// benchPostCreates runs b.N createPosts from clients at once in one
// publication, spread over servers, each a Store and handler of its own
// on one table.
func benchPostCreates(b *testing.B, clients, servers int, conflict bool) {
	ctx := context.Background()
	traffic := &counterTraffic{conflict: conflict}
	cfg := dynamotest.ClientConfig(b, nil)
	traffic.next = dynamotest.Transport(cfg)
	cfg.HTTPClient = &http.Client{Transport: traffic}
	db, err := storage.NewClient(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	table := dynamotest.Table(b, db, "creates")
	store := storage.New(db, table)
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		b.Fatal(err)
	}
	urls := make([]string, servers)
	for i := range urls {
		hs := httptest.NewServer(graph.NewHandler(storage.New(db, table), graph.HandlerOptions{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Verifier: verifier,
		}))
		defer hs.Close()
		urls[i] = hs.URL
	}
	authors := make([]graphql.Client, clients)
	for i := range authors {
		id := fmt.Sprintf("writer-%d", i)
		if _, err := store.CreateAuthor(ctx, storage.NewAuthor{ID: id, Name: id}); err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		token, err := auth.Sign(testSecret, auth.Claims{RegisteredClaims: jwt.RegisteredClaims{
			Subject: id, Issuer: testIssuer, Audience: jwt.ClaimStrings{testAudience},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
		}, Roles: []string{auth.RoleAuthor}})
		if err != nil {
			b.Fatal(err)
		}
		authors[i] = graphql.NewClient(urls[i%servers], &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
	}
	// The first create counts the publication's posts and puts the
	// counter: not part of the run.
	if _, err := CreatePost(ctx, authors[0], CreatePostInput{Title: "First", Slug: "first"}); err != nil {
		b.Fatal(err)
	}
	traffic.mu.Lock()
	traffic.attempts, traffic.conflicts = 0, 0
	traffic.mu.Unlock()

	var (
		next        atomic.Int64
		unavailable atomic.Int64
		mu          sync.Mutex
		failed      error
		wg          sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failed == nil {
			failed = err
		}
	}
	b.ResetTimer()
	began := time.Now()
	for _, c := range authors {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				_, err := CreatePost(ctx, c, CreatePostInput{Title: "Post", Slug: fmt.Sprintf("post-%d", i)})
				switch {
				case err == nil:
				case code(err) == graph.CodeUnavailable:
					unavailable.Add(1)
				default:
					fail(err)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	attempts, conflicts := traffic.counts()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	b.ReportMetric(100*float64(conflicts)/float64(max(attempts, 1)), "retry-%")
	b.ReportMetric(100*float64(unavailable.Load())/float64(b.N), "unavailable-%")
}
