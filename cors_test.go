package main

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// varies reports whether h's Vary headers name name.
func varies(h http.Header, name string) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), name) {
				return true
			}
		}
	}
	return false
}

// TestCORS starts the server with CORS_ORIGINS and calls /graphql as a
// browser would from a page of an allowed origin and from one of another:
// the allowed origin's preflight is answered, its answers carry its
// origin and expose the headers a client reads, an ETag and its 304
// included; the other origin gets no CORS header, so the browser keeps
// the answer from its page. Every answer varies by Origin.
func TestCORS(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1"},
		map[string]string{"CORS_ORIGINS": "https://app.example.com, http://localhost:5173"})
	defer stop()
	const allowed, other = "https://app.example.com", "https://evil.example"
	preflight := func(origin string) (int, http.Header) {
		code, h, _ := request{method: http.MethodOptions, url: base + "/graphql", headers: []string{"Origin: " + origin,
			"Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization, content-type, x-request-cost"}}.do(t)
		return code, h
	}

	t.Run("preflight of an allowed origin", func(t *testing.T) {
		code, h := preflight(allowed)
		if code != http.StatusNoContent {
			t.Errorf("status %d, want 204", code)
		}
		for name, want := range map[string]string{
			"Access-Control-Allow-Origin":  allowed,
			"Access-Control-Allow-Methods": "GET, POST, OPTIONS",
			"Access-Control-Max-Age":       "600",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		for _, want := range []string{"Authorization", "Content-Type", "X-Request-Cost", "X-Request-ID"} {
			if !strings.Contains(h.Get("Access-Control-Allow-Headers"), want) {
				t.Errorf("Access-Control-Allow-Headers %q lacks %s", h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		if h.Get("Access-Control-Allow-Credentials") != "" {
			t.Error("credentials allowed")
		}
		if !varies(h, "Origin") || !varies(h, "Access-Control-Request-Headers") {
			t.Errorf("Vary %q, want Origin and the request's CORS headers", h.Values("Vary"))
		}
	})

	t.Run("an allowed origin reads the answers", func(t *testing.T) {
		code, h, body := request{method: http.MethodPost, url: base + "/graphql", body: `{"query":"{ __typename }"}`, headers: []string{"Origin: " + allowed}}.do(t)
		if code != http.StatusOK || !strings.Contains(body, "Query") || h.Get("Access-Control-Allow-Origin") != allowed || !varies(h, "Origin") {
			t.Errorf("POST = %d %s, Access-Control-Allow-Origin %q, Vary %q", code, body, h.Get("Access-Control-Allow-Origin"), h.Values("Vary"))
		}
		for _, want := range []string{"ETag", "X-Request-ID"} {
			if !strings.Contains(h.Get("Access-Control-Expose-Headers"), want) {
				t.Errorf("Access-Control-Expose-Headers %q lacks %s", h.Get("Access-Control-Expose-Headers"), want)
			}
		}
		// An error answer too: the page reads why.
		code, h, body = request{method: http.MethodPost, url: base + "/graphql", body: `{"query":"{"}`, headers: []string{"Origin: " + allowed}}.do(t)
		if errorCode(body) == "" || h.Get("Access-Control-Allow-Origin") != allowed {
			t.Errorf("a request error = %d %s, Access-Control-Allow-Origin %q", code, body, h.Get("Access-Control-Allow-Origin"))
		}
		// A cached GET: the ETag's answer and its 304 vary by Origin and
		// carry the origin; a cache keeps one entry per origin.
		get := base + "/graphql?query=%7Bcategories%7Bslug%7D%7D"
		code, h, _ = request{url: get, headers: []string{"Origin: " + allowed}}.do(t)
		etag := h.Get("ETag")
		if code != http.StatusOK || etag == "" || !strings.HasPrefix(h.Get("Cache-Control"), "public") ||
			h.Get("Access-Control-Allow-Origin") != allowed || !varies(h, "Origin") || !varies(h, "Accept") || !varies(h, "Authorization") {
			t.Errorf("cacheable GET = %d, headers %v", code, h)
		}
		code, h, _ = request{url: get, headers: []string{"Origin: " + allowed, "If-None-Match: " + etag}}.do(t)
		if code != http.StatusNotModified || h.Get("Access-Control-Allow-Origin") != allowed || !varies(h, "Origin") {
			t.Errorf("revalidation = %d, headers %v, want 304 with the origin", code, h)
		}
		code, h, _ = request{url: get}.do(t)
		if code != http.StatusOK || h.Get("ETag") != etag || h.Get("Access-Control-Allow-Origin") != "" || !varies(h, "Origin") {
			t.Errorf("the same GET without an Origin = %d, headers %v, want the same ETag, Vary: Origin, no CORS", code, h)
		}
	})

	t.Run("another origin gets no CORS header", func(t *testing.T) {
		code, h := preflight(other)
		if h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Allow-Headers") != "" || code == http.StatusNoContent {
			t.Errorf("preflight = %d, headers %v, want the endpoint's OPTIONS answer without CORS", code, h)
		}
		for _, origin := range []string{other, "https://app.example.com.evil.example", "http://app.example.com", "null"} {
			_, h, _ := request{method: http.MethodPost, url: base + "/graphql", body: `{"query":"{ __typename }"}`, headers: []string{"Origin: " + origin}}.do(t)
			if h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Expose-Headers") != "" || !varies(h, "Origin") {
				t.Errorf("POST from %s: headers %v, want no CORS and Vary: Origin", origin, h)
			}
		}
	})

	t.Run("an allowed origin's page on a foreign Host is refused", func(t *testing.T) {
		code, h, _ := request{method: http.MethodPost, url: base + "/graphql", host: "rebind.attacker.example", body: `{"query":"{ __typename }"}`,
			headers: []string{"Origin: " + allowed}}.do(t)
		if code != http.StatusMisdirectedRequest || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("POST for a foreign Host = %d, headers %v, want 421 without CORS", code, h)
		}
	})

	t.Run("the other paths have none", func(t *testing.T) {
		for _, path := range []string{"/?query=x", "/healthz"} {
			_, h, _ := request{url: base + path, headers: []string{"Origin: " + allowed}}.do(t)
			if h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s has CORS headers: %v", path, h)
			}
		}
	})
}

// TestNoCORSByDefault: without CORS_ORIGINS no origin gets a CORS header,
// the embedded mode's included (its playground is on the server's own
// origin), and OPTIONS is answered as the endpoint always has.
func TestNoCORSByDefault(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false", "-host", "127.0.0.1"}, nil)
	defer stop()
	for _, origin := range []string{"https://app.example.com", base} {
		code, h, _ := request{method: http.MethodOptions, url: base + "/graphql", headers: []string{"Origin: " + origin, "Access-Control-Request-Method: POST"}}.do(t)
		if h.Get("Access-Control-Allow-Origin") != "" || code == http.StatusNoContent {
			t.Errorf("preflight from %s = %d, headers %v, want no CORS", origin, code, h)
		}
		_, h, _ = request{method: http.MethodPost, url: base + "/graphql", body: `{"query":"{ __typename }"}`, headers: []string{"Origin: " + origin}}.do(t)
		if h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("POST from %s has CORS headers: %v", origin, h)
		}
	}
	code, h, _ := request{method: http.MethodOptions, url: base + "/graphql"}.do(t)
	if code != http.StatusOK || h.Get("Allow") != "GET, POST, OPTIONS" {
		t.Errorf("OPTIONS = %d, Allow %q, want 200 with Allow: GET, POST, OPTIONS", code, h.Get("Allow"))
	}
}

func TestCORSOriginsConfig(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  []string
	}{
		{"", nil},
		{"https://app.example.com", []string{"https://app.example.com"}},
		{" HTTPS://App.Example.com:443 , http://localhost:80,http://localhost:5173,http://[::1]:3000", []string{"https://app.example.com", "http://localhost", "http://localhost:5173", "http://[::1]:3000"}},
	} {
		c, err := parseConfig(nil, func(k string) string { return map[string]string{"CORS_ORIGINS": tt.value}[k] }, io.Discard)
		if err != nil || !slices.Equal(c.corsOrigins, tt.want) {
			t.Errorf("CORS_ORIGINS=%q: %q, %v, want %q", tt.value, c.corsOrigins, err, tt.want)
		}
	}
	for _, bad := range []string{"*", "app.example.com", "https://app.example.com/", "https://app.example.com/app", "https://*.example.com",
		"ftp://app.example.com", "https://user@app.example.com", "https://app.example.com?x", "https://app.example.com:99999", "null"} {
		if _, err := parseConfig([]string{"-cors-origins", bad}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "cors-origins") {
			t.Errorf("-cors-origins %s: err = %v, want one naming cors-origins", bad, err)
		}
	}
}
