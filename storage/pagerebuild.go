package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// PagesSynced is what one SyncPages did.
type PagesSynced struct {
	// Count is the number of posts the list holds; Read the sort keys it
	// read of them; Wrote and Removed count the chunks written and
	// deleted.
	Count, Read, Wrote, Removed int
	// Behind is true when the list read did not show yet a write its
	// events named (GSI1 follows the table a moment later): nothing was
	// written, and the pages worker tries again.
	Behind bool
	// Lost is true when a later rebuild of the list claimed its index
	// before this one had written it all: the rest was not written, and
	// the pages worker rebuilds the list again.
	Lost bool
}

// errPagesLost is the failed condition of a write of a rebuild that a
// later one took the page index from.
var errPagesLost = errors.New("page index claimed by a later rebuild")

// SyncPages rebuilds the whole page index of the list of posts in the
// partition list from the list itself (SyncPagesFrom with no
// position).
func (s *Store) SyncPages(ctx context.Context, list string) (PagesSynced, error) {
	return s.SyncPagesFrom(ctx, list, time.Time{})
}

// SyncPagesFrom rebuilds the page index of the list of posts in the
// partition list, where nothing published before from has changed since
// its last rebuild (a zero from: anything may have). It claims the index
// (one UpdateItem of its chunk 0, which the rebuild's writes are
// conditional on, so that the writes of a rebuild that claimed it
// before, and read it before, fail from then on), reads the index's
// chunks (one Query), keeps the starts of the posts before from, and
// reads the list's visible posts' sort keys from the last start before
// from, oldest first (a request per 1 MB): a publication at the end of a
// list reads at most PageStep keys, whatever its length. Then it puts
// chunk 0 when it differs, and each other chunk that differs, or
// deletes one past the end, in a transaction with the check of its
// claim. Running it again changes nothing. It fails when a read or a
// write fails, and reports Lost when a later rebuild claimed the index.
func (s *Store) SyncPagesFrom(ctx context.Context, list string, from time.Time) (PagesSynced, error) {
	return s.syncPages(ctx, list, from, nil)
}

// syncPages is SyncPagesFrom that, when shows is not nil, writes nothing
// and reports Behind unless shows holds of the sort keys read.
func (s *Store) syncPages(ctx context.Context, list string, from time.Time, shows func(sks []string) bool) (PagesSynced, error) {
	plan, err := s.readPages(ctx, list, from, shows, true)
	if err != nil || plan.did.Behind {
		return plan.did, err
	}
	return s.writePages(ctx, plan)
}

// pagePlan is what a rebuild of a list's page index claimed and read,
// and the chunks it is to write.
type pagePlan struct {
	list string
	// fence is the rebuild's claim on the index.
	fence string
	// have are the chunks read, by sort key; want those to write.
	have map[string]pageIndexItem
	want []pageIndexItem
	did  PagesSynced
}

// readPages claims the page index of list when claim is set, reads it
// and the list from the last start before from, and returns what the
// rebuild is to write; with shows not nil, a plan Behind unless shows
// holds of the sort keys read.
func (s *Store) readPages(ctx context.Context, list string, from time.Time, shows func(sks []string) bool, claim bool) (*pagePlan, error) {
	plan := &pagePlan{list: list, fence: fmt.Sprintf("%016x", rand.Uint64())}
	now := s.nowKey()
	if claim {
		if err := s.claimPages(ctx, list, plan.fence); err != nil {
			return plan, err
		}
	}
	have, err := s.pageChunks(ctx, list)
	if err != nil {
		return plan, fmt.Errorf("sync pages of %s: %w", list, err)
	}
	plan.have = have
	kept, lo := keptStarts(have, from)
	sks, err := s.listSortKeys(ctx, list, lo)
	if err != nil {
		return plan, fmt.Errorf("sync pages of %s: %w", list, err)
	}
	plan.did.Read, plan.did.Count = len(sks), len(kept)*PageStep+len(sks)
	if shows != nil && !shows(sks) {
		plan.did.Behind = true
		return plan, nil
	}
	plan.want = wantChunks(s.ks, list, append(kept, startsOf(sks)...), plan.did.Count, now)
	for i := range plan.want {
		plan.want[i].Fence = plan.fence
	}
	return plan, nil
}

// claimPages claims the page index of list for the rebuild fence: one
// UpdateItem of its chunk 0, which the rebuild's writes are conditional
// on.
func (s *Store) claimPages(ctx context.Context, list, fence string) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(expression.
		Set(expression.Name("fence"), expression.Value(fence)).
		Set(expression.Name("type"), expression.Value(typePageIndex)).
		Set(expression.Name("list"), expression.Value(list))))
	if err != nil {
		return err
	}
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(pageIndexKey(s.ks, list, 0)), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}); err != nil {
		return fmt.Errorf("claim page index of %s: %w", list, err)
	}
	return nil
}

// differs reports whether the plan has a chunk to write or to delete.
func (p *pagePlan) differs() bool {
	for _, w := range p.want {
		if h, ok := p.have[w.SK]; !ok || h.Count != w.Count || !slices.Equal(h.Starts, w.Starts) {
			return true
		}
	}
	return len(p.have) > len(p.want)
}

// writePages writes the chunks of plan that differ from those it read,
// chunk 0 first, and deletes those past the end, each on the condition
// that the index is still the plan's to write; at the first that is not,
// it stops and reports Lost.
func (s *Store) writePages(ctx context.Context, plan *pagePlan) (PagesSynced, error) {
	out, list := plan.did, plan.list
	head := pageIndexKey(s.ks, list, 0)
	claimed := expression.Name("fence").Equal(expression.Value(plan.fence))
	write := func(put *pageIndexItem, del key) error {
		if put != nil && put.SK == head.SK {
			ok, err := s.db.PutIf(ctx, put, claimed)
			if err == nil && !ok {
				err = errPagesLost
			}
			return err
		}
		tx := s.db.NewTxn()
		if err := tx.Check(head, claimed, errPagesLost); err != nil {
			return err
		}
		var err error
		if put != nil {
			err = tx.Put(put, nil, nil)
		} else {
			err = tx.Delete(del, nil, nil)
		}
		if err != nil {
			return err
		}
		return s.db.Exec(ctx, tx)
	}
	done := func(err error, n *int) (bool, error) {
		switch {
		case errors.Is(err, errPagesLost):
			out.Lost = true
			return true, nil
		case err != nil:
			return true, fmt.Errorf("sync pages of %s: %w", list, err)
		}
		*n++
		return false, nil
	}
	for _, w := range plan.want {
		if h, ok := plan.have[w.SK]; ok && h.Count == w.Count && slices.Equal(h.Starts, w.Starts) {
			continue
		}
		if stop, err := done(write(&w, key{}), &out.Wrote); stop {
			return out, err
		}
	}
	for _, sk := range slices.Sorted(maps.Keys(plan.have)) {
		if slices.ContainsFunc(plan.want, func(w pageIndexItem) bool { return w.SK == sk }) {
			continue
		}
		h := plan.have[sk]
		if stop, err := done(write(nil, key{PK: h.PK, SK: h.SK}), &out.Removed); stop {
			return out, err
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
		h, ok := have[chunkSK(c)] // have is by sort key
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
func wantChunks(ks keys.Space, list string, starts []string, count int, now string) []pageIndexItem {
	var out []pageIndexItem
	for c := 0; c == 0 || c*pageChunk < len(starts); c++ {
		k := pageIndexKey(ks, list, c)
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
	in, err := s.db.KeyQuery(expression.Key(keys.AttrPK).Equal(expression.Value(pageIndexKey(s.ks, list, 0).PK)))
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
