package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Paginated lists: each is one Query of the table or GSI1 for a page,
// asking one item more than the page to know whether more follow, with
// sealed cursors (cursor.go) that hold the position of an item in the
// list. Lists of posts are bounded by a period and by the store's time,
// which is how scheduled posts stay out of them until their time comes.

// MaxPageSize is the largest page any list returns.
const MaxPageSize = 100

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
		return []string{keys.AttrPK, keys.AttrSK, keys.AttrGSI1PK, keys.AttrGSI1SK}
	}
	return []string{keys.AttrPK, keys.AttrSK}
}

// queryPage runs q for one page: Limit+1 items are asked for, so whether
// more follow (or, for a backward page, precede) is known without a second
// request; only a page cut short by DynamoDB's 1 MB response limit takes
// another. A backward page is read in the other direction from its
// cursor and returned in the list's order.
func queryPage[T any, I any](ctx context.Context, s *Store, q listQuery, p PageArgs, conv func(*I) T) (*Result[T], error) {
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
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(q.cond))
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
		in.IndexName = aws.String(keys.IndexGSI1)
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
func (r *Result[T]) from(p PageArgs, more bool) *Result[T] {
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
func (s *Store) nowKey() string { return keys.Time(s.Now()) }

// visibleBound is the highest sort key of a post published by now: posts
// scheduled later sort above it, which is how they stay out of public lists.
func (s *Store) visibleBound() string {
	return keys.PrefixPost + s.nowKey() + "$" // '$' sorts after the '#' that follows the time
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
	lo, hi, name = keys.PrefixPost, upper, list
	if !per.From.IsZero() {
		lo = keys.PrefixPost + keys.Time(ceilMilli(per.From))
		name += "|from=" + lo
	}
	if !per.To.IsZero() {
		to := keys.PrefixPost + keys.Time(ceilMilli(per.To))
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
func (s *Store) AuthorPosts(ctx context.Context, authorID string, p PageArgs, per Period, includeScheduled bool) (*Result[*Post], error) {
	upper := s.visibleBound()
	list := "author-posts:" + authorID
	if includeScheduled {
		upper, list = keys.PrefixPost+"~", list+":all"
	}
	lo, hi, list, empty, err := postRange(per, list, upper)
	if err != nil {
		return nil, err
	}
	pk := expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Author(authorID).PK))
	return queryPage(ctx, s, listQuery{
		list:  list,
		cond:  pk.And(expression.Key(keys.AttrSK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
	}, p, (*postItem).post)
}

// AuthorDrafts returns the author's drafts, newest first, with bodies.
func (s *Store) AuthorDrafts(ctx context.Context, authorID string, p PageArgs) (*Result[*Post], error) {
	return queryPage(ctx, s, listQuery{
		list:  "author-drafts:" + authorID,
		index: true,
		cond:  expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.DraftPartition(authorID))),
	}, p, (*postItem).post)
}

// CategoryPosts returns the category's visible posts in per, newest
// first, as summaries.
func (s *Store) CategoryPosts(ctx context.Context, slug string, p PageArgs, per Period) (*Result[*Post], error) {
	lo, hi, list, empty, err := postRange(per, "category-posts:"+slug, s.visibleBound())
	if err != nil {
		return nil, err
	}
	return queryPage(ctx, s, listQuery{
		list:  list,
		index: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.CategoryPartition(slug))).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
	}, p, (*postItem).post)
}

// Comments returns the post's top-level comments, oldest first.
func (s *Store) Comments(ctx context.Context, postID string, p PageArgs) (*Result[*Comment], error) {
	return queryPage(ctx, s, listQuery{
		list:    "comments:" + postID,
		forward: true,
		cond: expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Post(postID).PK)).
			And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixComment)),
	}, p, (*commentItem).comment)
}

// Authors returns all authors, oldest first.
func (s *Store) Authors(ctx context.Context, p PageArgs) (*Result[*Author], error) {
	return queryPage(ctx, s, listQuery{
		list: "authors", index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(keys.AuthorsPartition))),
	}, p, func(it *authorItem) *Author { return it.author(s.nowKey()) })
}

// Categories returns all categories by slug.
func (s *Store) Categories(ctx context.Context, p PageArgs) (*Result[*Category], error) {
	return queryPage(ctx, s, listQuery{
		list: "categories", index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(keys.CategoriesPartition))),
	}, p, func(it *categoryItem) *Category { return it.category(s.nowKey()) })
}

// collectIDs returns the id attribute of every item the Query of cond
// finds, in the table or, with index, in GSI1.
func (s *Store) collectIDs(ctx context.Context, index bool, cond expression.KeyConditionBuilder) ([]string, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond).
		WithProjection(expression.NamesList(expression.Name("id"))))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	if index {
		in.IndexName = aws.String(keys.IndexGSI1)
	}
	var ids []string
	pages := dynamodb.NewQueryPaginator(s.db, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		var rows []struct {
			ID string `dynamodbav:"id"`
		}
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}
