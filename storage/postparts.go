package storage

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// A post is three items of its partition (doc_layout.go): the post item,
// a summary that lists, copies and the feed show; its body item, the
// Markdown and what is rendered from it, written only when the body
// changes; and its count item, the comment counts and what a comment's
// transaction checks (status, publishedAt, authorId), the only item a
// comment write touches. Their sort keys follow the post's own, so the
// three are one key range of the partition: POST#<id>, POST#<id>#COUNT,
// POST#<id>#TEXT (the body last, so the post with its counts alone is a
// range too).

// leftBody marks a post read without its body item (s.ks.PostRead) as
// such, unless its own item holds its body (a post of layout 3), which
// then was read with it.
func (it *postItem) leftBody() {
	it.bodyUnread = !it.hasBody && it.Body == "" && it.HTML == ""
}

// condVisible is the condition on a count item that its post is
// published and visible at now.
func condVisible(now string) expression.ConditionBuilder {
	return expression.Name("status").Equal(expression.Value(string(StatusPublished))).
		And(expression.Name("publishedAt").LessThanEqual(expression.Value(now)))
}

// bodyItem returns the body item of the post.
func (it *postItem) bodyItem(ks keys.Space) bodyItem {
	k := ks.PostBody(it.ID)
	return bodyItem{PK: k.PK, SK: k.SK, Type: typePostBody, ID: it.ID,
		Body: it.Body, HTML: it.HTML, TOC: it.TOC, RenderVersion: it.RenderVersion}
}

// countItem returns the count item of the post with the counts c.
func (it *postItem) countItem(ks keys.Space, comments, threads int64) countItem {
	k := ks.PostCount(it.ID)
	return countItem{PK: k.PK, SK: k.SK, Type: typePostCount, ID: it.ID, AuthorID: it.AuthorID,
		Status: it.Status, PublishedAt: it.PublishedAt, CommentCount: comments, ThreadCount: threads}
}

// stored returns the post item as it is put: its keys, without its body
// and what is rendered from it (the body item holds them), with the sums
// of the two so that the change feed sees a body edit on the post item.
func (it postItem) stored(ks keys.Space) postItem {
	it = it.withPostKeys(ks)
	it.BodySum, it.HTMLSum = it.bodySum(), it.htmlSum()
	it.Body, it.HTML, it.TOC = "", "", nil
	return it
}

// bodySum returns a short sum of the post's body: of the body when the
// item holds it (read with its body item, or of layout 3), else the sum
// the post item holds.
func (it *postItem) bodySum() string {
	if it.Body != "" {
		return textSum(it.Body)
	}
	return it.BodySum
}

// htmlSum returns a short sum of the post's rendered body, as bodySum.
func (it *postItem) htmlSum() string {
	if it.HTML != "" {
		return textSum(it.HTML)
	}
	return it.HTMLSum
}

func textSum(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}

// bodyChanged reports whether a write from before to after must put the
// body item: the body or its rendering changed, or before has none yet.
// A post read without its body item (bodyUnread) keeps it as it is: the
// change could not alter it (changePost).
func bodyChanged(before, after *postItem) bool {
	if before.bodyUnread {
		return false
	}
	return !before.hasBody || before.Body != after.Body || before.HTML != after.HTML ||
		before.RenderVersion != after.RenderVersion || len(before.TOC) != len(after.TOC)
}

// decodePost returns the post id from found, its items as a read of
// s.ks.PostParts found them: its count item and body item set on it when
// found (a post of layout 3 has neither and carries both in its own
// item), or ErrNotFound.
func decodePost(ks keys.Space, found map[key]item, id string) (*postItem, error) {
	raw, ok := found[ks.Post(id)]
	if !ok {
		return nil, fmt.Errorf("post %q: %w", id, ErrNotFound)
	}
	p := &postItem{}
	if err := attributevalue.UnmarshalMap(raw, p); err != nil {
		return nil, fmt.Errorf("decode post %q: %w", id, err)
	}
	if raw, ok := found[ks.PostBody(id)]; ok {
		var b bodyItem
		if err := attributevalue.UnmarshalMap(raw, &b); err != nil {
			return nil, fmt.Errorf("decode body of %q: %w", id, err)
		}
		// The post item names the renderer too (the background
		// re-render lists posts by it); both are written together.
		p.Body, p.HTML, p.TOC, p.hasBody = b.Body, b.HTML, b.TOC, true
		p.RenderVersion = cmp.Or(p.RenderVersion, b.RenderVersion)
	}
	if raw, ok := found[ks.PostCount(id)]; ok {
		c := &countItem{}
		if err := attributevalue.UnmarshalMap(raw, c); err != nil {
			return nil, fmt.Errorf("decode counts of %q: %w", id, err)
		}
		p.counts = c
	}
	return p, nil
}

// readPostParts reads the post id with its count item and body item: one
// Query of the key range POST#<id> .. POST#<id>#TEXT of its partition,
// which DynamoDB bills by the items' total size (a missing post costs
// what a small one does).
func (s *Store) readPostParts(ctx context.Context, id string, consistent bool) (*postItem, error) {
	return s.readPostItems(ctx, id, consistent, true)
}

// readPostItems reads the post id with its count item and, with body, its
// body item: one Query of the key range POST#<id> .. POST#<id>#COUNT
// without it (bodyUnread set, but for a post of layout 3, whose own item
// holds its body).
func (s *Store) readPostItems(ctx context.Context, id string, consistent, body bool) (*postItem, error) {
	it, err := s.queryPostParts(ctx, id, consistent, s.ks.PostRead(id, body))
	if err == nil && !body {
		it.leftBody()
	}
	return it, err
}

// GetPostWithoutBody returns the post with id as GetPost does, but
// without its body, its HTML and its table of contents (BodyUnread): one
// Query of its post item and count item, for a page that shows none of
// them. A post of layout 3, whose item holds its body, comes with it.
func (s *Store) GetPostWithoutBody(ctx context.Context, id string) (*Post, error) {
	it, err := s.readPostItems(ctx, id, false, false)
	if err != nil {
		return nil, err
	}
	return it.post(), nil
}

// ReadPostWithoutBody returns the post with id as ReadPost does (with
// ConsistentRead, for the check a caller makes before a write), but
// without its body, as GetPostWithoutBody does, or ErrNotFound.
func (s *Store) ReadPostWithoutBody(ctx context.Context, id string) (*Post, error) {
	it, err := s.readPostItems(ctx, id, true, false)
	if err != nil {
		return nil, err
	}
	return it.post(), nil
}

// queryPostParts reads the items keys of the post id, which follow one
// another in its partition (s.ks.PostParts), with one Query.
func (s *Store) queryPostParts(ctx context.Context, id string, consistent bool, ks []key) (*postItem, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrPK).Equal(expression.Value(ks[0].PK)).
			And(expression.Key(keys.AttrSK).Between(expression.Value(ks[0].SK), expression.Value(ks[len(ks)-1].SK)))))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(consistent),
	})
	if err != nil {
		return nil, fmt.Errorf("query post %q: %w", id, err)
	}
	found := make(map[key]item, len(out.Items))
	for _, it := range out.Items {
		found[dynamo.ItemKey(it)] = it
	}
	s.hints.Remember(ks, found)
	return decodePost(s.ks, found, id)
}

// readCommentCount returns the authoritative comment counts of a post:
// its count item's, read with ConsistentRead (one GetItem).
func (s *Store) readCommentCount(ctx context.Context, postID string) (comments, threads int, err error) {
	var c countItem
	if err := s.db.Get(ctx, s.ks.PostCount(postID), true, &c); err != nil {
		return 0, 0, fmt.Errorf("counts of post %q: %w", postID, err)
	}
	return int(c.CommentCount), int(c.ThreadCount), nil
}

// decodeCounts returns the count item of the post postID from found, or
// ErrNotFound: the post is gone.
func decodeCounts(ks keys.Space, found map[key]item, postID string) (*countItem, error) {
	var c countItem
	if err := dynamo.DecodeFound(found, ks.PostCount(postID), &c); err != nil {
		return nil, fmt.Errorf("post %q: %w", postID, ErrNotFound)
	}
	return &c, nil
}

// partActions adds to t the writes of the body item and the count item
// of a post write from before (nil: create) to after (nil: delete).
func partActions(ks keys.Space, t *dynamo.Txn, before, after *postItem) error {
	switch {
	case before == nil:
		c := after.countItem(ks, 0, 0)
		return firstErr(
			t.Put(after.bodyItem(ks), ptr(dynamo.CondNotExists()), ErrAlreadyExists),
			t.Put(c, ptr(dynamo.CondNotExists()), ErrAlreadyExists),
		)
	case after == nil:
		return firstErr(
			t.Delete(ks.PostBody(before.ID), nil, nil),
			t.Delete(ks.PostCount(before.ID), nil, nil),
		)
	}
	var errs []error
	if bodyChanged(before, after) {
		errs = append(errs, t.Put(after.bodyItem(ks), nil, nil))
	}
	switch c := before.counts; {
	case c == nil:
		// A post of layout 3 (Migrate moves it): its counts as its item
		// holds them, while no comment can count on the missing item.
		n := after.countItem(ks, before.CommentCount, before.ThreadCount)
		errs = append(errs, t.Put(n, ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
	case c.Status != after.Status || c.PublishedAt != after.PublishedAt || c.AuthorID != after.AuthorID:
		// Put whole, on the condition that its counts are as read (a
		// comment meanwhile makes the write read again), so that the
		// hints of this server hold the item as it is (hints.Wrote).
		n := after.countItem(ks, c.CommentCount, c.ThreadCount)
		cond := expression.Name("commentCount").Equal(expression.Value(c.CommentCount)).
			And(expression.Name("threadCount").Equal(expression.Value(c.ThreadCount)))
		errs = append(errs, t.Put(n, &cond, dynamo.ErrRetry))
	}
	return firstErr(errs...)
}

// checkPostParts checks that every post has its body item and its count
// item (postparts.go), that its own item keeps neither its body nor its
// rendered body, that the sums it keeps are those of its body item, and
// that its count item agrees with it on what a comment checks; and that
// no body or count item outlives its post. It sets each post's body and
// counts from them, for the checks that follow.
func checkPostParts(ks keys.Space, posts map[string]*postItem, bodies map[string]*bodyItem, counts map[string]*countItem, badf func(string, ...any)) {
	for id, p := range posts {
		if p.Body != "" || p.HTML != "" || len(p.TOC) > 0 {
			badf("post %s keeps its body on its own item", id)
		}
		b := bodies[id]
		switch {
		case b == nil:
			badf("post %s has no body item", id)
		case b.PK != ks.PostBody(id).PK || b.SK != ks.PostBody(id).SK:
			badf("body item of post %s has wrong keys", id)
		default:
			p.Body, p.HTML, p.TOC, p.hasBody = b.Body, b.HTML, b.TOC, true
			if p.BodySum != p.bodySum() || p.HTMLSum != p.htmlSum() {
				badf("post %s keeps sums %q/%q, its body item gives %q/%q", id, p.BodySum, p.HTMLSum, textSum(b.Body), textSum(b.HTML))
			}
			if b.RenderVersion != p.RenderVersion {
				badf("post %s is rendered by %q, its body item by %q", id, p.RenderVersion, b.RenderVersion)
			}
		}
		c := counts[id]
		switch {
		case c == nil:
			badf("post %s has no count item", id)
		case c.PK != ks.PostCount(id).PK || c.SK != ks.PostCount(id).SK:
			badf("count item of post %s has wrong keys", id)
		case c.Status != p.Status || c.PublishedAt != p.PublishedAt || c.AuthorID != p.AuthorID:
			badf("count item of post %s has %s/%s/%s, the post %s/%s/%s", id, c.Status, c.PublishedAt, c.AuthorID, p.Status, p.PublishedAt, p.AuthorID)
		}
		p.counts = c
	}
	for id := range bodies {
		if posts[id] == nil {
			badf("body item of a post %s that does not exist", id)
		}
	}
	for id := range counts {
		if posts[id] == nil {
			badf("count item of a post %s that does not exist", id)
		}
	}
}

// countsOrSplit returns the count item of the post postID from found, as
// decodeCounts does. A table of layout 5 has no post of layout 3 left to
// split: the layout 5 migration moves posts only once layout 4 is done.
func (s *Store) countsOrSplit(_ context.Context, found map[key]item, postID string) (*countItem, error) {
	return decodeCounts(s.ks, found, postID)
}

// bodyItem is a post's Markdown body and what is rendered from it.
type bodyItem struct {
	PK            string     `dynamodbav:"PK"`
	SK            string     `dynamodbav:"SK"`
	Type          string     `dynamodbav:"type"`
	ID            string     `dynamodbav:"id"`
	Body          string     `dynamodbav:"body,omitempty"`
	HTML          string     `dynamodbav:"bodyHtml,omitempty"`
	TOC           []tocEntry `dynamodbav:"toc,omitempty"`
	RenderVersion string     `dynamodbav:"renderVersion,omitempty"`
}

// countItem is a post's exact comment counts with what a comment's
// transaction checks: that the post is published and visible now
// (status, publishedAt) and whose moderation queue a held comment joins
// (authorId).
type countItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	Type         string `dynamodbav:"type"`
	ID           string `dynamodbav:"id"`
	AuthorID     string `dynamodbav:"authorId"`
	Status       string `dynamodbav:"status"`
	PublishedAt  string `dynamodbav:"publishedAt,omitempty"`
	CommentCount int64  `dynamodbav:"commentCount"`
	ThreadCount  int64  `dynamodbav:"threadCount"`
}

// visibleAt reports whether the post is published and its time has come.
func (c *countItem) visibleAt(now string) bool {
	return c.Status == string(StatusPublished) && c.PublishedAt <= now
}
