package webhooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/blogql/blog/frontend"
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
// what the public API does not show (the reader id behind a comment),
// with the GraphQL ids of what its ids name (graphqlIds). It fails when
// the body would pass MaxBodyBytes.
func Body(e storage.Event) ([]byte, error) {
	d := e.Data
	d.ReaderID = ""
	b, err := json.Marshal(Payload{Type: e.Type, Timestamp: e.Time.UTC(), Data: data{d, graphQLIDsOf(d)}})
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.ID, err)
	}
	if len(b) > MaxBodyBytes {
		return nil, fmt.Errorf("event %s: a body of %d bytes passes %d", e.ID, len(b), MaxBodyBytes)
	}
	return b, nil
}

// data is the data of an event's delivery: the event's, and the GraphQL
// ids of its post, author, comment, parent comment, page and co-authors.
type data struct {
	storage.EventData
	GraphQLIDs *graphQLIDs `json:"graphqlIds,omitempty"`
}

// graphQLIDs are the global ids (frontend.GlobalID) of the ids of an
// event's data, each under the name of the raw id it encodes: what
// GraphQL answers show as id, so that a frontend matches a delivery with
// the objects it read. GraphQL's id arguments take either.
type graphQLIDs struct {
	PostID    string   `json:"postId,omitempty"`
	AuthorID  string   `json:"authorId,omitempty"`
	CoAuthors []string `json:"coAuthors,omitempty"`
	CommentID string   `json:"commentId,omitempty"`
	ParentID  string   `json:"parentId,omitempty"`
	PageID    string   `json:"pageId,omitempty"`
}

// graphQLIDsOf returns the global ids of d's ids, or nil when it has
// none.
func graphQLIDsOf(d storage.EventData) *graphQLIDs {
	var ids graphQLIDs
	if d.PostID != "" {
		ids.PostID = frontend.PostGlobalID(d.PostID)
		if d.CommentID != "" {
			ids.CommentID = frontend.CommentGlobalID(d.PostID, d.CommentID)
		}
		if d.ParentID != "" {
			ids.ParentID = frontend.CommentGlobalID(d.PostID, d.ParentID)
		}
	}
	if d.AuthorID != "" {
		ids.AuthorID = frontend.AuthorGlobalID(d.AuthorID)
	}
	for _, a := range d.CoAuthors {
		ids.CoAuthors = append(ids.CoAuthors, frontend.AuthorGlobalID(a))
	}
	if d.PageID != "" {
		ids.PageID = frontend.PageGlobalID(d.PageID)
	}
	if ids.PostID == "" && ids.AuthorID == "" && ids.PageID == "" && ids.CoAuthors == nil {
		return nil
	}
	return &ids
}

// pingData is the data of a ping.
type pingData struct {
	WebhookID string `json:"webhookId"`
}
