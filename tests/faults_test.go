package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The faults a faultyTransport injects, the way DynamoDB and networks fail.
const (
	faultThrottled     = "throttled"            // 400 ThrottlingException
	faultCapacity      = "capacity exceeded"    // 400 ProvisionedThroughputExceededException
	faultServer        = "server error"         // 500 InternalServerError
	faultTimeout       = "timeout"              // the attempt times out
	faultResetBefore   = "connection reset"     // dropped before DynamoDB saw the request
	faultResetAfter    = "response lost"        // dropped after DynamoDB did the work
	faultConflict      = "transaction conflict" // TransactWriteItems cancelled by a concurrent one
	faultHang          = "hang"                 // no answer until the caller gives up
	faultPanic         = "panic"                // a bug in the transport
	dynamoErrorPrefix  = "com.amazonaws.dynamodb.v20120810#"
	dynamoTargetHeader = "X-Amz-Target"
)

// randomFaults are the faults injected at random; hang and panic are
// tested on their own.
var randomFaults = []string{faultThrottled, faultCapacity, faultServer, faultTimeout, faultResetBefore, faultResetAfter, faultConflict}

// faultyTransport is an http.RoundTripper in front of DynamoDB that makes a
// share of the requests fail, chosen by a seeded random source. Conflicts
// only hit TransactWriteItems. It counts what it injected.
type faultyTransport struct {
	next http.RoundTripper

	mu       sync.Mutex
	rng      *rand.Rand
	rate     float64
	only     string // when set, the one fault injected
	requests int
	injected map[string]int
	lost     int    // writes done whose answer was dropped
	deadline []bool // per hung request: whether its context had a deadline
}

func newFaultyTransport(next http.RoundTripper, seed uint64) *faultyTransport {
	return &faultyTransport{next: next, rng: rand.New(rand.NewPCG(seed, seed)), injected: map[string]int{}}
}

// set makes a share rate of the requests fail, with only that fault when
// only is not empty; rate 0 lets every request through.
func (f *faultyTransport) set(rate float64, only string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rate, f.only = rate, only
}

// pick returns the fault for the next request of operation op, or "".
func (f *faultyTransport) pick(op string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if f.rate == 0 || f.rng.Float64() >= f.rate {
		return ""
	}
	fault := f.only
	for fault == "" {
		fault = randomFaults[f.rng.IntN(len(randomFaults))]
		if fault == faultConflict && op != "TransactWriteItems" {
			fault = ""
		}
	}
	f.injected[fault]++
	if fault == faultResetAfter && op == "TransactWriteItems" {
		f.lost++
	}
	return fault
}

// counts returns how many requests went through, the faults injected, and
// how many of those were transactions whose answer was lost after they
// were done.
func (f *faultyTransport) counts() (int, map[string]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, maps.Clone(f.injected), f.lost
}

// deadlines returns, for each hung request, whether its context had a
// deadline.
func (f *faultyTransport) deadlines() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deadline)
}

// timeoutError is what a client's dial or read deadline returns.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (f *faultyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get(dynamoTargetHeader), "DynamoDB_20120810.")
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	switch fault := f.pick(op); fault {
	case faultThrottled:
		return dynamoError(r, 400, "ThrottlingException", `"message":"Rate of requests exceeds the allowed throughput."`), nil
	case faultCapacity:
		return dynamoError(r, 400, "ProvisionedThroughputExceededException", `"message":"The level of configured provisioned throughput for the table was exceeded."`), nil
	case faultServer:
		return dynamoError(r, 500, "InternalServerError", `"message":"Internal server error"`), nil
	case faultTimeout:
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}
	case faultResetBefore:
		return nil, reset
	case faultResetAfter:
		resp, err := f.next.RoundTrip(r)
		if err == nil {
			resp.Body.Close()
		}
		return nil, reset
	case faultConflict:
		return dynamoError(r, 400, "TransactionCanceledException", conflictReasons(r)), nil
	case faultHang:
		_, deadline := r.Context().Deadline()
		f.mu.Lock()
		f.deadline = append(f.deadline, deadline)
		f.mu.Unlock()
		<-r.Context().Done()
		return nil, r.Context().Err()
	case faultPanic:
		panic("faulty transport: " + op)
	}
	return f.next.RoundTrip(r)
}

// conflictReasons returns the body of a transaction cancelled by a
// conflict on its first action, with a reason for each action as DynamoDB
// gives them.
func conflictReasons(r *http.Request) string {
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var in struct{ TransactItems []json.RawMessage }
	_ = json.Unmarshal(raw, &in)
	codes := make([]string, max(len(in.TransactItems), 1))
	reasons := make([]string, len(codes))
	for i := range codes {
		codes[i], reasons[i] = "None", `{"Code":"None"}`
	}
	codes[0], reasons[0] = "TransactionConflict", `{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"}`
	return fmt.Sprintf(`"Message":"Transaction cancelled, please refer cancellation reasons for specific reasons [%s]","CancellationReasons":[%s]`,
		strings.Join(codes, ", "), strings.Join(reasons, ","))
}

// dynamoError is a DynamoDB error response, with the CRC32 header the SDK
// checks.
func dynamoError(r *http.Request, status int, code, fields string) *http.Response {
	body := []byte(`{"__type":"` + dynamoErrorPrefix + code + `",` + fields + `}`)
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-ErrorType", code)
	h.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(body)))
	return &http.Response{
		Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r,
	}
}

// newFaultyServer starts the server with a faultyTransport in front of its
// DynamoDB, letting everything through until set is called.
func newFaultyServer(t *testing.T, seed uint64, configure ...func(*storage.ClientConfig, *graphpkg.HandlerOptions)) (*server, *faultyTransport) {
	var f *faultyTransport
	inject := inFront(func(backend http.RoundTripper) http.RoundTripper {
		f = newFaultyTransport(backend, seed)
		return f
	})
	return newServer(t, append([]func(*storage.ClientConfig, *graphpkg.HandlerOptions){inject}, configure...)...), f
}

// faultWorld is a small published blog for the concurrent runs: three
// authors who comment, one category, four posts, written with the faults
// off.
type faultWorld struct {
	authors []string         // storage ids
	writers []graphql.Client // signed in as authors[i]
	posts   []string         // storage ids
	gids    []string         // global ids of posts
	slugs   []string
}

func (s *server) faultWorld(t *testing.T) *faultWorld {
	t.Helper()
	ctx := context.Background()
	w := &faultWorld{}
	for _, a := range []string{"ada", "grace", "alan"} {
		ok[*storage.Author](t)(s.store.CreateAuthor(ctx, storage.NewAuthor{ID: a, Name: a}))
		w.authors = append(w.authors, a)
		w.writers = append(w.writers, s.as(a, auth.RoleAuthor))
	}
	ok[*storage.Category](t)(s.store.CreateCategory(ctx, storage.NewCategory{Slug: "go", Name: "Go"}))
	for i := range 4 {
		slug := fmt.Sprintf("faulty-%d", i)
		p := ok[*storage.Post](t)(s.store.CreatePost(ctx, storage.NewPost{AuthorID: w.authors[i%3], Title: slug, Slug: slug, Categories: []string{"go"}}))
		ok[*storage.Post](t)(s.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Hour)}))
		w.posts = append(w.posts, p.ID)
		w.slugs = append(w.slugs, slug)
		w.gids = append(w.gids, ok[*PostPageResponse](t)(PostPage(ctx, s.client, slug)).Post.Id)
	}
	return w
}

// transient are the codes of a request that may be sent again as it was.
var transient = []string{graphpkg.CodeUnavailable, graphpkg.CodeTimeout}

// outcomes counts what the clients saw.
type outcomes struct {
	mu    sync.Mutex
	codes map[string]int
}

// add counts one response by its error code, "" for a success.
func (o *outcomes) add(code string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.codes == nil {
		o.codes = map[string]int{}
	}
	if code == "" {
		code = "OK"
	}
	o.codes[code]++
}

// comment is one addComment as a client means it: one idempotency key, one
// marker body.
type comment struct {
	key, post, body string
	viaStore        bool
	author          int
	id              string // the comment's id, once it succeeded
}

// TestFaultInjection runs concurrent comments, edits and reads, through
// GraphQL and through the storage API, while DynamoDB throttles, fails,
// times out, drops connections and cancels transactions at a given rate.
// Clients retry a failed mutation with the same idempotency key, as they
// should. Every mutation takes effect once or not at all, every failure
// has a transient code (no INTERNAL, no 5xx, no panic), and the invariant
// checker finds nothing afterwards.
func TestFaultInjection(t *testing.T) {
	for i, rate := range []float64{0.1, 0.3, 0.5} {
		t.Run(fmt.Sprintf("%.0f%% of DynamoDB requests fail", rate*100), func(t *testing.T) {
			runFaults(t, uint64(i+1), rate)
		})
	}
}

func runFaults(t *testing.T, seed uint64, rate float64) {
	s, faults := newFaultyServer(t, seed)
	w := s.faultWorld(t)
	ctx := context.Background()
	const (
		workers  = 6
		rounds   = 20
		attempts = 6 // a client's tries of one mutation
	)
	var (
		seen     outcomes
		mu       sync.Mutex
		comments []*comment
		wg       sync.WaitGroup
		failures atomic.Int64
	)
	faults.set(rate, "")
	for g := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for r := range rounds {
				p := rng.IntN(len(w.posts))
				switch rng.IntN(4) {
				case 0, 1: // a comment, through GraphQL or the store
					c := &comment{key: fmt.Sprintf("c-%d-%d-%d", seed, g, r), post: w.posts[p], author: rng.IntN(len(w.authors)), viaStore: r%2 == 1}
					c.body = "comment " + c.key
					for range attempts {
						code := s.addComment(ctx, w, c, p)
						seen.add(code)
						if code == "" {
							break
						} else if !slices.Contains(transient, code) {
							t.Errorf("comment %s: code %s", c.key, code)
							break
						}
					}
					mu.Lock()
					comments = append(comments, c)
					mu.Unlock()
				case 2: // an edit of the author's own post, based on the version read
					var version int
					key := ""
					for try := range attempts {
						if key == "" {
							cur, err := PostByID(ctx, s.client, w.gids[p])
							if seen.add(code(err)); err != nil {
								if !slices.Contains(transient, code(err)) {
									t.Errorf("read before edit: %v", err)
								}
								continue
							}
							version, key = cur.Post.Version, fmt.Sprintf("e-%d-%d-%d-%d", seed, g, r, try)
						}
						_, err := UpdatePost(ctx, w.writers[p%3], UpdatePostInput{Id: w.gids[p], ExpectedVersion: version,
							Excerpt: ptr(fmt.Sprintf("edited by %d in round %d", g, r)), IdempotencyKey: &key})
						c := code(err)
						seen.add(c)
						if c == graphpkg.CodeConflict {
							key = "" // someone else's edit came first: read again
							continue
						}
						if err != nil && !slices.Contains(transient, c) {
							t.Errorf("edit: %v", err)
						}
						if !slices.Contains(transient, c) {
							break
						}
					}
				case 3: // the reads of a post page, the feed and a category page
					for _, read := range []func() error{
						func() error { _, err := PostPage(ctx, s.client, w.slugs[p]); return err },
						func() error { _, err := Feed(ctx, s.client, ptr(10), nil); return err },
						func() error { _, err := CategoryPage(ctx, s.client, "go", ptr(10), nil); return err },
					} {
						err := read()
						seen.add(code(err))
						if c := code(err); err != nil && !slices.Contains(transient, c) {
							t.Errorf("read: status %d code %q: %v", status(err), c, err)
						}
					}
				}
			}
		})
	}
	wg.Wait()
	faults.set(0, "")
	requests, injected, lost := faults.counts()

	// A client that gave up sends its comment once more, with the faults
	// over: it is written now unless it was already, and then the same
	// comment comes back.
	for _, c := range comments {
		before := c.id
		c.id = ""
		if code := s.addComment(ctx, w, c, slices.Index(w.posts, c.post)); code != "" {
			t.Fatalf("comment %s after the faults: %s", c.key, code)
		}
		if before != "" && before != c.id {
			t.Errorf("comment %s: retried, it returned %s instead of %s", c.key, c.id, before)
		}
		if before == "" {
			failures.Add(1)
		}
	}
	for i, post := range w.posts {
		bodies := map[string]int{}
		var after string
		for {
			page := ok[*storage.Result[*storage.Comment]](t)(s.store.Comments(ctx, post, storage.PageArgs{Limit: 100, After: after}))
			for _, c := range page.Items {
				bodies[c.Body]++
			}
			if !page.HasNext {
				break
			}
			after = page.Cursors[len(page.Cursors)-1]
		}
		for _, c := range comments {
			if c.post == post && bodies[c.body] != 1 {
				t.Errorf("post %d: comment %s written %d times", i, c.key, bodies[c.body])
			}
		}
	}
	s.consistent()
	t.Logf("rate %.2f: %d DynamoDB requests, injected %v (%d of them answers to done transactions); "+
		"%d comments, %d of them failed on every try during the faults; responses by code %v",
		rate, requests, injected, lost, len(comments), failures.Load(), seen.codes)
}

// addComment sends c through GraphQL or the store, as c says, and returns
// the error code ("" when it worked, recording the id).
func (s *server) addComment(ctx context.Context, w *faultWorld, c *comment, post int) string {
	if c.viaStore {
		got, err := s.store.AddComment(ctx, storage.NewComment{PostID: c.post, AuthorID: w.authors[c.author], Body: c.body, IdempotencyKey: c.key})
		switch {
		case err == nil:
			c.id = got.ID
			return ""
		case errors.Is(err, storage.ErrUnavailable), errors.Is(err, storage.ErrBusy):
			return graphpkg.CodeUnavailable
		case errors.Is(err, context.DeadlineExceeded):
			return graphpkg.CodeTimeout
		}
		return err.Error()
	}
	got, err := AddComment(ctx, w.writers[c.author], AddCommentInput{PostId: w.gids[post], Body: c.body, IdempotencyKey: &c.key})
	if err != nil {
		return code(err)
	}
	c.id = got.AddComment.Comment.Id
	return ""
}

// TestRequestTimeoutReachesDynamoDB hangs DynamoDB: the request's deadline
// reaches the call, which gives up, and the client gets TIMEOUT instead of
// waiting for ever.
func TestRequestTimeoutReachesDynamoDB(t *testing.T) {
	s, faults := newFaultyServer(t, 1, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) {
		o.HTTP.RequestTimeout = 200 * time.Millisecond
	})
	ctx := context.Background()
	ok[*storage.Category](t)(s.store.CreateCategory(ctx, storage.NewCategory{Slug: "go", Name: "Go"}))
	faults.set(1, faultHang)
	_, err := CategoryPage(ctx, s.client, "go", nil, nil)
	equal(t, "code", code(err), graphpkg.CodeTimeout)
	faults.set(0, "")
	if d := faults.deadlines(); len(d) == 0 || slices.Contains(d, false) {
		t.Errorf("hung DynamoDB requests had deadlines %v, want one each", d)
	}
	r := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", nil, nil))
	equal(t, "category after the hang", r.Category.Name, "Go")
}

// TestPanicsAreRecovered makes DynamoDB calls panic: the request answers
// INTERNAL with no detail, the panic is logged with the request's id, and
// the server goes on serving.
func TestPanicsAreRecovered(t *testing.T) {
	var logs lockedBuffer
	s, faults := newFaultyServer(t, 1, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	ctx := context.Background()
	ok[*storage.Category](t)(s.store.CreateCategory(ctx, storage.NewCategory{Slug: "go", Name: "Go"}))
	faults.set(1, faultPanic)
	a := s.fetch(t, http.MethodPost, s.url, request(`{ category(slug: "go") { name } }`, nil),
		map[string]string{gqlhttp.RequestIDHeader: "panic-test-1"})
	var body response
	if err := json.Unmarshal([]byte(a.body), &body); err != nil {
		t.Fatal(err)
	}
	faults.set(0, "")
	equal(t, "status", a.status, http.StatusOK)
	equal(t, "request id", a.header.Get(gqlhttp.RequestIDHeader), "panic-test-1")
	if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != graphpkg.CodeInternal || body.Errors[0].Message != "internal error" {
		t.Errorf("errors %v, want one INTERNAL without detail", body.Errors)
	}
	if !logs.has(`"msg":"panic in resolver"`, `"request_id":"panic-test-1"`, `faulty transport: GetItem`) {
		t.Errorf("no panic log line with the request id in:\n%s", logs.String())
	}
	r := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", nil, nil))
	equal(t, "category after the panic", r.Category.Name, "Go")
}

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// has reports whether one line holds every part.
func (b *lockedBuffer) has(parts ...string) bool {
	for line := range strings.Lines(b.String()) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return true
		}
	}
	return false
}

// TestClientGoneIsNoInternalError drops a request while its DynamoDB call
// hangs: the server logs a warning of a canceled request, not an error.
func TestClientGoneIsNoInternalError(t *testing.T) {
	var logs lockedBuffer
	s, faults := newFaultyServer(t, 1, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	faults.set(1, faultHang)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(request(`{ category(slug: "go") { name } }`, nil)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request was answered %d, want it dropped", resp.StatusCode)
	}
	for deadline := time.Now().Add(10 * time.Second); !logs.has(`"msg":"graphql request failed"`) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	faults.set(0, "")
	if !logs.has(`"level":"WARN"`, `"msg":"graphql request failed"`, `context canceled`) {
		t.Errorf("no warning of the canceled request in:\n%s", logs.String())
	}
	if logs.has(`"level":"ERROR"`) {
		t.Errorf("a canceled request logged an error:\n%s", logs.String())
	}
}
