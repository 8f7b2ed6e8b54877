package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
)

const testSecret = "a-secret-of-at-least-thirty-two-bytes"

func TestNewVerifier(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		dev     bool
		failing string // what the error names, "" when none is expected
	}{
		{name: "the embedded engine without configuration uses a development secret, made with the table", dev: true},
		{name: "the embedded engine with a secret uses it", env: map[string]string{"JWT_SECRET": testSecret}},
		{name: "the embedded engine with a JWKS URL uses it", env: map[string]string{"JWT_JWKS_URL": "https://id.example.com/.well-known/jwks.json"}},
		{name: "DynamoDB Local with a secret", args: []string{"-dynamodb-endpoint", "http://127.0.0.1:8765", "-jwt-secret", testSecret}},
		{name: "AWS with a JWKS URL", args: []string{"-aws", "-jwt-jwks-url", "https://id.example.com/.well-known/jwks.json"}},
		{name: "DynamoDB Local without a secret does not start", args: []string{"-dynamodb-endpoint", "http://127.0.0.1:8765"}, failing: "JWT_SECRET"},
		{name: "AWS without a secret does not start", args: []string{"-aws"}, failing: "JWT_JWKS_URL"},
		{name: "a short secret is refused", env: map[string]string{"JWT_SECRET": "changeme"}, failing: "32 bytes"},
		{name: "a reader secret beside the staff's", env: map[string]string{"JWT_SECRET": testSecret, "READER_JWT_SECRET": "a-reader-secret-of-at-least-32-bytes"}},
		{name: "the staff secret as the reader secret is refused", env: map[string]string{"JWT_SECRET": testSecret, "READER_JWT_SECRET": testSecret}, failing: "differ"},
		{name: "DynamoDB Local with a reader secret alone does not start", env: map[string]string{"READER_JWT_SECRET": testSecret}, args: []string{"-dynamodb-endpoint", "http://127.0.0.1:8765"}, failing: "reader tokens only"},
		{name: "a JWKS URL over plain http is refused", args: []string{"-aws", "-jwt-jwks-url", "http://id.example.com/jwks"}, failing: "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			v, dev, err := newVerifier(cfg, cfg.backend())
			if tt.failing != "" {
				if err == nil || !strings.Contains(err.Error(), tt.failing) {
					t.Errorf("err = %v, want one naming %q", err, tt.failing)
				}
				return
			}
			if err != nil || (v == nil) != tt.dev {
				t.Fatalf("newVerifier = %v, %v", v, err)
			}
			if dev != tt.dev {
				t.Errorf("development secret = %v, want %v", dev, tt.dev)
			}
		})
	}
}

// checkDevTokens checks the development tokens a server of the embedded
// engine with the demo blog logged: the admin's may create a category,
// the author's and the reader's may not, and without a token nobody may;
// the reader's comments are the demo reader's, held for moderation.
func checkDevTokens(t *testing.T, base string, logs *logLines) {
	t.Helper()
	headers := logs.devHeaders()
	if len(headers) != 3 {
		t.Fatalf("development tokens logged for %v, want ada-lovelace, grace-hopper and jamie-rivera", headers)
	}
	create := `mutation { createCategory(input: {slug: "from-the-dev-token", name: "Dev"}) { category { slug } } }`
	for _, c := range []struct{ header, want string }{
		{"", `"UNAUTHENTICATED"`},
		{headers["grace-hopper"], `"FORBIDDEN"`},
		{headers["jamie-rivera"], `"FORBIDDEN"`},
		{headers["ada-lovelace"], `"slug":"from-the-dev-token"`},
	} {
		if _, body := postAs(t, base, c.header, create); !strings.Contains(body, c.want) {
			t.Errorf("createCategory with %.40q = %s, want %s", c.header, body, c.want)
		}
	}
	_, body := postAs(t, base, "", `{ posts(first: 1) { edges { node { id } } } }`)
	var feed struct {
		Data struct {
			Posts struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &feed); err != nil || len(feed.Data.Posts.Edges) == 0 {
		t.Fatalf("latest post = %s, %v", body, err)
	}
	comment := `mutation { addComment(input: {postId: "` + feed.Data.Posts.Edges[0].Node.ID + `", body: "From the reader's token."}) { comment { status commenter { name isAuthor } } } }`
	want := `{"addComment":{"comment":{"status":"PENDING","commenter":{"name":"Jamie Rivera","isAuthor":false}}}}`
	_, body = postAs(t, base, headers["jamie-rivera"], comment)
	var answer struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || string(answer.Data) != want || answer.Errors != nil {
		t.Errorf("addComment with the reader's token = %s, want the data %s", body, want)
	}
}

// devHeaders returns the Authorization headers of the development tokens
// in the log, by author.
func (l *logLines) devHeaders() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	headers := map[string]string{}
	for _, line := range l.lines {
		var rec struct{ Msg, Author, Header string }
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "DEVELOPMENT ONLY") {
			headers[rec.Author] = rec.Header
		}
	}
	return headers
}

// postAs sends a GraphQL query with header ("Authorization: ...", or ""
// for none) and returns the status and body of the answer.
func postAs(t *testing.T, base, header, query string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if name, value, ok := strings.Cut(header, ": "); ok {
		req.Header.Set(name, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestRunWithASecretLogsNoDevelopmentTokens starts the embedded engine
// with a configured secret: it logs no token, refuses one signed with the
// development secret and accepts one signed with its own.
func TestRunWithASecretLogsNoDevelopmentTokens(t *testing.T) {
	env := map[string]string{"JWT_SECRET": testSecret, "JWT_ISSUER": "https://id.example.com/"}
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false"}, env)
	defer stop()
	if h := logs.devHeaders(); len(h) != 0 {
		t.Errorf("development tokens logged with a secret configured: %v", h)
	}

	sign := func(secret string) string {
		now := time.Now()
		token, err := auth.Sign([]byte(secret), auth.Claims{
			RegisteredClaims: jwt.RegisteredClaims{Subject: "ada-lovelace", Issuer: env["JWT_ISSUER"],
				IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))},
			Roles: []string{auth.RoleAdmin},
		})
		if err != nil {
			t.Fatal(err)
		}
		return "Authorization: Bearer " + token
	}
	create := `mutation { createCategory(input: {slug: "signed", name: "Signed"}) { category { slug } } }`
	if code, body := postAs(t, base, sign("another-secret-of-at-least-32-bytes"), create); code != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("token of another secret = %d %s, want 401 UNAUTHENTICATED", code, body)
	}
	if code, body := postAs(t, base, sign(testSecret), create); code != http.StatusOK || !strings.Contains(body, `"slug":"signed"`) {
		t.Errorf("token of the configured secret = %d %s, want the category", code, body)
	}

}

// TestDevelopmentTokensAreEachDataStores starts two servers of the
// embedded engine, each with its own data: the development tokens one logs
// work there and nowhere else, since each signs with a key of its own data
// store rather than a secret every copy of the server shares.
func TestDevelopmentTokensAreEachDataStores(t *testing.T) {
	args := []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1"}
	baseA, logsA, stopA := startServer(t, args, nil)
	defer stopA()
	baseB, _, stopB := startServer(t, args, nil)
	defer stopB()
	adminA := logsA.devHeaders()["ada-lovelace"]
	if adminA == "" {
		t.Fatalf("no development token logged:\n%s", logsA)
	}
	create := `mutation { createCategory(input: {slug: "from-a", name: "From A"}) { category { slug } } }`
	if code, body := postAs(t, baseB, adminA, create); code != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("another server's development token = %d %s, want 401 UNAUTHENTICATED", code, body)
	}
	if code, body := postAs(t, baseA, adminA, create); code != http.StatusOK || !strings.Contains(body, `"slug":"from-a"`) {
		t.Errorf("the server's own development token = %d %s, want the category", code, body)
	}
}

// beyondLoopback is a listener on loopback that tells the server it
// listens on every interface, as in a container: the tests see what a
// stranger on the network would, without opening a port to one.
type beyondLoopback struct{ net.Listener }

func (l beyondLoopback) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4zero, Port: l.Listener.Addr().(*net.TCPAddr).Port}
}

// TestDevelopmentTokensStayOnLoopback starts the embedded engine as on a
// network (0.0.0.0, as the Dockerfile does): it logs no token, its
// playground holds none and it accepts none, so no stranger can write.
// With -insecure-dev-tokens it logs them and accepts them, but still
// keeps them out of the page it serves to anyone.
func TestDevelopmentTokensStayOnLoopback(t *testing.T) {
	defer func(l func(string, string) (net.Listener, error)) { listen = l }(listen)
	listen = func(network, _ string) (net.Listener, error) {
		ln, err := net.Listen(network, "127.0.0.1:0")
		return beyondLoopback{ln}, err
	}
	create := `mutation { createCategory(input: {slug: "stranger", name: "Stranger"}) { category { slug } } }`
	page := func(t *testing.T, base string) string {
		t.Helper()
		resp, err := http.Get(base + "/?query=x")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	t.Run("by default", func(t *testing.T) {
		base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false"}, nil)
		defer stop()
		if h := logs.devHeaders(); len(h) != 0 {
			t.Errorf("development tokens logged beyond loopback: %v", h)
		}
		if p := page(t, base); strings.Contains(p, "Bearer") {
			t.Errorf("the playground holds a token beyond loopback:\n%s", p)
		}
		if code, body := postAs(t, base, "Authorization: Bearer "+forgedToken(t), create); code != http.StatusUnauthorized {
			t.Errorf("a token beyond loopback = %d %s, want 401", code, body)
		}
		if code, body := postAs(t, base, "", create); !strings.Contains(body, "UNAUTHENTICATED") {
			t.Errorf("a write without a token = %d %s, want UNAUTHENTICATED", code, body)
		}
	})
	t.Run("with -insecure-dev-tokens", func(t *testing.T) {
		base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-insecure-dev-tokens"}, nil)
		defer stop()
		admin := logs.devHeaders()["ada-lovelace"]
		if admin == "" {
			t.Fatalf("no development token logged with -insecure-dev-tokens:\n%s", logs)
		}
		if p := page(t, base); strings.Contains(p, "Bearer") {
			t.Errorf("the playground holds a token beyond loopback:\n%s", p)
		}
		if code, body := postAs(t, base, admin, create); code != http.StatusOK || !strings.Contains(body, `"slug":"stranger"`) {
			t.Errorf("the development token = %d %s, want the category", code, body)
		}
	})
}

// forgedToken returns an admin token signed with a secret anyone could
// guess.
func forgedToken(t *testing.T) string {
	t.Helper()
	now := time.Now()
	token, err := auth.Sign([]byte("blog-embedded-mode-development-secret-never-in-production"), auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: "ada-lovelace", IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))},
		Roles:            []string{auth.RoleAdmin},
	})
	if err != nil {
		t.Fatal(err)
	}
	return token
}
