package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// PagesSynced is what one SyncPages did.
type PagesSynced struct {
	// Count is the number of posts the list holds; Read the sort keys it
	// read of them; Wrote and Removed count the chunks written and
	// deleted, Stale those a later rebuild had written first.
	Count, Read, Wrote, Removed, Stale int
	// Behind is true when the list read did not show yet a write its
	// events named (GSI1 follows the table a moment later): nothing was
	// written, and the pages worker tries again.
	Behind bool
}

// SyncPages rebuilds the whole page index of the list of posts in the
// partition list from the list itself (SyncPagesFrom with no
// position).
func (s *Store) SyncPages(ctx context.Context, list string) (PagesSynced, error) {
	return s.SyncPagesFrom(ctx, list, time.Time{})
}

// SyncPagesFrom rebuilds the page index of the list of posts in the
// partition list, where nothing published before from has changed since
// its last rebuild (a zero from: anything may have). It reads the
// index's chunks (one Query), keeps the starts of the posts before from,
// and reads the list's visible posts' sort keys from the last start
// before from, oldest first (a request per 1 MB): a publication at the
// end of a list reads at most PageStep keys, whatever its length. Then
// it puts each chunk that differs and deletes each one past the end. A
// chunk is put on the condition that no rebuild that read the list later
// put it, so running it again changes nothing. It fails when a read or
// a write fails.
func (s *Store) SyncPagesFrom(ctx context.Context, list string, from time.Time) (PagesSynced, error) {
	return s.syncPages(ctx, list, from, nil)
}

// syncPages is SyncPagesFrom that, when shows is not nil, writes nothing
// and reports Behind unless shows holds of the sort keys read.
func (s *Store) syncPages(ctx context.Context, list string, from time.Time, shows func(sks []string) bool) (PagesSynced, error) {
	var out PagesSynced
	now := s.nowKey()
	have, err := s.pageChunks(ctx, list)
	if err != nil {
		return out, fmt.Errorf("sync pages of %s: %w", list, err)
	}
	kept, lo := keptStarts(have, from)
	sks, err := s.listSortKeys(ctx, list, lo)
	if err != nil {
		return out, fmt.Errorf("sync pages of %s: %w", list, err)
	}
	out.Read, out.Count = len(sks), len(kept)*PageStep+len(sks)
	if shows != nil && !shows(sks) {
		out.Behind = true
		return out, nil
	}
	want := wantChunks(list, append(kept, startsOf(sks)...), out.Count, now)
	for _, w := range want {
		if h, ok := have[w.SK]; ok && h.Count == w.Count && slices.Equal(h.Starts, w.Starts) {
			continue
		}
		cond := expression.Name("at").AttributeNotExists().Or(expression.Name("at").LessThanEqual(expression.Value(now)))
		okPut, err := s.db.PutIf(ctx, w, cond)
		if err != nil {
			return out, fmt.Errorf("sync pages of %s: %w", list, err)
		}
		if okPut {
			out.Wrote++
		} else {
			out.Stale++
		}
	}
	for sk, h := range have {
		if slices.ContainsFunc(want, func(w pageIndexItem) bool { return w.SK == sk }) {
			continue
		}
		expr, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(
			expression.Name("at").LessThanEqual(expression.Value(now))))
		if err != nil {
			return out, err
		}
		_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: dynamo.MustKey(key{PK: h.PK, SK: h.SK}),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		})
		var failed *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &failed):
			out.Stale++
		case err != nil:
			return out, fmt.Errorf("sync pages of %s: %w", list, err)
		default:
			out.Removed++
		}
	}
	return out, nil
}

// keptStarts returns the starts of the index have that lie before the
// time from, but the last of them, and the sort key to read the list
// from: that last start, which is where the rebuild takes over. With a
// zero from, or no start before it, or chunks that are not whole, it
// keeps none and reads the whole list.
func keptStarts(have map[string]pageIndexItem, from time.Time) (kept []string, lo string) {
	if from.IsZero() {
		return nil, keys.PrefixPost
	}
	var starts []string
	for c := 0; c < len(have); c++ {
		h, ok := have[pageIndexKey("", c).SK] // have is by sort key
		if !ok || c < len(have)-1 && len(h.Starts) != pageChunk {
			return nil, keys.PrefixPost
		}
		starts = append(starts, h.Starts...)
	}
	bound := keys.PrefixPost + keys.Time(from)
	i, _ := slices.BinarySearch(starts, bound) // starts[:i] are before from
	if i == 0 {
		return nil, keys.PrefixPost
	}
	return slices.Clone(starts[:i-1]), starts[i-1]
}

// startsOf returns every PageStep-th of the sort keys sks, from the first.
func startsOf(sks []string) []string {
	var starts []string
	for i := 0; i < len(sks); i += PageStep {
		starts = append(starts, sks[i])
	}
	return starts
}

// wantChunks returns the chunks of the page index of list that holds
// count posts and the starts starts, read at the time now.
func wantChunks(list string, starts []string, count int, now string) []pageIndexItem {
	var out []pageIndexItem
	for c := 0; c == 0 || c*pageChunk < len(starts); c++ {
		k := pageIndexKey(list, c)
		it := pageIndexItem{PK: k.PK, SK: k.SK, Type: typePageIndex, List: list, At: now}
		it.Starts = starts[min(c*pageChunk, len(starts)):min((c+1)*pageChunk, len(starts))]
		if c == 0 {
			it.Count = count
		}
		out = append(out, it)
	}
	return out
}

// listSortKeys returns the sort keys of the visible posts of the list
// named list from lo (inclusive), oldest first.
func (s *Store) listSortKeys(ctx context.Context, list, lo string) ([]string, error) {
	_, skAttr, _, _ := listAttrs(list)
	cond, index, empty := s.listRange(list, lo)
	if empty {
		return nil, nil
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond).
		WithProjection(expression.NamesList(expression.Name(skAttr))))
	if err != nil {
		return nil, err
	}
	var sks []string
	err = s.db.QueryAll(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: index,
		KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}, func(it item) error {
		var row map[string]string
		if err := attributevalue.UnmarshalMap(it, &row); err != nil {
			return err
		}
		if sk := row[skAttr]; strings.HasPrefix(sk, keys.PrefixPost) {
			sks = append(sks, sk)
		}
		return nil
	})
	return sks, err
}

// pageChunks returns the chunks of the page index of list, by sort key.
func (s *Store) pageChunks(ctx context.Context, list string) (map[string]pageIndexItem, error) {
	in, err := s.db.KeyQuery(expression.Key(keys.AttrPK).Equal(expression.Value(pageIndexKey(list, 0).PK)))
	if err != nil {
		return nil, err
	}
	have := map[string]pageIndexItem{}
	err = s.db.QueryAll(ctx, in, func(it item) error {
		var c pageIndexItem
		if err := attributevalue.UnmarshalMap(it, &c); err != nil {
			return err
		}
		have[c.SK] = c
		return nil
	})
	return have, err
}

