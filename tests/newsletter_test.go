package tests

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/storage"
)

// newsletterRig is a sign-in rig whose change feed runs the "newsletter"
// and "reply-notifications" workers, as feed.go adds them (here as one), and tells the test each batch of events
// it handled; its unsubscribe links lead to a server of the test.
type newsletterRig struct {
	*signInRig
	letters *newsletter.Service
	handled chan storage.LoggedEvent
}

func newNewsletterRig(t *testing.T) *newsletterRig {
	t.Helper()
	r := &newsletterRig{signInRig: newSignInRigOn(t, []storage.Option{storage.WithStream()}, 50), handled: make(chan storage.LoggedEvent, 1024)}
	mux := http.NewServeMux()
	unsub := httptest.NewServer(mux)
	t.Cleanup(unsub.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r.letters = newsletter.New(r.store, newsletter.Options{
		Key: []byte("a newsletter key of at least thirty-two bytes"),
		Site: func(_ context.Context, p *storage.Post) (string, string, error) {
			return "Test Blog", "https://blog.test/posts/" + p.Slug, nil
		},
		UnsubscribeBase: func() string { return unsub.URL },
		Logger:          quiet,
	})
	mux.Handle("GET "+newsletter.UnsubscribePath, r.letters.Unsubscribe())
	mux.Handle("POST "+newsletter.UnsubscribePath, r.letters.Unsubscribe())
	mux.Handle("GET "+newsletter.RepliesUnsubscribePath, r.letters.UnsubscribeReplies())
	mux.Handle("POST "+newsletter.RepliesUnsubscribePath, r.letters.UnsubscribeReplies())

	streams, err := storage.NewStreamsClient(context.Background(), r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := liveFeedOptions
	opts.Logger = quiet
	feed := changefeed.New(r.store, streams, opts)
	feed.AddWorker(changefeed.Worker{Name: "newsletter", Events: func(ctx context.Context, events []storage.LoggedEvent) error {
		if err := r.letters.HandleEvents(ctx, events); err != nil {
			return err
		}
		if err := r.letters.HandleReplyEvents(ctx, events); err != nil {
			return err
		}
		for _, e := range events {
			r.handled <- e
		}
		return nil
	}})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = feed.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return r
}

// awaitHandled waits until the worker handled an event of type typ about
// the post of global id gid, and returns it.
func (r *newsletterRig) awaitHandled(t *testing.T, typ storage.EventType, gid string) storage.LoggedEvent {
	t.Helper()
	return r.awaitEvent(t, typ, postIDOf(t, gid), "")
}

// awaitEvent waits until the worker handled an event of type typ about
// the post postID (and the comment commentID, when set), and returns it.
func (r *newsletterRig) awaitEvent(t *testing.T, typ storage.EventType, postID, commentID string) storage.LoggedEvent {
	t.Helper()
	guard := time.After(time.Minute) // a guard against a hang, not a measure
	for {
		select {
		case e := <-r.handled:
			if e.Type == typ && e.Data.PostID == postID && (commentID == "" || e.Data.CommentID == commentID) {
				return e
			}
		case <-guard:
			t.Fatalf("the newsletter worker handled no %s of %s", typ, postID)
		}
	}
}

var unsubscribeLink = regexp.MustCompile(`http://127\.0\.0\.1:\d+/newsletter/unsubscribe\?token=[A-Za-z0-9_.%-]+`)

// TestNewsletterSendsAPostOnceToSubscribedMembers: two members who get the
// newsletter and one who turned it off; publishing a post emails it to
// the two, by SMTP, with its title, its URL and a working unsubscribe
// link (List-Unsubscribe and the one-click List-Unsubscribe-Post too);
// an edit, the same event handled again, and a publish again after an
// unpublish send nothing more; after one member unsubscribes by the
// link, the next post goes to the other alone.
func TestNewsletterSendsAPostOnceToSubscribedMembers(t *testing.T) {
	r := newNewsletterRig(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := r.as("ada", auth.RoleAuthor)

	r.signInAs(t, "ann@example.com")
	r.signInAs(t, "bob@example.com")
	cat := r.signInAs(t, "cat@example.com")
	const setNewsletter = `mutation($on: Boolean!) { setNewsletterSubscription(input: {subscribed: $on}) { subscribed } }`
	if a := r.gql(t, cat.AccessToken, setNewsletter, map[string]any{"on": false}, "", nil); a.code() != "" {
		t.Fatalf("setNewsletterSubscription = %s", a.body)
	}
	if a := r.gql(t, "", setNewsletter, map[string]any{"on": false}, "", nil); a.code() != "UNAUTHENTICATED" {
		t.Errorf("setNewsletterSubscription anonymously = %s, want UNAUTHENTICATED", a.body)
	}
	m, _ := r.members(t, r.token(auth.RoleAdmin), nil)
	var subscribed []string
	for _, e := range m.Edges {
		if e.Node.Newsletter {
			subscribed = append(subscribed, e.Node.Email)
		}
	}
	equal(t, "members with the newsletter", strings.Join(subscribed, " "), "ann@example.com bob@example.com")

	post := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Letters & numbers", Slug: "letters", Body: ptr("The *first* post.")})).CreatePost.Post.Id
	published := ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post})).PublishPost.Post
	event := r.awaitHandled(t, storage.EventPostPublished, post)
	emails := r.deliverN(t, 2)
	var annLink string
	for i, e := range emails {
		to := []string{"<ann@example.com>", "<bob@example.com>"}
		got := e.header.Get("To")
		if got != to[0] && got != to[1] {
			t.Errorf("email %d To = %q", i, got)
		}
		equal(t, "Subject", e.header.Get("Subject"), "Letters & numbers")
		for part, body := range map[string]string{"text": e.text, "html": e.html} {
			if !strings.Contains(body, "https://blog.test/posts/letters") {
				t.Errorf("the %s part has not the post's URL: %q", part, body)
			}
		}
		if !strings.Contains(e.html, "<em>first</em>") {
			t.Errorf("the HTML part has not the post's body: %q", e.html)
		}
		link := unsubscribeLink.FindString(e.text)
		if link == "" || !strings.Contains(e.html, strings.ReplaceAll(link, "&", "&amp;")) {
			t.Fatalf("no unsubscribe link in both parts: %q", e.text)
		}
		equal(t, "List-Unsubscribe", e.header.Get("List-Unsubscribe"), "<"+link+">")
		equal(t, "List-Unsubscribe-Post", e.header.Get("List-Unsubscribe-Post"), "List-Unsubscribe=One-Click")
		if got == to[0] {
			annLink = link
		}
	}

	// An edit, the same event again (a retry of the worker), and a
	// publish again after an unpublish send nothing.
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: post, ExpectedVersion: published.Version, Title: ptr("Letters and numbers")}))
	r.awaitHandled(t, storage.EventPostEdited, post)
	if err := r.letters.HandleEvents(ctx, []storage.LoggedEvent{event}); err != nil {
		t.Fatal(err)
	}
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: post}))
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post}))
	r.awaitHandled(t, storage.EventPostPublished, post)
	r.deliverN(t, 0)

	// A forged token changes nothing; Ann's link unsubscribes her, and
	// again is still done.
	bad := strings.Replace(annLink, "token=", "token=x", 1)
	equal(t, "a forged token's status", httpStatus(t, http.MethodGet, bad), http.StatusBadRequest)
	equal(t, "the unsubscribe link's status", httpStatus(t, http.MethodGet, annLink), http.StatusOK)
	equal(t, "the one-click POST's status", httpStatus(t, http.MethodPost, annLink), http.StatusOK)

	next := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Second", Slug: "second", Body: ptr("Again.")})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: next}))
	r.awaitHandled(t, storage.EventPostPublished, next)
	equal(t, "the next post's only email goes to", r.deliverN(t, 1)[0].header.Get("To"), "<bob@example.com>")
}

// TestNewsletterResumesAfterAStop: a sending stopped after its first page
// (a crash) resumes after it, and one run by two servers at once makes
// one email per member.
func TestNewsletterResumesAfterAStop(t *testing.T) {
	r := newSignInRig(t, 50)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := r.as("ada", auth.RoleAuthor)
	for _, e := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		r.signInAs(t, e)
	}
	opts := newsletter.Options{Key: []byte("a newsletter key of at least thirty-two bytes"), PageSize: 1,
		Site: func(context.Context, *storage.Post) (string, string, error) {
			return "Test Blog", "https://blog.test/p", nil
		},
		UnsubscribeBase: func() string { return "https://api.blog.test" }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

	send := func(id string) {
		t.Helper()
		stopCtx, stop := context.WithCancel(ctx)
		o := opts
		o.Enqueued = stop // the server stops once its first page is enqueued
		if err := newsletter.New(r.store, o).Send(stopCtx, id); err == nil {
			t.Fatal("the stopped sending ended without an error")
		}
		if err := newsletter.New(r.store, opts).Send(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Resumed", Slug: "resumed"})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post}))
	send(postIDOf(t, post))
	equal(t, "emails after a stop and a resume", len(r.deliverN(t, 3)), 3)

	other := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Twice", Slug: "twice"})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: other}))
	errs, otherID := make(chan error, 2), postIDOf(t, other)
	for range 2 {
		go func() { errs <- newsletter.New(r.store, opts).Send(ctx, otherID) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	equal(t, "emails of a sending two servers ran", len(r.deliverN(t, 3)), 3)
}

// httpStatus sends an empty request and returns the answer's status.
func httpStatus(t *testing.T, method, link string) int {
	t.Helper()
	if _, err := url.Parse(link); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, link, strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
