package storage

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The whole blog's feed: the published post items, summaries, in one GSI1
// partition (FEED), so a page is one Query. feedRange still merges
// partitions (keys.Space.FeedPartitions), as the feed had four before layout 4, and
// reads on those that a 1 MB cut left short.

// LatestPosts returns the whole blog's visible posts in per, newest
// first: summaries without their bodies, from one Query of the feed's
// partition whatever the page size.
func (s *Store) LatestPosts(ctx context.Context, p PageArgs, per Period) (*Result[*Post], error) {
	if err := validatePage(p); err != nil {
		return nil, err
	}
	lo, hi, list, empty, err := postRange(per, "feed", s.visibleBound())
	if err != nil {
		return nil, err
	}
	field, cursor := "after", p.After
	if p.Backward {
		field, cursor = "before", p.Before
	}
	pos, err := s.position(list, field, cursor)
	if err != nil {
		return nil, err
	}
	r := skRange{lo: lo, hi: hi}
	if pos != nil {
		if !hasExactly(pos, []string{keys.AttrGSI1SK}) || !strings.HasPrefix(pos[keys.AttrGSI1SK], keys.PrefixPost) {
			return nil, BadCursor(field)
		}
		// The cursor's own post is a bound that the page leaves out.
		r.skip = pos[keys.AttrGSI1SK]
		if p.Backward {
			r.lo = max(r.lo, r.skip)
		} else {
			r.hi = min(r.hi, r.skip)
		}
	}
	res := &Result[*Post]{}
	if empty || r.lo > r.hi {
		return res.from(p, false), nil
	}
	items, more, err := s.feedRange(ctx, r, !p.Backward, p.Limit)
	if err != nil {
		return nil, err
	}
	for i := range items {
		res.Items = append(res.Items, items[i].post())
		res.Cursors = append(res.Cursors, s.encodeCursor(list, map[string]string{keys.AttrGSI1SK: items[i].GSI1SK}))
	}
	return res.from(p, more), nil
}

// skRange is a range of sort keys, lo <= key <= hi, without skip (a
// cursor's own item) when it is set.
type skRange struct {
	lo, hi, skip string
}

// feedRange reads the first limit posts of the whole blog's feed in r,
// newest first when descending, else oldest first, querying every shard
// at once, and reports whether more follow in that direction. A shard
// cut short by the 1 MB limit may hold more items before those of other
// shards, so nothing past its last item is safe to return: while such
// shards leave the page short of limit, they are read on from where they
// stopped, at once, until the page is full or they are done. The common
// case, no shard cut short, stays one Query a shard.
func (s *Store) feedRange(ctx context.Context, r skRange, descending bool, limit int) ([]postItem, bool, error) {
	type shard struct {
		items []postItem
		// next is where a read cut short by the 1 MB limit goes on.
		next map[string]types.AttributeValue
		read bool
	}
	need := limit + 1 // one more tells whether more follow
	shards := make([]shard, len(s.ks.FeedPartitions()))
	// first reports whether the key a comes before b in the read's order.
	first := func(a, b string) bool { return a > b == descending }
	for {
		g, gctx := errgroup.WithContext(ctx)
		for i := range shards {
			sh := &shards[i]
			if sh.read && (sh.next == nil || len(sh.items) >= need) {
				continue
			}
			g.Go(func() error {
				items, next, err := s.rangeQuery(gctx, s.ks.FeedPartitions()[i], r, descending, need-len(sh.items), sh.next)
				sh.items, sh.next, sh.read = append(sh.items, items...), next, true
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, false, err
		}
		// cut is the first of the last items of the shards cut short:
		// what lies past it may yet be preceded by their unread items.
		var cut string
		short := false
		for _, sh := range shards {
			if sh.next == nil || len(sh.items) >= need {
				// A shard that gave need items alone ends the page
				// before its unread ones.
				continue
			}
			short = true
			if last := len(sh.items) - 1; last >= 0 && (cut == "" || first(sh.items[last].GSI1SK, cut)) {
				cut = sh.items[last].GSI1SK
			}
		}
		merged := make([]postItem, 0, need)
		for _, sh := range shards {
			merged = append(merged, sh.items...)
		}
		sort.Slice(merged, func(a, b int) bool { return first(merged[a].GSI1SK, merged[b].GSI1SK) })
		safe := len(merged)
		if short {
			safe = 0
			for safe < len(merged) && cut != "" && !first(cut, merged[safe].GSI1SK) {
				safe++
			}
		}
		if !short || safe >= need {
			if safe > limit {
				return merged[:limit], true, nil
			}
			return merged, false, nil
		}
	}
}

// rangeQuery reads up to limit posts of one GSI1 partition whose GSI1SK
// lies in r, in the direction asked, from start (nil: the range's start),
// and returns where to go on when DynamoDB's 1 MB limit cut the read
// short (else nil).
func (s *Store) rangeQuery(ctx context.Context, partition string, r skRange, descending bool, limit int, start map[string]types.AttributeValue) ([]postItem, map[string]types.AttributeValue, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrGSI1PK).Equal(expression.Value(partition)).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(r.lo), expression.Value(r.hi)))))
	if err != nil {
		return nil, nil, err
	}
	asked := limit
	if r.skip != "" && start == nil {
		asked++ // the cursor's own item may be among them
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(keys.IndexGSI1),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(!descending),
		Limit:                     aws.Int32(int32(asked)),
		ExclusiveStartKey:         start,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("query %s: %w", partition, err)
	}
	var items []postItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", partition, err)
	}
	var next map[string]types.AttributeValue
	if out.LastEvaluatedKey != nil && len(out.Items) < asked {
		next = out.LastEvaluatedKey
	}
	items = slices.DeleteFunc(items, func(it postItem) bool { return it.GSI1SK == r.skip })
	return items[:min(len(items), limit)], next, nil
}
