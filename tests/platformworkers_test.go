package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// The "schedule" worker covers every publication: a post scheduled on
// any publication goes live within about a second of its time, with its
// post.published, from one Query of the go-live index a tick, however
// many publications the table holds.

// newPublication creates the publication slug served at host through h,
// as a platform admin, and returns its id.
func newPublication(t *testing.T, h *hosted, slug, host string) string {
	t.Helper()
	var created struct {
		CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
	}
	in := map[string]any{"slug": slug, "title": slug, "hosts": []string{host}}
	if err := gql(h.client("blog.test", "ops", auth.RolePlatform), createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
		t.Fatal(err)
	}
	return created.CreatePublication.Publication.ID
}

// scheduleOn creates the author sub and a post titled title through host,
// on the publication pub (its staff added first), scheduled at at, and
// returns the post's id.
func scheduleOn(t *testing.T, h *hosted, pub, host, sub, title, slug string, at time.Time) string {
	t.Helper()
	ctx := context.Background()
	platform := h.client("", "ops", auth.RolePlatform)
	for account, role := range map[string]string{"admin": "OWNER", sub: "AUTHOR"} {
		in := map[string]any{"publication": pub, "account": account, "role": role}
		if err := gql(platform, addMemberMutation, map[string]any{"in": in}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	admin, author := h.scoped(host, pub, "admin", auth.PubOwner), h.scoped(host, pub, sub, auth.PubAuthor)
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, admin, CreateAuthorInput{Subject: ptr(sub), Name: sub}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, author, CreatePostInput{Title: title, Slug: slug, Body: ptr("## Notes\n\nBody.")})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, author, PublishPostInput{Id: p.Id, At: &at}))
	return p.Id
}

// goLiveCounted runs the "schedule" worker's sweep on the default
// publication's store, as the server does, and returns the posts gone
// live and its DynamoDB requests.
func goLiveCounted(t *testing.T, s *server) (int, string) {
	t.Helper()
	ctx, counter := storage.WithRequestCounter(context.Background())
	n := ok[int](t)(s.store.GoLive(ctx))
	return n, fmt.Sprint(counter.ByOperation())
}

// TestScheduledPostOfAnotherPublicationGoesLive: a post scheduled on
// publication B goes live at its time, with a post.published of B, is
// seen on B's host and never on the default publication's.
func TestScheduledPostOfAnotherPublicationGoesLive(t *testing.T) {
	s := newServerOn(t, []storage.Option{storage.WithStream()}, nil, withAnswers(0))
	h := s.route(t)
	pub := newPublication(t, h, "bee", "b.example")
	events := s.answerFollower(t)
	at := s.clock.Now().Add(time.Hour).Truncate(time.Millisecond)
	id := scheduleOn(t, h, pub, "b.example", "bob", "Bee later", "bee-later", at)

	postByID := `query($id: ID!) { post(id: $id) { title } }`
	seen := func(host string) (bool, string) {
		var got struct {
			Post *struct{ Title string } `json:"post"`
		}
		err := gql(h.client(host, ""), postByID, map[string]any{"id": id}, &got)
		return got.Post != nil, code(err)
	}
	if n, _ := goLiveCounted(t, s); n != 0 {
		t.Fatalf("posts gone live before its time: %d", n)
	}
	if on, c := seen("b.example"); on || c != "NOT_FOUND" {
		t.Errorf("on B's host before its time: %v %s, want NOT_FOUND", on, c)
	}

	s.clock.Advance(time.Hour)
	if n, reqs := goLiveCounted(t, s); n != 1 {
		t.Fatalf("posts gone live at its time: %d (%s), want B's", n, reqs)
	}
	deadline := time.After(time.Minute) // a guard against a hang, not a measure
	for got := false; !got; {
		select {
		case e := <-events.events:
			if e.Type == storage.EventPostPublished && e.Data.PostID == postIDOf(t, id) {
				equal(t, "the event's publication", e.Publication, pub)
				got = true
			}
		case <-deadline:
			t.Fatalf("no post.published of B's post %s", id)
		}
	}
	if on, c := seen("b.example"); !on {
		t.Errorf("on B's host after its time: %s, want the post", c)
	}
	if on, c := seen("blog.test"); on || c != "NOT_FOUND" {
		t.Errorf("on the default publication's host: %v %s, want NOT_FOUND", on, c)
	}
	if n, _ := goLiveCounted(t, s); n != 0 {
		t.Errorf("posts gone live again: %d", n)
	}
	b := ok[*storage.Store](t)(s.store.In(pub))
	if bad := ok[[]string](t)(b.Check(context.Background())); len(bad) != 0 {
		t.Errorf("B's check: %q", bad)
	}
	s.consistent()
}

// TestGoLiveTickCostsOneQuery: with several publications, each with a
// post scheduled, a tick with nothing due is one Query, and a tick with
// one post due in one of them is that Query, the read of its
// publication's directory item (whether it is suspended) and the post's
// transaction.
func TestGoLiveTickCostsOneQuery(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	now := s.clock.Now().Truncate(time.Millisecond)
	const pubs = 4
	ids := make([]string, pubs)
	for i := range pubs {
		host := fmt.Sprintf("p%d.example", i)
		pub := newPublication(t, h, fmt.Sprintf("p%d", i), host)
		ids[i] = scheduleOn(t, h, pub, host, "bob", "Later", "later", now.Add(time.Duration(i+1)*time.Hour))
	}
	for i := range 2 {
		n, reqs := goLiveCounted(t, s)
		equal(t, fmt.Sprintf("idle tick %d: posts gone live", i), n, 0)
		equal(t, fmt.Sprintf("idle tick %d: requests", i), reqs, "map[Query:1]")
	}
	s.clock.Advance(90 * time.Minute)
	n, reqs := goLiveCounted(t, s)
	equal(t, "a tick with p0's post due: posts gone live", n, 1)
	equal(t, "a tick with p0's post due: requests", reqs, "map[GetItem:1 Query:1 TransactWriteItems:1]")
	n, reqs = goLiveCounted(t, s)
	equal(t, "the next tick: posts gone live", n, 0)
	equal(t, "the next tick: requests", reqs, "map[Query:1]")
	s.clock.Advance(4 * time.Hour)
	n, _ = goLiveCounted(t, s)
	equal(t, "every other post due: posts gone live", n, pubs-1)
	s.consistent()
}

// TestRerenderCoversEveryPublication: when a new renderer is claimed,
// the "rerender" worker's ticks render again the bodies of every
// publication, B's as the default's, as B's host shows; once done, a
// tick is one GetItem however many publications there are.
func TestRerenderCoversEveryPublication(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	ctx := context.Background()
	const pubs = 3
	var onB string
	for i := range pubs {
		host := fmt.Sprintf("p%d.example", i)
		pub := newPublication(t, h, fmt.Sprintf("p%d", i), host)
		id := scheduleOn(t, h, pub, host, "bob", "Code", "code", s.clock.Now().Add(-time.Minute))
		if i == pubs-1 {
			onB = id
		}
	}
	body := func() string {
		var got struct {
			Post struct{ BodyHTML string } `json:"post"`
		}
		if err := gql(h.client("p2.example", ""), `query($id: ID!) { post(id: $id) { bodyHTML: bodyHtml } }`, map[string]any{"id": onB}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Post.BodyHTML
	}
	before := body()

	// A server of another renderer (another prefix of the headings' ids)
	// claims the table and runs the worker.
	other := storage.New(s.db, s.table, storage.WithClock(s.clock.Now), storage.WithHeadingIDPrefix("other-"))
	equal(t, "claimed", ok[bool](t)(other.ClaimRenderer(ctx)), true)
	// Three minutes of ticks: the default publication's sweep is done a
	// minute after the claim (storage/rerender.go), and the walk's
	// passes over the directory follow, a tick a page.
	for range 18 {
		ok[storage.Rerendered](t)(other.Rerender(ctx))
		s.clock.Advance(rerenderTick)
	}
	if after := body(); after == before || !strings.Contains(after, `id="other-notes"`) {
		t.Errorf("B's body not rendered again: %q, was %q", after, before)
	}
	reqs := func() string {
		ctx, counter := storage.WithRequestCounter(ctx)
		ok[storage.Rerendered](t)(other.Rerender(ctx))
		return fmt.Sprint(counter.ByOperation())
	}
	equal(t, "a tick once done", reqs(), "map[GetItem:1]")
	s.consistent()
}

// rerenderTick is how often the server's "rerender" worker ticks.
const rerenderTick = 10 * time.Second
