package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/demo"
)

// suspendedAnswer reports whether a GraphQL answer is the refusal of a
// suspended publication: 403, PUBLICATION_SUSPENDED and no data.
func suspendedAnswer(code int, body string) bool {
	return code == http.StatusForbidden && errorCode(body) == "PUBLICATION_SUSPENDED" && !strings.Contains(body, `"data"`)
}

// TestSuspendedPublication: a platform admin suspends Field Notes (B, on
// the demo platform): its hosts refuse the public and its owner, GraphQL
// with PUBLICATION_SUSPENDED and its feed, sitemap and robots.txt with
// 403, publication(slug:) too, while the default publication (A) is
// served as before and a platform admin still reads B. A post of B
// scheduled to go live while B is suspended waits, and goes live once B
// is active again, and a staff event a platform admin's write logged
// while B was suspended waits in the outbox: each webhook delivery is
// made then, once. Only
// platform admins set a status; bad input changes nothing.
func TestSuspendedPublication(t *testing.T) {
	args, env, _ := platformBackend(t)
	base, _, stop := startServer(t, append(args, "-webhooks-allow-private-unsafe", "-webhooks-allow-http=true"), env)
	defer stop()
	hooks := &hookLog{}
	receiver := httptest.NewServer(hooks)
	defer receiver.Close()
	notes, mae := demo.NotesHost+":"+port(t, base), pubToken(t, "owner", demo.NotesOwner, demo.NotesSlug)
	ops, admin := platformToken(t, "platform", "ops"), platformToken(t, "admin", "ops")

	var pub struct {
		Publication struct{ ID, Title, Status string }
	}
	mustGraphQL(t, base, "localhost", fmt.Sprintf(`{ publication(slug: %q) { id title status } }`, demo.NotesSlug), &pub)
	id := pub.Publication.ID
	mustGraphQL(t, base, notes, fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["post.published", "publication.member.added"]}) { secret } }`, receiver.URL+"/b"), nil, mae)
	mustGraphQL(t, base, "localhost", fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["publication.member.added"]}) { secret } }`, receiver.URL+"/a"), nil, admin)
	var made struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	mustGraphQL(t, base, notes, `mutation { createPost(input: {title: "After the thaw", slug: "after-the-thaw", body: "Words."}) { post { id } } }`, &made, mae)
	goLive := time.Now().Add(3 * time.Second).UTC()
	mustGraphQL(t, base, notes, fmt.Sprintf(`mutation { publishPost(input: {id: %q, at: %q}) { post { id } } }`, made.CreatePost.Post.ID, goLive.Format(time.RFC3339Nano)), nil, mae)

	// yan returns B's webhook's deliveries of yan's membership.
	yan := func() []delivery {
		var out []delivery
		for _, d := range hooks.deliveries("/b", "") {
			if strings.Contains(d.body, `"accountId":"yan"`) {
				out = append(out, d)
			}
		}
		return out
	}
	setStatus := func(status, token string) (int, string) {
		return graphQLAt(t, base, "localhost", fmt.Sprintf(`mutation { setPublicationStatus(input: {id: %q, status: %s}) { publication { status } } }`, id, status), token)
	}
	title := func() string {
		var p struct{ Publication struct{ Title string } }
		mustGraphQL(t, base, "localhost", fmt.Sprintf(`{ publication(slug: %q) { title } }`, demo.NotesSlug), &p, ops)
		return p.Publication.Title
	}

	t.Run("only platform admins set a status, and bad input changes nothing", func(t *testing.T) {
		if _, body := setStatus("SUSPENDED", admin); errorCode(body) != "FORBIDDEN" {
			t.Errorf("the default publication's admin: %s, want FORBIDDEN", body)
		}
		if _, body := graphQLAt(t, base, notes, fmt.Sprintf(`mutation { setPublicationStatus(input: {id: %q, status: SUSPENDED}) { publication { status } } }`, id), mae); errorCode(body) != "FORBIDDEN" {
			t.Errorf("B's owner: %s, want FORBIDDEN", body)
		}
		if _, body := graphQLAt(t, base, "localhost", `mutation { setPublicationStatus(input: {id: "0190f0f0-0000-7000-8000-000000000000", status: SUSPENDED}) { publication { status } } }`, ops); errorCode(body) != "NOT_FOUND" {
			t.Errorf("an unknown id: %s, want NOT_FOUND", body)
		}
		if _, body := setStatus("PAUSED", ops); errorCode(body) != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(body, "PAUSED") {
			t.Errorf("status PAUSED: %s, want a validation error naming it", body)
		}
		if _, body := graphQLAt(t, base, "localhost", `mutation { setPublicationStatus(input: {id: "default", status: SUSPENDED}) { publication { status } } }`, ops); errorCode(body) != "BAD_USER_INPUT" {
			t.Errorf("suspending the default publication: %s, want BAD_USER_INPUT", body)
		}
		for _, bad := range []string{"", " ", strings.Repeat("n", 201), "Two\nlines"} {
			_, body := graphQLAt(t, base, notes, fmt.Sprintf(`mutation { updatePublication(input: {id: %q, title: %q}) { publication { title } } }`, id, bad), mae)
			if errorCode(body) != "BAD_USER_INPUT" || !strings.Contains(body, `"field":"title"`) {
				t.Errorf("title %q: %s, want BAD_USER_INPUT on title", bad, body)
			}
		}
		if got := title(); got != pub.Publication.Title {
			t.Errorf("title after bad input = %q, want %q", got, pub.Publication.Title)
		}
		var st struct{ Publication struct{ Status string } }
		mustGraphQL(t, base, "localhost", fmt.Sprintf(`{ publication(slug: %q) { status } }`, demo.NotesSlug), &st)
		if st.Publication.Status != "ACTIVE" {
			t.Errorf("status after refused calls = %q, want ACTIVE", st.Publication.Status)
		}
	})

	t.Run("its owner renames it; its slug stays", func(t *testing.T) {
		var p struct {
			UpdatePublication struct{ Publication struct{ Slug, Title string } }
		}
		mustGraphQL(t, base, notes, fmt.Sprintf(`mutation { updatePublication(input: {id: %q, title: "Field Notes, Winter"}) { publication { slug title } } }`, id), &p, mae)
		if got := p.UpdatePublication.Publication; got.Slug != demo.NotesSlug || got.Title != "Field Notes, Winter" || title() != got.Title {
			t.Errorf("renamed = %+v, read %q", got, title())
		}
		if _, body := graphQLAt(t, base, "localhost", fmt.Sprintf(`mutation { updatePublication(input: {id: %q, title: "Mine"}) { publication { title } } }`, id), admin); errorCode(body) != "FORBIDDEN" {
			t.Errorf("the default publication's admin renaming B: %s, want FORBIDDEN", body)
		}
	})

	for range 2 { // the second call is no change
		if code, body := setStatus("SUSPENDED", ops); code != http.StatusOK || !strings.Contains(body, `"status":"SUSPENDED"`) {
			t.Fatalf("suspend = %d %s", code, body)
		}
	}

	t.Run("suspended: refused to the public and its staff, served to platform admins", func(t *testing.T) {
		last := ""
		eventually(t, "B's host refuses its posts", func() bool {
			var code int
			code, last = graphQLAt(t, base, notes, `{ posts(first: 1) { edges { node { slug } } } }`)
			return suspendedAnswer(code, last)
		}, func() string { return last })
		for _, path := range []string{"/feed.xml", "/sitemap.xml", "/robots.txt", "/members.csv"} {
			code, h, body := (request{url: base + path, host: notes}).do(t)
			if code != http.StatusForbidden || h.Get("Cache-Control") != "no-store" || strings.Contains(body, "Field Notes") {
				t.Errorf("%s = %d %q %.200s, want 403, no-store", path, code, h.Get("Cache-Control"), body)
			}
		}
		if code, body := graphQLAt(t, base, notes, `mutation { createPost(input: {title: "Still here", slug: "still-here", body: "Words."}) { post { id } } }`, mae); !suspendedAnswer(code, body) {
			t.Errorf("B's owner writing = %d %s, want PUBLICATION_SUSPENDED", code, body)
		}
		if code, body := graphQLAt(t, base, "localhost", fmt.Sprintf(`{ publication(slug: %q) { title } }`, demo.NotesSlug)); errorCode(body) != "PUBLICATION_SUSPENDED" || strings.Contains(body, "Winter") {
			t.Errorf("publication(slug:) = %d %s, want PUBLICATION_SUSPENDED and no title", code, body)
		}
		if _, body := graphQLAt(t, base, "localhost", fmt.Sprintf(`{ publication(host: %q) { title } }`, demo.NotesHost)); errorCode(body) != "PUBLICATION_SUSPENDED" {
			t.Errorf("publication(host:) = %s, want PUBLICATION_SUSPENDED", body)
		}
		if got := postSlugs(t, base, "localhost"); len(got) == 0 {
			t.Error("the default publication serves no posts while B is suspended")
		}
		if code, body := graphQLAt(t, base, notes, `{ posts(first: 5) { edges { node { slug } } } }`, ops); code != http.StatusOK || errorCode(body) != "" {
			t.Errorf("a platform admin reading B = %d %s", code, body)
		}
		if code, h, body := (request{url: base + "/members.csv", host: notes, headers: []string{ops}}).do(t); code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
			t.Errorf("a platform admin exporting B's members = %d %q %.200s", code, h.Get("Content-Type"), body)
		}
		var st struct{ Publication struct{ Status string } }
		mustGraphQL(t, base, "localhost", fmt.Sprintf(`{ publication(slug: %q) { status } }`, demo.NotesSlug), &st, ops)
		if st.Publication.Status != "SUSPENDED" {
			t.Errorf("status = %q, want SUSPENDED", st.Publication.Status)
		}
	})

	t.Run("its scheduled post waits", func(t *testing.T) {
		// Past the post's time and two ticks of the schedule worker: its
		// post.published, which the webhook would get, is not logged.
		eventually(t, "the post's time passes", func() bool { return time.Now().After(goLive.Add(2500 * time.Millisecond)) }, func() string { return "" })
		if d := hooks.deliveries("/b", "after-the-thaw"); len(d) > 0 {
			t.Errorf("delivered while suspended: %+v", d)
		}
	})

	t.Run("a webhook delivery of an event logged while suspended waits", func(t *testing.T) {
		mustGraphQL(t, base, "localhost", fmt.Sprintf(`mutation { addPublicationMember(input: {publication: %q, account: "yan", role: AUTHOR}) { member { account } } }`, id), nil, ops)
		// A's own event, logged after B's: once A's webhook has it, the
		// worker has passed B's.
		mustGraphQL(t, base, "localhost", `mutation { addPublicationMember(input: {publication: "default", account: "yan", role: CONTRIBUTOR}) { member { account } } }`, nil, admin)
		eventually(t, "A's staff event", func() bool { return len(hooks.deliveries("/a", "")) > 0 }, hooks.String)
		if d := yan(); len(d) > 0 {
			t.Errorf("B's staff event delivered while suspended: %+v", d)
		}
	})

	t.Run("active again: served, and the post goes live with its delivery, once", func(t *testing.T) {
		if code, body := setStatus("ACTIVE", ops); code != http.StatusOK || !strings.Contains(body, `"status":"ACTIVE"`) {
			t.Fatalf("reactivate = %d %s", code, body)
		}
		last := ""
		eventually(t, "B's host serves its posts again", func() bool {
			var code int
			code, last = graphQLAt(t, base, notes, `{ posts(first: 10) { edges { node { slug } } } }`)
			return code == http.StatusOK && strings.Contains(last, "after-the-thaw")
		}, func() string { return last })
		if code, _, body := (request{url: base + "/feed.xml", host: notes}).do(t); code != http.StatusOK || !strings.Contains(body, "after-the-thaw") {
			t.Errorf("B's feed = %d %.300s, want the post", code, body)
		}
		if code, _, _ := (request{url: base + "/sitemap.xml", host: notes}).do(t); code != http.StatusOK {
			t.Errorf("B's sitemap = %d", code)
		}
		eventually(t, "the post's webhook delivery", func() bool { return len(hooks.deliveries("/b", "after-the-thaw")) > 0 }, hooks.String)
		eventually(t, "B's staff event delivered", func() bool { return len(yan()) > 0 }, hooks.String)
		if d := hooks.deliveries("/b", "after-the-thaw"); len(d) != 1 {
			t.Errorf("deliveries of the post = %+v, want one", d)
		}
		if d := yan(); len(d) != 1 || d[0].typ != "publication.member.added" || d[0].status != http.StatusOK {
			t.Errorf("deliveries of the staff event = %+v, want one", d)
		}
	})
}
