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

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Numbered pages of the lists of posts kept in a GSI1 partition (the
// feed, a category's, a tag's), numbered from the oldest post: page 1
// holds the oldest posts, so a page's posts stay where they are when
// newer posts are published. A list's page index (the "pages" worker,
// pagesync.go, keeps it from the change feed) holds its count and the
// sort key of every PageStep-th post, oldest first, in chunk items of
// pageChunk keys each; page n of size z is one BatchGetItem of chunk 0
// (the count) and the chunk holding the start of the page, then one
// Query of z items from that start. Both reads are bounded whatever n
// is: two items of at most a few KB, and one page of posts.

// PageStep is how many posts apart the page index keeps a start: a
// numbered page's size is a multiple of it.
const PageStep = 10

// MaxPageNumber is the largest page number a numbered page takes.
const MaxPageNumber = 100000

// pageChunk is how many starts one chunk item of a page index holds:
// 80 keys of about 45 bytes stay under the 4 KB of one read unit.
const pageChunk = 80

// typePageIndex is the item type of a chunk of a list's page index.
const typePageIndex = "pageIndex"

// pageIndexItem is one chunk of a list's page index: PK
// PAGENUM#<GSI1 partition>, SK CHUNK#<6-digit chunk>.
type pageIndexItem struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Type string `dynamodbav:"type"`
	// List is the GSI1 partition of the list.
	List string `dynamodbav:"list"`
	// Count is the number of posts in the list (chunk 0 only).
	Count int `dynamodbav:"count"`
	// Starts are the sort keys (GSI1SK) of the posts at ranks
	// (chunk*pageChunk+i)*PageStep, oldest first.
	Starts []string `dynamodbav:"starts,omitempty"`
	// At is the store's time when the list was read for this chunk: a
	// rebuild never replaces a chunk read later than its own.
	At string `dynamodbav:"at"`
}

// prefixPageIndex starts the partition key of a list's page index.
const prefixPageIndex = "PAGENUM#"

// pageIndexKey returns the key of chunk c of the page index of the list
// list (its GSI1 partition in the publication ks).
func pageIndexKey(ks keys.Space, list string, c int) key {
	return key{PK: ks.Partition(prefixPageIndex + list), SK: fmt.Sprintf("CHUNK#%06d", c)}
}

// NumberedPage is one numbered page of a list of posts.
type NumberedPage struct {
	// Number and Size are the page's number (1 is the oldest posts) and
	// size; TotalPages and TotalCount those of the list as its page
	// index counts it.
	Number, Size, TotalPages, TotalCount int
	// Posts are the page's posts, oldest first: summaries, as lists hold
	// them.
	Posts []*Post
}

// FeedPartition, CategoryListPartition and TagListPartition name the
// lists NumberedPosts and SyncPages take.
// They are the lists' names in the publication: the store reads a list in
// its GSI1 partition in the publication's space (keys.Space.Partition).
func FeedPartition() string                    { return keys.FeedPartition }
func CategoryListPartition(slug string) string { return keys.PrefixCategory + slug }
func TagListPartition(slug string) string      { return keys.PrefixTag + slug }

// ValidatePageNumber returns a *ValidationError when number or size is
// not one NumberedPosts takes: number from 1 to MaxPageNumber, size a
// multiple of PageStep from PageStep to MaxPageSize.
func ValidatePageNumber(number, size int) error {
	if number < 1 || number > MaxPageNumber {
		return invalid("page", "must be from 1 to %d", MaxPageNumber)
	}
	if size < PageStep || size > MaxPageSize || size%PageStep != 0 {
		return invalid("pageSize", "must be a multiple of %d from %d to %d", PageStep, PageStep, MaxPageSize)
	}
	return nil
}

// NumberedPosts returns page number of size size of the list of posts in
// the GSI1 partition list, oldest first: one BatchGetItem of its page
// index, then, unless the page is past the end, one Query. A page past
// the end has no posts and the list's TotalPages. Bad numbers or sizes
// are a *ValidationError, refused before any request.
func (s *Store) NumberedPosts(ctx context.Context, list string, number, size int) (*NumberedPage, error) {
	if err := ValidatePageNumber(number, size); err != nil {
		return nil, err
	}
	out := &NumberedPage{Number: number, Size: size}
	at := (number - 1) * size / PageStep
	ks := []key{pageIndexKey(s.ks, list, 0)}
	if c := at / pageChunk; c > 0 {
		ks = append(ks, pageIndexKey(s.ks, list, c))
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	if err != nil {
		return nil, fmt.Errorf("page index of %s: %w", list, err)
	}
	var head, chunk pageIndexItem
	if err := dynamo.DecodeFound(found, ks[0], &head); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("page index of %s: %w", list, err)
	}
	chunk = head
	if len(ks) > 1 {
		chunk = pageIndexItem{}
		if err := dynamo.DecodeFound(found, ks[1], &chunk); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("page index of %s: %w", list, err)
		}
	}
	out.TotalCount = head.Count
	out.TotalPages = (head.Count + size - 1) / size
	i := at % pageChunk
	if number > out.TotalPages || i >= len(chunk.Starts) {
		return out, nil
	}
	cond := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(list))).
		And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(chunk.Starts[i]), expression.Value(s.visibleBound())))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond))
	if err != nil {
		return nil, err
	}
	res, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(true), Limit: aws.Int32(int32(size)),
	})
	if err != nil {
		return nil, fmt.Errorf("page %d of %s: %w", number, list, err)
	}
	for _, it := range res.Items {
		var p postItem
		if err := attributevalue.UnmarshalMap(it, &p); err != nil {
			return nil, fmt.Errorf("decode page of %s: %w", list, err)
		}
		out.Posts = append(out.Posts, p.post())
	}
	return out, nil
}

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
// GSI1 partition list from the list itself (SyncPagesFrom with no
// position).
func (s *Store) SyncPages(ctx context.Context, list string) (PagesSynced, error) {
	return s.SyncPagesFrom(ctx, list, time.Time{})
}

// SyncPagesFrom rebuilds the page index of the list of posts in the GSI1
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
	kept, lo := keptStarts(s.ks, have, from)
	sks, err := s.listSortKeys(ctx, list, lo)
	if err != nil {
		return out, fmt.Errorf("sync pages of %s: %w", list, err)
	}
	out.Read, out.Count = len(sks), len(kept)*PageStep+len(sks)
	if shows != nil && !shows(sks) {
		out.Behind = true
		return out, nil
	}
	want := wantChunks(s.ks, list, append(kept, startsOf(sks)...), out.Count, now)
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
func keptStarts(ks keys.Space, have map[string]pageIndexItem, from time.Time) (kept []string, lo string) {
	if from.IsZero() {
		return nil, keys.PrefixPost
	}
	var starts []string
	for c := 0; c < len(have); c++ {
		h, ok := have[pageIndexKey(ks, "", c).SK] // have is by sort key
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

// listSortKeys returns the sort keys of the visible posts of the list in
// the GSI1 partition list from lo (inclusive), oldest first.
func (s *Store) listSortKeys(ctx context.Context, list, lo string) ([]string, error) {
	cond := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(list))).
		And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(s.visibleBound())))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond).
		WithProjection(expression.NamesList(expression.Name(keys.AttrGSI1SK))))
	if err != nil {
		return nil, err
	}
	var sks []string
	err = s.db.QueryAll(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1),
		KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}, func(it item) error {
		var row struct {
			SK string `dynamodbav:"GSI1SK"`
		}
		if err := attributevalue.UnmarshalMap(it, &row); err != nil {
			return err
		}
		if strings.HasPrefix(row.SK, keys.PrefixPost) {
			sks = append(sks, row.SK)
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

// pageIndexEvents returns the event of a write of a chunk of a list's
// page index, whichever chunk: post.pages.updated, naming the list's
// category or tag and its cache tag (feed for the whole blog's), which
// its numbered pages carry, so they are purged once the index they read
// has changed, not only when the posts that changed it were written.
func pageIndexEvents(r *record, add func(EventType, EventData)) error {
	img := r.new
	if img == nil {
		img = r.old
	}
	var it pageIndexItem
	if err := attributevalue.UnmarshalMap(img, &it); err != nil {
		return err
	}
	var d EventData
	switch {
	case strings.HasPrefix(it.List, keys.PrefixCategory):
		slug := strings.TrimPrefix(it.List, keys.PrefixCategory)
		d.Categories, d.CacheTags = []string{slug}, []string{frontend.TagCategory(slug)}
	case strings.HasPrefix(it.List, keys.PrefixTag):
		slug := strings.TrimPrefix(it.List, keys.PrefixTag)
		d.Tags, d.CacheTags = []string{slug}, []string{frontend.TagTag(slug)}
	default:
		d.CacheTags = []string{frontend.TagFeed}
	}
	add(EventPostPagesUpdated, d)
	return nil
}
