package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// platformSecret signs the tokens of the platform's tests.
const platformSecret = "a secret of at least thirty-two bytes, for the platform's tests"

// platformToken returns the Authorization header of a token of role for
// sub, signed with platformSecret by the token command.
func platformToken(t testing.TB, role, sub string) string {
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
func graphQLAt(t testing.TB, base, host, query string, headers ...string) (int, string) {
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

// TestExecutionGateConfig: -execution-slots 0 is 4 slots a core, a
// negative number no admission stage; a negative -execution-queue is
// refused at start.
func TestExecutionGateConfig(t *testing.T) {
	for _, c := range []struct {
		args         []string
		slots, queue int // 0 slots: no gate
	}{
		{nil, slotsPerCore * runtime.GOMAXPROCS(0), defaultExecQueue},
		{[]string{"-dynamodb-endpoint", "http://127.0.0.1:8000"}, remoteSlotsPerCore * runtime.GOMAXPROCS(0), defaultExecQueue},
		{[]string{"-execution-slots", "3", "-execution-queue", "0"}, 3, 0},
		{[]string{"-execution-slots", "-1"}, 0, 0},
	} {
		cfg, err := parseConfig(c.args, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		g := executionGate(cfg)
		switch {
		case c.slots == 0 && g != nil:
			t.Errorf("%q: a gate of %d slots, want none", c.args, g.Slots())
		case c.slots > 0 && (g == nil || g.Slots() != c.slots || g.Queue() != c.queue):
			t.Errorf("%q: gate %+v, want %d slots and queues of %d", c.args, g, c.slots, c.queue)
		}
	}
	if _, err := parseConfig([]string{"-execution-queue", "-1"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "execution queue") {
		t.Errorf("-execution-queue -1: err = %v, want one naming the execution queue", err)
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

// TestNoisyNeighbours: a flood of requests on one publication (Field
// Notes) past -publication-rate-limit gets 429 RATE_LIMITED, or 503
// SERVER_BUSY, with Retry-After, while the other publication's requests,
// sent during and after it, are answered; a flood of distinct unknown
// hosts past -host-lookup-rate gets 404 or 429, and hosts the server
// holds are served throughout.
func TestNoisyNeighbours(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json",
		"-publication-rate-limit", "20", "-host-lookup-rate", "3", "-publication-inflight-share", "50"}, nil)
	defer stop()
	p := port(t, base)
	const query = `{ posts(first: 20) { edges { node { title author { name } categories { name } } } } }`
	codes := make(chan string, 200)
	var flood sync.WaitGroup
	for c := range 16 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			for i := range 6 {
				host := "notes.localhost:" + p
				if (c+i)%2 == 1 {
					host = "notes.localhost"
				}
				code, h, body := request{method: http.MethodPost, url: base + "/graphql", host: host, body: `{"query":"` + strings.ReplaceAll(query, `"`, `\"`) + `"}`}.do(t)
				switch {
				case code == http.StatusOK && errorCode(body) == "":
					codes <- "200"
				case (code == http.StatusTooManyRequests && errorCode(body) == "RATE_LIMITED" || code == http.StatusServiceUnavailable && errorCode(body) == "SERVER_BUSY") && h.Get("Retry-After") != "":
					codes <- fmt.Sprintf("%d %s", code, errorCode(body))
				default:
					codes <- fmt.Sprintf("unexpected %d %.200s", code, body)
				}
			}
		}()
	}
	// The demo blog's requests while the flood runs, and after it.
	for range 5 {
		if code, body := graphQLAt(t, base, "demo.localhost:"+p, query); code != http.StatusOK || errorCode(body) != "" {
			t.Errorf("demo.localhost during the flood = %d %.200s, want the posts", code, body)
		}
	}
	flood.Wait()
	close(codes)
	seen := map[string]int{}
	for c := range codes {
		seen[c]++
	}
	t.Logf("the flood's answers: %v", seen)
	if seen["429 RATE_LIMITED"] == 0 || seen["200"]+seen["429 RATE_LIMITED"]+seen["503 SERVER_BUSY"] != 16*6 {
		t.Errorf("the flood's answers: %v, want 200s and 429 RATE_LIMITED (or 503 SERVER_BUSY) only", seen)
	}
	for range 5 {
		if code, body := graphQLAt(t, base, "localhost", query); code != http.StatusOK || errorCode(body) != "" {
			t.Errorf("localhost after the flood = %d %.200s, want the posts", code, body)
		}
	}

	statuses := map[int]int{}
	for i := range 20 {
		code, h, _ := request{url: base + "/feed.xml", host: fmt.Sprintf("unknown-%d.localhost", i)}.do(t)
		statuses[code]++
		if code == http.StatusTooManyRequests && h.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if statuses[http.StatusTooManyRequests] == 0 || statuses[http.StatusNotFound]+statuses[http.StatusTooManyRequests] != 20 {
		t.Errorf("20 unknown hosts: %v, want 404s then 429s", statuses)
	}
	if code, _, _ := (request{url: base + "/feed.xml", host: "demo.localhost"}).do(t); code != http.StatusOK {
		t.Errorf("a held host after the unknown ones = %d, want 200", code)
	}
}

// TestPublicationMetrics: /metrics counts each publication's requests,
// served and rate-limited, and the DynamoDB requests and read units they
// consumed, under its id.
func TestPublicationMetrics(t *testing.T) {
	base, logs, stop := startServer(t, []string{"-port", "0", "-metrics-addr", "127.0.0.1:0", "-log-format", "json",
		"-publication-rate-limit", "4", "-answer-cache-bytes", "0"}, nil)
	defer stop()
	_, body := graphQLAt(t, base, "localhost", `{ publication(slug: "field-notes") { id } }`)
	var resp struct {
		Data struct{ Publication struct{ ID string } }
	}
	if json.Unmarshal([]byte(body), &resp) != nil || resp.Data.Publication.ID == "" {
		t.Fatalf("publication = %s", body)
	}
	notes := resp.Data.Publication.ID
	for range 6 {
		graphQLAt(t, base, "notes.localhost", `{ posts(first: 3) { edges { node { title } } } }`)
	}
	code, metrics := httpGet(t, logs.field("metrics"))
	if code != http.StatusOK {
		t.Fatalf("metrics = %d", code)
	}
	series := map[string]float64{}
	for line := range strings.Lines(metrics) {
		var v float64
		if name, rest, ok := strings.Cut(strings.TrimSpace(line), " "); ok && strings.HasPrefix(name, "blog_publication_") {
			fmt.Sscan(rest, &v)
			series[name] = v
		}
	}
	for name, want := range map[string]float64{
		`blog_publication_requests_total{outcome="served",publication="` + notes + `"}`:       4,
		`blog_publication_requests_total{outcome="rate_limited",publication="` + notes + `"}`: 2,
		`blog_publication_requests_total{outcome="served",publication="default"}`:             1,
	} {
		if series[name] != want {
			t.Errorf("%s = %v, want %v", name, series[name], want)
		}
	}
	for _, pub := range []string{notes, "default"} {
		if series[`blog_publication_dynamodb_requests_total{publication="`+pub+`"}`] < 1 ||
			series[`blog_publication_consumed_capacity_units_total{kind="read",publication="`+pub+`"}`] <= 0 {
			t.Errorf("%s: no DynamoDB requests or read units counted:\n%v", pub, series)
		}
	}
}
