package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// request is what a test sends: the method, the URL, the Host header to
// send instead of the URL's ("" for the URL's), a body for POST and
// headers ("Name: value").
type request struct {
	method, url, host, body string
	headers                 []string
}

// do sends req and returns the status, headers and body of the answer,
// following no redirect.
func (req request) do(t testing.TB) (int, http.Header, string) {
	t.Helper()
	method := req.method
	if method == "" {
		method = http.MethodGet
	}
	r, err := http.NewRequest(method, req.url, strings.NewReader(req.body))
	if err != nil {
		t.Fatal(err)
	}
	if req.host != "" {
		r.Host = req.host
	}
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	for _, h := range req.headers {
		if name, value, ok := strings.Cut(h, ": "); ok {
			r.Header.Add(name, value)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// errorCode returns extensions.code of the first error of a GraphQL
// answer, or "".
func errorCode(body string) string {
	var resp struct {
		Errors []struct{ Extensions struct{ Code string } }
	}
	if json.Unmarshal([]byte(body), &resp) != nil || len(resp.Errors) == 0 {
		return ""
	}
	return resp.Errors[0].Extensions.Code
}

// port returns the port of a base URL.
func port(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// TestForeignHostsAreRefusedOnLoopback starts the embedded mode on
// loopback, with its development tokens, and addresses it by other names,
// as a page of a name rebound to 127.0.0.1 (DNS rebinding) would: it
// answers 421 without the playground's token, without running the query,
// on every path; only this machine's names, at any port, and the
// names of ALLOWED_HOSTS reach it.
func TestForeignHostsAreRefusedOnLoopback(t *testing.T) {
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false"},
		map[string]string{"ALLOWED_HOSTS": "blog.test, Dev.Example.Internal"})
	defer stop()
	admin := logs.devHeaders()["ada-lovelace"]
	if admin == "" {
		t.Fatalf("no development token logged:\n%s", logs)
	}
	p := port(t, base)
	create := func(slug string) string {
		b, _ := json.Marshal(map[string]string{"query": `mutation { createCategory(input: {slug: "` + slug + `", name: "Rebound"}) { category { slug } } }`})
		return string(b)
	}

	for _, host := range []string{"rebind.attacker.example:" + p, "rebind.attacker.example", "127.0.0.1.attacker.example:" + p, "localhost.attacker.example:" + p, "192.0.2.1:" + p, "[::2]:" + p} {
		t.Run("refuses "+host, func(t *testing.T) {
			code, h, body := request{url: base + "/?query=x", host: host}.do(t)
			if code != http.StatusMisdirectedRequest || strings.Contains(body, "Bearer") {
				t.Errorf("playground for %s = %d %.200s, want 421 without the token", host, code, body)
			}
			checkSecurityHeaders(t, "421 for "+host, h)
			if code, _, _ := (request{url: base + "/", host: host}).do(t); code != http.StatusMisdirectedRequest {
				t.Errorf("/ for %s = %d, want 421", host, code)
			}
			code, h, body = request{method: http.MethodPost, url: base + "/graphql", host: host, body: create("rebound"),
				headers: []string{admin, "Origin: http://" + host}}.do(t)
			if code != http.StatusMisdirectedRequest || errorCode(body) != "BAD_REQUEST" || h.Get("Content-Type") != "application/json" {
				t.Errorf("POST /graphql with the admin's token for %s = %d %s, want 421 BAD_REQUEST", host, code, body)
			}
			if code, _, _ := (request{url: base + "/healthz", host: host}).do(t); code != http.StatusMisdirectedRequest {
				t.Errorf("/healthz for %s = %d, want 421", host, code)
			}
			if code, _, _ := (request{url: base + "/feed.xml", host: host}).do(t); code != http.StatusMisdirectedRequest {
				t.Errorf("/feed.xml for %s = %d, want 421", host, code)
			}
		})
	}
	if _, _, body := (request{method: http.MethodPost, url: base + "/graphql", body: `{"query":"{ category(slug: \"rebound\") { slug } }"}`}).do(t); !strings.Contains(body, `"category":null`) {
		t.Errorf("a refused mutation ran: %s", body)
	}

	for i, host := range []string{"localhost:" + p, "LOCALHOST:" + p, "127.0.0.1:" + p, "[::1]:" + p, "localhost", "localhost:9999", "blog.test:" + p, "dev.example.internal"} {
		t.Run("answers "+host, func(t *testing.T) {
			code, _, body := request{url: base + "/?query=x", host: host}.do(t)
			if code != http.StatusOK || !strings.Contains(html.UnescapeString(body), `"Authorization": "Bearer `) {
				t.Errorf("playground for %s = %d, want the page with the token", host, code)
			}
			slug := "host-" + string(rune('a'+i))
			code, _, body = request{method: http.MethodPost, url: base + "/graphql", host: host, body: create(slug), headers: []string{admin}}.do(t)
			if code != http.StatusOK || !strings.Contains(body, `"slug":"`+slug+`"`) {
				t.Errorf("POST /graphql with the admin's token for %s = %d %s, want the category", host, code, body)
			}
		})
	}
}

// TestHostsBeyondLoopback: a server on every interface without
// development tokens answers any Host (a load balancer or a health probe
// may use an address); with -insecure-dev-tokens it answers only this
// machine's names and ALLOWED_HOSTS, as on loopback.
func TestHostsBeyondLoopback(t *testing.T) {
	defer func(l func(string, string) (net.Listener, error)) { listen = l }(listen)
	listen = func(network, _ string) (net.Listener, error) {
		ln, err := net.Listen(network, "127.0.0.1:0")
		return beyondLoopback{ln}, err
	}
	t.Run("without development tokens", func(t *testing.T) {
		base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false"}, nil)
		defer stop()
		for _, host := range []string{"api.example.com", "10.0.0.7:" + port(t, base)} {
			if code, _, _ := (request{url: base + "/healthz", host: host}).do(t); code != http.StatusOK {
				t.Errorf("/healthz for %s = %d, want 200", host, code)
			}
		}
	})
	t.Run("with -insecure-dev-tokens", func(t *testing.T) {
		base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-insecure-dev-tokens", "-allowed-hosts", "dev.example.internal"}, nil)
		defer stop()
		for host, want := range map[string]int{"api.example.com": 421, "localhost": 200, "dev.example.internal:8080": 200} {
			if code, _, _ := (request{url: base + "/healthz", host: host}).do(t); code != want {
				t.Errorf("/healthz for %s = %d, want %d", host, code, want)
			}
		}
	})
}

// TestAsideListenersRefuseForeignHosts: the profile and metrics listeners
// on loopback answer only this machine's names and ALLOWED_HOSTS.
func TestAsideListenersRefuseForeignHosts(t *testing.T) {
	check := func(t *testing.T, what, u string) {
		t.Helper()
		for host, want := range map[string]int{"rebind.attacker.example": 421, "localhost": 200, "127.0.0.1:1": 200, "metrics.internal": 200} {
			code, h, _ := request{url: u, host: host}.do(t)
			if code != want {
				t.Errorf("%s for %s = %d, want %d", what, host, code, want)
			}
			checkSecurityHeaders(t, what+" for "+host, h)
		}
	}
	t.Run("pprof", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addr, err := servePprof(ctx, "127.0.0.1:0", []string{"metrics.internal"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		// The command line, the cheapest of its pages: the guard is in
		// front of every one (TestPprof reads a profile).
		check(t, "pprof", "http://"+addr.String()+"/debug/pprof/cmdline")
	})
	t.Run("metrics", func(t *testing.T) {
		_, logs, stop := startServer(t, []string{"-port", "0", "-metrics-addr", "127.0.0.1:0", "-log-format", "json", "-seed-demo=false",
			"-allowed-hosts", "metrics.internal"}, nil)
		defer stop()
		check(t, "metrics", logs.field("metrics"))
	})
}

// TestDevelopmentTokensOnlyFromOwnPages: a page of another origin (one the
// browser reaches by its own name, or a local page, or a sandboxed one)
// cannot use a development token, to write or to read; the server's own
// pages (the playground), clients that are not browsers and the origins of
// CORS_ORIGINS can. The answer runs nothing.
func TestDevelopmentTokensOnlyFromOwnPages(t *testing.T) {
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1"},
		map[string]string{"CORS_ORIGINS": "http://localhost:5173"})
	defer stop()
	admin := logs.devHeaders()["ada-lovelace"]
	if admin == "" {
		t.Fatalf("no development token logged:\n%s", logs)
	}
	own := "http://127.0.0.1:" + port(t, base)
	create := func(slug string) string {
		b, _ := json.Marshal(map[string]string{"query": `mutation { createCategory(input: {slug: "` + slug + `", name: "Origin"}) { category { slug } } }`})
		return string(b)
	}
	drafts := "/graphql?query=" + url.QueryEscape(`{ author(slug: "ada-lovelace") { drafts(first: 1) { edges { cursor } } } }`)

	for _, headers := range [][]string{
		{"Origin: http://evil.example", "Sec-Fetch-Site: cross-site"},
		{"Origin: http://localhost:8081", "Sec-Fetch-Site: same-site"},
		{"Origin: https://127.0.0.1:" + port(t, base) + ".evil.example"},
		{"Origin: null"},
		{"Sec-Fetch-Site: cross-site"},
		{"Sec-Fetch-Site: same-site"},
	} {
		t.Run("refuses "+strings.Join(headers, ", "), func(t *testing.T) {
			code, h, body := request{method: http.MethodPost, url: own + "/graphql", body: create("cross-origin"), headers: append([]string{admin}, headers...)}.do(t)
			if code != http.StatusForbidden || errorCode(body) != "FORBIDDEN" || h.Get("Cache-Control") != "no-store" {
				t.Errorf("POST with the admin's token = %d %s, want 403 FORBIDDEN", code, body)
			}
			if code, _, body := (request{url: own + drafts, headers: append([]string{admin}, headers...)}).do(t); code != http.StatusForbidden || errorCode(body) != "FORBIDDEN" {
				t.Errorf("GET of drafts with the admin's token = %d %s, want 403 FORBIDDEN", code, body)
			}
			// Without a token, the same page reads what anyone may.
			if code, _, body := (request{url: own + "/graphql?query=%7B__typename%7D", headers: headers}).do(t); code != http.StatusOK || errorCode(body) != "" {
				t.Errorf("GET without a token = %d %s, want the answer", code, body)
			}
		})
	}
	if _, _, body := (request{method: http.MethodPost, url: own + "/graphql", body: `{"query":"{ category(slug: \"cross-origin\") { slug } }"}`}).do(t); !strings.Contains(body, `"category":null`) {
		t.Errorf("a refused mutation ran: %s", body)
	}

	for i, headers := range [][]string{
		{"Origin: " + own, "Sec-Fetch-Site: same-origin"}, // the playground
		{"Origin: http://localhost:5173", "Sec-Fetch-Site: same-site"},
		{"Sec-Fetch-Site: none"},
		nil, // curl, a script
	} {
		t.Run("answers "+strings.Join(headers, ", "), func(t *testing.T) {
			slug := "origin-" + string(rune('a'+i))
			code, _, body := request{method: http.MethodPost, url: own + "/graphql", body: create(slug), headers: append([]string{admin}, headers...)}.do(t)
			if code != http.StatusOK || !strings.Contains(body, `"slug":"`+slug+`"`) {
				t.Errorf("POST with the admin's token = %d %s, want the category", code, body)
			}
		})
	}
}

func TestAllowedHostsConfig(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  []string
	}{
		{"", nil},
		{"blog.test", []string{"blog.test"}},
		{" Blog.Test , 192.0.2.7,[::2], ::3 ,", []string{"blog.test", "192.0.2.7", "::2", "::3"}},
	} {
		c, err := parseConfig(nil, func(k string) string { return map[string]string{"ALLOWED_HOSTS": tt.value}[k] }, io.Discard)
		if err != nil || strings.Join(c.allowedHosts, " ") != strings.Join(tt.want, " ") {
			t.Errorf("ALLOWED_HOSTS=%q: %q, %v, want %q", tt.value, c.allowedHosts, err, tt.want)
		}
	}
	for _, bad := range []string{"blog.test:8080", "http://blog.test", "blog.test/", "*", "*.blog.test", "[::1]:80", "user@blog.test"} {
		if _, err := parseConfig([]string{"-allowed-hosts", bad}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "allowed-hosts") {
			t.Errorf("-allowed-hosts %s: err = %v, want one naming allowed-hosts", bad, err)
		}
	}
}

// TestUnclaimedHostsAreNotFound: a name under localhost reaches a server
// on loopback (browsers resolve it to the loopback), and one that no
// publication claims gets 404 on every route of the site, while
// /healthz answers and this machine's names serve the blog as before.
func TestUnclaimedHostsAreNotFound(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false"}, nil)
	defer stop()
	p := port(t, base)
	query := `{"query":"{ posts(first: 1) { edges { cursor } } }"}`
	for _, host := range []string{"nobody.localhost:" + p, "nobody.localhost"} {
		for _, path := range []string{"/graphql", "/feed.xml", "/sitemap.xml", "/"} {
			if code, _, body := (request{url: base + path, host: host}).do(t); code != http.StatusNotFound || len(body) > 100 {
				t.Errorf("%s%s = %d %q, want 404", host, path, code, body)
			}
		}
		if code, _, _ := (request{method: http.MethodPost, url: base + "/graphql", host: host, body: query}).do(t); code != http.StatusNotFound {
			t.Errorf("POST %s/graphql = %d, want 404", host, code)
		}
		if code, _, _ := (request{url: base + "/healthz", host: host}).do(t); code != http.StatusOK {
			t.Errorf("%s/healthz = %d, want 200", host, code)
		}
	}
	if code, _, body := (request{method: http.MethodPost, url: base + "/graphql", host: "localhost:" + p, body: query}).do(t); code != http.StatusOK || !strings.Contains(body, `"posts"`) {
		t.Errorf("localhost: %d %s", code, body)
	}
}
