package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

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
	s.hints.saw(k, res.Item)
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
	defer func() { s.hints.remember(keys, found) }()
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

// readTogether reads keys, at most 100, as they all are at one moment
// (TransactGetItems). An item that a transaction moves from one key to
// another (a comment approved, from held to published) is found at
// exactly one of them, where BatchGetItem, which reads keys one by one,
// can miss it at both. A read that meets a transaction in progress on its
// items is tried again with jittered backoff, and ends in ErrBusy; one
// throttled on every attempt in an error matching ErrUnavailable.
func (s *Store) readTogether(ctx context.Context, keys []key) (map[key]item, error) {
	var gets []types.TransactGetItem
	seen := make(map[key]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(s.table), Key: mustKey(k)}})
		}
	}
	for attempt := 1; ; attempt++ {
		out, err := s.db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		if err == nil {
			found := make(map[key]item, len(keys))
			for _, r := range out.Responses {
				if len(r.Item) > 0 {
					found[itemKey(r.Item)] = r.Item
				}
			}
			s.hints.remember(keys, found)
			return found, nil
		}
		canceled, ok := errors.AsType[*types.TransactionCanceledException](err)
		throttled := ok && hasReason(canceled.CancellationReasons, throttledReasons...)
		switch {
		case !ok || !throttled && !hasReason(canceled.CancellationReasons, "TransactionConflict"):
			return nil, fmt.Errorf("transact get: %w", err)
		case attempt == maxTxAttempts && throttled:
			return nil, fmt.Errorf("read throttled on every attempt: %w", errors.Join(ErrUnavailable, err))
		case attempt == maxTxAttempts:
			return nil, ErrBusy
		}
		if err := sleep(ctx, attempt); err != nil {
			return nil, err
		}
	}
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

// absentPostID is a post id no post has: new ids are UUIDs.
const absentPostID = "-"

// GetPostBySlug returns the post that holds slug, or ErrNotFound. It makes
// the same two reads whether or not a post holds the slug: for a free slug
// it reads a post that does not exist. A caller that hides some posts (a
// draft from anyone but its author) then answers a hidden post and a free
// slug alike, in time as in words.
func (s *Store) GetPostBySlug(ctx context.Context, slug string) (*Post, error) {
	id, err := s.PostIDBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	return s.GetPost(ctx, id)
}

// PostIDBySlug returns the id of the post that holds slug, as its current
// slug or one it held before, from the slug's reservation: one GetItem.
// For a slug no post holds it returns an id no post has, so that what a
// caller reads next with it (GetPost: ErrNotFound; Comments: none) costs
// the same requests as for a post it may not show. A string that cannot
// be a slug is a *ValidationError.
func (s *Store) PostIDBySlug(ctx context.Context, slug string) (string, error) {
	if err := validateSlug("slug", slug); err != nil {
		return "", err
	}
	var sl slugItem
	err := s.getItem(ctx, slugKey(slug), false, &sl)
	switch {
	case errors.Is(err, ErrNotFound):
		return absentPostID, nil
	case err != nil:
		return "", fmt.Errorf("slug %q: %w", slug, err)
	}
	return sl.PostID, nil
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

// GetComments returns the comments named by keys in order, published or
// held, with ErrNotFound (or a ValidationError for a malformed id) in
// errs. Each comment is looked for where it is published and where it is
// held, both in the same BatchGetItem.
func (s *Store) GetComments(ctx context.Context, keys []CommentKey) ([]*Comment, []error) {
	out := make([]*Comment, len(keys))
	errs := make([]error, len(keys))
	var read []key
	cids := make([]*commentID, len(keys))
	for i, ck := range keys {
		cid, err := parseCommentID(ck.CommentID)
		if err != nil {
			errs[i] = err
			continue
		}
		cids[i] = &cid
		read = append(read, commentKey(ck.PostID, cid), heldKey(ck.PostID, cid))
	}
	if len(read) == 0 {
		return out, errs
	}
	found, err := s.batchGet(ctx, read, false)
	for i, ck := range keys {
		switch {
		case cids[i] == nil:
		case err != nil:
			errs[i] = err
		default:
			out[i], errs[i] = decodeComment(found, ck.PostID, *cids[i])
		}
	}
	return out, errs
}

// decodeComment returns the comment cid of postID from found, published
// (a tombstone too) or held, or ErrNotFound.
func decodeComment(found map[key]item, postID string, cid commentID) (*Comment, error) {
	for _, k := range []key{commentKey(postID, cid), heldKey(postID, cid)} {
		var c commentItem
		err := decodeFound(found, k, &c)
		switch {
		case err == nil:
			return c.comment(), nil
		case !errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("decode comment %q: %w", cid, err)
		}
	}
	return nil, fmt.Errorf("comment %q: %w", cid, ErrNotFound)
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

// ReadComment returns the comment k names, published or held, and its
// post, read together in one request with ConsistentRead, for a check
// made before a write. It returns ErrNotFound when either is missing, or
// a *ValidationError for a malformed comment id.
func (s *Store) ReadComment(ctx context.Context, k CommentKey) (*Comment, *Post, error) {
	cid, err := parseCommentID(k.CommentID)
	if err != nil {
		return nil, nil, err
	}
	pk := postKey(k.PostID)
	found, err := s.readTogether(ctx, []key{commentKey(k.PostID, cid), heldKey(k.PostID, cid), pk})
	if err != nil {
		return nil, nil, err
	}
	c, err := decodeComment(found, k.PostID, cid)
	if err != nil {
		return nil, nil, err
	}
	var p postItem
	if err := decodeFound(found, pk, &p); err != nil {
		return nil, nil, fmt.Errorf("post %q: %w", k.PostID, err)
	}
	return c, p.post(), nil
}

// GetCommenters returns who wrote comments, for writers in order, authors
// and readers in one BatchGetItem, with ErrNotFound in errs for each
// missing one.
func (s *Store) GetCommenters(ctx context.Context, writers []Writer) ([]*Commenter, []error) {
	out := make([]*Commenter, len(writers))
	errs := make([]error, len(writers))
	keys := make([]key, len(writers))
	for i, w := range writers {
		if w.AuthorID != "" {
			keys[i] = authorKey(w.AuthorID)
		} else {
			keys[i] = readerKey(w.ReaderID)
		}
	}
	found, err := s.batchGet(ctx, keys, false)
	now := s.nowKey()
	for i, w := range writers {
		it, ok := found[keys[i]]
		switch {
		case err != nil:
			errs[i] = err
		case !ok:
			errs[i] = fmt.Errorf("writer %+v: %w", w, ErrNotFound)
		case w.AuthorID != "":
			var a authorItem
			if errs[i] = attributevalue.UnmarshalMap(it, &a); errs[i] == nil {
				out[i] = &Commenter{Author: a.author(now)}
			}
		default:
			var r readerItem
			if errs[i] = attributevalue.UnmarshalMap(it, &r); errs[i] == nil {
				out[i] = &Commenter{Reader: r.reader()}
			}
		}
	}
	return out, errs
}

// Stats returns the blog-wide counts, the archive by month included.
func (s *Store) Stats(ctx context.Context) (*Stats, error) {
	var it statsItem
	err := s.getItem(ctx, statsItemKey(), false, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("stats: %w", err)
	}
	now := s.nowKey()
	visible, _ := it.Scheduled.split(it.PostCount, now)
	return &Stats{PostCount: visible, AuthorCount: it.AuthorCount, CategoryCount: it.CategoryCount,
		Archive: it.Months.archive(it.Scheduled, now)}, nil
}

func mapKeys(ids []string, f func(string) key) []key {
	keys := make([]key, len(ids))
	for i, id := range ids {
		keys[i] = f(id)
	}
	return keys
}

// listQuery is one paginated list: a key condition on the table or GSI1,
// its order, and the attributes that position a cursor in it.
type listQuery struct {
	list    string // cursor namespace
	index   bool   // GSI1 instead of the table
	cond    expression.KeyConditionBuilder
	forward bool // the list's order is ascending
	empty   bool // the bounds hold nothing: answered without a request
}

func (q listQuery) posAttrs() []string {
	if q.index {
		return []string{attrPK, attrSK, attrGSI1PK, attrGSI1SK}
	}
	return []string{attrPK, attrSK}
}

// queryPage runs q for one page: Limit+1 items are asked for, so whether
// more follow (or, for a backward page, precede) is known without a second
// request; only a page cut short by DynamoDB's 1 MB response limit takes
// another. A backward page is read in the other direction from its
// cursor and returned in the list's order.
func queryPage[T any, I any](ctx context.Context, s *Store, q listQuery, p Page, conv func(*I) T) (*Result[T], error) {
	if err := validatePage(p); err != nil {
		return nil, err
	}
	field, cursor := "after", p.After
	if p.Backward {
		field, cursor = "before", p.Before
	}
	pos, err := s.position(q.list, field, cursor)
	if err != nil {
		return nil, err
	}
	res := &Result[T]{}
	if q.empty {
		return res.from(p, false), nil
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
		ScanIndexForward:          aws.Bool(q.forward != p.Backward),
		Limit:                     aws.Int32(int32(p.Limit + 1)),
	}
	if q.index {
		in.IndexName = aws.String(indexGSI1)
	}
	if pos != nil {
		if !hasExactly(pos, q.posAttrs()) {
			return nil, BadCursor(field)
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
			// Only a cursor this list sealed gets here, which DynamoDB
			// should take; should it refuse the start key all the same,
			// the fault is the cursor's, not the server's.
			return nil, BadCursor(field)
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
	more := len(items) > p.Limit
	if more {
		items = items[:p.Limit]
	}
	for _, it := range items {
		var v I
		if err := attributevalue.UnmarshalMap(it, &v); err != nil {
			return nil, fmt.Errorf("decode %s: %w", q.list, err)
		}
		res.Items = append(res.Items, conv(&v))
		res.Cursors = append(res.Cursors, s.encodeCursor(q.list, positionOf(it, q.posAttrs())))
	}
	return res.from(p, more), nil
}

// from finishes a page read for p in its reading order: it puts a backward
// page in the list's order, and says what lies beyond each end: more is
// whether the read found items past the page, the other side holds items
// when the page started from a cursor.
func (r *Result[T]) from(p Page, more bool) *Result[T] {
	if !p.Backward {
		r.HasNext, r.HasPrev = more, p.After != ""
		return r
	}
	slices.Reverse(r.Items)
	slices.Reverse(r.Cursors)
	r.HasPrev, r.HasNext = more, p.Before != ""
	return r
}

// position returns the position a cursor of list holds, or nil for an
// empty cursor; a cursor that is not one of the list is a
// *ValidationError on field, the argument that carried it.
func (s *Store) position(list, field, cursor string) (map[string]string, error) {
	pos, err := s.decodeCursor(list, cursor)
	if err != nil {
		return nil, BadCursor(field)
	}
	return pos, nil
}

// BadCursor returns the *ValidationError of a cursor, given in the
// argument field, that is not one of the list it was given to: the error
// of a tampered, foreign or empty cursor.
func BadCursor(field string) error {
	return &ValidationError{Field: field, Reason: "is not a cursor of this list"}
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

// postRange returns the sort keys of the posts published in per and
// below the bound upper, for a list named list: lo and hi for BETWEEN
// (neither is a post's key, so both work as exclusive bounds as well),
// the list's name for cursors, which includes the period, and whether the
// range is empty. A period that ends before it starts is a
// *ValidationError.
func postRange(per Period, list, upper string) (lo, hi, name string, empty bool, err error) {
	if !per.From.IsZero() && !per.To.IsZero() && per.From.After(per.To) {
		return "", "", "", false, invalid("publishedBefore", "must not be earlier than publishedAfter")
	}
	lo, hi, name = prefixPost, upper, list
	if !per.From.IsZero() {
		lo = prefixPost + keyTime(ceilMilli(per.From))
		name += "|from=" + lo
	}
	if !per.To.IsZero() {
		to := prefixPost + keyTime(ceilMilli(per.To))
		hi, name = min(hi, to), name+"|to="+to
	}
	return lo, hi, name, lo >= hi, nil
}

// ceilMilli rounds t up to the millisecond the table stores: a post
// published at a stored time is at or after t exactly when it is at or
// after ceilMilli(t).
func ceilMilli(t time.Time) time.Time {
	if r := t.Truncate(time.Millisecond); r.Before(t) {
		return r.Add(time.Millisecond)
	}
	return t
}

// AuthorPosts returns the author's published posts in per, newest first,
// as summaries. Scheduled posts are included only with includeScheduled.
func (s *Store) AuthorPosts(ctx context.Context, authorID string, p Page, per Period, includeScheduled bool) (*Result[*Post], error) {
	upper := s.visibleBound()
	list := "author-posts:" + authorID
	if includeScheduled {
		upper, list = prefixPost+"~", list+":all"
	}
	lo, hi, list, empty, err := postRange(per, list, upper)
	if err != nil {
		return nil, err
	}
	pk := expression.Key(attrPK).Equal(expression.Value(prefixAuthor + authorID))
	return queryPage(ctx, s, listQuery{
		list:  list,
		cond:  pk.And(expression.Key(attrSK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
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

// CategoryPosts returns the category's visible posts in per, newest
// first, as summaries.
func (s *Store) CategoryPosts(ctx context.Context, slug string, p Page, per Period) (*Result[*Post], error) {
	lo, hi, list, empty, err := postRange(per, "category-posts:"+slug, s.visibleBound())
	if err != nil {
		return nil, err
	}
	return queryPage(ctx, s, listQuery{
		list:  list,
		index: true,
		cond: expression.Key(attrGSI1PK).Equal(expression.Value(categoryPartition(slug))).
			And(expression.Key(attrGSI1SK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
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

// ReplyPage returns a page of the published replies to the top-level
// comment parent, oldest first, at most MaxReplyPage. The first page is
// the replies parent carries, so it costs no request; later pages, and
// the first of a comment written before comments carried their replies,
// are one Query each. A reply has no replies: its page is empty.
func (s *Store) ReplyPage(ctx context.Context, parent *Comment, p Page) (*Result[*Comment], error) {
	if p.Limit < 1 || p.Limit > MaxReplyPage {
		field := "first"
		if p.Backward {
			field = "last"
		}
		return nil, &ValidationError{Field: field, Reason: fmt.Sprintf("must be between 1 and %d", MaxReplyPage)}
	}
	if parent.ParentID != "" {
		return &Result[*Comment]{}, nil
	}
	pcid, err := parseCommentID(parent.ID)
	if err != nil {
		return nil, err
	}
	list := "replies:" + parent.PostID + ":" + parent.ID
	if p.After != "" || p.Backward || !parent.repliesKnown {
		return queryPage(ctx, s, listQuery{
			list:    list,
			forward: true,
			cond: expression.Key(attrPK).Equal(expression.Value(prefixPost + parent.PostID)).
				And(expression.Key(attrSK).BeginsWith(threadPrefix(pcid))),
		}, p, (*commentItem).comment)
	}
	res := &Result[*Comment]{HasNext: parent.ReplyCount > int64(p.Limit)}
	for _, r := range parent.Replies[:min(p.Limit, len(parent.Replies))] {
		rcid, err := parseCommentID(r.ID)
		if err != nil {
			return nil, err
		}
		k := commentKey(parent.PostID, rcid)
		res.Items = append(res.Items, r)
		res.Cursors = append(res.Cursors, s.encodeCursor(list, map[string]string{attrPK: k.PK, attrSK: k.SK}))
	}
	return res, nil
}

// ModerationQueue returns pending comments, newest first: those on the
// posts of authorID, or with an empty authorID all of the blog's. Each is
// one Query, of GSI1 or of the admins' queue.
func (s *Store) ModerationQueue(ctx context.Context, authorID string, p Page) (*Result[*Comment], error) {
	if authorID == "" {
		return queryPage(ctx, s, listQuery{
			list: "queue",
			cond: expression.Key(attrPK).Equal(expression.Value(queuePartition)),
		}, p, (*commentItem).comment)
	}
	return queryPage(ctx, s, listQuery{
		list:  "queue:" + authorID,
		index: true,
		cond:  expression.Key(attrGSI1PK).Equal(expression.Value(authorQueue(authorID))),
	}, p, (*commentItem).comment)
}

// LatestPosts returns the whole blog's visible posts in per, newest
// first, with bodies. The feed is spread over feedShards GSI1 partitions;
// each page queries every shard at once and merges them, so the cost is
// feedShards requests whatever the page size.
func (s *Store) LatestPosts(ctx context.Context, p Page, per Period) (*Result[*Post], error) {
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
		if !hasExactly(pos, []string{attrGSI1SK}) || !strings.HasPrefix(pos[attrGSI1SK], prefixPost) {
			return nil, BadCursor(field)
		}
		// The cursor's own post is a bound that the page leaves out.
		r.skip = pos[attrGSI1SK]
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
		res.Cursors = append(res.Cursors, s.encodeCursor(list, map[string]string{attrGSI1SK: items[i].GSI1SK}))
	}
	return res.from(p, more), nil
}

// CountPosts counts the visible posts published in per of the author
// authorID (scheduled ones too with includeScheduled), of the category
// category, or of the whole blog when both are empty. It reads the
// period's keys: one Query (one for each feed shard, at once) for every
// 1 MB of posts in it. CountIn answers month-aligned periods with no read.
func (s *Store) CountPosts(ctx context.Context, authorID, category string, per Period, includeScheduled bool) (int64, error) {
	upper := s.visibleBound()
	if includeScheduled {
		upper = prefixPost + "~"
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
		conds = append(conds, expression.Key(attrPK).Equal(expression.Value(prefixAuthor+authorID)).And(between(attrSK)))
	case category != "":
		conds = append(conds, expression.Key(attrGSI1PK).Equal(expression.Value(categoryPartition(category))).And(between(attrGSI1SK)))
	default:
		for i := range feedShards {
			conds = append(conds, expression.Key(attrGSI1PK).Equal(expression.Value(fmt.Sprintf("%s%d", prefixFeed, i))).And(between(attrGSI1SK)))
		}
	}
	counts := make([]int64, len(conds))
	g, gctx := errgroup.WithContext(ctx)
	for i, cond := range conds {
		g.Go(func() error {
			expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(cond))
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
				in.IndexName = aws.String(indexGSI1)
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
	shards := make([]shard, feedShards)
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
				items, next, err := s.rangeQuery(gctx, fmt.Sprintf("%s%d", prefixFeed, i), r, descending, need-len(sh.items), sh.next)
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
	expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(attrGSI1PK).Equal(expression.Value(partition)).
			And(expression.Key(attrGSI1SK).Between(expression.Value(r.lo), expression.Value(r.hi)))))
	if err != nil {
		return nil, nil, err
	}
	asked := limit
	if r.skip != "" && start == nil {
		asked++ // the cursor's own item may be among them
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(indexGSI1),
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

// AdjacentPost returns the visible post published just before p (newer
// false) or just after it (newer true) in the whole blog, or in the
// category with the slug category when that is not empty. It returns nil
// when there is none, or when p is not published. The whole blog costs
// one Query of each feed shard, at once; a category one Query.
func (s *Store) AdjacentPost(ctx context.Context, p *Post, category string, newer bool) (*Post, error) {
	partitions := make([]string, feedShards)
	for i := range partitions {
		partitions[i] = fmt.Sprintf("%s%d", prefixFeed, i)
	}
	if category != "" {
		if err := validateSlug("slug", category); err != nil {
			return nil, err
		}
		partitions = []string{categoryPartition(category)}
	}
	if p.Status != StatusPublished {
		return nil, nil
	}
	sk := postSortKey(p.PublishedAt, p.ID)
	r := skRange{lo: prefixPost, hi: s.visibleBound(), skip: sk}
	if newer {
		r.lo = sk
	} else {
		r.hi = min(r.hi, sk)
	}
	if r.lo > r.hi {
		return nil, nil
	}
	found := make([][]postItem, len(partitions))
	g, gctx := errgroup.WithContext(ctx)
	for i, part := range partitions {
		g.Go(func() error {
			var err error
			found[i], _, err = s.rangeQuery(gctx, part, r, !newer, 1, nil)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var best *postItem
	for _, items := range found {
		for i := range items {
			if best == nil || (items[i].GSI1SK < best.GSI1SK) == newer {
				best = &items[i]
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	return best.post(), nil
}
