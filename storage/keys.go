package storage

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Every key of the table is built here; doc.go describes the layout.

const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	indexGSI1  = "GSI1"

	prefixAuthor  = "AUTHOR#"
	prefixPost    = "POST#"
	prefixCat     = "CAT#"
	prefixComment = "COMMENT#"
	prefixThread  = "THREAD#"
	prefixSlug    = "SLUG#"
	prefixDraft   = "DRAFT#"
	prefixFeed    = "FEED#"
	prefixIdem    = "IDEMPOTENCY#"
	prefixSecret  = "SECRET#"
	prefixReader  = "READER#"
	prefixHeld    = "HELD#"
	prefixRate    = "RATE#"
	prefixQueue   = "MODQ#"
	prefixWebhook = "WEBHOOK#"
	prefixOutbox  = "OUTBOX#"
	prefixDeliver = "DELIVERY#"
	prefixPersist = "PERSISTED#"

	// feedPartition is the GSI1 partition of the whole blog's feed: one,
	// as a blog publishes far below a partition's write limit.
	feedPartition = "FEED"

	authorsPartition    = "AUTHORS"
	categoriesPartition = "CATEGORIES"
	statsKey            = "STATS"
	queuePartition      = "MODQ"
	layoutPartition     = "LAYOUT"
	schedulePartition   = "SCHEDULE"
	webhooksPartition   = "WEBHOOKS"
	rendererPartition   = "RENDERER"
	webhookCountSK      = "COUNT"
	outboxIndex         = "OUTBOX"

	// legacyFeedShards is how many GSI1 partitions (FEED#0..3) the feed
	// was spread over before layout 4 (Migrate moves them to FEED).
	legacyFeedShards = 4

	// keyTimeLayout is fixed-width UTC, so string order is time order.
	keyTimeLayout = "2006-01-02T15:04:05.000Z"
)

const (
	// prefixAuthorSlug is the namespace of authors' slugs: an author and a
	// post may have the same slug, as their URLs differ.
	prefixAuthorSlug = "AUTHORSLUG#"
	// attrMonthPrefix starts the names of the attributes that count posts
	// by month (monthAttr).
	attrMonthPrefix = "month#"
	// MaxRedirects is how many earlier slugs a post or an author keeps as
	// redirects; a new one pushes out the oldest.
	MaxRedirects = 10
)

// Featured posts, series and revisions (featured.go, series.go,
// revisions.go).
const (
	featuredPartition = "FEATURED"
	featuredSK        = "FEATURED"
	prefixSeries      = "SERIES#"
	seriesPartition   = "SERIES"
	prefixRevision    = "REV#"
)

// featuredCopyKey is the featured-list copy of a published featured post.
func featuredCopyKey(postID string) key { return key{PK: prefixPost + postID, SK: featuredSK} }

// seriesKey is a series' item.
func seriesKey(slug string) key { return key{PK: prefixSeries + slug, SK: prefixSeries + slug} }

// revisionKey is the revision n of a post: fixed width, so the newest
// sorts last.
func revisionKey(postID string, n int64) key {
	return key{PK: prefixPost + postID, SK: fmt.Sprintf("%s%010d", prefixRevision, n)}
}

// key is the primary key of an item; item is an item as DynamoDB
// carries it (the table primitives' types).
type (
	key  = dynamo.Key
	item = dynamo.Item
)

// mapKeys returns the key f makes of each id, in order.
func mapKeys(ids []string, f func(string) key) []key {
	keys := make([]key, len(ids))
	for i, id := range ids {
		keys[i] = f(id)
	}
	return keys
}

// condVersion holds when the item's version is v.
func condVersion(v int64) expression.ConditionBuilder {
	return expression.Name("version").Equal(expression.Value(v))
}

func ptr[T any](v T) *T { return &v }

// rendererKey is the renderer item (rerender.go).
func rendererKey() key { return key{PK: rendererPartition, SK: rendererPartition} }

func keyTime(t time.Time) string { return t.UTC().Format(keyTimeLayout) }

func authorKey(id string) key { return key{PK: prefixAuthor + id, SK: prefixAuthor + id} }

func postKey(id string) key { return key{PK: prefixPost + id, SK: prefixPost + id} }

func categoryKey(slug string) key { return key{PK: prefixCat + slug, SK: prefixCat + slug} }

func slugKey(slug string) key { return key{PK: prefixSlug + slug, SK: prefixSlug + slug} }

func authorSlugKey(slug string) key {
	return key{PK: prefixAuthorSlug + slug, SK: prefixAuthorSlug + slug}
}

func statsItemKey() key { return key{PK: statsKey, SK: statsKey} }

func secretKey(name string) key { return key{PK: prefixSecret + name, SK: prefixSecret + name} }

// layoutKey is the item that records the version of the table's layout.
func layoutKey() key { return key{PK: layoutPartition, SK: layoutPartition} }

// scheduleKey is the schedule item of the post postID, scheduled at the
// key time at: "<at>#<postId>" in the SCHEDULE partition, so the items
// that are due are one key range.
func scheduleKey(at, postID string) key { return key{PK: schedulePartition, SK: at + "#" + postID} }

// readerKey is where a reader's display name and picture are kept. Reader
// ids are token subjects, a namespace apart from author ids.
func readerKey(id string) key { return key{PK: prefixReader + id, SK: prefixReader + id} }

// rateKey is where a reader's latest comments are counted.
func rateKey(readerID string) key {
	return key{PK: prefixRate + prefixReader + readerID, SK: prefixRate + prefixReader + readerID}
}

// persistedKey is where the automatic persisted query of a SHA-256 hash
// (64 hexadecimal digits) is kept.
func persistedKey(hash string) key { return key{PK: prefixPersist + hash, SK: prefixPersist + hash} }

func idempotencyKey(op, k string) key {
	return key{PK: prefixIdem + op + "#" + k, SK: prefixIdem + op + "#" + k}
}

// postSortKey orders a post by publish time inside author, category and
// feed partitions: "POST#<publishedAt>#<postId>".
func postSortKey(publishedAt time.Time, id string) string {
	return prefixPost + keyTime(publishedAt) + "#" + id
}

// authorCopyKey is the author→post copy of a published post.
func authorCopyKey(authorID string, publishedAt time.Time, postID string) key {
	return key{PK: prefixAuthor + authorID, SK: postSortKey(publishedAt, postID)}
}

// categoryCopyKey is the post-in-category copy of a published post.
func categoryCopyKey(postID, slug string) key {
	return key{PK: prefixPost + postID, SK: prefixCat + slug}
}

func categoryPartition(slug string) string { return prefixCat + slug }

func draftPartition(authorID string) string { return prefixDraft + authorID }

func draftSortKey(createdAt time.Time, postID string) string {
	return prefixDraft + keyTime(createdAt) + "#" + postID
}

// feedPartitions are the GSI1 partitions of the whole blog's feed: one
// (FEED), whose reads are one Query.
var feedPartitions = []string{feedPartition}

// legacyFeedPartitions are the feed's partitions before layout 4.
func legacyFeedPartitions() []string {
	out := make([]string, legacyFeedShards)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefixFeed, i)
	}
	return out
}

// monthAttr is the attribute of an author, a category or STATS that counts
// its posts published in the month of publishedAt (a key time): one
// top-level attribute per month, which ADD creates when it is missing.
func monthAttr(publishedAt string) string { return attrMonthPrefix + publishedAt[:len("2006-01")] }

func authorListSortKey(createdAt time.Time, id string) string {
	return prefixAuthor + keyTime(createdAt) + "#" + id
}

// commentKey is where a comment lives. A top-level comment sorts by its own
// time under COMMENT#; a reply sorts under THREAD#<parent>, so all replies
// of a page of top-level comments are one contiguous key range.
func commentKey(postID string, c commentID) key {
	if c.parent == nil {
		return key{PK: prefixPost + postID, SK: prefixComment + c.sortPart()}
	}
	return key{PK: prefixPost + postID, SK: prefixThread + c.parent.sortPart() + "#" + c.sortPart()}
}

// heldKey is where a comment lives while it is held (pending or
// rejected): beside the post's comments but outside their COMMENT# and
// THREAD# ranges, so no public list reads it.
// commentKeys returns the keys of the items a write of comment c reads
// together: where it is published and where it is held, and its parent's
// when it is a reply.
func commentKeys(postID string, c commentID) []key {
	keys := []key{commentKey(postID, c), heldKey(postID, c)}
	if c.parent != nil {
		keys = append(keys, commentKey(postID, *c.parent))
	}
	return keys
}

func heldKey(postID string, c commentID) key {
	return key{PK: prefixPost + postID, SK: prefixHeld + keyTime(c.created) + "#" + c.String()}
}

// queueSortKey orders a pending comment in the moderation queues by the
// time it was written.
func queueSortKey(postID string, c commentID) string {
	return keyTime(c.created) + "#" + postID + "#" + c.String()
}

// queueEntryKey is the copy of a pending comment in the admins' queue.
func queueEntryKey(postID string, c commentID) key {
	return key{PK: queuePartition, SK: queueSortKey(postID, c)}
}

// queueKeyOfHeld returns the admins' queue entry of the held comment of
// postID whose sort key is sk, or false when sk is not one.
func queueKeyOfHeld(postID, sk string) (key, bool) {
	_, id, ok := strings.Cut(strings.TrimPrefix(sk, prefixHeld), "#")
	if !ok || !strings.HasPrefix(sk, prefixHeld) {
		return key{}, false
	}
	c, err := parseCommentID(id)
	if err != nil {
		return key{}, false
	}
	return queueEntryKey(postID, c), true
}

// authorQueue is the GSI1 partition of the pending comments on an
// author's posts.
func authorQueue(authorID string) string { return prefixQueue + authorID }

// threadPrefix is the common prefix of every reply to a top-level comment.
func threadPrefix(parent commentID) string {
	return prefixThread + parent.sortPart() + "#"
}

// commentID is a parsed comment id. A comment id carries its creation time
// so that its key can be built from the id alone: "<unixMilli>-<random>" for
// a top-level comment and "<parentId>.<unixMilli>-<random>" for a reply.
type commentID struct {
	created time.Time
	random  string
	parent  *commentID
}

func (c commentID) own() string {
	return fmt.Sprintf("%013d-%s", c.created.UnixMilli(), c.random)
}

func (c commentID) String() string {
	if c.parent != nil {
		return c.parent.own() + "." + c.own()
	}
	return c.own()
}

func (c commentID) sortPart() string { return keyTime(c.created) + "#" + c.own() }

func parseCommentID(s string) (commentID, error) {
	parentPart, ownPart, isReply := strings.Cut(s, ".")
	if !isReply {
		return parseOwnCommentID(s)
	}
	parent, err := parseOwnCommentID(parentPart)
	if err != nil {
		return commentID{}, err
	}
	c, err := parseOwnCommentID(ownPart)
	if err != nil {
		return commentID{}, err
	}
	c.parent = &parent
	return c, nil
}

func parseOwnCommentID(s string) (commentID, error) {
	var ms int64
	var random string
	millis, random, ok := strings.Cut(s, "-")
	if !ok || len(millis) != 13 || random == "" || len(random) > 32 || !isLowerHex(random) {
		return commentID{}, &ValidationError{Field: "commentId", Reason: "is not a comment id"}
	}
	for _, r := range millis {
		if r < '0' || r > '9' {
			return commentID{}, &ValidationError{Field: "commentId", Reason: "is not a comment id"}
		}
		ms = ms*10 + int64(r-'0')
	}
	return commentID{created: time.UnixMilli(ms).UTC(), random: random}, nil
}

func isLowerHex(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// webhookKey is a webhook's item: every webhook in one partition, so the
// list is one Query.
func webhookKey(id string) key { return key{PK: webhooksPartition, SK: prefixWebhook + id} }

// webhookCountKey is the item that counts the webhooks.
func webhookCountKey() key { return key{PK: webhooksPartition, SK: webhookCountSK} }

// webhookPartition holds a webhook's outbox and delivery history.
func webhookPartition(id string) string { return prefixWebhook + id }

// outboxKey is the delivery of one event to one webhook: one item per
// pair, whatever the number of attempts, so writing it is idempotent.
func outboxKey(webhookID, eventID string) key {
	return key{PK: webhookPartition(webhookID), SK: prefixOutbox + eventID}
}

// outboxDueKey orders a pending delivery in GSI1 partition OUTBOX by the
// time of its next attempt, so what is due is one Query.
func outboxDueKey(due time.Time, webhookID, eventID string) string {
	return keyTime(due) + "#" + webhookID + "#" + eventID
}

// deliveryKey is one attempt in a webhook's delivery history, newest last.
func deliveryKey(webhookID string, at time.Time, eventID string, attempt int) key {
	return key{PK: webhookPartition(webhookID), SK: fmt.Sprintf("%s%s#%s#%03d", prefixDeliver, keyTime(at), eventID, attempt)}
}

// Static pages and site settings (pages.go, site.go).
const (
	prefixPage          = "PAGE#"
	pagesPartition      = "PAGES"
	pageDraftsPartition = "PAGEDRAFTS"
	sitePartition       = "SITE"
)

func pageKey(id string) key { return key{PK: prefixPage + id, SK: prefixPage + id} }

// pageSortKey orders pages in GSI1 by order (five digits: MaxPageOrder),
// then id (creation time: ids are UUIDv7).
func pageSortKey(order int, id string) string { return fmt.Sprintf("%s%05d#%s", prefixPage, order, id) }

// siteKey is the site settings' item.
func siteKey() key { return key{PK: sitePartition, SK: sitePartition} }

// Tags (tags.go): a tag item per tag, listed in GSI1 partition TAGS, and a
// post-in-tag copy per tag of a published post, listed in GSI1 under
// TAG#<slug> as category copies are under CAT#<slug>.
const (
	prefixTag     = "TAG#"
	tagsPartition = "TAGS"
)

func tagKey(slug string) key { return key{PK: prefixTag + slug, SK: prefixTag + slug} }

// tagCopyKey is the post-in-tag copy of a published post.
func tagCopyKey(postID, slug string) key { return key{PK: prefixPost + postID, SK: prefixTag + slug} }

func tagPartition(slug string) string { return prefixTag + slug }
