package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// A publication's quotas of posts and webhook subscriptions. Each is kept
// by a counter item in the publication's space, which the transaction
// that creates a post or a webhook adds one to under the condition that
// the count stays within the quota, and the one that deletes it takes one
// from: concurrent creates never pass a quota, and each create or delete
// costs one action more (the counter is a small item: 2 write units in a
// transaction). A post counts from its creation as a draft to its
// deletion, whatever its status: every post takes room in the table.
//
// The posts' counter is keys.PostUsage, attribute posts; the webhooks'
// is the webhooks' count item (webhookCountKey), attribute count. The
// publication's own limit, set by a platform admin, is kept on the
// counter it bounds (postsMax, webhooksMax: 0 bounds nothing), so the
// condition needs no read; without one, the Store's default
// (WithPublicationQuota) is the bound, written into the condition.
//
// createPublication puts a new publication's counter at 0. A
// publication written before the posts' counter existed (and a table's
// default publication) has none: a post
// write requires it (attribute_exists(posts)), and the first one to find
// it missing counts the publication's posts (initPostUsage) and puts it,
// on the condition that it is still missing, then writes again. No post
// is created or deleted while it is missing, so the count is exact but
// for what GSI1 had not yet shown of the writes just before (the check
// "post quota" reports a counter that drifted).

// Every create and delete of a publication's posts writes its one
// counter item, so concurrent ones meet there: DynamoDB cancels a
// transaction on an item another one is writing (TransactionConflict),
// and without more, at 16 concurrent creates most attempts are cancelled
// and some creates run out of retries (UNAVAILABLE). A server lets one
// of its post writes at a time that change the counter send its
// transaction (counterGate, one a publication in the Store's
// publication state): its own writes queue in the process instead of
// cancelling each other, and only writes from other servers still
// conflict, retried by the transaction. The gate is no lock on the data:
// the counter's condition bounds the count whatever the servers, the
// gate only spares them the cancelled attempts. A publication's post
// writes are then bounded by one transaction's latency (about 100 a
// second at 10 ms) a server, well under the counter item's 1,000 write
// units a second (500 transactional updates).

// PublicationQuota bounds a publication's posts and webhook
// subscriptions; a zero field bounds nothing.
type PublicationQuota struct {
	Posts    int64
	Webhooks int64
}

// WithPublicationQuota bounds the posts and webhooks of every publication
// that has no limit of its own (SetPublicationLimits).
func WithPublicationQuota(q PublicationQuota) Option {
	return func(s *Store) { s.quota = q }
}

// PublicationLimits is the input of SetPublicationLimits. A nil field
// leaves that limit as it is; a value sets the publication's own (0: no
// bound); DefaultPosts or DefaultWebhooks drops it, back to the
// platform's default.
type PublicationLimits struct {
	Posts           *int64
	Webhooks        *int64
	DefaultPosts    bool
	DefaultWebhooks bool
}

// PublicationUsage is what a publication holds of what its quotas bound,
// and the quotas in force (a zero limit bounds nothing).
type PublicationUsage struct {
	Posts    int64
	Webhooks int64
	Limits   PublicationQuota
}

const (
	typePostUsage   = "postUsage"
	attrPosts       = "posts"
	attrPostsMax    = "postsMax"
	attrWebhooksMax = "webhooksMax"
)

// errPostCounter is the failure of a post write's counter action: the
// counter is missing, or the quota is reached (postQuotaError tells).
var errPostCounter = errors.New("the posts' counter refused the write")

// postUsageItem is the posts' counter; Posts is nil until it is counted.
type postUsageItem struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Type     string `dynamodbav:"type"`
	Posts    *int64 `dynamodbav:"posts,omitempty"`
	PostsMax *int64 `dynamodbav:"postsMax,omitempty"`
}

// limit returns the bound in force: own when set, else dflt.
func limit(own *int64, dflt int64) int64 {
	if own != nil {
		return *own
	}
	return dflt
}

// withinQuota holds when one more fits under the bound of the attribute
// count: its own (attribute max, 0 bounds nothing) or, without one, dflt
// (0 bounds nothing). A missing count fails every comparison.
func withinQuota(count, max string, dflt int64) expression.ConditionBuilder {
	own := expression.Name(max).Equal(expression.Value(0)).
		Or(expression.Name(count).LessThan(expression.Name(max)))
	none := expression.Name(max).AttributeNotExists()
	if dflt > 0 {
		none = none.And(expression.Name(count).LessThan(expression.Value(dflt)))
	}
	return none.Or(own)
}

// countPost adds to the post write t the change of the posts' counter: one
// more for a create (before nil) under the quota, one less for a delete
// (after nil); none for any other write. Both require the counter.
func (s *Store) countPost(t *dynamo.Txn, before, after *postItem) error {
	var delta int64
	switch {
	case before == nil && after != nil:
		delta = 1
	case before != nil && after == nil:
		delta = -1
	default:
		return nil
	}
	cond := expression.Name(attrPosts).AttributeExists()
	if delta > 0 {
		cond = cond.And(withinQuota(attrPosts, attrPostsMax, s.quota.Posts))
	}
	upd := expression.Set(expression.Name("type"), expression.Value(typePostUsage)).
		Add(expression.Name(attrPosts), expression.Value(delta))
	return t.Update(s.ks.PostUsage(), upd, &cond, errPostCounter)
}

// counterGate lets one holder at a time through: a semaphore of one.
type counterGate chan struct{}

func newCounterGate() counterGate { return make(counterGate, 1) }

// execCounted runs the post write t, through the publication's gate when
// counted (t writes the posts' counter). It returns Exec's error, or the
// context's when it ends while the write waits its turn.
func (s *Store) execCounted(ctx context.Context, t *dynamo.Txn, counted bool) error {
	if !counted {
		return s.db.Exec(ctx, t)
	}
	select {
	case s.postsGate <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for the posts' counter: %w", ctx.Err())
	}
	defer func() { <-s.postsGate }()
	return s.db.Exec(ctx, t)
}

// postCounterRefused returns what a post write (a create when create)
// refused by its counter action means: for a create, a *QuotaError when
// the quota is reached, else dynamo.ErrRetry once the counter exists (it
// is counted first when missing; a post deleted meanwhile made room). A
// delete needs no room: it is refused only for a missing counter, which
// another server may have put, at the quota, before this read.
func (s *Store) postCounterRefused(ctx context.Context, create bool) error {
	var it postUsageItem
	err := s.db.Get(ctx, s.ks.PostUsage(), true, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("posts' counter: %w", err)
	}
	if it.Posts == nil {
		if _, err := s.initPostUsage(ctx); err != nil {
			return err
		}
		return dynamo.ErrRetry
	}
	if max := limit(it.PostsMax, s.quota.Posts); create && max > 0 && *it.Posts >= max {
		return &QuotaError{Limit: "posts", Usage: *it.Posts, Max: max, Adding: 1}
	}
	return dynamo.ErrRetry
}

// initPostUsage counts the publication's posts (the feed's partition and
// each author's drafts in GSI1: a Query each, eachPostVersion) and puts
// the count in the counter on the condition that it has none yet. It
// returns the counter's count: its own, or the one another server put
// first.
func (s *Store) initPostUsage(ctx context.Context) (int64, error) {
	ids := map[string]bool{}
	err := s.eachPostVersion(ctx, func(id, _ string) error {
		ids[id] = true
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("count posts: %w", err)
	}
	n := int64(len(ids))
	t := s.db.NewTxn()
	upd := expression.Set(expression.Name("type"), expression.Value(typePostUsage)).
		Set(expression.Name(attrPosts), expression.Value(n))
	cond := expression.Name(attrPosts).AttributeNotExists()
	if err := t.Update(s.ks.PostUsage(), upd, &cond, dynamo.ErrRetry); err != nil {
		return 0, err
	}
	switch err := s.db.Exec(ctx, t); {
	case errors.Is(err, dynamo.ErrRetry):
		// Another server counted first.
		var it postUsageItem
		if err := s.db.Get(ctx, s.ks.PostUsage(), true, &it); err != nil {
			return 0, fmt.Errorf("posts' counter: %w", err)
		}
		return deref(it.Posts), nil
	case err != nil:
		return 0, fmt.Errorf("put the posts' counter: %w", err)
	}
	return n, nil
}

// webhookCounterRefused returns what a webhook create refused by the
// count item's condition means: a *QuotaError when the publication's
// quota is reached, full when MaxWebhooks exist, else dynamo.ErrRetry (a
// webhook was deleted meanwhile).
func (s *Store) webhookCounterRefused(ctx context.Context, full error) error {
	var it webhookCountItem
	err := s.db.Get(ctx, webhookCountKey(s.ks), true, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("webhooks' count: %w", err)
	}
	if max := limit(it.WebhooksMax, s.quota.Webhooks); max > 0 && it.Count >= max {
		return &QuotaError{Limit: "webhooks", Usage: it.Count, Max: max, Adding: 1}
	}
	if it.Count >= MaxWebhooks {
		return full
	}
	return dynamo.ErrRetry
}

// PublicationUsage returns the publication's posts and webhooks and the
// quotas in force: two strongly consistent GetItems, and the count of its
// posts the first time (initPostUsage).
func (s *Store) PublicationUsage(ctx context.Context) (*PublicationUsage, error) {
	var p postUsageItem
	if err := s.db.Get(ctx, s.ks.PostUsage(), true, &p); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("posts' counter: %w", err)
	}
	var w webhookCountItem
	if err := s.db.Get(ctx, webhookCountKey(s.ks), true, &w); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("webhooks' count: %w", err)
	}
	u := &PublicationUsage{Webhooks: w.Count, Limits: PublicationQuota{
		Posts: limit(p.PostsMax, s.quota.Posts), Webhooks: limit(w.WebhooksMax, s.quota.Webhooks),
	}}
	if p.Posts != nil {
		u.Posts = *p.Posts
		return u, nil
	}
	n, err := s.initPostUsage(ctx)
	if err != nil {
		return nil, err
	}
	u.Posts = n
	return u, nil
}

// SetPublicationLimits sets or drops the publication pubID's own limits,
// on the counters they bound, in one transaction (after one GetItem of
// the publication).
// A negative limit is a *ValidationError; a missing publication
// ErrNotFound. A limit under what the publication holds refuses creates
// until deletions bring it under; it deletes nothing.
func (s *Store) SetPublicationLimits(ctx context.Context, pubID string, in PublicationLimits) error {
	if in.Posts != nil && *in.Posts < 0 {
		return invalid("posts", "must be at least 0 (0: no bound)")
	}
	if in.Webhooks != nil && *in.Webhooks < 0 {
		return invalid("webhooks", "must be at least 0 (0: no bound)")
	}
	if _, err := s.publicationItem(ctx, pubID, true); err != nil {
		return err
	}
	ps, err := s.In(pubID)
	if err != nil {
		return err
	}
	t := ps.db.NewTxn()
	set := func(k key, typ, attr string, v *int64, drop bool) error {
		var upd expression.UpdateBuilder
		switch {
		case drop:
			upd = expression.Remove(expression.Name(attr))
		case v != nil:
			upd = expression.Set(expression.Name(attr), expression.Value(*v))
		default:
			return nil
		}
		return t.Update(k, upd.Set(expression.Name("type"), expression.Value(typ)), nil, nil)
	}
	err = firstErr(
		set(ps.ks.PostUsage(), typePostUsage, attrPostsMax, in.Posts, in.DefaultPosts),
		set(webhookCountKey(ps.ks), typeWebhookCount, attrWebhooksMax, in.Webhooks, in.DefaultWebhooks),
	)
	if err != nil {
		return err
	}
	if t.Len() == 0 {
		return nil
	}
	if err := ps.db.Exec(ctx, t); err != nil {
		return fmt.Errorf("set the limits of publication %q: %w", pubID, err)
	}
	return nil
}

// checkPostUsage reports a posts' counter that differs from the posts
// the scan found; a missing or uncounted one is counted at the next post
// write.
func checkPostUsage(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	if t.quota == nil || t.quota.Posts == nil {
		return
	}
	var n int64
	for _, p := range t.posts {
		if _, ok := s.ks.Local(p.PK); ok {
			n++
		}
	}
	if *t.quota.Posts != n {
		badf("the posts' counter has %d posts, the publication %d", *t.quota.Posts, n)
	}
}
