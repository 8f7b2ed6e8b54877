package tests

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// Webhooks over GraphQL, as an admin's tools use them. The change feed's
// dispatcher is not here: the tests hand the service synthetic events.

// withWebhooks serves s again with a webhooks service of opts (loopback
// receivers need AllowPrivate, httptest's plain http AllowHTTP) and
// returns it.
func (s *server) withWebhooks(opts webhooks.Options) *webhooks.Service {
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h := webhooks.New(s.store, opts)
	s.opts.Webhooks = h
	s.serve()
	return h
}

// postGIDOf returns the global id of the post id, as the API spells it.
func postGIDOf(id string) string { return base64.RawURLEncoding.EncodeToString([]byte("Post:" + id)) }

// token returns a valid token of an admin.
func (s *server) token(roles ...string) string {
	tok, err := auth.Sign(testSecret, s.claims("admin", roles...))
	if err != nil {
		s.t.Fatal(err)
	}
	return tok
}

// errorPath returns the path of the first GraphQL error in err.
func errorPath(err error) string {
	var list gqlerror.List
	if !errors.As(err, &list) || len(list) == 0 {
		return ""
	}
	return list[0].Path.String()
}

// createWebhook creates a webhook as c, with the typed client.
func createWebhook(c graphql.Client, url string, events []string, description *string) (WebhookParts, string, error) {
	if events == nil {
		events = []string{}
	}
	out, err := CreateWebhook(context.Background(), c, CreateWebhookInput{Url: url, Events: events, Description: description})
	if err != nil {
		return WebhookParts{}, "", err
	}
	return out.CreateWebhook.Webhook.WebhookParts, out.CreateWebhook.Secret, nil
}

// webhooksOf lists the webhooks as c.
func webhooksOf(t *testing.T, c graphql.Client) []WebhookParts {
	t.Helper()
	out, err := Webhooks(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	hs := make([]WebhookParts, len(out.Webhooks))
	for i, w := range out.Webhooks {
		hs[i] = w.WebhookParts
	}
	return hs
}

// hookReceiver records the deliveries it gets.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []http.Header
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = append(r.got, req.Header.Clone())
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

func TestWebhooksAreForAdminsOnly(t *testing.T) {
	s := newServer(t)
	s.withWebhooks(webhooks.Options{AllowPrivate: true, AllowHTTP: true})
	hook, _, err := createWebhook(s.admin, "https://hooks.example.com/in", []string{"post.published"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := hook.Id
	calls := map[string]func(c graphql.Client) error{
		"webhooks": func(c graphql.Client) error { _, err := Webhooks(ctx, c); return err },
		"createWebhook": func(c graphql.Client) error {
			_, _, err := createWebhook(c, "https://hooks.example.com/x", []string{"post.published"}, nil)
			return err
		},
		"updateWebhook": func(c graphql.Client) error {
			_, err := UpdateWebhook(ctx, c, UpdateWebhookInput{Id: id, Enabled: ptr(false)})
			return err
		},
		"deleteWebhook": func(c graphql.Client) error { _, err := DeleteWebhook(ctx, c, DeleteWebhookInput{Id: id}); return err },
		"rotateWebhookSecret": func(c graphql.Client) error {
			_, err := RotateWebhookSecret(ctx, c, RotateWebhookSecretInput{Id: id})
			return err
		},
		"pingWebhook": func(c graphql.Client) error { _, err := PingWebhook(ctx, c, PingWebhookInput{Id: id}); return err },
		"redeliverWebhookEvent": func(c graphql.Client) error {
			_, err := RedeliverWebhookEvent(ctx, c, RedeliverWebhookEventInput{WebhookId: id, EventId: "evt_x"})
			return err
		},
	}
	clients := map[string]struct {
		c    graphql.Client
		code string
	}{
		"anonymous": {s.client, "UNAUTHENTICATED"},
		"reader":    {s.reader("r1", "Rea", ""), "FORBIDDEN"},
		"author":    {s.as("ada", auth.RoleAuthor), "FORBIDDEN"},
	}
	for who, c := range clients {
		for name, call := range calls {
			t.Run(who+"/"+name, func(t *testing.T) {
				// The root field itself is refused, before it reads or
				// writes, not a field of its answer.
				err := call(c.c)
				if got, path := code(err), errorPath(err); got != c.code || path != name {
					t.Errorf("code = %q at %q, want %s at %s", got, path, c.code, name)
				}
			})
		}
	}
	hs := webhooksOf(t, s.admin)
	if len(hs) != 1 || !hs[0].Enabled || len(hs[0].RecentDeliveries) != 0 || hs[0].PreviousSecretExpiresAt != nil {
		t.Errorf("webhooks = %+v, want the one, unchanged and never sent to", hs)
	}
	s.consistent()
}

func TestWebhookBadInputWritesNothing(t *testing.T) {
	s := newServer(t)
	s.withWebhooks(webhooks.Options{})
	long := strings.Repeat("d", storage.MaxWebhookDescriptionRunes+1)
	cases := []struct {
		name, url, field string
		events           []string
		description      *string
	}{
		{"relative URL", "/hooks", "url", []string{"post.published"}, nil},
		{"not http", "ftp://hooks.example.com/", "url", []string{"post.published"}, nil},
		{"credentials", "https://me:pw@hooks.example.com/", "url", []string{"post.published"}, nil},
		{"fragment", "https://hooks.example.com/#x", "url", []string{"post.published"}, nil},
		{"too long", "https://hooks.example.com/" + strings.Repeat("a", 2000), "url", []string{"post.published"}, nil},
		{"plain http outside development", "http://hooks.example.com/", "url", []string{"post.published"}, nil},
		{"loopback", "https://127.0.0.1:8080/", "url", []string{"post.published"}, nil},
		{"localhost", "https://localhost/", "url", []string{"post.published"}, nil},
		{"metadata", "https://169.254.169.254/latest/", "url", []string{"post.published"}, nil},
		{"private", "https://192.168.0.10/", "url", []string{"post.published"}, nil},
		{"mapped loopback", "https://[::ffff:7f00:1]/", "url", []string{"post.published"}, nil},
		{"no events", "https://hooks.example.com/", "events", []string{}, nil},
		{"unknown event", "https://hooks.example.com/", "events", []string{"post.exploded"}, nil},
		{"private event", "https://hooks.example.com/", "events", []string{"comment.pending"}, nil},
		{"description too long", "https://hooks.example.com/", "description", []string{"post.published"}, &long},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := createWebhook(s.admin, c.url, c.events, c.description)
			if code(err) != "BAD_USER_INPUT" || extension(err, "field") != c.field {
				t.Errorf("error %v (%s, field %v), want BAD_USER_INPUT on %s", err, code(err), extension(err, "field"), c.field)
			}
			if got := s.requests(); total(got) != 0 {
				t.Errorf("a refused createWebhook made requests %v, want none", got)
			}
		})
	}
	hook, _, err := createWebhook(s.admin, "https://hooks.example.com/in", []string{"post.published"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		input UpdateWebhookInput
	}{
		{"url", UpdateWebhookInput{Id: hook.Id, Url: ptr("https://10.0.0.1/")}},
		{"url", UpdateWebhookInput{Id: hook.Id, Url: ptr("http://hooks.example.com/")}},
		{"events", UpdateWebhookInput{Id: hook.Id, Events: []string{"post.scheduled"}}},
		{"events", UpdateWebhookInput{Id: hook.Id, Events: []string{}}},
		{"description", UpdateWebhookInput{Id: hook.Id, Description: &long}},
		{"id", UpdateWebhookInput{Id: "not-an-id", Enabled: ptr(false)}},
		{"id", UpdateWebhookInput{Id: postGIDOf("p1"), Enabled: ptr(false)}},
	} {
		_, err := UpdateWebhook(context.Background(), s.admin, c.input)
		if code(err) != "BAD_USER_INPUT" || extension(err, "field") != c.field {
			t.Errorf("update %+v: %v, want BAD_USER_INPUT on %s", c.input, err, c.field)
		}
		if got := s.requests(); total(got) != 0 {
			t.Errorf("a refused updateWebhook made requests %v, want none", got)
		}
	}
	hs := webhooksOf(t, s.admin)
	if len(hs) != 1 || hs[0].Url != "https://hooks.example.com/in" || strings.Join(hs[0].Events, ",") != "post.published" || hs[0].Description != nil {
		t.Errorf("webhooks = %+v, want the one good webhook, unchanged", hs)
	}
	s.consistent()
}

// TestWebhookLifecycle creates, pings, sends to, rotates, changes and
// deletes a webhook as an admin does, and checks that a secret is shown
// twice only: by createWebhook and rotateWebhookSecret.
func TestWebhookLifecycle(t *testing.T) {
	s := newServer(t)
	r := newHookReceiver(t)
	hooks := s.withWebhooks(webhooks.Options{AllowPrivate: true, AllowHTTP: true})
	ctx := context.Background()
	desc := "Revalidates the site"
	hook, secret, err := createWebhook(s.admin, r.URL+"/revalidate", []string{"post.published", "comment.added"}, &desc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") || !hook.Enabled || hook.Description == nil || *hook.Description != desc {
		t.Fatalf("created %+v with secret %q", hook, secret)
	}
	ping, err := PingWebhook(ctx, s.admin, PingWebhookInput{Id: hook.Id})
	if err != nil {
		t.Fatal(err)
	}
	if d := ping.PingWebhook.Delivery; d.EventType != "webhook.ping" || d.StatusCode == nil || *d.StatusCode != 200 {
		t.Errorf("ping = %+v", d)
	}
	s.clock.Advance(time.Second)
	ev := storage.Event{ID: "evt_0123456789abcdef0123456789abcdef", Type: storage.EventPostPublished, Time: s.clock.Now(),
		Data: storage.EventData{PostID: "p1", Slug: "hello", Paths: []string{"/posts/hello"}, CacheTags: []string{"post:p1"}}}
	if err := hooks.HandleEvents(ctx, []storage.LoggedEvent{{Position: 1, Event: ev}}); err != nil {
		t.Fatal(err)
	}
	hooks.Wait()
	s.clock.Advance(time.Second)
	re, err := RedeliverWebhookEvent(ctx, s.admin, RedeliverWebhookEventInput{WebhookId: hook.Id, EventId: ev.ID})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "attempt of the redelivery", re.RedeliverWebhookEvent.Delivery.Attempt, 2)
	_, err = RedeliverWebhookEvent(ctx, s.admin, RedeliverWebhookEventInput{WebhookId: hook.Id, EventId: "evt_ffffffffffffffffffffffffffffffff"})
	equal(t, "code of a redelivery of an event never sent", code(err), "NOT_FOUND")

	rotated, err := RotateWebhookSecret(ctx, s.admin, RotateWebhookSecretInput{Id: hook.Id})
	if err != nil {
		t.Fatal(err)
	}
	newSecret := rotated.RotateWebhookSecret.Secret
	if newSecret == secret || !strings.HasPrefix(newSecret, "whsec_") || rotated.RotateWebhookSecret.Webhook.PreviousSecretExpiresAt == nil {
		t.Errorf("rotation gave %q and previousSecretExpiresAt %v", newSecret, rotated.RotateWebhookSecret.Webhook.PreviousSecretExpiresAt)
	}

	// The list, as an admin's tool reads it: every webhook with its
	// deliveries, one Query for the list and one per webhook; and no
	// secret anywhere in the answer.
	hook2, _, err := createWebhook(s.admin, r.URL+"/second", []string{"author.updated"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := webhooksOf(t, s.admin)
	if got := s.requests(); got["Query"] != 3 || total(got) != 3 {
		t.Errorf("requests of the list of 2 webhooks = %v, want 3 Queries", got)
	}
	if len(hs) != 2 || hs[0].Id != hook.Id || hs[1].Id != hook2.Id {
		t.Fatalf("webhooks = %+v", hs)
	}
	ds := hs[0].RecentDeliveries
	if len(ds) != 3 || ds[0].EventId != ev.ID || ds[0].Attempt != 2 || ds[1].EventId != ev.ID || ds[1].Attempt != 1 || ds[2].EventType != "webhook.ping" {
		t.Errorf("recent deliveries = %+v, want the redelivery, the delivery and the ping, newest first", ds)
	}
	for _, d := range ds {
		if d.StatusCode == nil || *d.StatusCode != 200 || d.Error != nil || d.NextAttemptAt != nil {
			t.Errorf("delivery %+v, want 200 without error or retry", d)
		}
	}
	var query strings.Builder
	query.WriteString(`{"query":"{ webhooks { id url events description enabled disabledReason createdAt updatedAt previousSecretExpiresAt`)
	query.WriteString(` recentDeliveries(first: 100) { eventId eventType attempt attemptedAt statusCode durationMs error nextAttemptAt } } }"}`)
	raw := s.fetch(t, http.MethodPost, s.url, query.String(), map[string]string{"Authorization": "Bearer " + s.token(auth.RoleAdmin)})
	if raw.status != http.StatusOK || !strings.Contains(raw.body, hook.Id) {
		t.Fatalf("webhooks: %d %s", raw.status, raw.body)
	}
	for _, secret := range []string{secret, newSecret} {
		if strings.Contains(raw.body, strings.TrimPrefix(secret, "whsec_")) || strings.Contains(raw.body, "whsec_") {
			t.Errorf("the list shows a secret: %s", raw.body)
		}
	}

	updated, err := UpdateWebhook(ctx, s.admin, UpdateWebhookInput{Id: hook.Id, Enabled: ptr(false), Description: ptr(""), Events: []string{"post.deleted"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := updated.UpdateWebhook.Webhook; w.Enabled || w.Description != nil || strings.Join(w.Events, ",") != "post.deleted" || w.Url != hook.Url {
		t.Errorf("updated = %+v", w)
	}
	deleted, err := DeleteWebhook(ctx, s.admin, DeleteWebhookInput{Id: hook.Id})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "deletedId", deleted.DeleteWebhook.DeletedId, hook.Id)
	_, err = DeleteWebhook(ctx, s.admin, DeleteWebhookInput{Id: hook.Id})
	equal(t, "code of a second deletion", code(err), "NOT_FOUND")
	_, err = PingWebhook(ctx, s.admin, PingWebhookInput{Id: hook.Id})
	equal(t, "code of a ping of a deleted webhook", code(err), "NOT_FOUND")
	if hs := webhooksOf(t, s.admin); len(hs) != 1 || hs[0].Id != hook2.Id {
		t.Errorf("webhooks after the deletion = %+v", hs)
	}
	s.consistent()
}
