package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// AddComment adds a comment, or a reply to a top-level comment, to a
// visible post, and counts it on the post and all its copies in the same
// transaction. A post that does not exist or is not visible is ErrNotFound.
func (s *Store) AddComment(ctx context.Context, in NewComment) (*Comment, error) {
	var parent *commentID
	err := firstErr(
		validateID("postId", in.PostID),
		validateID("authorId", in.AuthorID),
		validateText("body", in.Body, true, MaxCommentBytes),
		validateBody("body", in.Body, MaxCommentBytes),
	)
	if err == nil && in.ParentID != "" {
		var p commentID
		if p, err = parseCommentID(in.ParentID); err == nil {
			parent = &p
			if p.parent != nil {
				err = invalid("parentId", "replies can only answer top-level comments")
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "addComment", in.IdempotencyKey, in, func(rec *idem) (*Comment, error) {
		return retryWrite(ctx, func() (*Comment, error) {
			keys := []key{postKey(in.PostID), authorKey(in.AuthorID)}
			if parent != nil {
				keys = append(keys, commentKey(in.PostID, *parent))
			}
			found, err := s.batchGet(ctx, keys, true)
			if err != nil {
				return nil, err
			}
			var post postItem
			if err := decodeFound(found, postKey(in.PostID), &post); err != nil || !post.post().VisibleAt(s.Now()) {
				return nil, fmt.Errorf("post %q: %w", in.PostID, ErrNotFound)
			}
			if _, ok := found[authorKey(in.AuthorID)]; !ok {
				return nil, invalid("authorId", "no author has this id")
			}
			if parent != nil {
				var pc commentItem
				if err := decodeFound(found, commentKey(in.PostID, *parent), &pc); err != nil {
					return nil, fmt.Errorf("parent comment %q: %w", in.ParentID, ErrNotFound)
				}
				if pc.Deleted {
					return nil, invalid("parentId", "the comment was deleted")
				}
			}
			cid := commentID{created: s.Now(), random: randomHex(8), parent: parent}
			ck := commentKey(in.PostID, cid)
			c := commentItem{
				PK: ck.PK, SK: ck.SK, Type: typeComment, ID: cid.String(), PostID: in.PostID,
				ParentID: in.ParentID, AuthorID: in.AuthorID, Body: in.Body, CreatedAt: keyTime(cid.created),
			}
			t := s.newTxn()
			err = firstErr(
				t.put(c, ptr(condNotExists()), errRetry),
				countComment(t, &post, 1, b2i(parent == nil), condVersion(post.Version).
					And(expression.Name("status").Equal(expression.Value(string(StatusPublished))))),
			)
			if err == nil && parent != nil {
				err = t.update(commentKey(in.PostID, *parent),
					expression.Add(expression.Name("replyCount"), expression.Value(1)),
					ptr(condExists().And(expression.AttributeNotExists(expression.Name("deleted")))), errRetry)
			}
			if err != nil {
				return nil, err
			}
			return s.execComment(ctx, t, rec, c.comment())
		})
	})
}

// DeleteComment deletes a comment. A top-level comment with replies stays
// as a tombstone (Deleted, no body) so its thread stays intact.
func (s *Store) DeleteComment(ctx context.Context, in CommentRef) (*Comment, error) {
	if err := validateID("postId", in.PostID); err != nil {
		return nil, err
	}
	cid, err := parseCommentID(in.CommentID)
	if err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "deleteComment", in.IdempotencyKey, in, func(rec *idem) (*Comment, error) {
		return retryWrite(ctx, func() (*Comment, error) {
			ck := commentKey(in.PostID, cid)
			keys := []key{postKey(in.PostID), ck}
			if cid.parent != nil {
				keys = append(keys, commentKey(in.PostID, *cid.parent))
			}
			found, err := s.batchGet(ctx, keys, true)
			if err != nil {
				return nil, err
			}
			var post postItem
			var c commentItem
			if err := decodeFound(found, ck, &c); err != nil || c.Deleted {
				return nil, fmt.Errorf("comment %q: %w", in.CommentID, ErrNotFound)
			}
			if err := decodeFound(found, postKey(in.PostID), &post); err != nil {
				return nil, fmt.Errorf("post %q: %w", in.PostID, ErrNotFound)
			}
			t := s.newTxn()
			sameReplies := expression.Name("replyCount").Equal(expression.Value(c.ReplyCount))
			if c.ReplyCount == 0 {
				sameReplies = expression.AttributeNotExists(expression.Name("replyCount")).Or(sameReplies)
			}
			stillThere := condExists().And(expression.AttributeNotExists(expression.Name("deleted")))
			threads := int64(0)
			switch {
			case cid.parent != nil:
				pk := commentKey(in.PostID, *cid.parent)
				var parent commentItem
				if err := decodeFound(found, pk, &parent); err != nil {
					return nil, fmt.Errorf("parent of comment %q: %w", in.CommentID, err)
				}
				err = t.delete(ck, ptr(stillThere), errRetry)
				if err == nil && parent.Deleted && parent.ReplyCount == 1 {
					// The last reply of a tombstone takes the tombstone along.
					threads = -1
					err = t.delete(pk, ptr(expression.Name("deleted").Equal(expression.Value(true)).
						And(expression.Name("replyCount").Equal(expression.Value(1)))), errRetry)
				} else if err == nil {
					// The parent must still be a comment, not a tombstone
					// made meanwhile that this reply would leave empty.
					notDeleted := condExists().And(expression.AttributeNotExists(expression.Name("deleted")))
					if parent.Deleted {
						notDeleted = expression.Name("deleted").Equal(expression.Value(true))
					}
					err = t.update(pk, expression.Add(expression.Name("replyCount"), expression.Value(-1)),
						ptr(notDeleted.And(expression.Name("replyCount").Equal(expression.Value(parent.ReplyCount)))), errRetry)
				}
			case c.ReplyCount > 0:
				err = t.update(ck, expression.Set(expression.Name("deleted"), expression.Value(true)).
					Remove(expression.Name("body")), ptr(stillThere.And(sameReplies)), errRetry)
			default:
				threads = -1
				err = t.delete(ck, ptr(stillThere.And(sameReplies)), errRetry)
			}
			if err == nil {
				err = countComment(t, &post, -1, threads, condVersion(post.Version))
			}
			if err != nil {
				return nil, err
			}
			c.Deleted, c.Body = true, ""
			return s.execComment(ctx, t, rec, c.comment())
		})
	})
}

// countComment adds to the comment counts of the post, guarded by cond,
// and to the comment count of each of its copies.
func countComment(t *txn, post *postItem, comments, threads int64, cond expression.ConditionBuilder) error {
	upd := expression.Add(expression.Name("commentCount"), expression.Value(comments))
	postUpd := upd
	if threads != 0 {
		postUpd = expression.Add(expression.Name("commentCount"), expression.Value(comments)).
			Add(expression.Name("threadCount"), expression.Value(threads))
	}
	if err := t.update(postKey(post.ID), postUpd, &cond, errRetry); err != nil {
		return err
	}
	for _, k := range post.copyKeys() {
		if err := t.update(k, upd, ptr(condExists()), errRetry); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) execComment(ctx context.Context, t *txn, rec *idem, c *Comment) (*Comment, error) {
	token, err := s.record(t, rec, c)
	if err != nil {
		return nil, err
	}
	if err := s.exec(ctx, t, token); err != nil {
		return nil, err
	}
	return c, nil
}

func decodeFound(found map[key]item, k key, out any) error {
	it, ok := found[k]
	if !ok {
		return ErrNotFound
	}
	return attributevalue.UnmarshalMap(it, out)
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
