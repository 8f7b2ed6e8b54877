package graph

import (
	"context"
	"strings"
	"time"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// Webhooks are admins' alone: every field and mutation checks admin()
// before it reads or writes. Their secrets are answered by createWebhook
// and rotateWebhookSecret only; no field shows one afterwards. A webhook's
// global id is of the kind Webhook, which node() does not serve.

// kindWebhook is the kind of a webhook's global id.
const kindWebhook kind = "Webhook"

// defaultDeliveries is how many recent deliveries a webhook lists when
// the query does not say.
const defaultDeliveries = 20

func webhookGID(id string) string { return encodeID(kindWebhook, id) }

// decodeWebhookID returns the webhook id of the global id s, or a
// *storage.ValidationError on field.
func decodeWebhookID(field, s string) (string, error) {
	bad := &storage.ValidationError{Field: field, Reason: "is not a Webhook id"}
	if len(s) > maxGlobalIDLen {
		return "", bad
	}
	raw, err := idEncoding.DecodeString(s)
	if err != nil || idEncoding.EncodeToString(raw) != s {
		return "", bad
	}
	k, id, ok := strings.Cut(string(raw), ":")
	if !ok || kind(k) != kindWebhook || !storage.ValidWebhookID(id) {
		return "", bad
	}
	return id, nil
}

func eventTypes(names []string) []storage.EventType {
	if names == nil {
		return nil
	}
	out := make([]storage.EventType, len(names))
	for i, n := range names {
		out[i] = storage.EventType(n)
	}
	return out
}

func (r *Resolver) listWebhooks(ctx context.Context) ([]*storage.Webhook, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	return r.store.Webhooks(ctx)
}

func (r *Resolver) createWebhook(ctx context.Context, in model.CreateWebhookInput) (*model.CreateWebhookPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	events := eventTypes(in.Events)
	if events == nil {
		events = []storage.EventType{}
	}
	w, secret, err := r.webhooks.Create(ctx, storage.WebhookInput{URL: &in.URL, Events: events, Description: in.Description})
	if err != nil {
		return nil, err
	}
	return &model.CreateWebhookPayload{Webhook: w, Secret: secret}, nil
}

func (r *Resolver) updateWebhook(ctx context.Context, in model.UpdateWebhookInput) (*model.UpdateWebhookPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeWebhookID("id", in.ID)
	if err != nil {
		return nil, err
	}
	w, err := r.webhooks.Update(ctx, id, storage.WebhookInput{URL: in.URL, Events: eventTypes(in.Events),
		Description: in.Description, Enabled: in.Enabled})
	if err != nil {
		return nil, err
	}
	return &model.UpdateWebhookPayload{Webhook: w}, nil
}

func (r *Resolver) deleteWebhook(ctx context.Context, in model.DeleteWebhookInput) (*model.DeleteWebhookPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeWebhookID("id", in.ID)
	if err != nil {
		return nil, err
	}
	if err := r.store.DeleteWebhook(ctx, id); err != nil {
		return nil, err
	}
	return &model.DeleteWebhookPayload{DeletedID: in.ID}, nil
}

func (r *Resolver) rotateWebhookSecret(ctx context.Context, in model.RotateWebhookSecretInput) (*model.RotateWebhookSecretPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeWebhookID("id", in.ID)
	if err != nil {
		return nil, err
	}
	w, secret, err := r.webhooks.Rotate(ctx, id)
	if err != nil {
		return nil, err
	}
	return &model.RotateWebhookSecretPayload{Webhook: w, Secret: secret}, nil
}

func (r *Resolver) redeliverWebhookEvent(ctx context.Context, in model.RedeliverWebhookEventInput) (*model.RedeliverWebhookEventPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeWebhookID("webhookId", in.WebhookID)
	if err != nil {
		return nil, err
	}
	d, err := r.webhooks.Redeliver(ctx, id, in.EventID)
	if err != nil {
		return nil, err
	}
	return &model.RedeliverWebhookEventPayload{Delivery: &d}, nil
}

func (r *Resolver) pingWebhook(ctx context.Context, in model.PingWebhookInput) (*model.PingWebhookPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeWebhookID("id", in.ID)
	if err != nil {
		return nil, err
	}
	d, err := r.webhooks.Ping(ctx, id)
	if err != nil {
		return nil, err
	}
	return &model.PingWebhookPayload{Delivery: &d}, nil
}

// recentDeliveries lists a webhook's latest attempts: one Query per
// webhook, which gqlgen runs for the webhooks of a list at once.
func (r *Resolver) recentDeliveries(ctx context.Context, w *storage.Webhook, first *int) ([]*storage.DeliveryAttempt, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	n := defaultDeliveries
	if first != nil {
		n = *first
	}
	if n < 1 || n > storage.MaxPageSize {
		return nil, &storage.ValidationError{Field: "first", Reason: "must be between 1 and 100"}
	}
	ds, err := r.store.RecentDeliveries(ctx, w.ID, n)
	if err != nil {
		return nil, err
	}
	out := make([]*storage.DeliveryAttempt, len(ds))
	for i := range ds {
		out[i] = &ds[i]
	}
	return out, nil
}

// optTime returns a pointer to t, or nil for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// newWebhooks returns the service opts gives, or one that allows nothing
// unsafe.
func newWebhooks(store *storage.Store, s *webhooks.Service) *webhooks.Service {
	if s != nil {
		return s
	}
	return webhooks.New(store, webhooks.Options{})
}
