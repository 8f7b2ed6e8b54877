package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Counters: each author, each category and the STATS item count their
// posts, in total and by month, in the same transaction as the post write
// that changes them, so a count comes with its item and costs no read of
// its own (STATS: one GetItem). A scheduled post is counted from the
// start and recorded as an entry until its time comes; readers subtract
// the entries still in the future. CountPosts counts a period from the
// keys instead, for periods the months do not answer.

// Stats returns the blog-wide counts, the archive by month included.
func (s *Store) Stats(ctx context.Context) (*Stats, error) {
	var it statsItem
	err := s.db.Get(ctx, s.ks.Stats(), false, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("stats: %w", err)
	}
	now := s.nowKey()
	visible, _ := it.Scheduled.split(it.PostCount, now)
	return &Stats{PostCount: visible, AuthorCount: it.AuthorCount, CategoryCount: it.CategoryCount, PageCount: it.PageCount,
		Archive: it.Months.archive(it.Scheduled, now)}, nil
}

// CountPosts counts the visible posts published in per of the author
// authorID (scheduled ones too with includeScheduled), of the category
// category, or of the whole blog when both are empty. It reads the
// period's keys: one Query for every
// 1 MB of posts in it. CountIn answers month-aligned periods with no read.
func (s *Store) CountPosts(ctx context.Context, authorID, category string, per Period, includeScheduled bool) (int64, error) {
	upper := s.visibleBound()
	if includeScheduled {
		upper = keys.PrefixPost + "~"
	}
	lo, hi, _, empty, err := postRange(per, "", upper)
	if err != nil || empty {
		return 0, err
	}
	var conds []expression.KeyConditionBuilder
	index := true
	between := func(attr string) expression.KeyConditionBuilder {
		return expression.Key(attr).Between(expression.Value(lo), expression.Value(hi))
	}
	switch {
	case authorID != "":
		index = false
		conds = append(conds, expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Author(authorID).PK)).And(between(keys.AttrSK)))
	case category != "":
		conds = append(conds, expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.CategoryPartition(category))).And(between(keys.AttrGSI1SK)))
	default:
		for _, part := range s.ks.FeedPartitions() {
			conds = append(conds, expression.Key(keys.AttrGSI1PK).Equal(expression.Value(part)).And(between(keys.AttrGSI1SK)))
		}
	}
	counts := make([]int64, len(conds))
	g, gctx := errgroup.WithContext(ctx)
	for i, cond := range conds {
		g.Go(func() error {
			expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond))
			if err != nil {
				return err
			}
			in := &dynamodb.QueryInput{
				TableName:                 aws.String(s.table),
				KeyConditionExpression:    expr.KeyCondition(),
				ExpressionAttributeNames:  expr.Names(),
				ExpressionAttributeValues: expr.Values(),
				Select:                    types.SelectCount,
			}
			if index {
				in.IndexName = aws.String(keys.IndexGSI1)
			}
			for pages := dynamodb.NewQueryPaginator(s.db, in); pages.HasMorePages(); {
				page, err := pages.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("count posts: %w", err)
				}
				counts[i] += int64(page.Count)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n, nil
}

// CountIn returns the number of posts archive counts in per, when per
// starts and ends at the start of a month (or is open at either end), so
// that it covers whole months; else it returns false.
func CountIn(archive []ArchiveMonth, per Period) (int64, bool) {
	whole := func(t time.Time) bool {
		return t.IsZero() || t.Equal(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC))
	}
	if !whole(per.From) || !whole(per.To) {
		return 0, false
	}
	var n int64
	for _, m := range archive {
		if (per.From.IsZero() || !m.Start().Before(per.From)) && (per.To.IsZero() || !m.End().After(per.To)) {
			n += m.PostCount
		}
	}
	return n, true
}

// counterChange is what a post write does to one item that counts posts:
// its author, one of its categories, or STATS.
type counterChange struct {
	key    key
	stats  bool
	delta  int64
	months map[string]int64             // what to add to month attributes, by name
	guard  *expression.ConditionBuilder // the names copied are current
	had    string                       // publishedAt of the post's entry before, if it was scheduled
	want   string                       // publishedAt of the post's entry after, if it is scheduled
	read   schedule                     // the item's entries as read, if it was
	create *tagItem                     // a tag the write makes (tags.go)
}

// counterChanges returns the changes a write from before to after makes to
// the counters of both. A post counts in each while published; an entry
// records it there while its publishedAt is after now.
func counterChanges(ks keys.Space, before, after *postItem, r *names, now string) []*counterChange {
	read := r.schedules(ks)
	var out []*counterChange
	byKey := map[key]*counterChange{}
	// counters returns the changes to p's authors, categories, tags and
	// STATS, in the order of p.counterKeys.
	counters := func(p *postItem) []*counterChange {
		counted := p.counterKeys(ks)
		cs := make([]*counterChange, len(counted))
		for i, k := range counted {
			if byKey[k] == nil {
				byKey[k] = &counterChange{key: k, stats: k == ks.Stats(), read: read[k], months: map[string]int64{}}
				out = append(out, byKey[k])
			}
			cs[i] = byKey[k]
		}
		return cs
	}
	if after != nil {
		cs := counters(after)
		cs[0].guard = ptr(nameVer(after.AuthorVer))
		i := 1
		for _, a := range after.CoAuthors {
			cs[i].guard = ptr(nameVer(after.CoAuthorVer[a.ID]))
			i++
		}
		for _, c := range after.Cats {
			cs[i].guard = ptr(nameVer(after.CatVer[c.Slug]))
			i++
		}
		for _, tg := range after.Tags {
			if t := r.tags[tg.Slug]; t != nil && t.created {
				cs[i].create = t
			} else {
				cs[i].guard = ptr(nameVer(after.TagVer[tg.Slug]).And(expression.Name("mergedInto").AttributeNotExists()))
			}
			i++
		}
	}
	if before.published() {
		for _, c := range counters(before) {
			c.delta--
			if before.countedByMonth() {
				c.months[keys.MonthAttr(before.PublishedAt)]--
			}
			if before.PublishedAt > now {
				c.had = before.PublishedAt
			}
		}
	}
	if after.published() {
		for _, c := range counters(after) {
			c.delta++
			c.months[keys.MonthAttr(after.PublishedAt)]++
			if after.PublishedAt > now {
				c.want = after.PublishedAt
			}
		}
	}
	return out
}

// countedByMonth reports whether the counters count the post p in its
// month: every write of this layout gives a post its slugs and counts it,
// so a post without slugs was last written in layout 1, before months
// were counted, and is counted when Migrate writes it again.
func (it *postItem) countedByMonth() bool { return len(it.Slugs) > 0 }

// addsEntries reports whether the write from before to after records the
// post as scheduled in a counter that does not have it so yet.
func addsEntries(ks keys.Space, before, after *postItem, now string) bool {
	for _, c := range counterChanges(ks, before, after, newNames(), now) {
		if c.want != "" && c.want != c.had {
			return true
		}
	}
	return false
}

// action returns the transaction's action for c, for the post id: one
// update of the counter (a TransactWriteItems takes one action per item),
// a check of the names' guard alone, or nothing. Entries of other posts
// whose time has passed, in an item that was read, are removed on the way,
// each on the condition that it is still as read.
func (c *counterChange) action(ks keys.Space, t *dynamo.Txn, id, now string) error {
	var upd expression.UpdateBuilder
	changed := false
	cond := c.guard
	and := func(b expression.ConditionBuilder) {
		if cond == nil {
			cond = &b
		} else {
			cond = ptr(cond.And(b))
		}
	}
	if c.delta != 0 {
		upd, changed = upd.Add(expression.Name("postCount"), expression.Value(c.delta)), true
	}
	for _, m := range slices.Sorted(maps.Keys(c.months)) {
		if d := c.months[m]; d != 0 {
			upd, changed = upd.Add(expression.Name(m), expression.Value(d)), true
		}
	}
	switch {
	case c.want != "" && c.want != c.had && c.read == nil:
		// The first entry makes the map; a write that adds one has read
		// the item, so nil means it has none.
		upd = upd.Set(expression.Name(attrScheduled), expression.Value(map[string]string{id: c.want}))
		and(expression.Name(attrScheduled).AttributeNotExists())
		changed = true
	case c.want != "" && c.want != c.had:
		upd, changed = upd.Set(scheduledPath(id), expression.Value(c.want)), true
	case c.want == "" && c.had != "":
		upd, changed = upd.Remove(scheduledPath(id)), true
	}
	for _, other := range slices.Sorted(maps.Keys(c.read)) {
		if at := c.read[other]; other != id && at <= now {
			upd, changed = upd.Remove(scheduledPath(other)), true
			and(scheduledPath(other).Equal(expression.Value(at)))
		}
	}
	if c.create != nil {
		upd, changed = c.create.tagCreation(ks, upd, now, c.delta != 0), true
		and(expression.Name(keys.AttrPK).AttributeNotExists())
	}
	switch {
	case changed && c.create != nil:
		return t.Update(c.key, upd, cond, errStaleNames)
	case changed && c.stats:
		// STATS is made by the first write that counts something.
		return t.Update(c.key, upd.Set(expression.Name("type"), expression.Value(typeStats)), cond, errStaleNames)
	case changed:
		and(dynamo.CondExists())
		return t.Update(c.key, upd, cond, errStaleNames)
	case cond != nil:
		return t.Check(c.key, *cond, errStaleNames)
	}
	return nil
}

// countStats adds delta to one of the blog-wide counts.
func countStats(ks keys.Space, t *dynamo.Txn, field string, delta int64) error {
	return t.Update(ks.Stats(), expression.Add(expression.Name(field), expression.Value(delta)).
		Set(expression.Name("type"), expression.Value(typeStats)), nil, nil)
}

// scheduledPath is the path of the entry of the post id.
func scheduledPath(id string) expression.NameBuilder {
	return expression.Name(attrScheduled + "." + id)
}

type idempotencyItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Hash      string `dynamodbav:"hash"`
	Result    string `dynamodbav:"result"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}
