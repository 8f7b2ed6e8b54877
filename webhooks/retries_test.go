package webhooks_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// TestRetriesFollowTheScheduleThenGiveUp has an endpoint fail every
// attempt: each retry comes when the schedule says and not before, with
// the same webhook-id, until the delivery is given up about three days
// later and the webhook disabled with the reason.
func TestRetriesFollowTheScheduleThenGiveUp(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	r.status(http.StatusInternalServerError)
	w, _ := e.create(r.URL, storage.EventPostPublished)
	ev := e.published("a")
	begin := e.clock.Now()
	e.handle(ev)

	for i, delay := range webhooks.Schedule {
		if n := len(r.deliveries()); n != i+1 {
			t.Fatalf("%d attempts before retry %d, want %d", n, i+1, i+1)
		}
		e.clock.Advance(delay - time.Second)
		e.retry(e.hooks)
		if n := len(r.deliveries()); n != i+1 {
			t.Fatalf("retry %d came %s after the attempt before it, before its %s", i+1, delay-time.Second, delay)
		}
		e.clock.Advance(time.Second)
		e.retry(e.hooks)
	}
	got := r.deliveries()
	if len(got) != webhooks.MaxAttempts {
		t.Fatalf("%d attempts, want %d", len(got), webhooks.MaxAttempts)
	}
	for _, d := range got {
		if d.header.Get("webhook-id") != ev.ID {
			t.Fatalf("an attempt has webhook-id %q, want %q", d.header.Get("webhook-id"), ev.ID)
		}
	}
	if total := e.clock.Now().Sub(begin); total < 60*time.Hour || total > 80*time.Hour {
		t.Errorf("given up after %s, want about three days", total)
	}
	e.clock.Advance(24 * time.Hour)
	e.retry(e.hooks)
	if n := len(r.deliveries()); n != webhooks.MaxAttempts {
		t.Errorf("%d attempts after it was given up", n)
	}
	ctx := context.Background()
	o, err := e.store.GetOutbox(ctx, w.ID, ev.ID)
	if err != nil || o.State != storage.OutboxFailed || o.LastStatus != 500 {
		t.Errorf("outbox = %s %d, %v; want FAILED with 500", o.State, o.LastStatus, err)
	}
	h, err := e.store.GetWebhook(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h.Enabled || !strings.Contains(h.DisabledReason, "failed") {
		t.Errorf("webhook enabled %v, reason %q; want disabled with the reason", h.Enabled, h.DisabledReason)
	}
	ds, err := e.store.RecentDeliveries(ctx, w.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != webhooks.MaxAttempts || ds[0].Attempt != webhooks.MaxAttempts || !ds[0].NextAttemptAt.IsZero() ||
		ds[len(ds)-1].Attempt != 1 || ds[len(ds)-1].NextAttemptAt != begin.Add(webhooks.Schedule[0]) {
		t.Errorf("history = %+v, want every attempt newest first, the next attempt of each but the last", ds)
	}
	e.consistent()
}

// TestAnEndpointThatSucceedsMeanwhileStaysEnabled gives up on one event
// while the endpoint took others: only an endpoint that failed all along
// is disabled.
func TestAnEndpointThatSucceedsMeanwhileStaysEnabled(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	w, _ := e.create(r.URL, storage.EventPostPublished)
	r.answerWith(func(rw http.ResponseWriter) { rw.WriteHeader(http.StatusBadRequest) })
	e.handle(e.published("a"))
	r.status(http.StatusOK)
	e.clock.Advance(time.Minute)
	e.handle(e.published("b"))
	r.status(http.StatusBadRequest)
	for _, d := range webhooks.Schedule {
		e.clock.Advance(d)
		e.retry(e.hooks)
	}
	h, err := e.store.GetWebhook(context.Background(), w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Enabled {
		t.Errorf("webhook disabled (%q) though its endpoint took an event meanwhile", h.DisabledReason)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			e := newEnv(t)
			r := newReceiver(t)
			r.status(code, "Retry-After", "3600")
			e.create(r.URL, storage.EventPostPublished)
			e.handle(e.published("a"))
			r.status(http.StatusOK)
			e.clock.Advance(webhooks.Schedule[0])
			e.retry(e.hooks)
			if n := len(r.deliveries()); n != 1 {
				t.Fatalf("retried after %s, before Retry-After's hour", webhooks.Schedule[0])
			}
			e.clock.Advance(time.Hour)
			e.retry(e.hooks)
			if n := len(r.deliveries()); n != 2 {
				t.Fatalf("%d attempts an hour later, want 2", n)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		e := newEnv(t)
		r := newReceiver(t)
		r.status(http.StatusServiceUnavailable, "Retry-After", "999999999")
		e.create(r.URL, storage.EventPostPublished)
		e.handle(e.published("a"))
		e.clock.Advance(10 * time.Hour)
		e.retry(e.hooks)
		if n := len(r.deliveries()); n != 2 {
			t.Fatalf("%d attempts 10 hours later, want 2: Retry-After is bounded", n)
		}
	})
}

func TestGoneDisablesTheWebhook(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	r.status(http.StatusGone)
	w, _ := e.create(r.URL, storage.EventPostPublished, storage.EventPostEdited)
	e.handle(e.published("a"))
	ctx := context.Background()
	h, err := e.store.GetWebhook(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h.Enabled || !strings.Contains(h.DisabledReason, "410") {
		t.Fatalf("webhook enabled %v, reason %q; want disabled for 410", h.Enabled, h.DisabledReason)
	}
	e.clock.Advance(time.Hour)
	e.retry(e.hooks)
	e.handle(e.published("b"))
	if n := len(r.deliveries()); n != 1 {
		t.Errorf("%d deliveries, want none after the 410", n)
	}
	enabled := true
	if _, err := e.hooks.Update(ctx, w.ID, storage.WebhookInput{Enabled: &enabled}); err != nil {
		t.Fatal(err)
	}
	if h, _ := e.store.GetWebhook(ctx, w.ID); !h.Enabled || h.DisabledReason != "" {
		t.Errorf("enabled again: %v, reason %q", h.Enabled, h.DisabledReason)
	}
	e.consistent()
}

func TestRotatedSecretsBothSignDuringTheGrace(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	w, old := e.create(r.URL, storage.EventPostPublished)
	ctx := context.Background()
	_, fresh, err := e.hooks.Rotate(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("rotated secret %q", fresh)
	}
	e.handle(e.published("a"))
	e.clock.Advance(webhooks.DefaultGrace)
	e.handle(e.published("b"))
	got := r.deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}
	if !verify(t, got[0], old) || !verify(t, got[0], fresh) || len(strings.Fields(got[0].header.Get("webhook-signature"))) != 2 {
		t.Errorf("during the grace, signature %q does not verify with both secrets", got[0].header.Get("webhook-signature"))
	}
	if verify(t, got[1], old) || !verify(t, got[1], fresh) {
		t.Errorf("after the grace, signature %q: want the new secret's alone", got[1].header.Get("webhook-signature"))
	}
}

func TestRedeliverAndPing(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	w, secret := e.create(r.URL, storage.EventPostPublished)
	ev := e.published("a")
	e.handle(ev)
	ctx := context.Background()
	d, err := e.hooks.Redeliver(ctx, w.ID, ev.ID)
	if err != nil || d.StatusCode != http.StatusNoContent || d.Attempt != 2 {
		t.Fatalf("redelivery = %+v, %v", d, err)
	}
	p, err := e.hooks.Ping(ctx, w.ID)
	if err != nil || p.StatusCode != http.StatusNoContent || p.EventType != webhooks.EventPing {
		t.Fatalf("ping = %+v, %v", p, err)
	}
	got := r.deliveries()
	if len(got) != 3 || got[1].header.Get("webhook-id") != ev.ID || string(got[1].body) != string(got[0].body) {
		t.Fatalf("the redelivery is not the same message with the same webhook-id")
	}
	if !verify(t, got[2], secret) || !strings.Contains(string(got[2].body), `"type":"webhook.ping"`) {
		t.Errorf("ping body %s", got[2].body)
	}
	if _, err := e.hooks.Redeliver(ctx, w.ID, "evt_none"); err == nil {
		t.Error("redelivering an event never sent succeeded")
	}
	e.consistent()
}
