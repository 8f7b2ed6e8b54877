package storage

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"golang.org/x/sync/errgroup"
)

const (
	// MaxPageSize is the largest page any list returns.
	MaxPageSize = 100
	// batchGetLimit is DynamoDB's limit of keys in one BatchGetItem.
	batchGetLimit = 100
	// maxBatchAttempts bounds the rounds spent on UnprocessedKeys.
	maxBatchAttempts = 8
)

type item = map[string]types.AttributeValue

// getItem reads one item; a missing item is ErrNotFound.
func (s *Store) getItem(ctx context.Context, k key, consistent bool, out any) error {
	res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: mustKey(k), ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return fmt.Errorf("get %s: %w", k.PK, err)
	}
	if res.Item == nil {
		return ErrNotFound
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return fmt.Errorf("decode %s: %w", k.PK, err)
	}
	return nil
}

// batchGet reads keys with as few BatchGetItem calls as DynamoDB allows
// (100 keys each), retrying UnprocessedKeys with backoff. Missing items are
// absent from the result.
func (s *Store) batchGet(ctx context.Context, keys []key, consistent bool) (map[key]item, error) {
	found := make(map[key]item, len(keys))
	seen := make(map[key]bool, len(keys))
	var pending []map[string]types.AttributeValue
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			pending = append(pending, mustKey(k))
		}
	}
	for len(pending) > 0 {
		n := min(len(pending), batchGetLimit)
		chunk := pending[:n]
		pending = pending[n:]
		for attempt := 1; len(chunk) > 0; attempt++ {
			out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: map[string]types.KeysAndAttributes{
					s.table: {Keys: chunk, ConsistentRead: aws.Bool(consistent)},
				},
			})
			if err != nil {
				return nil, fmt.Errorf("batch get: %w", err)
			}
			for _, it := range out.Responses[s.table] {
				found[itemKey(it)] = it
			}
			chunk = out.UnprocessedKeys[s.table].Keys
			if len(chunk) == 0 {
				break
			}
			if attempt == maxBatchAttempts {
				return nil, fmt.Errorf("batch get: %d keys still unprocessed: %w", len(chunk), ErrBusy)
			}
			if err := sleep(ctx, attempt); err != nil {
				return nil, err
			}
		}
	}
	return found, nil
}

func itemKey(it item) key {
	var k key
	_ = attributevalue.UnmarshalMap(it, &k)
	return k
}

// batchDecode reads keys and decodes each found item with conv, in key
// order; a missing item gets ErrNotFound in its slot.
func batchDecode[T any, I any](ctx context.Context, s *Store, keys []key, conv func(*I) T) ([]T, []error) {
	out := make([]T, len(keys))
	errs := make([]error, len(keys))
	found, err := s.batchGet(ctx, keys, false)
	for i, k := range keys {
		switch it, ok := found[k]; {
		case err != nil:
			errs[i] = err
		case !ok:
			errs[i] = ErrNotFound
		default:
			var v I
			if derr := attributevalue.UnmarshalMap(it, &v); derr != nil {
				errs[i] = fmt.Errorf("decode %s: %w", k.PK, derr)
				continue
			}
			out[i] = conv(&v)
		}
	}
	return out, errs
}

// GetPost returns the post with id, whatever its status, or ErrNotFound.
func (s *Store) GetPost(ctx context.Context, id string) (*Post, error) {
	var it postItem
	if err := s.getItem(ctx, postKey(id), false, &it); err != nil {
		return nil, fmt.Errorf("post %q: %w", id, err)
	}
	return it.post(), nil
}

// GetPostBySlug returns the post that holds slug, or ErrNotFound.
func (s *Store) GetPostBySlug(ctx context.Context, slug string) (*Post, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	var sl slugItem
	if err := s.getItem(ctx, slugKey(slug), false, &sl); err != nil {
		return nil, fmt.Errorf("slug %q: %w", slug, err)
	}
	return s.GetPost(ctx, sl.PostID)
}

// GetPosts returns the posts with ids in order, with ErrNotFound in errs
// for each missing one.
func (s *Store) GetPosts(ctx context.Context, ids []string) ([]*Post, []error) {
	return batchDecode(ctx, s, mapKeys(ids, postKey), (*postItem).post)
}

// GetAuthor returns the author with id, or ErrNotFound.
func (s *Store) GetAuthor(ctx context.Context, id string) (*Author, error) {
	var it authorItem
	if err := s.getItem(ctx, authorKey(id), false, &it); err != nil {
		return nil, fmt.Errorf("author %q: %w", id, err)
	}
	return it.author(s.nowKey()), nil
}

// GetAuthors returns the authors with ids in order, with ErrNotFound in
// errs for each missing one.
func (s *Store) GetAuthors(ctx context.Context, ids []string) ([]*Author, []error) {
	now := s.nowKey()
	return batchDecode(ctx, s, mapKeys(ids, authorKey), func(it *authorItem) *Author { return it.author(now) })
}

// GetCategory returns the category with slug, or ErrNotFound; a string
// that cannot be a slug is a *ValidationError.
func (s *Store) GetCategory(ctx context.Context, slug string) (*Category, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	var it categoryItem
	if err := s.getItem(ctx, categoryKey(slug), false, &it); err != nil {
		return nil, fmt.Errorf("category %q: %w", slug, err)
	}
	return it.category(s.nowKey()), nil
}

// GetCategories returns the categories with slugs in order, with
// ErrNotFound in errs for each missing one.
func (s *Store) GetCategories(ctx context.Context, slugs []string) ([]*Category, []error) {
	now := s.nowKey()
	return batchDecode(ctx, s, mapKeys(slugs, categoryKey), func(it *categoryItem) *Category { return it.category(now) })
}

// CommentKey names a comment.
type CommentKey struct {
	PostID    string
	CommentID string
}

// GetComments returns the comments named by keys in order, with
// ErrNotFound (or a ValidationError for a malformed id) in errs.
func (s *Store) GetComments(ctx context.Context, keys []CommentKey) ([]*Comment, []error) {
	out := make([]*Comment, len(keys))
	errs := make([]error, len(keys))
	var valid []key
	var at []int
	for i, ck := range keys {
		cid, err := parseCommentID(ck.CommentID)
		if err != nil {
			errs[i] = err
			continue
		}
		valid = append(valid, commentKey(ck.PostID, cid))
		at = append(at, i)
	}
	got, gotErrs := batchDecode(ctx, s, valid, (*commentItem).comment)
	for j, i := range at {
		out[i], errs[i] = got[j], gotErrs[j]
	}
	return out, errs
}

// ReadPost returns the post with id like GetPost, but read with
// ConsistentRead: a check made before a write must see every write that
// returned before it. It returns ErrNotFound when there is no such post.
func (s *Store) ReadPost(ctx context.Context, id string) (*Post, error) {
	var it postItem
	if err := s.getItem(ctx, postKey(id), true, &it); err != nil {
		return nil, fmt.Errorf("post %q: %w", id, err)
	}
	return it.post(), nil
}

// ReadComment returns the comment k names and its post, read together in
// one request with ConsistentRead, for a check made before a write. It
// returns ErrNotFound when either is missing, or a *ValidationError for a
// malformed comment id.
func (s *Store) ReadComment(ctx context.Context, k CommentKey) (*Comment, *Post, error) {
	cid, err := parseCommentID(k.CommentID)
	if err != nil {
		return nil, nil, err
	}
	ck, pk := commentKey(k.PostID, cid), postKey(k.PostID)
	found, err := s.batchGet(ctx, []key{ck, pk}, true)
	if err != nil {
		return nil, nil, err
	}
	var c commentItem
	var p postItem
	if err := decodeFound(found, ck, &c); err != nil {
		return nil, nil, fmt.Errorf("comment %q: %w", k.CommentID, err)
	}
	if err := decodeFound(found, pk, &p); err != nil {
		return nil, nil, fmt.Errorf("post %q: %w", k.PostID, err)
	}
	return c.comment(), p.post(), nil
}

// Stats returns the blog-wide counts.
func (s *Store) Stats(ctx context.Context) (*Stats, error) {
	var it statsItem
	err := s.getItem(ctx, statsItemKey(), false, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("stats: %w", err)
	}
	visible, _ := it.Scheduled.split(it.PostCount, s.nowKey())
	return &Stats{PostCount: visible, AuthorCount: it.AuthorCount, CategoryCount: it.CategoryCount}, nil
}

func mapKeys(ids []string, f func(string) key) []key {
	keys := make([]key, len(ids))
	for i, id := range ids {
		keys[i] = f(id)
	}
	return keys
}

// listQuery is one paginated list: a key condition on the table or GSI1,
// its direction, and the attributes that position a cursor in it.
type listQuery struct {
	list    string // cursor namespace
	index   bool   // GSI1 instead of the table
	cond    expression.KeyConditionBuilder
	forward bool
}

func (q listQuery) posAttrs() []string {
	if q.index {
		return []string{attrPK, attrSK, attrGSI1PK, attrGSI1SK}
	}
	return []string{attrPK, attrSK}
}

// queryPage runs q for one page: Limit+1 items are asked for, so HasNext is
// known without a second request; only a page cut short by DynamoDB's 1 MB
// response limit takes another.
func queryPage[T any, I any](ctx context.Context, s *Store, q listQuery, p Page, conv func(*I) T) (*Result[T], error) {
	if err := validatePage(p); err != nil {
		return nil, err
	}
	pos, err := decodeCursor(q.list, p.After)
	if err != nil {
		return nil, err
	}
	expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(q.cond))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(q.forward),
		Limit:                     aws.Int32(int32(p.Limit + 1)),
	}
	if q.index {
		in.IndexName = aws.String(indexGSI1)
	}
	if pos != nil {
		if !hasExactly(pos, q.posAttrs()) {
			return nil, errBadCursor()
		}
		if in.ExclusiveStartKey, err = attributevalue.MarshalMap(pos); err != nil {
			return nil, fmt.Errorf("cursor: %w", err)
		}
	}
	var items []item
	for {
		out, err := s.db.Query(ctx, in)
		var apiErr smithy.APIError
		if pos != nil && errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException" {
			// The checksum only catches accidents: a cursor forged with a
			// valid one can point outside the list's partition or bounds,
			// which DynamoDB refuses.
			return nil, errBadCursor()
		}
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.list, err)
		}
		items = append(items, out.Items...)
		if len(items) > p.Limit || out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		in.Limit = aws.Int32(int32(p.Limit + 1 - len(items)))
	}
	res := &Result[T]{HasNext: len(items) > p.Limit}
	if res.HasNext {
		items = items[:p.Limit]
	}
	for _, it := range items {
		var v I
		if err := attributevalue.UnmarshalMap(it, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", q.list, err)
		}
		res.Items = append(res.Items, conv(&v))
		res.Cursors = append(res.Cursors, encodeCursor(q.list, positionOf(it, q.posAttrs())))
	}
	return res, nil
}

// hasExactly reports whether pos holds the attributes attrs and no others.
func hasExactly(pos map[string]string, attrs []string) bool {
	if len(pos) != len(attrs) {
		return false
	}
	for _, a := range attrs {
		if _, ok := pos[a]; !ok {
			return false
		}
	}
	return true
}

func positionOf(it item, attrs []string) map[string]string {
	pos := make(map[string]string, len(attrs))
	for _, a := range attrs {
		if v, ok := it[a].(*types.AttributeValueMemberS); ok {
			pos[a] = v.Value
		}
	}
	return pos
}

// nowKey is the store's time as stored in items and keys.
func (s *Store) nowKey() string { return keyTime(s.Now()) }

// visibleBound is the highest sort key of a post published by now: posts
// scheduled later sort above it, which is how they stay out of public lists.
func (s *Store) visibleBound() string {
	return prefixPost + s.nowKey() + "$" // '$' sorts after the '#' that follows the time
}

// AuthorPosts returns the author's published posts, newest first, as
// summaries. Scheduled posts are included only with includeScheduled.
func (s *Store) AuthorPosts(ctx context.Context, authorID string, p Page, includeScheduled bool) (*Result[*Post], error) {
	upper := s.visibleBound()
	list := "author-posts:" + authorID
	if includeScheduled {
		upper, list = prefixPost+"~", list+":all"
	}
	pk := expression.Key(attrPK).Equal(expression.Value(prefixAuthor + authorID))
	return queryPage(ctx, s, listQuery{
		list: list,
		cond: pk.And(expression.Key(attrSK).Between(expression.Value(prefixPost), expression.Value(upper))),
	}, p, (*postItem).post)
}

// AuthorDrafts returns the author's drafts, newest first, with bodies.
func (s *Store) AuthorDrafts(ctx context.Context, authorID string, p Page) (*Result[*Post], error) {
	return queryPage(ctx, s, listQuery{
		list:  "author-drafts:" + authorID,
		index: true,
		cond:  expression.Key(attrGSI1PK).Equal(expression.Value(draftPartition(authorID))),
	}, p, (*postItem).post)
}

// CategoryPosts returns the category's visible posts, newest first, as
// summaries.
func (s *Store) CategoryPosts(ctx context.Context, slug string, p Page) (*Result[*Post], error) {
	return queryPage(ctx, s, listQuery{
		list:  "category-posts:" + slug,
		index: true,
		cond: expression.Key(attrGSI1PK).Equal(expression.Value(categoryPartition(slug))).
			And(expression.Key(attrGSI1SK).LessThan(expression.Value(s.visibleBound()))),
	}, p, (*postItem).post)
}

// Comments returns the post's top-level comments, oldest first.
func (s *Store) Comments(ctx context.Context, postID string, p Page) (*Result[*Comment], error) {
	return queryPage(ctx, s, listQuery{
		list:    "comments:" + postID,
		forward: true,
		cond: expression.Key(attrPK).Equal(expression.Value(prefixPost + postID)).
			And(expression.Key(attrSK).BeginsWith(prefixComment)),
	}, p, (*commentItem).comment)
}

// Authors returns all authors, oldest first.
func (s *Store) Authors(ctx context.Context, p Page) (*Result[*Author], error) {
	return queryPage(ctx, s, listQuery{
		list: "authors", index: true, forward: true,
		cond: expression.Key(attrGSI1PK).Equal(expression.Value(authorsPartition)),
	}, p, func(it *authorItem) *Author { return it.author(s.nowKey()) })
}

// Categories returns all categories by slug.
func (s *Store) Categories(ctx context.Context, p Page) (*Result[*Category], error) {
	return queryPage(ctx, s, listQuery{
		list: "categories", index: true, forward: true,
		cond: expression.Key(attrGSI1PK).Equal(expression.Value(categoriesPartition)),
	}, p, func(it *categoryItem) *Category { return it.category(s.nowKey()) })
}

// Replies returns the replies to the given top-level comments of one post,
// each list oldest first. All replies of the comments lie in one key range
// (see commentKey), so this is one Query however many comments are asked
// about; only more than 1 MB of replies takes more.
func (s *Store) Replies(ctx context.Context, postID string, parentIDs []string) (map[string][]*Comment, error) {
	out := make(map[string][]*Comment, len(parentIDs))
	if len(parentIDs) == 0 {
		return out, nil
	}
	var lo, hi string
	for _, pid := range parentIDs {
		c, err := parseCommentID(pid)
		if err != nil {
			return nil, err
		}
		if c.parent != nil {
			continue // a reply has no replies of its own
		}
		prefix := threadPrefix(c)
		if lo == "" || prefix < lo {
			lo = prefix
		}
		if prefix > hi {
			hi = prefix
		}
	}
	if lo == "" {
		return out, nil
	}
	expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(attrPK).Equal(expression.Value(prefixPost + postID)).
			And(expression.Key(attrSK).Between(expression.Value(lo), expression.Value(hi+"~")))))
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(parentIDs))
	for _, id := range parentIDs {
		want[id] = true
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("replies of post %q: %w", postID, err)
		}
		var items []commentItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode replies: %w", err)
		}
		for i := range items {
			if want[items[i].ParentID] {
				out[items[i].ParentID] = append(out[items[i].ParentID], items[i].comment())
			}
		}
	}
	return out, nil
}

// LatestPosts returns the whole blog's visible posts, newest first, with
// bodies. The feed is spread over feedShards GSI1 partitions; each page
// queries every shard at once and merges them, so the cost is feedShards
// requests whatever the page size.
func (s *Store) LatestPosts(ctx context.Context, p Page) (*Result[*Post], error) {
	if err := validatePage(p); err != nil {
		return nil, err
	}
	const list = "feed"
	upper := s.visibleBound()
	pos, err := decodeCursor(list, p.After)
	if err != nil {
		return nil, err
	}
	if pos != nil {
		if !hasExactly(pos, []string{attrGSI1SK}) || !strings.HasPrefix(pos[attrGSI1SK], prefixPost) {
			return nil, errBadCursor()
		}
		upper = min(upper, pos[attrGSI1SK])
	}
	type shard struct {
		items     []postItem
		truncated bool
	}
	shards := make([]shard, feedShards)
	g, gctx := errgroup.WithContext(ctx)
	for i := range shards {
		g.Go(func() error {
			expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(
				expression.Key(attrGSI1PK).Equal(expression.Value(fmt.Sprintf("%s%d", prefixFeed, i))).
					And(expression.Key(attrGSI1SK).LessThan(expression.Value(upper)))))
			if err != nil {
				return err
			}
			out, err := s.db.Query(gctx, &dynamodb.QueryInput{
				TableName:                 aws.String(s.table),
				IndexName:                 aws.String(indexGSI1),
				KeyConditionExpression:    expr.KeyCondition(),
				ExpressionAttributeNames:  expr.Names(),
				ExpressionAttributeValues: expr.Values(),
				ScanIndexForward:          aws.Bool(false),
				Limit:                     aws.Int32(int32(p.Limit + 1)),
			})
			if err != nil {
				return fmt.Errorf("query feed shard %d: %w", i, err)
			}
			shards[i].truncated = out.LastEvaluatedKey != nil && len(out.Items) <= p.Limit
			return attributevalue.UnmarshalListOfMaps(out.Items, &shards[i].items)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// A shard cut short by the 1 MB limit may hold more items newer than
	// what other shards returned; nothing older than its last item is safe
	// to return on this page.
	var floor string
	var merged []postItem
	for _, sh := range shards {
		merged = append(merged, sh.items...)
		if sh.truncated && len(sh.items) > 0 {
			floor = max(floor, sh.items[len(sh.items)-1].GSI1SK)
		}
	}
	sort.Slice(merged, func(a, b int) bool { return merged[a].GSI1SK > merged[b].GSI1SK })
	res := &Result[*Post]{}
	for i := range merged {
		if len(res.Items) == p.Limit || merged[i].GSI1SK < floor {
			res.HasNext = true
			break
		}
		res.Items = append(res.Items, merged[i].post())
		res.Cursors = append(res.Cursors, encodeCursor(list, map[string]string{attrGSI1SK: merged[i].GSI1SK}))
	}
	res.HasNext = res.HasNext || floor != ""
	return res, nil
}
