package tests

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/golang-jwt/jwt/v5"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// The tests run on the DynamoDB internal/dynamotest chooses: the embedded
// engine, or DynamoDB Local when DYNAMODB_ENDPOINT is set
// (REQUIRE_DYNAMODB=1 makes its absence a failure).

var start = dynamotest.Start

// Tokens of the tests: signed with testSecret for testIssuer and
// testAudience, which the server checks.
var testSecret = []byte("end-to-end-tests-secret-0123456789")

const (
	testIssuer   = "https://id.blog.test/"
	testAudience = "blog-api"
)

// server is the real GraphQL handler on loopback, with typed clients (an
// anonymous one and one of an admin) and the DynamoDB request count of the
// last GraphQL request.
type server struct {
	t     *testing.T
	db    *dynamodb.Client
	table string
	store *storage.Store
	clock *dynamotest.Clock
	// cfg is the DynamoDB client's configuration, for a streams client
	// on the same backend.
	cfg    storage.ClientConfig
	client graphql.Client
	admin  graphql.Client
	url    string
	opts   graph.HandlerOptions
	// plainStore: the store was made with no option (no stream).
	plainStore bool

	mu   sync.Mutex
	last *storage.Counter
}

// newServer starts the server on a table of its own. Each configure
// function, when given, changes the DynamoDB client's configuration and the
// handler's options before they are used.
func newServer(t *testing.T, configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *server {
	t.Helper()
	return newServerWith(t, nil, configure...)
}

// inFront returns a configure function for newServer that puts the
// transport wrap returns in front of the server's DynamoDB: the embedded
// engine's or DynamoDB Local's.
func inFront(wrap func(backend http.RoundTripper) http.RoundTripper) func(*storage.ClientConfig, *graph.HandlerOptions) {
	return func(c *storage.ClientConfig, _ *graph.HandlerOptions) {
		c.HTTPClient = &http.Client{Transport: wrap(dynamotest.Transport(*c))}
	}
}

// newServerWith starts the server as newServer does, with the token
// verifier's configuration changed by verify when it is not nil.
func newServerWith(t *testing.T, verify func(*auth.Config), configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *server {
	t.Helper()
	return newServerOn(t, nil, verify, configure...)
}

// newServerOn starts the server as newServerWith does, on a store made
// with storeOpts too (storage.WithStream for a change feed).
func newServerOn(t *testing.T, storeOpts []storage.Option, verify func(*auth.Config), configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *server {
	t.Helper()
	ctx := context.Background()
	// The store and the embedded engine share the test's clock, so items
	// expire by the time the store wrote them with.
	c := dynamotest.NewClock(start)
	clientCfg := dynamotest.ClientConfig(t, c.Now)
	opts := graph.HandlerOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// A minute, not the server's 10 s: a write on DynamoDB Local
		// beside the race detector on a loaded machine can pass 10 s,
		// and no test here is about the default.
		HTTP: gqlhttp.Options{Introspection: true, RequestTimeout: time.Minute},
	}
	for _, f := range configure {
		f(&clientCfg, &opts)
	}
	db, err := storage.NewClient(ctx, clientCfg)
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "e2e")
	store := storage.New(db, table, append([]storage.Option{storage.WithClock(c.Now)}, storeOpts...)...)
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, db: db, table: table, store: store, clock: c, cfg: clientCfg, plainStore: len(storeOpts) == 0}
	vc := auth.Config{Secret: testSecret, Issuer: testIssuer, Audience: testAudience, Now: c.Now}
	if verify != nil {
		verify(&vc)
	}
	verifier, err := auth.NewVerifier(vc)
	if err != nil {
		t.Fatal(err)
	}
	opts.Verifier = verifier
	s.opts = opts
	s.serve()
	return s
}

// serve starts a handler of its own on s's store and points s's clients
// at it.
func (s *server) serve() {
	h := graph.NewHandler(s.store, s.opts)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		s.mu.Lock()
		s.last = counter
		s.mu.Unlock()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	s.t.Cleanup(hs.Close)
	s.url = hs.URL
	s.client = graphql.NewClient(hs.URL, hs.Client())
	s.admin = s.as("admin", auth.RoleAdmin)
}

// another returns a second server on the same table, configured the same,
// as a second instance of the service behind a load balancer.
func (s *server) another() *server {
	o := &server{t: s.t, db: s.db, table: s.table, store: s.store, clock: s.clock, opts: s.opts}
	o.serve()
	return o
}

// reader returns a client that signs in as the reader sub, whose token
// carries the name and picture claims given (empty: none).
func (s *server) reader(sub, name, picture string) graphql.Client {
	c := s.claims(sub, auth.RoleReader)
	c.Name, c.Picture = name, picture
	return s.withClaims(c, testSecret)
}

// claims returns the claims of a valid token for sub with roles: issued
// now by the test clock, valid for a day.
func (s *server) claims(sub string, roles ...string) auth.Claims {
	now := s.clock.Now()
	return auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   sub,
			Issuer:    testIssuer,
			Audience:  jwt.ClaimStrings{testAudience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(24 * time.Hour)),
		},
		Roles: roles,
	}
}

// as returns a client that signs in as sub with roles.
func (s *server) as(sub string, roles ...string) graphql.Client {
	return s.withClaims(s.claims(sub, roles...), testSecret)
}

// withClaims returns a client that sends a token of c signed with secret.
func (s *server) withClaims(c auth.Claims, secret []byte) graphql.Client {
	token, err := auth.Sign(secret, c)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.withToken(token)
}

// withToken returns a client that sends token as its bearer token.
func (s *server) withToken(token string) graphql.Client {
	return graphql.NewClient(s.url, &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
}

// bearer adds a bearer token to every request, as a frontend's HTTP
// client does for a signed-in user.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// requests returns the DynamoDB requests of the last GraphQL request.
func (s *server) requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.ByOperation()
}

func total(byOp map[string]int) int {
	n := 0
	for _, v := range byOp {
		n += v
	}
	return n
}

// consistent fails the test when the invariant checker finds anything.
func (s *server) consistent() {
	s.t.Helper()
	// The server's sweep (GoLive, every second) makes the scheduled posts
	// whose time has passed go live; the test's clock jumps ahead with
	// nobody sweeping.
	if _, err := s.store.GoLive(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	// The counts worker syncs the comment counts of the posts' summaries
	// a moment after the comments: at once here.
	if err := s.store.SyncAllCounts(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	bad, err := s.store.Check(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	for _, b := range bad {
		s.t.Error("invariant: " + b)
	}
}

// code returns the extensions.code of the first GraphQL error in err,
// whatever the HTTP status of the response that carried it.
func code(err error) string {
	c, _ := extension(err, "code").(string)
	return c
}

// extension returns extensions[name] of the first GraphQL error in err.
func extension(err error, name string) any {
	var list gqlerror.List
	if httpErr, ok := errors.AsType[*graphql.HTTPError](err); ok {
		list = httpErr.Response.Errors
	} else {
		errors.As(err, &list)
	}
	if len(list) == 0 {
		return nil
	}
	return list[0].Extensions[name]
}

// status returns the HTTP status of a response that failed as a whole,
// or 200.
func status(err error) int {
	if httpErr, ok := errors.AsType[*graphql.HTTPError](err); ok {
		return httpErr.StatusCode
	}
	return http.StatusOK
}

func ok[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// httpAnswer is an HTTP answer, read whole.
type httpAnswer struct {
	status int
	header http.Header
	body   string
}

// fetch makes one HTTP request with headers and returns the answer; a body
// is sent as JSON.
func (s *server) fetch(t *testing.T, method, u, body string, headers map[string]string) httpAnswer {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return roundTrip(t, req)
}

// roundTrip sends req and reads the answer.
func roundTrip(t *testing.T, req *http.Request) httpAnswer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}
