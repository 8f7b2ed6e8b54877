package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/live"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// The harness of the subscription tests: a server as server.go runs it,
// with the change feed on a table with a stream, the real clock, and
// clients of both transports written from their protocols'
// specifications (graphql-transport-ws, and graphql-sse's distinct
// connections mode).

// waitLimit bounds every wait for an event: a deadline for a failure,
// never a time the test relies on.
const waitLimit = 20 * time.Second

type liveServer struct {
	t        *testing.T
	store    *storage.Store
	url      string
	hub      *live.Hub
	shutdown chan struct{}
	anon     graphql.Client
	ada      graphql.Client
	db       *dynamodb.Client
	table    string

	mu sync.Mutex
	// last counts the DynamoDB requests of the last request, a stream's
	// for as long as it lasts.
	last *storage.Counter
}

// liveFeedOptions are the change feed's options of a liveServer: short
// leases and polls, so that tests wait less.
var liveFeedOptions = changefeed.Options{
	LeaseDuration: 2 * time.Second, RenewEvery: 300 * time.Millisecond,
	PollEvery: 20 * time.Millisecond, TailEvery: 20 * time.Millisecond, ReadGap: 20 * time.Millisecond,
}

// liveWindow is the window of the hubs of the liveServers started next:
// live.DefaultWindow unless a test makes it smaller.
var liveWindow = live.DefaultWindow

// liveObserve, when set, gets every DynamoDB call of the liveServers
// started next.
var liveObserve func(storage.Call)

// liveOptions change a liveServer's handler options before it starts.
type liveOptions func(*graph.HandlerOptions)

func newLiveServer(t *testing.T, configure ...liveOptions) *liveServer {
	t.Helper()
	ctx := context.Background()
	cfg := dynamotest.ClientConfig(t, nil)
	cfg.Observe = liveObserve
	db, err := storage.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	streams, err := storage.NewStreamsClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "live")
	store := storage.New(db, table, storage.WithStream())
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	s := serveLive(t, store, streams, configure...)
	s.db, s.table = db, table
	return s
}

// another returns a second server on s's table, with a change feed of
// its own, as a second instance behind a load balancer.
func (s *liveServer) another(t *testing.T) *liveServer {
	t.Helper()
	streams, err := storage.NewStreamsClient(context.Background(), dynamotest.ClientConfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	return serveLive(t, s.store, streams)
}

// serveLive runs a change feed with the comment counts worker, a hub
// and the handler on store.
func serveLive(t *testing.T, store *storage.Store, streams *dynamodbstreams.Client, configure ...liveOptions) *liveServer {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(liveLogOutput(), nil))
	feedOpts := liveFeedOptions
	feedOpts.Logger = logger
	// The hub loads the log's last events, and the feed's tail goes on
	// after them, as server.go runs them.
	hub := live.NewHub(live.StoreLog(store), live.Options{Window: liveWindow})
	feedOpts.TailStart = hub.Load
	feed := changefeed.New(store, streams, feedOpts)
	// The comment counts worker, as server.go adds it.
	counts := store.NewCountSync()
	feed.AddWorker(changefeed.Worker{Name: "counts", Events: counts.Events, Tick: counts.Tick, Every: storage.CountSyncTick, Hold: counts.Hold})
	feed.Subscribe(hub.Publish)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	s := &liveServer{t: t, store: store, hub: hub, shutdown: make(chan struct{})}
	opts := graph.HandlerOptions{
		Logger:   logger,
		HTTP:     gqlhttp.Options{Introspection: true, Streams: &gqlhttp.StreamOptions{Shutdown: s.shutdown}},
		Verifier: verifier,
		Comments: graph.CommentPolicy{PerMinute: -1},
		Live:     graph.LiveOptions{Hub: hub},
	}
	for _, f := range configure {
		f(&opts)
	}
	// The handler behind a middleware's response writer, as the server
	// logs requests: a WebSocket upgrade must still reach the connection.
	h := graph.NewHandler(store, opts)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		s.mu.Lock()
		s.last = counter
		s.mu.Unlock()
		h.ServeHTTP(wrappedWriter{w}, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	s.anon = graphql.NewClient(hs.URL, hs.Client())
	return s
}

// wrappedWriter is a middleware's response writer: http.ResponseController
// finds the server's through Unwrap.
type wrappedWriter struct{ http.ResponseWriter }

func (w wrappedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// token returns a token of sub with roles, valid for d from now.
func (s *liveServer) token(d time.Duration, sub string, roles ...string) string {
	now := time.Now()
	token, err := auth.Sign(testSecret, auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject: sub, Issuer: testIssuer, Audience: jwt.ClaimStrings{testAudience},
			IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), ExpiresAt: jwt.NewNumericDate(now.Add(d)),
		},
		Roles: roles,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return token
}

// as returns a client of sub with roles.
func (s *liveServer) as(sub string, roles ...string) graphql.Client {
	return graphql.NewClient(s.url, &http.Client{Transport: bearer{token: s.token(time.Hour, sub, roles...), next: http.DefaultTransport}})
}

// livePost makes the author ada and her published post; it returns a
// client of ada and the post's global id.
func (s *liveServer) livePost(t *testing.T) (graphql.Client, string) {
	t.Helper()
	ctx := context.Background()
	admin := s.as("admin", auth.RoleAdmin)
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, admin, CreateCategoryInput{Slug: "news", Name: "News"}))
	ada := s.as("ada", auth.RoleAuthor)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Live", Slug: "live", Body: ptr("Body."), Categories: []string{"news"}})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
	// A cursor read from now on is after the post's publication.
	s.waitLogged(t, storage.EventPostPublished)
	return ada, p.Id
}

// waitLogged waits until the event log holds an event of type typ.
func (s *liveServer) waitLogged(t *testing.T, typ storage.EventType) {
	t.Helper()
	waitFor(t, func() bool {
		events, err := s.store.EventsAfter(context.Background(), 0, feedstore.MaxEventsPage)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Type == typ {
				return true
			}
		}
		return false
	})
}

// addLiveComment adds a comment with body to post as c, and returns its id.
func addLiveComment(t *testing.T, c graphql.Client, post, body string) string {
	t.Helper()
	return ok[*AddCommentResponse](t)(AddComment(context.Background(), c, AddCommentInput{PostId: post, Body: body})).AddComment.Comment.Id
}

// result is one answer of a subscription: its data or errors, and the
// id of its SSE event.
type result struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
	id string
}

// code returns the code of the result's first error, "" without one.
func (r result) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// commentEvent is what the tests ask commentAdded for.
type commentEvent struct {
	Cursor  string `json:"cursor"`
	Comment struct {
		ID     string `json:"id"`
		Body   string `json:"body"`
		Status string `json:"status"`
	} `json:"comment"`
}

func (r result) comment(t *testing.T) commentEvent {
	t.Helper()
	return r.commentOf(t, "commentAdded")
}

// commentOf returns the CommentEvent of the subscription field.
func (r result) commentOf(t *testing.T, field string) commentEvent {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	var e commentEvent
	if err := json.Unmarshal(r.Data[field], &e); err != nil {
		t.Fatalf("%s %s: %v", field, r.Data[field], err)
	}
	return e
}

const commentAddedQuery = `subscription($post: ID!, $after: String) {
  commentAdded(postId: $post, after: $after) { cursor comment { id body status } }
}`

// stream is a subscription on either transport: next returns its next
// answer, or ok false once it completed.
type stream interface {
	next() (result, bool)
}

// wsConn is a graphql-transport-ws connection.
type wsConn struct {
	t    *testing.T
	conn *websocket.Conn
	mu   sync.Mutex
	subs map[string]chan result
	// closed gets the close frame's code when the server closes.
	closed chan int
}

// dialWS opens a connection and sends connection_init with payload.
// It returns the connection once acknowledged.
func (s *liveServer) dialWS(t *testing.T, payload map[string]any) *wsConn {
	t.Helper()
	c, err := s.dialWSErr(t, payload)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *liveServer) dialWSErr(t *testing.T, payload map[string]any) (*wsConn, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: waitLimit}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(s.url, "http"), nil)
	if err != nil {
		if resp != nil {
			return nil, &httpError{status: resp.StatusCode}
		}
		return nil, err
	}
	t.Cleanup(func() { conn.Close() })
	c := &wsConn{t: t, conn: conn, subs: map[string]chan result{}, closed: make(chan int, 1)}
	c.write(map[string]any{"type": "connection_init", "payload": payload})
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	var ack struct{ Type string }
	if err := conn.ReadJSON(&ack); err != nil {
		var ce *websocket.CloseError
		if asCloseError(err, &ce) {
			return nil, ce
		}
		return nil, err
	}
	if ack.Type != "connection_ack" {
		t.Fatalf("got %q, want connection_ack", ack.Type)
	}
	_ = conn.SetReadDeadline(time.Time{})
	go c.read()
	return c, nil
}

type httpError struct{ status int }

func (e *httpError) Error() string { return http.StatusText(e.status) }

func asCloseError(err error, target **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*target = ce
	}
	return ok
}

func (c *wsConn) write(v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Log(err)
	}
}

// read hands each message to its subscription and answers pings.
func (c *wsConn) read() {
	defer func() {
		c.mu.Lock()
		for _, ch := range c.subs {
			close(ch)
		}
		c.subs = map[string]chan result{}
		c.mu.Unlock()
	}()
	for {
		var m struct {
			Type    string          `json:"type"`
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := c.conn.ReadJSON(&m); err != nil {
			var ce *websocket.CloseError
			if asCloseError(err, &ce) {
				c.closed <- ce.Code
			}
			return
		}
		c.mu.Lock()
		ch := c.subs[m.ID]
		c.mu.Unlock()
		if ch == nil && m.Type != "ping" {
			continue // a subscription the client stopped
		}
		switch m.Type {
		case "ping":
			c.write(map[string]any{"type": "pong"})
		case "next":
			var r result
			_ = json.Unmarshal(m.Payload, &r)
			ch <- r
		case "error":
			r := result{}
			_ = json.Unmarshal(m.Payload, &r.Errors)
			ch <- r
			fallthrough
		case "complete":
			c.mu.Lock()
			delete(c.subs, m.ID)
			c.mu.Unlock()
			close(ch)
		}
	}
}

// subscribe starts a subscription with id on the connection.
func (c *wsConn) subscribe(id, query string, vars map[string]any) stream {
	ch := make(chan result, 1000)
	c.mu.Lock()
	c.subs[id] = ch
	c.mu.Unlock()
	c.write(map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": query, "variables": vars}})
	return chanStream{c.t, ch}
}

// stop completes the subscription id from the client's side.
func (c *wsConn) stop(id string) {
	c.mu.Lock()
	delete(c.subs, id)
	c.mu.Unlock()
	c.write(map[string]any{"type": "complete", "id": id})
}

type chanStream struct {
	t  *testing.T
	ch chan result
}

func (s chanStream) next() (result, bool) {
	s.t.Helper()
	select {
	case r, ok := <-s.ch:
		return r, ok
	case <-time.After(waitLimit):
		s.t.Fatal("no event in time")
		return result{}, false
	}
}

// sseStream is a graphql-sse stream: one response of events.
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	events chan result
}

// subscribeSSE posts the subscription, or GETs it with lastEventID
// when it is set, and reads its events.
func (s *liveServer) subscribeSSE(t *testing.T, method, token, query string, vars map[string]any, lastEventID string) (*sseStream, int) {
	t.Helper()
	var req *http.Request
	varsJSON, _ := json.Marshal(vars)
	if method == http.MethodGet {
		q := url.Values{"query": {query}, "variables": {string(varsJSON)}}
		req, _ = http.NewRequest(http.MethodGet, s.url+"?"+q.Encode(), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ = http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, resp.StatusCode
	}
	st := &sseStream{t: t, resp: resp, events: make(chan result, 256)}
	go st.read()
	return st, resp.StatusCode
}

// read parses the event stream as EventSource does.
func (st *sseStream) read() {
	defer close(st.events)
	sc := bufio.NewScanner(st.resp.Body)
	sc.Buffer(make([]byte, 4096), 1<<20)
	var event, id, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			switch event {
			case "next":
				var r result
				_ = json.Unmarshal([]byte(data), &r)
				r.id = id
				st.events <- r
			case "complete":
				return
			}
			event, id, data = "", "", ""
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
		}
	}
}

func (st *sseStream) next() (result, bool) {
	st.t.Helper()
	select {
	case r, ok := <-st.events:
		return r, ok
	case <-time.After(waitLimit):
		st.t.Fatal("no event in time")
		return result{}, false
	}
}

func (st *sseStream) close() { st.resp.Body.Close() }

func liveLogOutput() io.Writer {
	if os.Getenv("LIVE_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
