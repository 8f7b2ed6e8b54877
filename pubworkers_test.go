package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// platformBackend returns the arguments and environment of a server on
// the test's DynamoDB (dynamotest.Endpoint): the embedded engine with its
// data file in a directory of the test, or a table of the test's own on
// DynamoDB Local, seeded with the demo platform as the embedded default
// is; and open, which returns a Store of the default publication on that
// table while no server runs (the embedded engine's file is one
// process's) and the function that closes it.
func platformBackend(t testing.TB) (args []string, env map[string]string, open func() (*storage.Store, func())) {
	t.Helper()
	args = []string{"-port", "0", "-log-format", "json"}
	env = map[string]string{"JWT_SECRET": platformSecret}
	endpoint := dynamotest.Endpoint(t)
	if endpoint == "" {
		dir := t.TempDir()
		env["DATA_DIR"] = dir
		return args, env, func() (*storage.Store, func()) {
			engine, err := embedded.Open(embedded.Options{Path: filepath.Join(dir, dataFile)})
			if err != nil {
				t.Fatal(err)
			}
			client, err := storage.NewClient(context.Background(), storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: engine}})
			if err != nil {
				t.Fatal(err)
			}
			return storage.New(client, "blog"), func() { engine.Close() }
		}
	}
	client, err := storage.NewClient(context.Background(), dynamotest.ClientConfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, client, "pubworkers")
	env["DYNAMODB_ENDPOINT"], env["DYNAMODB_TABLE"] = endpoint, table
	args = append(args, "-seed-demo=true")
	return args, env, func() (*storage.Store, func()) { return storage.New(client, table), func() {} }
}

// The change feed's workers serve every publication (pubworkers.go):
// these tests run the server on the demo platform and act on its second
// publication, Field Notes (B, at notes.localhost), besides the default
// one (A, at localhost).

// pubToken returns the Authorization header of a token of role for sub
// bound to the publication pub (an id or slug), signed with
// platformSecret.
func pubToken(t *testing.T, role, sub, pub string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if err := runToken(context.Background(), []string{"-role", role, "-sub", sub, "-publication", pub}, func(k string) string {
		return map[string]string{"JWT_SECRET": platformSecret}[k]
	}, &out, &errs); err != nil {
		t.Fatalf("token: %v %s", err, errs.String())
	}
	return "Authorization: Bearer " + strings.TrimSpace(out.String())
}

// mustGraphQL posts query to host and decodes its data into out (nil:
// none), failing t on an error.
func mustGraphQL(t testing.TB, base, host, query string, out any, headers ...string) {
	t.Helper()
	code, body := graphQLAt(t, base, host, query, headers...)
	if code != http.StatusOK || errorCode(body) != "" {
		t.Fatalf("%s on %s = %d %.400s", query, host, code, body)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(body), &struct{ Data any }{out}); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
	}
}

// newPost creates and publishes a post titled title on host as the
// token's author, and returns its id.
func newPost(t *testing.T, base, host, title, slug string, token string) string {
	t.Helper()
	var made struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	mustGraphQL(t, base, host, fmt.Sprintf(`mutation { createPost(input: {title: %q, slug: %q, body: "Words."}) { post { id } } }`, title, slug), &made, token)
	mustGraphQL(t, base, host, fmt.Sprintf(`mutation { publishPost(input: {id: %q}) { post { id } } }`, made.CreatePost.Post.ID), nil, token)
	return made.CreatePost.Post.ID
}

// eventually polls cond until it holds, and fails t when it does not
// within a minute (the retry of a failed delivery comes five seconds
// after it), saying what and what state says.
func eventually(t testing.TB, what string, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s: %s", what, state())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hookLog is a webhook receiver: the deliveries it got, by path; the
// first delivery at /b of the post above-the-tree-line is answered 500.
type hookLog struct {
	mu  sync.Mutex
	got []delivery
}

type delivery struct {
	path, id, typ, slug, body string
	status                    int
}

func (h *hookLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var msg struct {
		Type string
		Data struct{ Slug string }
	}
	_ = json.Unmarshal(b, &msg)
	h.mu.Lock()
	defer h.mu.Unlock()
	d := delivery{path: r.URL.Path, id: r.Header.Get("webhook-id"), typ: msg.Type, slug: msg.Data.Slug, body: string(b), status: http.StatusOK}
	if r.URL.Path == "/b" && d.slug == "above-the-tree-line" && len(h.find("/b", d.slug)) == 0 {
		d.status = http.StatusInternalServerError
	}
	h.got = append(h.got, d)
	w.WriteHeader(d.status)
}

// find returns the deliveries to path of the post slug, with h.mu held.
func (h *hookLog) find(path, slug string) []delivery {
	var out []delivery
	for _, d := range h.got {
		if d.path == path && d.slug == slug {
			out = append(out, d)
		}
	}
	return out
}

func (h *hookLog) deliveries(path, slug string) []delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.find(path, slug)
}

func (h *hookLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, d := range h.got {
		fmt.Fprintf(&b, "%s %s %s %d %s\n", d.path, d.typ, d.slug, d.status, d.id)
	}
	return b.String()
}

// TestWorkersServeEveryPublication: on publication B (Field Notes), a
// webhook gets B's post.published, again under the same webhook-id after
// its endpoint failed, and never A's, while A's webhook gets A's and
// never B's; a comment on B's post is counted on B's post summaries; and
// B's numbered pages hold B's new post.
func TestWorkersServeEveryPublication(t *testing.T) {
	args, env, _ := platformBackend(t)
	base, _, stop := startServer(t, append(args, "-webhooks-allow-private-unsafe", "-webhooks-allow-http=true"), env)
	defer stop()
	hooks := &hookLog{}
	receiver := httptest.NewServer(hooks)
	defer receiver.Close()
	notes, mae := "notes.localhost:"+port(t, base), pubToken(t, "owner", demo.NotesOwner, demo.NotesSlug)
	admin := platformToken(t, "admin", "ops")

	mustGraphQL(t, base, notes, fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["post.published"]}) { secret } }`, receiver.URL+"/b"), nil, mae)
	mustGraphQL(t, base, "localhost", fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["post.published"]}) { secret } }`, receiver.URL+"/a"), nil, admin)
	mustGraphQL(t, base, "localhost", `mutation { createAuthor(input: {subject: "ops", name: "Ops"}) { author { id } } }`, nil, admin)

	newPost(t, base, "localhost", "On the default blog", "on-the-default-blog", admin)
	bPost := newPost(t, base, notes, "Above the tree line", "above-the-tree-line", mae)

	t.Run("B's webhook gets B's post.published, retried after a failure", func(t *testing.T) {
		eventually(t, "B's post.published delivered again after a 500", func() bool {
			got := hooks.deliveries("/b", "above-the-tree-line")
			return len(got) >= 2 && got[len(got)-1].status == http.StatusOK
		}, hooks.String)
		got := hooks.deliveries("/b", "above-the-tree-line")
		if got[0].status != http.StatusInternalServerError || got[0].id == "" || got[1].id != got[0].id {
			t.Errorf("B's deliveries %+v, want a 500 then the same webhook-id again", got)
		}
		eventually(t, "A's post.published delivered to A", func() bool { return len(hooks.deliveries("/a", "on-the-default-blog")) > 0 }, hooks.String)
		if d := hooks.deliveries("/b", "on-the-default-blog"); len(d) > 0 {
			t.Errorf("B's webhook got A's post: %+v", d)
		}
		if d := hooks.deliveries("/a", "above-the-tree-line"); len(d) > 0 {
			t.Errorf("A's webhook got B's post: %+v", d)
		}
	})

	t.Run("a comment on B's post is counted on its summaries", func(t *testing.T) {
		mustGraphQL(t, base, notes, fmt.Sprintf(`mutation { addComment(input: {postId: %q, body: "Lovely light."}) { comment { id } } }`, bPost), nil, mae)
		var out struct {
			Posts struct {
				Edges []struct {
					Node struct {
						Slug         string
						CommentCount int
					}
				}
			}
		}
		last := ""
		eventually(t, "B's feed shows the comment count", func() bool {
			_, last = graphQLAt(t, base, notes, `{ posts(first: 5) { edges { node { slug commentCount } } } }`)
			_ = json.Unmarshal([]byte(last), &struct{ Data any }{&out})
			for _, e := range out.Posts.Edges {
				if e.Node.Slug == "above-the-tree-line" {
					return e.Node.CommentCount == 1
				}
			}
			return false
		}, func() string { return last })
	})

	t.Run("B's numbered pages hold B's new post", func(t *testing.T) {
		last := ""
		// The last page shows a new post before the index has it; the
		// count is the index's.
		eventually(t, "postPage on B counts the new post", func() bool {
			_, last = graphQLAt(t, base, notes, `{ postPage(number: 1, size: 10) { totalCount nodes { slug } } }`)
			return strings.Contains(last, `"totalCount":4`)
		}, func() string { return last })
		if !strings.Contains(last, `"slug":"above-the-tree-line"`) {
			t.Errorf("B's postPage = %s, want the new post", last)
		}
	})
}

// signInMember makes the address email a member of the publication of
// store, as a sign-in on it does.
func signInMember(t *testing.T, store *storage.Store, email string) {
	t.Helper()
	ctx := context.Background()
	var token string
	err := store.RequestSignIn(ctx, storage.SignInRequest{Email: email, Compose: func(tok, _ string) (storage.Email, error) {
		token = tok
		return storage.Email{Subject: "Sign in", Text: "a link"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token}); err != nil {
		t.Fatal(err)
	}
}

// TestNewsletterOfEveryPublication: a post first published on B is
// emailed to B's member, with B's name, the post's link on B's host and
// an unsubscribe link on B's host, and not to A's member; A's post goes
// to A's member only. The members are made in the table between two
// runs of the server (TestPublicationLettersEndToEnd signs them in).
func TestNewsletterOfEveryPublication(t *testing.T) {
	args, env, open := platformBackend(t)
	// B's links take B's host in place of the site's, its port kept.
	args = append(args, "-site-url", "http://localhost:8080")
	_, _, stop := startServer(t, args, env)
	stop()

	a, closeStore := open()
	pub, err := a.PublicationBySlug(context.Background(), demo.NotesSlug)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.In(pub.ID)
	if err != nil {
		t.Fatal(err)
	}
	signInMember(t, a, "amy@example.com")
	signInMember(t, b, "bea@example.com")
	closeStore()

	base, logs, stop := startServer(t, args, env)
	defer stop()
	newPost(t, base, "notes.localhost", "Hut to hut", "hut-to-hut", pubToken(t, "owner", demo.NotesOwner, demo.NotesSlug))
	const kept = `"msg":"email kept in the local outbox`
	eventually(t, "B's newsletter to B's member", func() bool {
		return logs.has(kept, `"to":"bea@example.com"`, `Hut to hut`)
	}, logs.String)
	if !logs.has(kept, `"to":"bea@example.com"`, "Field Notes", "http://notes.localhost:8080/posts/hut-to-hut", "http://notes.localhost:8080/newsletter/unsubscribe?token=") {
		t.Errorf("B's newsletter lacks B's name, post link or unsubscribe link on B's host:\n%s", logs)
	}
	admin := platformToken(t, "admin", "ops")
	mustGraphQL(t, base, "localhost", `mutation { createAuthor(input: {subject: "ops", name: "Ops"}) { author { id } } }`, nil, admin)
	newPost(t, base, "localhost", "Back in town", "back-in-town", admin)
	eventually(t, "A's newsletter to A's member", func() bool {
		return logs.has(kept, `"to":"amy@example.com"`, "Back in town")
	}, logs.String)
	if logs.has(kept, `"to":"amy@example.com"`, "Hut to hut") || logs.has(kept, `"to":"bea@example.com"`, "Back in town") {
		t.Errorf("a newsletter went to another publication's member:\n%s", logs)
	}
}

// owing is a worker's state in a pubSet test: the position of the first
// event it owes work for, 0 for none.
type owing struct{ first int64 }

func (o *owing) hold(last int64) int64 {
	if o.first > 0 {
		return min(last, o.first-1)
	}
	return last
}

// TestPubSetKeepsWhatOwesAndBoundsTheRest: of 1,000 publications used
// once, those whose instances owe work are all kept, and the worker's
// Hold is the least of theirs; the others are dropped past
// maxKeptPublications; an instance in use is never dropped; an id no
// publication can have is errBadPublication.
func TestPubSetKeepsWhatOwesAndBoundsTheRest(t *testing.T) {
	store := storage.New(nil, "blog")
	set := newPubSet(store, func(context.Context, *storage.Store) (*owing, error) { return &owing{}, nil }, (*owing).hold)
	ctx := context.Background()
	for i := range 1000 {
		err := set.use(ctx, fmt.Sprintf("pub-%d", i), func(o *owing) error {
			if i%100 == 7 {
				o.first = int64(1000 + i) // owes work for an event of its
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(set.of); n != maxKeptPublications {
		t.Errorf("%d instances kept, want %d", n, maxKeptPublications)
	}
	for i := 7; i < 1000; i += 100 {
		if set.of[fmt.Sprintf("pub-%d", i)] == nil {
			t.Errorf("pub-%d owes work and was dropped", i)
		}
	}
	if got := set.hold(5000); got != 1006 {
		t.Errorf("hold(5000) = %d, want 1006, before the first event owed", got)
	}
	// In use, an instance is kept however many others come.
	err := set.use(ctx, "pub-0", func(*owing) error {
		for i := range 200 {
			_ = set.use(ctx, fmt.Sprintf("other-%d", i), func(*owing) error { return nil })
		}
		if set.of["pub-0"] == nil {
			t.Error("pub-0 dropped while in use")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.use(ctx, "bad#id", func(*owing) error { return nil }); !errors.Is(err, errBadPublication) {
		t.Errorf("use of a bad id = %v, want errBadPublication", err)
	}
}

// TestWebhookRetriesOfBAfterARestart: a delivery on publication B that
// failed is retried by the next server on the table, which learns of it
// from the scan of the publications' outboxes when it takes the
// webhooks worker's lease, under the same webhook-id.
func TestWebhookRetriesOfBAfterARestart(t *testing.T) {
	args, env, _ := platformBackend(t)
	args = append(args, "-webhooks-allow-private-unsafe", "-webhooks-allow-http=true")
	hooks := &hookLog{}
	receiver := httptest.NewServer(hooks)
	defer receiver.Close()
	mae := pubToken(t, "owner", demo.NotesOwner, demo.NotesSlug)

	base, _, stop := startServer(t, args, env)
	notes := "notes.localhost:" + port(t, base)
	mustGraphQL(t, base, notes, fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["post.published"]}) { secret } }`, receiver.URL+"/b"), nil, mae)
	newPost(t, base, notes, "Above the tree line", "above-the-tree-line", mae)
	eventually(t, "the first attempt, answered 500", func() bool { return len(hooks.deliveries("/b", "above-the-tree-line")) > 0 }, hooks.String)
	stop()

	_, _, stop = startServer(t, args, env)
	defer stop()
	eventually(t, "the retry, by the server started since", func() bool { return len(hooks.deliveries("/b", "above-the-tree-line")) >= 2 }, hooks.String)
	got := hooks.deliveries("/b", "above-the-tree-line")
	if got[0].status != http.StatusInternalServerError || got[1].status != http.StatusOK || got[1].id != got[0].id {
		t.Errorf("deliveries %+v, want a 500, then a 200 under the same webhook-id", got)
	}
}
