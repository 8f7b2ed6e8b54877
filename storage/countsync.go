package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The comment counts of a post's summaries follow its comments through
// the change feed (doccounts.go): the "counts" worker reads comment and
// post events, and syncs each post they name, at most once a
// CountSyncEvery, from its authoritative count.

// CountSyncEvery is how often at most the counts worker syncs one post:
// however many comments a post gets, each of its summaries gets at most
// one write in that time.
const CountSyncEvery = time.Second

// CountSyncTick is how often the counts worker looks for posts that are
// due.
const CountSyncTick = 100 * time.Millisecond

// CountSynced is what one sync of a post's counts did.
type CountSynced struct {
	// Comments and Threads are the authoritative counts it copied.
	Comments, Threads int
	// Wrote counts the items it updated (the post item and its copies);
	// Stale those it found changed since it read them (the next sync
	// reads them again).
	Wrote, Stale int
	// Began is when the counts worker began the sync, by its clock.
	Began time.Time
}

// SyncCounts copies the authoritative comment count of the post postID
// onto its post item and each of its copies that differs (one UpdateItem
// each, copies first, the post item last, so the post item's change, the
// one the change feed turns into post.counts.updated, comes after every
// copy's). Each update sets the counts alone, on the condition that the
// item exists and still has the counts read: a deleted copy is not
// written again, and a count changed meanwhile is left to the next sync
// (Stale). It reads the post item, its copies and the authoritative
// count, consistently, in that order (one BatchGetItem each). A post that
// is gone is no error. It fails when a read or a write fails.
func (s *Store) SyncCounts(ctx context.Context, postID string) (CountSynced, error) {
	did, errs := s.syncCounts(ctx, []string{postID})
	return did[0], errs[0]
}

// syncCounts syncs the posts ids as SyncCounts syncs one, with the reads
// of all of them together: their post items, then their copies, then
// their count items, each in as few BatchGetItem calls as DynamoDB allows
// (100 keys each), so the counts worker's reads do not grow with the posts
// a tick syncs. A read that fails fails every post's sync; a write fails
// its post's.
func (s *Store) syncCounts(ctx context.Context, ids []string) ([]CountSynced, []error) {
	did, errs := make([]CountSynced, len(ids)), make([]error, len(ids))
	failAll := func(err error) ([]CountSynced, []error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("sync counts of post %q: %w", ids[i], err)
			}
		}
		return did, errs
	}
	postKeys := make([]key, len(ids))
	for i, id := range ids {
		postKeys[i] = s.ks.Post(id)
	}
	found, err := s.db.BatchGet(ctx, postKeys, true)
	if err != nil {
		return failAll(err)
	}
	posts := make([]*postItem, len(ids)) // nil: gone, or failed
	var copyKeys, countKeys []key
	for i, id := range ids {
		var p postItem
		switch err := dynamo.DecodeFound(found, postKeys[i], &p); {
		case errors.Is(err, dynamo.ErrNotFound):
			continue
		case err != nil:
			errs[i] = fmt.Errorf("sync counts of post %q: %w", id, err)
			continue
		}
		posts[i] = &p
		copyKeys = append(copyKeys, p.copyKeys(s.ks)...)
		countKeys = append(countKeys, s.ks.PostCount(id))
	}
	if len(countKeys) == 0 {
		return did, errs
	}
	copies, err := s.db.BatchGet(ctx, copyKeys, true)
	if err != nil {
		return failAll(err)
	}
	// The counts are read after the copies: a comment counted on a copy
	// after the copy was read makes its update fail its condition rather
	// than take the copy back.
	counts, err := s.db.BatchGet(ctx, countKeys, true)
	if err != nil {
		return failAll(err)
	}
	for i, p := range posts {
		if p == nil {
			continue
		}
		var c countItem
		switch err := dynamo.DecodeFound(counts, s.ks.PostCount(ids[i]), &c); {
		case errors.Is(err, dynamo.ErrNotFound):
			continue // the post is gone
		case err != nil:
			errs[i] = fmt.Errorf("sync counts of post %q: %w", ids[i], err)
			continue
		}
		did[i], errs[i] = s.writeCounts(ctx, p, copies, int(c.CommentCount), int(c.ThreadCount))
	}
	return did, errs
}

// writeCounts makes the writes of one post's sync: comments and threads
// onto each of its copies in copies that differs, then onto its post
// item p.
func (s *Store) writeCounts(ctx context.Context, p *postItem, copies map[key]item, comments, threads int) (CountSynced, error) {
	out := CountSynced{Comments: comments, Threads: threads}
	for _, k := range p.copyKeys(s.ks) {
		it, ok := copies[k]
		if !ok {
			continue
		}
		var c struct {
			CommentCount int `dynamodbav:"commentCount"`
		}
		if err := attributevalue.UnmarshalMap(it, &c); err != nil {
			return out, fmt.Errorf("sync counts of post %q: decode copy %s/%s: %w", p.ID, k.PK, k.SK, err)
		}
		if c.CommentCount == comments {
			continue
		}
		if err := s.setCounts(ctx, k, c.CommentCount, comments, -1, -1, &out); err != nil {
			return out, fmt.Errorf("sync counts of post %q: copy %s/%s: %w", p.ID, k.PK, k.SK, err)
		}
	}
	if int(p.CommentCount) != comments || int(p.ThreadCount) != threads {
		if err := s.setCounts(ctx, s.ks.Post(p.ID), int(p.CommentCount), comments, int(p.ThreadCount), threads, &out); err != nil {
			return out, fmt.Errorf("sync counts of post %q: %w", p.ID, err)
		}
	}
	return out, nil
}

// setCounts sets the comment count of the item k from was to comments,
// and its thread count from wasThreads to threads unless threads is -1,
// on the condition that it exists with the counts it had, and counts the
// outcome in out.
func (s *Store) setCounts(ctx context.Context, k key, was, comments, wasThreads, threads int, out *CountSynced) error {
	upd := expression.Set(expression.Name("commentCount"), expression.Value(comments))
	cond := dynamo.CondExists().And(expression.Name("commentCount").Equal(expression.Value(was)))
	if threads >= 0 {
		// threadCount is omitempty: zero is no attribute.
		if threads == 0 {
			upd = upd.Remove(expression.Name("threadCount"))
		} else {
			upd = upd.Set(expression.Name("threadCount"), expression.Value(threads))
		}
		same := expression.Name("threadCount").Equal(expression.Value(wasThreads))
		if wasThreads == 0 {
			same = expression.Name("threadCount").AttributeNotExists().Or(same)
		}
		cond = cond.And(same)
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(k),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		out.Stale++
		return nil
	case err != nil:
		return err
	}
	out.Wrote++
	return nil
}

// CountSync is the counts worker's state on the server that holds its
// lease: the posts whose events it has read and not yet synced, and when
// it last synced each. Events, Tick and Hold are the change feed worker's
// (changefeed.Worker): Events notes the posts the events name and syncs
// those that are due, Tick syncs those that have become due, and Hold
// keeps the worker's checkpoint before the first event of a post not yet
// synced, so a restart or another server reads that event again. It is
// safe for concurrent use.
type CountSync struct {
	store *Store
	// OnSync, when set, is called after each sync of a post with what it
	// did or the error it met.
	OnSync func(postID string, did CountSynced, err error)
	// now is the clock of the coalescing (tests set it).
	now func() time.Time

	mu sync.Mutex
	// pending holds each post to sync, with the position of the first
	// event of it read since its last sync began.
	pending map[string]int64
	// last is when each post's last sync began, for CountSyncEvery.
	last map[string]time.Time
	// syncing serializes the syncs of Events and Tick.
	syncing sync.Mutex
}

// NewCountSync returns the counts worker's state, with nothing pending.
func (s *Store) NewCountSync() *CountSync {
	return &CountSync{store: s, now: time.Now, pending: map[string]int64{}, last: map[string]time.Time{}}
}

// countSyncEvents are the events after which a post's counts may be off on
// its summaries: a comment's, or a post write's, which writes the
// summaries with the count it read.
var countSyncEvents = []EventType{
	EventCommentAdded, EventCommentApproved, EventCommentDeleted, EventCommentRejected,
	EventPostPublished, EventPostEdited, EventPostUnpublished, EventPostScheduled,
	EventPostRescheduled, EventPostUnscheduled,
}

// Events notes the posts that events name and syncs those that are due.
// It returns the first error of a sync; what failed stays pending.
func (c *CountSync) Events(ctx context.Context, events []LoggedEvent) error {
	c.mu.Lock()
	for _, e := range events {
		if e.Data.PostID == "" || !slices.Contains(countSyncEvents, e.Type) {
			continue
		}
		if _, ok := c.pending[e.Data.PostID]; !ok {
			c.pending[e.Data.PostID] = e.Position
		}
	}
	c.mu.Unlock()
	return c.Tick(ctx)
}

// Tick syncs every pending post that is due: never synced, or last
// synced CountSyncEvery ago or more, their reads together (syncCounts).
// It returns the first error of a sync; the post that failed stays
// pending.
func (c *CountSync) Tick(ctx context.Context) error {
	c.syncing.Lock()
	defer c.syncing.Unlock()
	now := c.now()
	due := map[string]int64{}
	c.mu.Lock()
	for id, pos := range c.pending {
		if last, ok := c.last[id]; !ok || now.Sub(last) >= CountSyncEvery {
			due[id] = pos
			delete(c.pending, id)
			c.last[id] = now
		}
	}
	for id, last := range c.last {
		if _, ok := c.pending[id]; !ok && now.Sub(last) >= CountSyncEvery {
			delete(c.last, id)
		}
	}
	c.mu.Unlock()
	var first error
	for batch := range slices.Chunk(slices.Sorted(maps.Keys(due)), countSyncBatch) {
		dids, errs := c.store.syncCounts(ctx, batch)
		for i, id := range batch {
			did, err := dids[i], errs[i]
			did.Began = now
			if c.OnSync != nil {
				c.OnSync(id, did, err)
			}
			if err == nil && did.Stale == 0 {
				continue
			}
			// Failed, or an item changed while it synced: pending again,
			// from its first event, so the checkpoint stays before it.
			c.mu.Lock()
			if pos, ok := c.pending[id]; !ok || due[id] < pos {
				c.pending[id] = due[id]
			}
			c.mu.Unlock()
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// countSyncBatch is how many posts one syncCounts syncs: a BatchGetItem
// of their post items, one of their count items, and one for each 100 of
// their copies.
const countSyncBatch = 100

// Hold returns the position the worker's checkpoint may move to once it
// has read up to last: last, or just before the first event of a post
// that is pending.
func (c *CountSync) Hold(last int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pos := range c.pending {
		last = min(last, pos-1)
	}
	return last
}

// Pending returns how many posts wait for their sync.
func (c *CountSync) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// SyncAllCounts syncs the comment counts of every post in the table, as
// the counts worker syncs the posts its events name: one Scan of the
// table's keys (a request per 1 MB), then SyncCounts for each post. It is
// for a table written with no counts worker running (a test's store, a
// repair); it fails at the first read or write that fails.
func (s *Store) SyncAllCounts(ctx context.Context) error {
	proj := expression.NamesList(expression.Name(keys.AttrPK), expression.Name(keys.AttrSK), expression.Name("type"))
	expr, err := expression.NewBuilder().WithProjection(proj).Build()
	if err != nil {
		return err
	}
	var ids []string
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		for _, it := range page.Items {
			var head struct {
				PK, SK string
				Type   string `dynamodbav:"type"`
			}
			if err := attributevalue.UnmarshalMap(it, &head); err != nil {
				return err
			}
			if pk, _ := s.ks.Local(head.PK); head.Type == typePost && pk == head.SK {
				ids = append(ids, pk[len(keys.PrefixPost):])
			}
		}
	}
	for _, id := range ids {
		if _, err := s.SyncCounts(ctx, id); err != nil {
			return err
		}
	}
	return nil
}
