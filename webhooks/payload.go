package webhooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/blogql/blog/storage"
)

// EventPing is the type of the event pingWebhook sends; no webhook
// subscribes to it.
const EventPing storage.EventType = "webhook.ping"

// MaxBodyBytes bounds a delivery's body: events carry ids, slugs, paths
// and cache tags, never bodies (a receiver reads those from the API).
const MaxBodyBytes = 20 << 10

// scheduledSlack is how far after its write a post's publishedAt lies
// when it was scheduled, not published (storage.EventsOf's rule).
const scheduledSlack = 5 * time.Second

// Payload is the body of a delivery, as the Standard Webhooks
// specification shapes it.
type Payload struct {
	Type      storage.EventType `json:"type"`
	Timestamp time.Time         `json:"timestamp"`
	Data      any               `json:"data"`
}

// Public reports whether webhooks send e: only events about what the
// public API shows (storage.PublicEvents), and not the deletion of a post
// that was still scheduled, which no reader ever saw.
func Public(e storage.Event) bool {
	if !slices.Contains(storage.PublicEvents, e.Type) {
		return false
	}
	if e.Type == storage.EventPostDeleted && e.Data.PublishedAt.After(e.Time.Add(scheduledSlack)) {
		return false
	}
	return true
}

// Body returns the body of e's deliveries: its type, time and data, less
// what the public API does not show (the reader id behind a comment). It
// fails when the body would pass MaxBodyBytes.
func Body(e storage.Event) ([]byte, error) {
	d := e.Data
	d.ReaderID = ""
	b, err := json.Marshal(Payload{Type: e.Type, Timestamp: e.Time.UTC(), Data: d})
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.ID, err)
	}
	if len(b) > MaxBodyBytes {
		return nil, fmt.Errorf("event %s: a body of %d bytes passes %d", e.ID, len(b), MaxBodyBytes)
	}
	return b, nil
}

// pingData is the data of a ping.
type pingData struct {
	WebhookID string `json:"webhookId"`
}
