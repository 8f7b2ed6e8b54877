package tests

import (
	"context"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// TestNewsletterSendsOnlyWhenThePublishChoseTo: a member gets no email of
// a post published with sendNewsletter false, nor of one scheduled with
// false when it goes live later from the change feed, nor of that first
// post published again without the choice; a post published with true,
// and one without the choice, are sent.
func TestNewsletterSendsOnlyWhenThePublishChoseTo(t *testing.T) {
	r := newNewsletterRig(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := r.as("ada", auth.RoleAuthor)
	r.signInAs(t, "ann@example.com")

	publish := func(slug string, send *bool, at *time.Time) string {
		t.Helper()
		id := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: slug, Slug: slug, Body: ptr("Words.")})).CreatePost.Post.Id
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: id, SendNewsletter: send, At: at}))
		return id
	}

	quiet := publish("quiet", ptr(false), nil)
	r.awaitHandled(t, storage.EventPostPublished, quiet)
	r.deliverN(t, 0)

	later := r.clock.Now().Add(time.Hour)
	scheduled := publish("scheduled-quiet", ptr(false), &later)
	r.clock.Advance(time.Hour + time.Second)
	if n, err := r.store.GoLive(ctx); err != nil || n != 1 {
		t.Fatalf("GoLive = %d, %v; want 1 post gone live", n, err)
	}
	r.awaitHandled(t, storage.EventPostPublished, scheduled)
	r.deliverN(t, 0)

	// Published again without the choice, the post keeps it.
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: quiet}))
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: quiet}))
	r.awaitHandled(t, storage.EventPostPublished, quiet)
	r.deliverN(t, 0)

	loud := publish("loud", ptr(true), nil)
	r.awaitHandled(t, storage.EventPostPublished, loud)
	equal(t, "the subject of the post sent with true", r.deliverN(t, 1)[0].header.Get("Subject"), "loud")

	plain := publish("plain", nil, nil)
	r.awaitHandled(t, storage.EventPostPublished, plain)
	equal(t, "the subject of the post sent by default", r.deliverN(t, 1)[0].header.Get("Subject"), "plain")
}
