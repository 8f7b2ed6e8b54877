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

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Numbered pages of the lists of posts kept in a GSI1 partition (the
// feed, a category's, a tag's) or in an author's own partition (the
// author→post copies of AUTHOR#<id>, co-written posts included), numbered
// from the oldest post: page 1
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
// PAGENUM#<list partition>, SK CHUNK#<6-digit chunk>.
type pageIndexItem struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Type string `dynamodbav:"type"`
	// List is the partition of the list (FeedPartition and the others).
	List string `dynamodbav:"list"`
	// Count is the number of posts in the list (chunk 0 only).
	Count int `dynamodbav:"count"`
	// Starts are the sort keys (GSI1SK, SK for an author) of the posts at ranks
	// (chunk*pageChunk+i)*PageStep, oldest first.
	Starts []string `dynamodbav:"starts,omitempty"`
	// At is the store's time when the list was read for this chunk.
	At string `dynamodbav:"at"`
	// Fence is the claim of the rebuild that wrote the chunk (on chunk
	// 0, of the last rebuild that began): a rebuild writes only while
	// chunk 0 holds its own (pagerebuild.go).
	Fence string `dynamodbav:"fence,omitempty"`
}

// prefixPageIndex starts the partition key of a list's page index.
const prefixPageIndex = "PAGENUM#"

// pageIndexKey returns the key of chunk c of the page index of the list
// list (its GSI1 partition in the publication ks).
func pageIndexKey(ks keys.Space, list string, c int) key {
	return key{PK: ks.Partition(prefixPageIndex + list), SK: chunkSK(c)}
}

// chunkSK is the sort key of chunk c of a page index.
func chunkSK(c int) string { return fmt.Sprintf("CHUNK#%06d", c) }

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

// FeedPartition, CategoryListPartition, TagListPartition and
// AuthorListPartition name the lists NumberedPosts and SyncPages take.
// They are the lists' names in the publication: the store reads a list in
// its partition in the publication's space (keys.Space.Partition).
func FeedPartition() string                    { return keys.FeedPartition }
func CategoryListPartition(slug string) string { return keys.PrefixCategory + slug }
func TagListPartition(slug string) string      { return keys.PrefixTag + slug }
func AuthorListPartition(id string) string     { return keys.PrefixAuthor + id }

// FeedMonthList names the list of the whole blog's posts published in
// the month (UTC) of t: the feed's GSI1 partition, between the month's
// first instant and the next month's.
func FeedMonthList(t time.Time) string {
	return keys.FeedPartition + monthSep + t.UTC().Format(monthLayout)
}

// monthSep and monthLayout make the name of a month's list: FEED@2026-02.
const (
	monthSep    = "@"
	monthLayout = "2006-01"
)

// ParseMonth returns the first instant of the month m ("2026-02"), or a
// *ValidationError naming field.
func ParseMonth(field, m string) (time.Time, error) {
	t, err := time.Parse(monthLayout, m)
	if err != nil || t.Year() < 1 || len(m) != len(monthLayout) {
		return time.Time{}, invalid(field, "must be a month as YYYY-MM")
	}
	return t, nil
}

// listAttrs returns the key attributes of the list named list, the
// partition it is read from and the index: an author's list is their
// base-table partition (PK, SK, no index), the others GSI1 partitions; a
// month's list (FeedMonthList) is its partition's.
func listAttrs(list string) (pkAttr, skAttr, partition string, index *string) {
	if strings.HasPrefix(list, keys.PrefixAuthor) {
		return keys.AttrPK, keys.AttrSK, list, nil
	}
	partition, _, _ = strings.Cut(list, monthSep)
	return keys.AttrGSI1PK, keys.AttrGSI1SK, partition, aws.String(keys.IndexGSI1)
}

// listBounds returns the sort keys between which the visible posts of
// the list named list lie, from lo on.
func (s *Store) listBounds(list, lo string) (string, string) {
	hi := s.visibleBound()
	if _, m, ok := strings.Cut(list, monthSep); ok {
		start, err := time.Parse(monthLayout, m)
		if err != nil { // no month: no posts
			return keys.PrefixPost + "~", keys.PrefixPost
		}
		lo = max(lo, keys.PrefixPost+keys.Time(start))
		hi = min(hi, keys.PrefixPost+keys.Time(start.AddDate(0, 1, 0)))
	}
	return lo, hi
}

// listRange returns the key condition of the list's sort keys from lo
// to the last visible post, the index to query, and whether the range
// is empty (a Query would refuse it).
func (s *Store) listRange(list, lo string) (expression.KeyConditionBuilder, *string, bool) {
	pkAttr, skAttr, partition, index := listAttrs(list)
	lo, hi := s.listBounds(list, lo)
	return expression.Key(pkAttr).Equal(expression.Value(s.ks.Partition(partition))).
		And(expression.Key(skAttr).Between(expression.Value(lo), expression.Value(hi))), index, lo > hi
}

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
// the partition list (FeedPartition and the others), oldest first: one BatchGetItem of its page
// index, then, unless the page is past the end, one Query. A page past
// the end has no posts and the list's TotalPages. Bad numbers or sizes
// are a *ValidationError, refused before any request.
func (s *Store) NumberedPosts(ctx context.Context, list string, number, size int) (*NumberedPage, error) {
	if err := ValidatePageNumber(number, size); err != nil {
		return nil, err
	}
	found, ks, err := s.readPageIndex(ctx, list, number, size, nil)
	if err != nil {
		return nil, err
	}
	return s.pageFromIndex(ctx, list, number, size, found, ks)
}

// readPageIndex reads, in one BatchGetItem, the chunks of the page index
// of list that page number of size size needs, and the items extra
// with them; it returns what was found and the chunks' keys.
func (s *Store) readPageIndex(ctx context.Context, list string, number, size int, extra []key) (map[key]item, []key, error) {
	at := (number - 1) * size / PageStep
	ks := []key{pageIndexKey(s.ks, list, 0)}
	if c := at / pageChunk; c > 0 {
		ks = append(ks, pageIndexKey(s.ks, list, c))
	}
	found, err := s.db.BatchGet(ctx, append(slices.Clone(ks), extra...), false)
	if err != nil {
		return nil, nil, fmt.Errorf("page index of %s: %w", list, err)
	}
	return found, ks, nil
}

// pageFromIndex returns page number of size size of list from the chunks
// ks of its page index read into found: one Query, none past the end.
func (s *Store) pageFromIndex(ctx context.Context, list string, number, size int, found map[key]item, ks []key) (*NumberedPage, error) {
	out := &NumberedPage{Number: number, Size: size}
	at := (number - 1) * size / PageStep
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
	cond, index, empty := s.listRange(list, chunk.Starts[i])
	if empty {
		return out, nil
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond))
	if err != nil {
		return nil, err
	}
	res, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: index,
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

// pageIndexEvents returns the event of a write of a chunk of a list's
// page index that changed its count or starts, whichever chunk (none for
// a rebuild's claim): post.pages.updated, naming the list's
// category, tag or author and its cache tag (feed for the whole blog's), which
// its numbered pages carry, so they are purged once the index they read
// has changed, not only when the posts that changed it were written.
func pageIndexEvents(r *record, add func(EventType, EventData)) error {
	var it, was pageIndexItem
	if err := attributevalue.UnmarshalMap(r.new, &it); err != nil {
		return err
	}
	if err := attributevalue.UnmarshalMap(r.old, &was); err != nil {
		return err
	}
	if it.Count == was.Count && slices.Equal(it.Starts, was.Starts) {
		return nil // a rebuild's claim, or a chunk written as it was
	}
	if r.new == nil {
		it = was
	}
	var d EventData
	// A list in a locale has the tags of the list without it.
	switch list := withoutLocale(it.List); {
	case strings.HasPrefix(list, keys.PrefixCategory):
		slug := strings.TrimPrefix(list, keys.PrefixCategory)
		d.Categories, d.CacheTags = []string{slug}, []string{frontend.TagCategory(slug)}
	case strings.HasPrefix(list, keys.PrefixTag):
		slug := strings.TrimPrefix(list, keys.PrefixTag)
		d.Tags, d.CacheTags = []string{slug}, []string{frontend.TagTag(slug)}
	case strings.HasPrefix(list, keys.PrefixAuthor):
		id := strings.TrimPrefix(list, keys.PrefixAuthor)
		d.AuthorID, d.CacheTags = id, []string{frontend.TagAuthor(id)}
	default: // the feed, or one of its months
		d.CacheTags = []string{frontend.TagFeed}
	}
	add(EventPostPagesUpdated, d)
	return nil
}

// SeriesPage returns page number of size size of the series se in its
// order: the posts at places (number-1)*size+1 to number*size that keep
// passes (readers see the public ones), read as summaries in one
// BatchGetItem of their post items, none past the end. A series holds
// its order in its own item (at most MaxSeriesPosts ids), so it needs no
// page index: its pages are by place, a hidden post's included (as
// PostSeries.position counts them), and TotalCount counts the places.
// Bad numbers or sizes are a *ValidationError, refused before any
// request; it fails when the read fails.
func (s *Store) SeriesPage(ctx context.Context, se *Series, number, size int, keep func(*Post) bool) (*NumberedPage, error) {
	if err := ValidatePageNumber(number, size); err != nil {
		return nil, err
	}
	out := &NumberedPage{Number: number, Size: size, TotalCount: len(se.Posts), TotalPages: (len(se.Posts) + size - 1) / size}
	if number > out.TotalPages {
		return out, nil
	}
	ids := se.Posts[(number-1)*size : min(number*size, len(se.Posts))]
	ks := make([]key, len(ids))
	for i, id := range ids {
		ks[i] = s.ks.Post(id)
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	if err != nil {
		return nil, fmt.Errorf("page %d of series %q: %w", number, se.Slug, err)
	}
	for _, k := range ks {
		var p postItem
		if err := dynamo.DecodeFound(found, k, &p); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("page %d of series %q: %w", number, se.Slug, err)
		}
		if post := p.post(); keep(post) {
			out.Posts = append(out.Posts, post)
		}
	}
	return out, nil
}

// CategoryPage returns the category slug and page number of size size
// of its posts (NumberedPosts), of those in locale when it is not ""
// (LocalePageList), reading the category in the BatchGetItem of the page
// index: two requests in all. The category is ErrNotFound (and the page
// nil) when there is none. Bad numbers, sizes or locales are a
// *ValidationError, refused before any request.
func (s *Store) CategoryPage(ctx context.Context, slug, locale string, number, size int) (*Category, *NumberedPage, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, nil, err
	}
	list, err := listInLocale(CategoryListPartition(slug), locale)
	if err != nil {
		return nil, nil, err
	}
	var it categoryItem
	pg, err := s.numberedWith(ctx, list, number, size, s.ks.Category(slug), &it)
	if err != nil {
		return nil, nil, fmt.Errorf("category %q: %w", slug, err)
	}
	return it.category(s.nowKey()), pg, nil
}

// AuthorPage returns the author id and page number of size size of their
// posts (NumberedPosts), of those in locale when it is not ""
// (LocalePageList), reading the author in the BatchGetItem of the page
// index: two requests in all. The author is ErrNotFound (and the page
// nil) when there is none. Bad numbers, sizes or locales are a
// *ValidationError, refused before any request.
func (s *Store) AuthorPage(ctx context.Context, id, locale string, number, size int) (*Author, *NumberedPage, error) {
	list, err := listInLocale(AuthorListPartition(id), locale)
	if err != nil {
		return nil, nil, err
	}
	var it authorItem
	pg, err := s.numberedWith(ctx, list, number, size, s.ks.Author(id), &it)
	if err != nil {
		return nil, nil, fmt.Errorf("author %q: %w", id, err)
	}
	return it.author(s.nowKey()), pg, nil
}

// numberedWith returns page number of size size of list, reading the
// item at k, decoded into v, in the BatchGetItem of its page index. It
// fails with ErrNotFound when there is no item at k, with a
// *ValidationError for a bad number or size (before any request), and
// when a read fails.
func (s *Store) numberedWith(ctx context.Context, list string, number, size int, k key, v any) (*NumberedPage, error) {
	if err := ValidatePageNumber(number, size); err != nil {
		return nil, err
	}
	found, ks, err := s.readPageIndex(ctx, list, number, size, []key{k})
	if err != nil {
		return nil, err
	}
	if err := dynamo.DecodeFound(found, k, v); err != nil {
		return nil, err
	}
	return s.pageFromIndex(ctx, list, number, size, found, ks)
}
