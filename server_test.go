package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"html"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/playground"
	"github.com/blogql/blog/storage"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		args        []string
		check       func(*config) bool
		backend     string
		createTable bool
		seedDemo    bool
	}{
		{
			name:    "defaults to the embedded engine, created and seeded, on localhost:8080",
			backend: backendEmbedded, createTable: true, seedDemo: true,
			check: func(c *config) bool {
				return c.host == "localhost" && c.port == 8080 && c.table == "blog" && c.region == "us-east-1" &&
					c.playgroundOn() && c.introspectionOn() && c.logLevel == slog.LevelInfo && c.logFormat == "text" &&
					c.requestTimeout == gqlhttp.DefaultRequestTimeout && c.maxAttempts == storage.DefaultMaxAttempts &&
					c.moderationOption() == graph.HoldReaderComments && c.commentRate == graph.DefaultCommentsPerMinute
			},
		},
		{
			name:    "readers' comments can be published at once and limited otherwise",
			env:     map[string]string{"COMMENT_MODERATION": "publish", "COMMENT_RATE_LIMIT": "12"},
			backend: backendEmbedded, createTable: true, seedDemo: true,
			check: func(c *config) bool {
				return c.moderationOption() == graph.PublishReaderComments && c.commentRate == 12 && c.headingIDPrefix == "h-"
			},
		},
		{
			name:    "an endpoint means DynamoDB Local: table created, not seeded, no introspection",
			env:     map[string]string{"DYNAMODB_ENDPOINT": "http://127.0.0.1:8765"},
			backend: backendLocal, createTable: true, seedDemo: false,
			check: func(c *config) bool { return !c.introspectionOn() && !c.playgroundOn() },
		},
		{
			name:    "the playground follows introspection unless set",
			env:     map[string]string{"INTROSPECTION": "false"},
			args:    []string{},
			backend: backendEmbedded, createTable: true, seedDemo: true,
			check: func(c *config) bool { return !c.introspectionOn() && !c.playgroundOn() },
		},
		{
			name:    "the playground can be asked for without introspection",
			env:     map[string]string{"DYNAMODB_ENDPOINT": "http://127.0.0.1:8765", "PLAYGROUND": "true"},
			backend: backendLocal, createTable: true, seedDemo: false,
			check: func(c *config) bool { return !c.introspectionOn() && c.playgroundOn() },
		},
		{
			name:    "introspection, request timeout and attempts can be set",
			env:     map[string]string{"DYNAMODB_AWS": "true", "INTROSPECTION": "true", "REQUEST_TIMEOUT": "3s", "DYNAMODB_MAX_ATTEMPTS": "5"},
			backend: backendAWS, createTable: false, seedDemo: false,
			check: func(c *config) bool {
				return c.introspectionOn() && c.requestTimeout == 3*time.Second && c.maxAttempts == 5
			},
		},
		{
			name:    "AWS creates and seeds nothing by default",
			env:     map[string]string{"DYNAMODB_AWS": "true", "AWS_REGION": "eu-west-1", "DYNAMODB_TABLE": "prod-blog"},
			backend: backendAWS, createTable: false, seedDemo: false,
			check: func(c *config) bool { return c.region == "eu-west-1" && c.table == "prod-blog" && !c.introspectionOn() },
		},
		{
			name:    "seeding can be asked for on any backend",
			args:    []string{"-aws", "-seed-demo", "-create-table=true"},
			backend: backendAWS, createTable: true, seedDemo: true,
		},
		{
			name:    "feeds link to the site with the frontend's paths, which events use too",
			env:     map[string]string{"SITE_URL": "https://blog.example.com/", "POST_PATH": "/blog/{yyyy}/{mm}/{slug}", "FEED_CONTENT": "excerpt"},
			args:    []string{"-author-path="},
			backend: backendEmbedded, createTable: true, seedDemo: true,
			check: func(c *config) bool {
				return c.siteURL == "https://blog.example.com/" && c.feedContent == "excerpt" && c.siteTitle == "Blog" &&
					c.paths == frontend.Paths{Home: "/", Post: "/blog/{yyyy}/{mm}/{slug}", Category: "/categories/{slug}", Month: "/archive/{yyyy}/{mm}", Page: "/{slug}", Tag: "/tags/{slug}"}
			},
		},
		{
			name:    "flags win over the environment",
			env:     map[string]string{"PORT": "9000", "SEED_DEMO": "false", "PLAYGROUND": "false", "LOG_LEVEL": "debug"},
			args:    []string{"-port", "9001", "-seed-demo=auto", "-log-level", "warn"},
			backend: backendEmbedded, createTable: true, seedDemo: true,
			check: func(c *config) bool {
				return c.port == 9001 && !c.playgroundOn() && c.logLevel == slog.LevelWarn
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.backend(); got != tt.backend {
				t.Errorf("backend = %s, want %s", got, tt.backend)
			}
			if got := c.createTable.or(c.backend() != backendAWS); got != tt.createTable {
				t.Errorf("create table = %v, want %v", got, tt.createTable)
			}
			if got := c.seedDemo.or(c.backend() == backendEmbedded); got != tt.seedDemo {
				t.Errorf("seed demo = %v, want %v", got, tt.seedDemo)
			}
			if tt.check != nil && !tt.check(c) {
				t.Errorf("config %+v", *c)
			}
		})
	}

	errTests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad environment value names the variable", map[string]string{"PORT": "http"}, nil, "PORT"},
		{"bad boolean", map[string]string{"SEED_DEMO": "maybe"}, nil, "SEED_DEMO"},
		{"port out of range", nil, []string{"-port", "70000"}, "port"},
		{"unknown log format", nil, []string{"-log-format", "xml"}, "log format"},
		{"stray argument", nil, []string{"serve"}, "unexpected"},
		{"no request timeout", map[string]string{"REQUEST_TIMEOUT": "0s"}, nil, "request timeout"},
		{"request timeout past the write timeout", nil, []string{"-request-timeout", "1m"}, "request timeout"},
		{"no attempts", map[string]string{"DYNAMODB_MAX_ATTEMPTS": "0"}, nil, "max attempts"},
		{"too many attempts", nil, []string{"-dynamodb-max-attempts", "11"}, "max attempts"},
		{"negative cache max age", nil, []string{"-cache-max-age", "-1s"}, "cache max age"},
		{"negative s-maxage", nil, []string{"-cache-s-maxage", "-1s"}, "s-maxage"},
		{"negative stale-while-revalidate", map[string]string{"CACHE_STALE_WHILE_REVALIDATE": "-1s"}, nil, "stale-while-revalidate"},
		{"negative answer cache", nil, []string{"-answer-cache-bytes", "-1"}, "answer cache bytes"},
		{"unknown moderation", map[string]string{"COMMENT_MODERATION": "later"}, nil, "comment moderation"},
		{"no comments a minute", nil, []string{"-comment-rate-limit", "0"}, "comment rate limit"},
		{"too many comments a minute", nil, []string{"-comment-rate-limit", "1001"}, "comment rate limit"},
		{"unknown migration mode", map[string]string{"MIGRATE": "later"}, nil, "migrate"},
		{"heading id prefix that is no id", nil, []string{"-heading-id-prefix", "x\" onclick="}, "heading id prefix"},
		{"heading id prefix starting with a digit", map[string]string{"HEADING_ID_PREFIX": "1-"}, nil, "heading id prefix"},
		{"site URL without a scheme", map[string]string{"SITE_URL": "blog.example.com"}, nil, "site URL"},
		{"site URL with a query", nil, []string{"-site-url", "https://blog.example.com/?x=1"}, "site URL"},
		{"post path without a slug", nil, []string{"-post-path", "/posts/{yyyy}"}, "post path"},
		{"no post path", nil, []string{"-post-path="}, "post path"},
		{"post path with an unknown placeholder", nil, []string{"-post-path", "/{lang}/{slug}"}, "post path"},
		{"relative category path", nil, []string{"-category-path", "categories/{slug}"}, "category path"},
		{"archive path without the month", nil, []string{"-archive-path", "/archive/{yyyy}"}, "archive path"},
		{"unknown feed content", nil, []string{"-feed-content", "summary"}, "feed content"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}

	t.Run("help lists every variable", func(t *testing.T) {
		var out bytes.Buffer
		if _, err := parseConfig([]string{"-h"}, func(string) string { return "" }, &out); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("err = %v, want flag.ErrHelp", err)
		}
		for _, v := range []string{"PORT", "HOST", "DYNAMODB_ENDPOINT", "DYNAMODB_AWS", "DYNAMODB_TABLE", "AWS_REGION",
			"CREATE_TABLE", "SEED_DEMO", "PLAYGROUND", "PLAYGROUND_ASSETS", "INTROSPECTION", "LOG_LEVEL", "LOG_FORMAT",
			"JWT_SECRET", "JWT_ISSUER", "JWT_AUDIENCE", "JWT_JWKS_URL", "REQUEST_TIMEOUT", "DYNAMODB_MAX_ATTEMPTS",
			"CACHE_MAX_AGE", "PPROF_ADDR", "INSECURE_DEV_TOKENS", "CURSOR_KEY", "MIGRATE", "ALLOWED_HOSTS", "CORS_ORIGINS"} {
			if !strings.Contains(out.String(), "["+v+"]") {
				t.Errorf("help does not mention %s:\n%s", v, out.String())
			}
		}
	})
}

// TestRun starts the server as main does, with the embedded engine and the
// demo blog, talks to every endpoint, and stops it as SIGTERM would.
func TestRun(t *testing.T) {
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, nil)
	defer stop()

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(body io.Reader, length int64) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", body)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = length
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	query := func(q string) (int, string) {
		b, _ := json.Marshal(map[string]string{"query": q})
		return post(bytes.NewReader(b), int64(len(b)))
	}

	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	// The answer cache is on by default: the same anonymous read twice
	// is answered from memory the second time (one that reads nothing, so
	// that no event of the demo seeded at start drops it).
	for i, want := range []string{"MISS", "HIT"} {
		resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Cache"); resp.StatusCode != 200 || got != want {
			t.Errorf("read %d: status %d, X-Cache %q, want %s", i+1, resp.StatusCode, got, want)
		}
	}
	if code, body := get("/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q", code, body)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "Blog GraphQL") {
		t.Errorf("/ = %d, want the playground page", code)
	} else if !strings.Contains(html.UnescapeString(body), `"Authorization": "Bearer `) {
		t.Error("the playground of the embedded mode on loopback has no development token filled in")
	}
	if code, _ := get("/nowhere"); code != 404 {
		t.Errorf("/nowhere = %d, want 404", code)
	}
	// The embedded mode shows every admin's answer its cost (nothing,
	// here), and no one else's; every answer shows its complexity.
	if code, body := query("{ __typename }"); code != 200 || body != `{"data":{"__typename":"Query"},"extensions":{"complexity":{"cost":1,"limit":40000}}}` {
		t.Errorf("__typename = %d %s", code, body)
	}
	if code, body := postAs(t, base, logs.devHeaders()["ada-lovelace"], "{ __typename }"); code != 200 ||
		body != `{"data":{"__typename":"Query"},"extensions":{"complexity":{"cost":1,"limit":40000},"cost":{"dynamodbRequests":0,"readCapacityUnits":0,"writeCapacityUnits":0}}}` {
		t.Errorf("__typename as the admin = %d %s, want its cost", code, body)
	}
	if code, body := get("/graphql?query=%7B__typename%7D"); code != 200 || !strings.Contains(body, "Query") {
		t.Errorf("GET /graphql = %d %s", code, body)
	}
	if code, body := query(`{ category(slug: "dynamodb") { name posts(first: 1) { edges { node { title author { name } } } } } }`); code != 200 ||
		!strings.Contains(body, `"name":"DynamoDB"`) || !strings.Contains(body, `"title"`) {
		t.Errorf("demo category = %d %s", code, body)
	}
	// Without -site-url the embedded mode's feeds link to the server itself.
	if code, body := get("/categories/dynamodb/feed.xml"); code != 200 || !strings.Contains(body, "<link>"+strings.Replace(base, "127.0.0.1", "localhost", 1)+"/posts/") {
		t.Errorf("the demo category's feed = %d %.300s, want posts linked at this server", code, body)
	}
	checkDevTokens(t, base, logs)
	if code, body := query(playground.DefaultQuery); code != 200 || strings.Contains(body, `"errors"`) || !strings.Contains(body, `"title"`) {
		t.Errorf("the playground's default query = %d %.300s, want demo posts", code, body)
	}

	big := strings.Repeat(" ", gqlhttp.MaxBodyBytes+1)
	if code, body := post(strings.NewReader(big), int64(len(big))); code != http.StatusRequestEntityTooLarge ||
		!strings.Contains(body, "BAD_REQUEST") {
		t.Errorf("oversized body = %d %s, want 413", code, body)
	}
	// Without a declared length the limit applies while the body is read.
	chunked := `{"query":"{ __typename }","variables":{"x":"` + strings.Repeat("a", gqlhttp.MaxBodyBytes) + `"}}`
	if code, body := post(strings.NewReader(chunked), -1); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized chunked body = %d %.200s, want 413", code, body)
	}
	small := `{"query":"{ __typename }"}`
	if code, body := post(strings.NewReader(small), -1); code != 200 || !strings.Contains(body, "Query") {
		t.Errorf("chunked body = %d %s", code, body)
	}

	// The request id a client sends comes back and is in the request's log line.
	req, _ := http.NewRequest(http.MethodGet, base+"/graphql?query=%7B__typename%7D", nil)
	req.Header.Set("X-Request-ID", "client-chosen-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-ID"); got != "client-chosen-42" {
		t.Errorf("X-Request-ID = %q, want the one sent", got)
	}

	stop()
	if !logs.has(`"msg":"request"`, `"path":"/graphql"`, `"status":200`) {
		t.Errorf("no request log line for /graphql in:\n%s", logs)
	}
	if !logs.has(`"msg":"request"`, `"request_id":"client-chosen-42"`) {
		t.Errorf("no request log line with the request id in:\n%s", logs)
	}
	if !logs.has(`"msg":"change feed","owner":`, `"read_stream":true`) {
		t.Errorf("no change feed in the log:\n%s", logs)
	}
	if !logs.has(`"msg":"stopped"`) {
		t.Errorf("no shutdown in the log:\n%s", logs)
	}
}

// TestRestartKeepsTheBlog starts the server on a data directory, writes,
// stops it and starts it again: what was written is there, and the demo is
// not seeded a second time into the table that has it.
func TestRestartKeepsTheBlog(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DATA_DIR": dir}
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	admin := logs.devHeaders()["ada-lovelace"]
	// A comment written through the API, as a user would.
	_, posts := postAs(t, base, "", `{ posts(first: 1) { edges { node { id } } } }`)
	postID := between(posts, `"id":"`, `"`)
	_, created := postAs(t, base, admin, `mutation { addComment(input: {postId: "`+postID+`", body: "kept across restarts"}) { comment { id } } }`)
	if !strings.Contains(created, `"comment":{"id"`) {
		t.Fatalf("addComment = %s", created)
	}
	if !logs.has(`"msg":"demo blog seeded"`) {
		t.Errorf("the first start seeded no demo:\n%s", logs)
	}
	stop()

	base, logs, stop = startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	defer stop()
	if logs.has(`"msg":"demo blog seeded"`) {
		t.Error("the demo was seeded again into a table that has it")
	}
	_, got := postAs(t, base, "", `{ post(id: "`+postID+`") { comments(first: 100) { edges { node { body } } } } }`)
	if !strings.Contains(got, "kept across restarts") {
		t.Errorf("after the restart the comment is gone: %s", got)
	}
}

// TestSecondServerOnOneDataDirectory: a second server on the data
// directory of a running one does not start, and says why.
func TestSecondServerOnOneDataDirectory(t *testing.T) {
	dir := t.TempDir()
	_, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, map[string]string{"DATA_DIR": dir})
	defer stop()
	err := run(context.Background(), []string{"-port", "0", "-data", dir}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second server: %v, want an error that the data file is in use", err)
	}
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// logLines collects the server's JSON log and reports the endpoint URL it
// startWithin bounds a server's start in startServer: a guard against a
// start that hangs, long enough for a busy machine, where a start on
// DynamoDB Local under the race detector seeds the demo platform (two
// publications, a few hundred requests) beside other packages' tests.
const startWithin = 3 * time.Minute

// startServer runs the server as main does, with the embedded engine (in
// memory unless env has DATA_DIR), args
// and the variables in env (and the process's OTEL_ ones), and returns its
// base URL, its log and a function that stops it and waits until run has
// returned.
func startServer(t testing.TB, args []string, env map[string]string) (string, *logLines, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := newLogLines()
	done := make(chan error, 1)
	getenv := func(k string) string {
		if strings.HasPrefix(k, "OTEL_") {
			return os.Getenv(k)
		}
		if v, ok := env[k]; ok || k != "DATA_DIR" {
			return v
		}
		return ":memory:" // TestRestartKeepsTheBlog has a data directory

	}
	if _, ok := env["REQUEST_TIMEOUT"]; !ok {
		// The longest request timeout the server takes, not its 10 s: a
		// write on DynamoDB Local beside the race detector on a loaded
		// machine can pass 10 s. A test's own -request-timeout, later, wins.
		args = append([]string{"-request-timeout", "29s"}, args...)
	}
	go func() { done <- run(ctx, args, getenv, logs) }()

	var base string
	select {
	case line := <-logs.endpoint:
		base = strings.TrimSuffix(line, "/graphql")
	case err := <-done:
		cancel()
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(startWithin):
		cancel()
		t.Fatalf("no endpoint logged within %v", startWithin)
	}
	var once sync.Once
	return base, logs, func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("run after shutdown = %v, want nil", err)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("run did not return after its context ended")
			}
		})
	}
}

// announces.
type logLines struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	lines    []string
	endpoint chan string
}

func newLogLines() *logLines { return &logLines{endpoint: make(chan string, 1)} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // incomplete, wait for the rest
			return len(p), nil
		}
		l.lines = append(l.lines, line)
		var rec struct{ Endpoint string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Endpoint != "" {
			select {
			case l.endpoint <- rec.Endpoint:
			default:
			}
		}
	}
}

// has reports whether one line contains every part.
func (l *logLines) has(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, line := range l.lines {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		return true
	}
	return false
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "")
}

// TestEveryResponseHasSecurityHeaders requests every kind of endpoint of a
// running server and checks the headers that keep browsers safe on each:
// no framing, no media type sniffing, no referrer, and a
// Content-Security-Policy (the API's allows nothing; the playground's
// allows this server's scripts).
func TestEveryResponseHasSecurityHeaders(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1"}, nil)
	defer stop()
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/?query=x", ""},
		{http.MethodGet, "/playground/blog/boot.js", ""},
		{http.MethodGet, "/graphql?query=%7B__typename%7D", ""},
		{http.MethodPost, "/graphql", `{"query":"{ __typename }"}`},
		{http.MethodPost, "/graphql", `{"query":"{"}`},
		{http.MethodGet, "/healthz", ""},
		{http.MethodGet, "/readyz", ""},
		{http.MethodGet, "/feed.xml", ""},
		{http.MethodGet, "/sitemap.xml?section=nothing", ""},
		{http.MethodGet, "/nowhere", ""},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		checkSecurityHeaders(t, c.method+" "+c.path, resp.Header)
	}
}

// checkSecurityHeaders fails the test unless h has the headers that
// securityHeaders sets; what names the response.
func checkSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s = %q, want %q", what, name, got, want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
}

// TestNoPlaygroundWithoutIntrospection starts the server as production
// runs it, without introspection: it serves no playground (which could not
// work) unless asked for.
func TestNoPlaygroundWithoutIntrospection(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1", "-introspection=false"}, nil)
	defer stop()
	for _, path := range []string{"/", "/?query=x", "/playground/blog/boot.js"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s = %d without introspection, want 404", path, resp.StatusCode)
		}
	}
}
