package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

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

// gql sends query with vars as c and decodes the data into out.
func gql(c graphql.Client, query string, vars map[string]any, out any) error {
	return c.MakeRequest(context.Background(), &graphql.Request{Query: query, Variables: vars}, &graphql.Response{Data: out})
}

const webhookFields = `id url events description enabled disabledReason createdAt updatedAt previousSecretExpiresAt
	recentDeliveries { eventId eventType attempt attemptedAt statusCode durationMs error nextAttemptAt }`

type webhookJSON struct {
	ID                      string
	URL                     string
	Events                  []string
	Description             *string
	Enabled                 bool
	DisabledReason          *string
	PreviousSecretExpiresAt *string
	RecentDeliveries        []struct {
		EventID, EventType, AttemptedAt string
		Attempt, DurationMs             int
		StatusCode                      *int
		Error, NextAttemptAt            *string
	}
}

const createWebhookDoc = `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { ` + webhookFields + ` } } }`

func createWebhook(c graphql.Client, url string, events []string, description *string) (webhookJSON, string, error) {
	var out struct {
		CreateWebhook struct {
			Secret  string
			Webhook webhookJSON
		}
	}
	input := map[string]any{"url": url, "events": events}
	if description != nil {
		input["description"] = *description
	}
	err := gql(c, createWebhookDoc, map[string]any{"input": input}, &out)
	return out.CreateWebhook.Webhook, out.CreateWebhook.Secret, err
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
	clients := map[string]struct {
		c    graphql.Client
		code string
	}{
		"anonymous": {s.client, "UNAUTHENTICATED"},
		"reader":    {s.reader("r1", "Rea", ""), "FORBIDDEN"},
		"author":    {s.as("ada", auth.RoleAuthor), "FORBIDDEN"},
	}
	docs := map[string]struct {
		doc  string
		vars map[string]any
	}{
		"webhooks":       {`{ webhooks { id } }`, nil},
		"createWebhook":  {createWebhookDoc, map[string]any{"input": map[string]any{"url": "https://hooks.example.com/x", "events": []string{"post.published"}}}},
		"updateWebhook":  {`mutation($id: ID!) { updateWebhook(input: {id: $id, enabled: false}) { webhook { id } } }`, map[string]any{"id": hook.ID}},
		"deleteWebhook":  {`mutation($id: ID!) { deleteWebhook(input: {id: $id}) { deletedId } }`, map[string]any{"id": hook.ID}},
		"rotate":         {`mutation($id: ID!) { rotateWebhookSecret(input: {id: $id}) { secret } }`, map[string]any{"id": hook.ID}},
		"ping":           {`mutation($id: ID!) { pingWebhook(input: {id: $id}) { delivery { attempt } } }`, map[string]any{"id": hook.ID}},
		"redeliverEvent": {`mutation($id: ID!) { redeliverWebhookEvent(input: {webhookId: $id, eventId: "evt_x"}) { delivery { attempt } } }`, map[string]any{"id": hook.ID}},
	}
	for who, c := range clients {
		for name, d := range docs {
			t.Run(who+"/"+name, func(t *testing.T) {
				var out map[string]any
				err := gql(c.c, d.doc, d.vars, &out)
				if got := code(err); got != c.code {
					t.Errorf("code = %q (%v), want %s", got, err, c.code)
				}
			})
		}
	}
	var out struct{ Webhooks []webhookJSON }
	if err := gql(s.admin, `{ webhooks { `+webhookFields+` } }`, nil, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Webhooks) != 1 || !out.Webhooks[0].Enabled || len(out.Webhooks[0].RecentDeliveries) != 0 {
		t.Errorf("webhooks = %+v, want the one, unchanged and never sent to", out.Webhooks)
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
		})
	}
	hook, _, err := createWebhook(s.admin, "https://hooks.example.com/in", []string{"post.published"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		input map[string]any
	}{
		{"url", map[string]any{"id": hook.ID, "url": "https://10.0.0.1/"}},
		{"url", map[string]any{"id": hook.ID, "url": "http://hooks.example.com/"}},
		{"events", map[string]any{"id": hook.ID, "events": []string{"post.scheduled"}}},
		{"events", map[string]any{"id": hook.ID, "events": []string{}}},
		{"description", map[string]any{"id": hook.ID, "description": long}},
		{"id", map[string]any{"id": "not-an-id", "enabled": false}},
		{"id", map[string]any{"id": postGIDOf("p1"), "enabled": false}},
	} {
		var out map[string]any
		err := gql(s.admin, `mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { webhook { id } } }`, map[string]any{"input": c.input}, &out)
		if code(err) != "BAD_USER_INPUT" || extension(err, "field") != c.field {
			t.Errorf("update %v: %v, want BAD_USER_INPUT on %s", c.input, err, c.field)
		}
	}
	var out struct{ Webhooks []webhookJSON }
	if err := gql(s.admin, `{ webhooks { `+webhookFields+` } }`, nil, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Webhooks) != 1 || out.Webhooks[0].URL != "https://hooks.example.com/in" || strings.Join(out.Webhooks[0].Events, ",") != "post.published" {
		t.Errorf("webhooks = %+v, want the one good webhook, unchanged", out.Webhooks)
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
	desc := "Revalidates the site"
	hook, secret, err := createWebhook(s.admin, r.URL+"/revalidate", []string{"post.published", "comment.added"}, &desc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") || !hook.Enabled || hook.Description == nil || *hook.Description != desc {
		t.Fatalf("created %+v with secret %q", hook, secret)
	}
	var ping struct {
		PingWebhook struct {
			Delivery struct {
				EventID, EventType string
				StatusCode         *int
			}
		}
	}
	if err := gql(s.admin, `mutation($id: ID!) { pingWebhook(input: {id: $id}) { delivery { eventId eventType statusCode } } }`, map[string]any{"id": hook.ID}, &ping); err != nil {
		t.Fatal(err)
	}
	if d := ping.PingWebhook.Delivery; d.EventType != "webhook.ping" || d.StatusCode == nil || *d.StatusCode != 200 {
		t.Errorf("ping = %+v", d)
	}
	s.clock.Advance(time.Second)
	ev := storage.Event{ID: "evt_0123456789abcdef0123456789abcdef", Type: storage.EventPostPublished, Time: s.clock.Now(),
		Data: storage.EventData{PostID: "p1", Slug: "hello", Paths: []string{"/posts/hello"}, CacheTags: []string{"post:p1"}}}
	if err := hooks.HandleEvents(context.Background(), []storage.LoggedEvent{{Position: 1, Event: ev}}); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Second)
	var redeliver map[string]any
	if err := gql(s.admin, `mutation($id: ID!, $e: String!) { redeliverWebhookEvent(input: {webhookId: $id, eventId: $e}) { delivery { attempt statusCode } } }`,
		map[string]any{"id": hook.ID, "e": ev.ID}, &redeliver); err != nil {
		t.Fatal(err)
	}
	err = gql(s.admin, `mutation($id: ID!) { redeliverWebhookEvent(input: {webhookId: $id, eventId: "evt_ffffffffffffffffffffffffffffffff"}) { delivery { attempt } } }`,
		map[string]any{"id": hook.ID}, &redeliver)
	equal(t, "code of a redelivery of an event never sent", code(err), "NOT_FOUND")

	var rotated struct {
		RotateWebhookSecret struct {
			Secret  string
			Webhook webhookJSON
		}
	}
	if err := gql(s.admin, `mutation($id: ID!) { rotateWebhookSecret(input: {id: $id}) { secret webhook { `+webhookFields+` } } }`, map[string]any{"id": hook.ID}, &rotated); err != nil {
		t.Fatal(err)
	}
	newSecret := rotated.RotateWebhookSecret.Secret
	if newSecret == secret || !strings.HasPrefix(newSecret, "whsec_") || rotated.RotateWebhookSecret.Webhook.PreviousSecretExpiresAt == nil {
		t.Errorf("rotation gave %q and previousSecretExpiresAt %v", newSecret, rotated.RotateWebhookSecret.Webhook.PreviousSecretExpiresAt)
	}

	// The list, as an admin's tool reads it: every webhook with its
	// deliveries, one Query for the list and one per webhook.
	hook2, _, err := createWebhook(s.admin, r.URL+"/second", []string{"author.updated"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := s.fetch(t, http.MethodPost, s.url, `{"query":"{ webhooks { `+strings.Join(strings.Fields(webhookFields), " ")+` } }"}`,
		map[string]string{"Authorization": "Bearer " + s.token(auth.RoleAdmin)})
	if raw.status != http.StatusOK {
		t.Fatalf("webhooks: %d %s", raw.status, raw.body)
	}
	if strings.Contains(raw.body, strings.TrimPrefix(secret, "whsec_")) || strings.Contains(raw.body, strings.TrimPrefix(newSecret, "whsec_")) || strings.Contains(raw.body, "whsec_") {
		t.Errorf("the list shows a secret: %s", raw.body)
	}
	if got := s.requests(); got["Query"] != 3 || total(got) != 3 {
		t.Errorf("requests of the list of 2 webhooks = %v, want 3 Queries", got)
	}
	var list struct {
		Data struct{ Webhooks []webhookJSON }
	}
	if err := json.Unmarshal([]byte(raw.body), &list); err != nil {
		t.Fatal(err)
	}
	if hs := list.Data.Webhooks; len(hs) != 2 || hs[0].ID != hook.ID || hs[1].ID != hook2.ID {
		t.Fatalf("webhooks = %+v", hs)
	}
	ds := list.Data.Webhooks[0].RecentDeliveries
	if len(ds) != 3 || ds[0].EventID != ev.ID || ds[0].Attempt != 2 || ds[1].EventID != ev.ID || ds[1].Attempt != 1 || ds[2].EventType != "webhook.ping" {
		t.Errorf("recent deliveries = %+v, want the redelivery, the delivery and the ping, newest first", ds)
	}
	for _, d := range ds {
		if d.StatusCode == nil || *d.StatusCode != 200 || d.Error != nil || d.NextAttemptAt != nil {
			t.Errorf("delivery %+v, want 200 without error or retry", d)
		}
	}

	var updated struct{ UpdateWebhook struct{ Webhook webhookJSON } }
	if err := gql(s.admin, `mutation($id: ID!) { updateWebhook(input: {id: $id, enabled: false, description: "", events: ["post.deleted"]}) { webhook { `+webhookFields+` } } }`,
		map[string]any{"id": hook.ID}, &updated); err != nil {
		t.Fatal(err)
	}
	if w := updated.UpdateWebhook.Webhook; w.Enabled || w.Description != nil || strings.Join(w.Events, ",") != "post.deleted" {
		t.Errorf("updated = %+v", w)
	}
	s.clock.Advance(time.Second)
	var deleted struct{ DeleteWebhook struct{ DeletedID string } }
	if err := gql(s.admin, `mutation($id: ID!) { deleteWebhook(input: {id: $id}) { deletedId } }`, map[string]any{"id": hook.ID}, &deleted); err != nil {
		t.Fatal(err)
	}
	equal(t, "deletedId", deleted.DeleteWebhook.DeletedID, hook.ID)
	err = gql(s.admin, `mutation($id: ID!) { deleteWebhook(input: {id: $id}) { deletedId } }`, map[string]any{"id": hook.ID}, &deleted)
	equal(t, "code of a second deletion", code(err), "NOT_FOUND")
	err = gql(s.admin, `mutation($id: ID!) { pingWebhook(input: {id: $id}) { delivery { attempt } } }`, map[string]any{"id": hook.ID}, &ping)
	equal(t, "code of a ping of a deleted webhook", code(err), "NOT_FOUND")
	s.consistent()
}
