package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// platformSecret signs the tokens of the platform's tests.
const platformSecret = "a secret of at least thirty-two bytes, for the platform's tests"

// platformToken returns the Authorization header of a token of role for
// sub, signed with platformSecret by the token command.
func platformToken(t *testing.T, role, sub string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if err := runToken(context.Background(), []string{"-role", role, "-sub", sub}, func(k string) string {
		return map[string]string{"JWT_SECRET": platformSecret}[k]
	}, &out, &errs); err != nil {
		t.Fatalf("token: %v %s", err, errs.String())
	}
	return "Authorization: Bearer " + strings.TrimSpace(out.String())
}

// graphQLAt posts query to base's /graphql addressed to host, with the
// headers, and returns the status and body.
func graphQLAt(t *testing.T, base, host, query string, headers ...string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": query})
	code, _, body := request{method: http.MethodPost, url: base + "/graphql", host: host, body: string(b), headers: headers}.do(t)
	return code, body
}

// TestPlatformHostPattern: with -platform-host-pattern {slug}.localhost,
// <slug>.localhost serves the publication of that slug, which claims no
// such host; a name whose slug part is no publication's, or is not a DNS
// label, gets 404, and the default publication keeps its own hosts.
func TestPlatformHostPattern(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=false",
		"-platform-host-pattern", "{slug}.localhost"}, map[string]string{"JWT_SECRET": platformSecret})
	defer stop()
	p := port(t, base)
	ops := platformToken(t, "platform", "ops")
	if code, body := graphQLAt(t, base, "", `mutation { createPublication(input: {slug: "gamma", title: "Gamma Notes"}) { publication { hosts } } }`, ops); code != http.StatusOK || errorCode(body) != "" {
		t.Fatalf("createPublication = %d %s", code, body)
	}
	for _, host := range []string{"gamma.localhost:" + p, "GAMMA.localhost"} {
		if code, body := graphQLAt(t, base, host, `{ site { title } }`); code != http.StatusOK || !strings.Contains(body, `"title":"Gamma Notes"`) {
			t.Errorf("%s: site = %d %s, want Gamma Notes", host, code, body)
		}
	}
	if code, _, body := (request{url: base + "/feed.xml", host: "gamma.localhost"}).do(t); code != http.StatusOK || !strings.Contains(body, "Gamma Notes") {
		t.Errorf("gamma.localhost/feed.xml = %d %.300s, want Gamma Notes's feed", code, body)
	}
	// The default publication's slug reaches it too.
	if code, body := graphQLAt(t, base, "default.localhost", `{ posts(first: 1) { edges { cursor } } }`); code != http.StatusOK || errorCode(body) != "" {
		t.Errorf("default.localhost = %d %s, want the default publication", code, body)
	}
	for _, host := range []string{"nobody.localhost", "a.gamma.localhost", "-gamma.localhost", "gamma-.localhost"} {
		if code, _, body := (request{url: base + "/graphql?query=%7Bsite%7Btitle%7D%7D", host: host}).do(t); code != http.StatusNotFound || strings.Contains(body, "Gamma") {
			t.Errorf("%s = %d %q, want 404", host, code, body)
		}
	}
	if code, body := graphQLAt(t, base, "localhost:"+p, `{ site { title } }`); code != http.StatusOK || strings.Contains(body, "Gamma") {
		t.Errorf("localhost = %d %s, want the default publication", code, body)
	}
}

// TestPlatformHostPatternConfig: a pattern is checked at start.
func TestPlatformHostPatternConfig(t *testing.T) {
	for _, good := range []string{"", "{slug}.blogs.example", "blog-{slug}.example.com", "{slug}.localhost"} {
		c, err := parseConfig([]string{"-platform-host-pattern", good}, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Errorf("%q: %v", good, err)
		} else if c.platform.hostPattern.String() != good {
			t.Errorf("%q: read as %q", good, c.platform.hostPattern.String())
		}
	}
	for _, bad := range []string{"blogs.example", "{slug}", "{slug}.{slug}.example", "{slug}.Blogs.example", "*.{slug}.example",
		"{slug}.blogs.example:8080", "https://{slug}.blogs.example", "{slug}.blogs.example.", "{slug}.192.0.2.1", "{slug}..example"} {
		if _, err := parseConfig([]string{"-platform-host-pattern", bad}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "platform-host-pattern") {
			t.Errorf("%q: err = %v, want one naming platform-host-pattern", bad, err)
		}
	}
}
