package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/blogql/blog/storage"
)

// What admins do with webhooks (GraphQL's webhook mutations). Secrets are
// returned by Create and Rotate alone, once.

// Create creates an enabled webhook with in and a new secret, and returns
// both; the table keeps the secret sealed (seal.go). Bad input, the server's policy refusing the URL, or a webhook past
// storage.MaxWebhooks is a *storage.ValidationError, and nothing is
// written.
func (s *Service) Create(ctx context.Context, in storage.WebhookInput) (*storage.Webhook, string, error) {
	// Bad input reads and writes nothing, the sealing key included.
	if err := storage.ValidateWebhook(in, s.Policy(), true); err != nil {
		return nil, "", err
	}
	secret := NewSecret()
	sealed, err := s.sealSecret(ctx, secret)
	if err != nil {
		return nil, "", err
	}
	w, err := s.store.CreateWebhook(ctx, in, sealed, s.Policy())
	if err != nil {
		return nil, "", err
	}
	return w, secret, nil
}

// Update changes the webhook id as in says, under the server's policy.
func (s *Service) Update(ctx context.Context, id string, in storage.WebhookInput) (*storage.Webhook, error) {
	return s.store.UpdateWebhook(ctx, id, in, s.Policy())
}

// Rotate gives the webhook id a new secret and returns it; the old one
// signs beside it for opts.Grace.
func (s *Service) Rotate(ctx context.Context, id string) (*storage.Webhook, string, error) {
	secret := NewSecret()
	sealed, err := s.sealSecret(ctx, secret)
	if err != nil {
		return nil, "", err
	}
	w, err := s.store.RotateWebhookSecret(ctx, id, sealed, s.opts.Now().Add(s.opts.Grace))
	if err != nil {
		return nil, "", err
	}
	return w, secret, nil
}

// Ping sends a webhook.ping event to the webhook id now, enabled or not,
// and returns the attempt, which its history keeps. Requests: 1 GetItem,
// 1 PutItem.
func (s *Service) Ping(ctx context.Context, id string) (storage.DeliveryAttempt, error) {
	w, err := s.store.GetWebhook(ctx, id)
	if err != nil {
		return storage.DeliveryAttempt{}, err
	}
	now := s.opts.Now()
	r := make([]byte, 16)
	_, _ = rand.Read(r)
	eventID := "evt_" + hex.EncodeToString(r)
	body, err := json.Marshal(Payload{Type: EventPing, Timestamp: now.UTC(), Data: pingData{WebhookID: id}})
	if err != nil {
		return storage.DeliveryAttempt{}, err
	}
	secrets, err := s.secretsOf(ctx, w, now)
	if err != nil {
		return storage.DeliveryAttempt{}, err
	}
	a := s.post(ctx, w.URL, eventID, secrets, now, body)
	d := storage.DeliveryAttempt{WebhookID: id, EventID: eventID, EventType: EventPing, Attempt: 1, At: now,
		StatusCode: a.status, Duration: a.duration, Error: truncate(a.err, MaxErrorBytes)}
	if err := s.store.RecordDelivery(ctx, d); err != nil {
		return d, err
	}
	return d, nil
}

// Redeliver sends the event eventID to the webhook webhookID again, now,
// whatever became of its delivery, and returns the attempt; it is not
// retried. It returns storage.ErrNotFound when the outbox no longer has
// the delivery (storage.DeliveryRetention), and a
// *storage.ValidationError when the webhook is disabled. Requests: 2
// GetItem, the attempt's.
func (s *Service) Redeliver(ctx context.Context, webhookID, eventID string) (storage.DeliveryAttempt, error) {
	w, err := s.store.GetWebhook(ctx, webhookID)
	if err != nil {
		return storage.DeliveryAttempt{}, err
	}
	if !w.Enabled {
		return storage.DeliveryAttempt{}, &storage.ValidationError{Field: "webhookId", Reason: "the webhook is disabled; enable it first"}
	}
	o, err := s.store.GetOutbox(ctx, webhookID, eventID)
	if err != nil {
		return storage.DeliveryAttempt{}, fmt.Errorf("event %q of webhook %q: %w", eventID, webhookID, err)
	}
	return s.deliver(ctx, w, o, true), nil
}
