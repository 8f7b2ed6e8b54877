package tests

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/longtest"
	"github.com/blogql/blog/storage"
)

// soakDuration is how long TestSoak runs: SOAK_DURATION (a Go duration,
// e.g. 10m) or 5s.
func soakDuration(t *testing.T) time.Duration {
	v := os.Getenv("SOAK_DURATION")
	if v == "" {
		return 5 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("SOAK_DURATION=%q: want a positive duration such as 10m", v)
	}
	return d
}

// statusCounter counts the HTTP statuses of the responses it carries.
type statusCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[int]int
}

func (c *statusCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		c.mu.Lock()
		c.n[resp.StatusCode]++
		c.mu.Unlock()
	}
	return resp, err
}

// TestSoak runs readers and writers against the real handler over
// loopback for SOAK_DURATION: post pages, feeds and category pages, new
// comments that are deleted again, and edits based on the version read,
// each retried as a client would (the same idempotency key after a
// transient error, a fresh read after a conflict). No response may be a
// 5xx or INTERNAL, the invariant checker must find nothing, and the heap
// and goroutines must come back to where they started, give or take what
// the table itself holds when it lives in this process.
func TestSoak(t *testing.T) {
	longtest.Skip(t, "readers and writers for SOAK_DURATION, 5 s by default")
	duration := soakDuration(t)
	// The server's connections to DynamoDB Local go through a transport of
	// the test's, so that their idle ones can be closed before goroutines
	// are counted; the embedded engine has none.
	dynamo := http.DefaultTransport.(*http.Transport).Clone()
	s := newServer(t, func(c *storage.ClientConfig, _ *graphpkg.HandlerOptions) {
		if !c.Embedded {
			c.HTTPClient = &http.Client{Transport: dynamo}
		}
	})
	idle := func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		dynamo.CloseIdleConnections()
	}
	w := s.faultWorld(t)
	statuses := &statusCounter{next: http.DefaultTransport, n: map[int]int{}}
	client := func(sub string) graphql.Client {
		token, err := auth.Sign(testSecret, s.claims(sub, auth.RoleAuthor))
		if err != nil {
			t.Fatal(err)
		}
		return graphql.NewClient(s.url, &http.Client{Transport: bearer{token: token, next: statuses}})
	}
	var writers []graphql.Client
	for _, a := range w.authors {
		writers = append(writers, client(a))
	}
	reader := graphql.NewClient(s.url, &http.Client{Transport: statuses})

	// One short round first, so that what every request allocates once
	// (query cache, connections, SDK state) is in the starting heap.
	var seen outcomes
	soak(t, s, w, reader, writers, &seen, 1, 200*time.Millisecond)
	idle()
	heapBefore, goroutinesBefore := settled()
	served := func() int {
		statuses.mu.Lock()
		defer statuses.mu.Unlock()
		n := 0
		for _, v := range statuses.n {
			n += v
		}
		return n
	}
	statuses.mu.Lock()
	statuses.n = map[int]int{}
	statuses.mu.Unlock()
	seen = outcomes{}

	soak(t, s, w, reader, writers, &seen, 8, duration)
	idle()
	heapAfter, goroutinesAfter := settled()
	requests := served()
	statuses.mu.Lock()
	byStatus := maps.Clone(statuses.n)
	statuses.mu.Unlock()
	t.Logf("%s: %d requests (%.0f/s), HTTP statuses %v, responses by code %v", duration, requests,
		float64(requests)/duration.Seconds(), byStatus, seen.codes)
	t.Logf("heap after GC %.1f MiB before, %.1f MiB after (%+.0f bytes a request); goroutines %d before, %d after",
		mib(heapBefore), mib(heapAfter), float64(int64(heapAfter)-int64(heapBefore))/float64(max(requests, 1)),
		goroutinesBefore, goroutinesAfter)

	for st, n := range byStatus {
		if st >= 500 {
			t.Errorf("%d responses with status %d", n, st)
		}
	}
	if n := seen.codes[graphpkg.CodeInternal]; n > 0 {
		t.Errorf("%d INTERNAL errors", n)
	}
	if seen.codes["OK"] == 0 {
		t.Error("no request succeeded")
	}
	// Comments are deleted again, but idempotency records stay, a few
	// kilobytes per write (on the embedded engine, in its file, out of the
	// heap).
	if grown := int64(heapAfter) - int64(heapBefore); grown > 8<<20+int64(requests)*2<<10 {
		t.Errorf("heap grew by %.1f MiB over %d requests", float64(grown)/(1<<20), requests)
	}
	if goroutinesAfter > goroutinesBefore+4 {
		t.Errorf("%d goroutines after the soak, %d before", goroutinesAfter, goroutinesBefore)
	}
	s.consistent()
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// settled returns the live heap after a garbage collection and the number
// of goroutines, once the goroutines of finished requests have ended, and
// those the server keeps for the next (idle for a second at most): once
// the number has not changed for 2 s, or after 10 s.
func settled() (heap uint64, goroutines int) {
	goroutines, since := -1, time.Now()
	for deadline := since.Add(10 * time.Second); time.Now().Before(deadline) && time.Since(since) < 2*time.Second; time.Sleep(50 * time.Millisecond) {
		runtime.GC()
		if n := runtime.NumGoroutine(); n != goroutines {
			goroutines, since = n, time.Now()
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, runtime.NumGoroutine()
}

// soakSerial numbers the soak's operations, which makes their idempotency
// keys unique.
var soakSerial atomic.Int64

// soak runs workers clients for d, counting their outcomes in seen.
func soak(t *testing.T, s *server, w *faultWorld, reader graphql.Client, writers []graphql.Client, seen *outcomes, workers int, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				p := rng.IntN(len(w.posts))
				n := soakSerial.Add(1)
				switch op := rng.IntN(10); {
				case op < 6:
					soakRead(t, s, w, reader, seen, p, op)
				case op < 9:
					soakComment(t, w, writers[rng.IntN(len(writers))], seen, p, n)
				default:
					soakEdit(t, w, writers[p%len(writers)], reader, seen, p, n)
				}
			}
		})
	}
	wg.Wait()
}

// The requests below use a context of their own: the soak's end must not
// cut one short, which the server would rightly count as a cancelled call.

func soakRead(t *testing.T, s *server, w *faultWorld, reader graphql.Client, seen *outcomes, p, op int) {
	ctx := context.Background()
	var err error
	switch op % 3 {
	case 0:
		_, err = PostPage(ctx, reader, w.slugs[p])
	case 1:
		_, err = Feed(ctx, reader, ptr(20), nil)
	default:
		_, err = CategoryPage(ctx, reader, "go", ptr(20), nil)
	}
	seen.add(code(err))
	if err != nil && !slices.Contains(transient, code(err)) {
		t.Errorf("read: %v", err)
	}
}

// soakComment adds a comment and deletes it again, each with its own
// idempotency key and retried on transient errors.
func soakComment(t *testing.T, w *faultWorld, writer graphql.Client, seen *outcomes, p int, n int64) {
	ctx := context.Background()
	key := fmt.Sprintf("soak-add-%d", n)
	var id string
	for range 5 {
		r, err := AddComment(ctx, writer, AddCommentInput{PostId: w.gids[p], Body: "soak " + key, IdempotencyKey: &key})
		seen.add(code(err))
		if err == nil {
			id = r.AddComment.Comment.Id
			break
		}
		if !slices.Contains(transient, code(err)) {
			t.Errorf("add comment: %v", err)
			return
		}
	}
	if id == "" {
		return
	}
	key = fmt.Sprintf("soak-delete-%d", n)
	for range 5 {
		_, err := DeleteComment(ctx, writer, DeleteCommentInput{Id: id, IdempotencyKey: &key})
		seen.add(code(err))
		if err == nil {
			return
		}
		if !slices.Contains(transient, code(err)) {
			t.Errorf("delete comment: %v", err)
			return
		}
	}
}

// soakEdit edits the excerpt of a post as its author, based on the version
// read: a transient error sends the same edit again, a conflict means
// reading again.
func soakEdit(t *testing.T, w *faultWorld, writer, reader graphql.Client, seen *outcomes, p int, n int64) {
	ctx := context.Background()
	var version int
	key := ""
	for try := range 5 {
		if key == "" {
			cur, err := PostByID(ctx, reader, w.gids[p])
			if seen.add(code(err)); err != nil {
				if !slices.Contains(transient, code(err)) {
					t.Errorf("read before edit: %v", err)
				}
				continue
			}
			version, key = cur.Post.Version, fmt.Sprintf("soak-edit-%d-%d", n, try)
		}
		_, err := UpdatePost(ctx, writer, UpdatePostInput{Id: w.gids[p], ExpectedVersion: version,
			Excerpt: ptr(fmt.Sprintf("edit %d", n)), IdempotencyKey: &key})
		c := code(err)
		seen.add(c)
		switch {
		case err == nil:
			return
		case c == graphpkg.CodeConflict:
			key = ""
		case !slices.Contains(transient, c):
			t.Errorf("edit: %v", err)
			return
		}
	}
}
