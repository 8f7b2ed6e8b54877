package storage

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The blog's keys are built in package keys; doc.go describes the layout.
// The items of the publication's change-feed consumers (webhooks and their
// outbox, the schedule) keep theirs here, in the publication's key space
// like every other item of a publication; the change feed's own items
// (leases, the event log) are global and live in package feedstore.

const (
	schedulePartition = "SCHEDULE"
	webhooksPartition = "WEBHOOKS"
	webhookCountSK    = "COUNT"
	outboxIndex       = "OUTBOX"
	prefixWebhook     = "WEBHOOK#"
	prefixOutbox      = "OUTBOX#"
	prefixDeliver     = "DELIVERY#"
)

// MaxRedirects is how many earlier slugs a post or an author keeps as
// redirects; a new one pushes out the oldest.
const MaxRedirects = 10

// key is the primary key of an item; item is an item as DynamoDB
// carries it (the table primitives' types).
type (
	key  = dynamo.Key
	item = dynamo.Item
)

// mapKeys returns the key f makes of each id, in order.
func mapKeys(ids []string, f func(string) key) []key {
	ks := make([]key, len(ids))
	for i, id := range ids {
		ks[i] = f(id)
	}
	return ks
}

// condVersion holds when the item's version is v.
func condVersion(v int64) expression.ConditionBuilder {
	return expression.Name("version").Equal(expression.Value(v))
}

func ptr[T any](v T) *T { return &v }

// keyTime is keys.Time, which the change feed's keys below use.
func keyTime(t time.Time) string { return keys.Time(t) }

// scheduleKey is the schedule item of the post postID, scheduled at the
// key time at: "<at>#<postId>" in the SCHEDULE partition, so the items
// that are due are one key range.
func scheduleKey(ks keys.Space, at, postID string) key {
	return key{PK: ks.Partition(schedulePartition), SK: at + "#" + postID}
}

// webhookKey is a webhook's item: every webhook in one partition, so the
// list is one Query.
func webhookKey(ks keys.Space, id string) key {
	return key{PK: ks.Partition(webhooksPartition), SK: prefixWebhook + id}
}

// webhookCountKey is the item that counts the webhooks.
func webhookCountKey(ks keys.Space) key {
	return key{PK: ks.Partition(webhooksPartition), SK: webhookCountSK}
}

// webhookPartition holds a webhook's outbox and delivery history.
func webhookPartition(ks keys.Space, id string) string { return ks.Partition(prefixWebhook + id) }

// outboxKey is the delivery of one event to one webhook: one item per
// pair, whatever the number of attempts, so writing it is idempotent.
func outboxKey(ks keys.Space, webhookID, eventID string) key {
	return key{PK: webhookPartition(ks, webhookID), SK: prefixOutbox + eventID}
}

// outboxDueKey orders a pending delivery in GSI1 partition OUTBOX by the
// time of its next attempt, so what is due is one Query.
func outboxDueKey(due time.Time, webhookID, eventID string) string {
	return keyTime(due) + "#" + webhookID + "#" + eventID
}

// deliveryKey is one attempt in a webhook's delivery history, newest last.
func deliveryKey(ks keys.Space, webhookID string, at time.Time, eventID string, attempt int) key {
	return key{PK: webhookPartition(ks, webhookID), SK: fmt.Sprintf("%s%s#%s#%03d", prefixDeliver, keyTime(at), eventID, attempt)}
}
