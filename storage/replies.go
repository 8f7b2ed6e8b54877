package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Replies and the copies their top-level comment carries: a top-level
// comment carries its first MaxReplyPage replies, so the first page of
// every thread comes with the comment at no cost. Every write that
// changes one of those replies changes the copy in the same transaction,
// conditional on the parent's version.

// MaxReplyPage is the most replies a page of a thread holds, and how
// many replies a top-level comment carries with it, so the first page
// of every thread of a page of comments costs no request.
const MaxReplyPage = 10

// ReplyPage returns a page of the published replies to the top-level
// comment parent, oldest first, at most MaxReplyPage. The first page is
// the replies parent carries, so it costs no request; later pages, and
// the first of a comment written before comments carried their replies,
// are one Query each. A reply has no replies: its page is empty.
func (s *Store) ReplyPage(ctx context.Context, parent *Comment, p PageArgs) (*Result[*Comment], error) {
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
			cond: expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Post(parent.PostID).PK)).
				And(expression.Key(keys.AttrSK).BeginsWith(keys.ThreadPrefix(pcid))),
		}, p, (*commentItem).comment)
	}
	res := &Result[*Comment]{HasNext: parent.ReplyCount > int64(p.Limit)}
	for _, r := range parent.Replies[:min(p.Limit, len(parent.Replies))] {
		rcid, err := parseCommentID(r.ID)
		if err != nil {
			return nil, err
		}
		k := s.ks.Comment(parent.PostID, rcid)
		res.Items = append(res.Items, r)
		res.Cursors = append(res.Cursors, s.encodeCursor(list, map[string]string{keys.AttrPK: k.PK, keys.AttrSK: k.SK}))
	}
	return res, nil
}

// carries reports whether the top-level comment c carries the reply id.
func (c *commentItem) carries(id string) bool {
	return slices.ContainsFunc(c.Replies, func(r replyCopy) bool { return r.ID == id })
}

// withReply returns the top-level comment c once the reply r is
// published under it: one more reply, carried when it is among the first
// MaxReplyPage. An approved reply can sort before replies published
// meanwhile, so it is put in its place, and the last copy may drop out.
func (c commentItem) withReply(r *commentItem) commentItem {
	c.ReplyCount++
	c.Version++
	c.Replies = append(slices.Clone(c.Replies), r.replyCopy())
	slices.SortFunc(c.Replies, func(a, b replyCopy) int {
		return strings.Compare(a.CreatedAt+"#"+a.ID, b.CreatedAt+"#"+b.ID)
	})
	if len(c.Replies) > MaxReplyPage {
		c.Replies = c.Replies[:MaxReplyPage]
	}
	return c
}

// withoutReply returns the top-level comment c once its reply id is
// deleted; next, when not nil, is the first reply it did not carry, which
// takes the free place.
func (c commentItem) withoutReply(id string, next *commentItem) commentItem {
	c.ReplyCount--
	c.Version++
	var kept []replyCopy
	for _, r := range c.Replies {
		if r.ID != id {
			kept = append(kept, r)
		}
	}
	if next != nil {
		kept = append(kept, next.replyCopy())
	}
	c.Replies = kept
	return c
}

// withEditedReply returns the top-level comment c carrying the reply r as
// it now reads.
func (c commentItem) withEditedReply(r *commentItem) commentItem {
	c.Version++
	c.Replies = slices.Clone(c.Replies)
	for i := range c.Replies {
		if c.Replies[i].ID == r.ID {
			c.Replies[i] = r.replyCopy()
		}
	}
	return c
}

// deleteReply adds to t the deletion of the published reply c, cid, and
// what it changes on its parent. It returns the change to the post's
// thread count: -1 when the parent was a tombstone that goes with its
// last reply.
func (s *Store) deleteReply(ctx context.Context, t *dynamo.Txn, postID string, cid keys.CommentID, c *commentItem, found map[key]item) (int64, error) {
	pk := s.ks.Comment(postID, *cid.Parent)
	var parent commentItem
	if err := dynamo.DecodeFound(found, pk, &parent); err != nil {
		return 0, fmt.Errorf("parent of comment %q: %w", c.ID, err)
	}
	if err := t.Delete(s.ks.Comment(postID, cid), ptr(condCommentVersion(c.Version)), dynamo.ErrRetry); err != nil {
		return 0, err
	}
	if parent.Deleted && parent.ReplyCount == 1 {
		// The last reply of a tombstone takes the tombstone along.
		return -1, t.Delete(pk, ptr(condCommentVersion(parent.Version)), dynamo.ErrRetry)
	}
	if err := s.knowReplies(ctx, t, postID, &parent, c.ID); err != nil {
		return 0, err
	}
	var next *commentItem
	if parent.carries(c.ID) && parent.ReplyCount > int64(len(parent.Replies)) {
		var err error
		if next, err = s.replyAfter(ctx, postID, &parent); err != nil {
			return 0, err
		}
		if next != nil {
			// The copy must not keep a text changed meanwhile.
			if err := t.Check(itemKeyOf(next), condCommentVersion(next.Version), dynamo.ErrRetry); err != nil {
				return 0, err
			}
		}
	}
	return 0, putComment(t, parent.withoutReply(c.ID, next), parent.Version)
}

func itemKeyOf(c *commentItem) key { return key{PK: c.PK, SK: c.SK} }

// knowReplies makes sure parent carries its first replies before a write
// changes them. A top-level comment written before comments carried their
// replies (version 0) gets them from a Query of its thread, and t checks
// that none of them changes before the write, but for the reply skip,
// which the write itself changes.
func (s *Store) knowReplies(ctx context.Context, t *dynamo.Txn, postID string, parent *commentItem, skip string) error {
	if parent.Version > 0 || parent.ReplyCount == 0 {
		return nil
	}
	first, err := s.repliesFrom(ctx, postID, parent, nil, MaxReplyPage)
	if err != nil {
		return err
	}
	parent.Replies = nil
	for _, r := range first {
		parent.Replies = append(parent.Replies, r.replyCopy())
		if r.ID != skip {
			if err := t.Check(itemKeyOf(r), condCommentVersion(r.Version), dynamo.ErrRetry); err != nil {
				return err
			}
		}
	}
	return nil
}

// replyAfter returns the first published reply to parent after the ones
// it carries, read with ConsistentRead, or nil when there is none.
func (s *Store) replyAfter(ctx context.Context, postID string, parent *commentItem) (*commentItem, error) {
	last, err := parseCommentID(parent.Replies[len(parent.Replies)-1].ID)
	if err != nil {
		return nil, err
	}
	next, err := s.repliesFrom(ctx, postID, parent, &last, 1)
	if err != nil || len(next) == 0 {
		return nil, err
	}
	return next[0], nil
}

// repliesFrom returns up to n published replies to parent, oldest first,
// after the reply after when it is not nil, read with ConsistentRead.
func (s *Store) repliesFrom(ctx context.Context, postID string, parent *commentItem, after *keys.CommentID, n int) ([]*commentItem, error) {
	pcid, err := parseCommentID(parent.ID)
	if err != nil {
		return nil, err
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Post(postID).PK)).
			And(expression.Key(keys.AttrSK).BeginsWith(keys.ThreadPrefix(pcid)))))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(n)),
	}
	if after != nil {
		in.ExclusiveStartKey = dynamo.MustKey(s.ks.Comment(postID, *after))
	}
	var out []*commentItem
	for len(out) < n {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("replies of comment %q: %w", parent.ID, err)
		}
		for _, it := range page.Items {
			r := &commentItem{}
			if err := attributevalue.UnmarshalMap(it, r); err != nil {
				return nil, fmt.Errorf("decode reply: %w", err)
			}
			out = append(out, r)
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
		in.Limit = aws.Int32(int32(n - len(out)))
	}
	return out, nil
}
