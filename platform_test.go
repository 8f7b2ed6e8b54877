package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"slices"
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

// postSlugs returns the slugs of the newest posts host serves.
func postSlugs(t *testing.T, base, host string) []string {
	t.Helper()
	code, body := graphQLAt(t, base, host, `{ posts(first: 100) { edges { node { slug } } } }`)
	var resp struct {
		Data struct {
			Posts struct {
				Edges []struct{ Node struct{ Slug string } }
			}
		}
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &resp) != nil {
		t.Fatalf("%s: posts = %d %.300s", host, code, body)
	}
	var slugs []string
	for _, e := range resp.Data.Posts.Edges {
		slugs = append(slugs, e.Node.Slug)
	}
	return slugs
}

// TestDemoPlatform starts the embedded mode as scripts/run.sh does: the
// demo is a platform of two publications, the demo blog at localhost and
// demo.localhost, Field Notes at notes.localhost, each serving its own
// posts, and publication(slug:) finds both. Started again with
// -seed-demo=true on the same data, the seed adds nothing.
func TestDemoPlatform(t *testing.T) {
	env := map[string]string{"DATA_DIR": t.TempDir()}
	check := func(t *testing.T, base string) {
		t.Helper()
		p := port(t, base)
		demoPosts := postSlugs(t, base, "demo.localhost:"+p)
		if len(demoPosts) < 20 || !slices.Equal(demoPosts, postSlugs(t, base, "localhost:"+p)) {
			t.Errorf("demo.localhost serves %d posts, not localhost's", len(demoPosts))
		}
		notesPosts := postSlugs(t, base, "notes.localhost:"+p)
		if want := []string{"notes-from-the-hut", "packing-light", "a-ridge-walk-in-the-rain"}; !slices.Equal(notesPosts, want) {
			t.Errorf("notes.localhost serves %q, want %q", notesPosts, want)
		}
		for _, s := range demoPosts {
			if strings.Contains(strings.Join(notesPosts, " "), s) {
				t.Errorf("notes.localhost serves the demo's post %s", s)
			}
		}
		if code, body := graphQLAt(t, base, "notes.localhost", `{ site { title } category(slug: "trails") { posts(first: 5) { edges { node { author { name } } } } } }`); code != http.StatusOK ||
			!strings.Contains(body, `"title":"Field Notes"`) || strings.Count(body, "Mae Jemison") != 3 {
			t.Errorf("notes.localhost: %d %s", code, body)
		}
		if code, _, body := (request{url: base + "/?query=x", host: "notes.localhost"}).do(t); code != http.StatusOK || !strings.Contains(body, "graphiql") || strings.Contains(html.UnescapeString(body), `"Authorization": "Bearer `) {
			t.Errorf("notes.localhost's playground = %d, want the page without a token", code)
		}
		_, body := graphQLAt(t, base, "localhost", `{ a: publication(slug: "field-notes") { hosts } b: publication(slug: "default") { hosts } }`)
		if !strings.Contains(body, `"a":{"hosts":["notes.localhost"]}`) || !strings.Contains(body, `"b":{"hosts":["demo.localhost"]}`) {
			t.Errorf("publication(slug:) = %s", body)
		}
	}
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	if !logs.has(`"msg":"demo blog seeded"`) {
		t.Errorf("no demo seeded:\n%s", logs)
	}
	check(t, base)
	stop()
	base, _, stop = startServer(t, []string{"-port", "0", "-log-format", "json", "-seed-demo=true"}, env)
	defer stop()
	check(t, base)
}
