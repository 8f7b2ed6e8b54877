package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Moderation: a held comment waits, PENDING, under HELD# and in two
// queues (its post's author's on GSI1, the admins' in one partition),
// until a moderator approves it into the post's list or rejects it. Each
// decision is conditional on the comment being as the moderator saw it,
// so of decisions sent at once exactly one takes effect.

// RejectedTTL is how long a rejected comment is kept for its writer and
// the moderators to see before DynamoDB's TTL removes it.
const RejectedTTL = 30 * 24 * time.Hour

// ModerationQueue returns pending comments, newest first: those on the
// posts of authorID, or with an empty authorID all of the blog's. Each is
// one Query, of GSI1 or of the admins' queue.
func (s *Store) ModerationQueue(ctx context.Context, authorID string, p PageArgs) (*Result[*Comment], error) {
	if authorID == "" {
		return queryPage(ctx, s, listQuery{
			list: "queue",
			cond: expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Partition(keys.QueuePartition))),
		}, p, (*commentItem).comment)
	}
	return queryPage(ctx, s, listQuery{
		list:  "queue:" + authorID,
		index: true,
		cond:  expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.AuthorQueue(authorID))),
	}, p, (*commentItem).comment)
}

// ApproveComment publishes a pending comment, or a rejected one when
// in.OverturnRejection says so: one transaction moves it into the post's
// list, counts it on the post and its copies, and on its parent for a
// reply, on the condition that it is still held as read. A published
// comment, a rejected one without in.OverturnRejection, and one decided
// by another moderator while this call read it are ErrNotPending: of
// decisions sent at once exactly one takes effect. A resend with the
// idempotency key of a call that succeeded answers what that call did.
// A reply whose parent was deleted meanwhile cannot be approved (a
// *ValidationError).
func (s *Store) ApproveComment(ctx context.Context, in CommentRef) (*Comment, error) {
	if err := validateID("postId", in.PostID); err != nil {
		return nil, err
	}
	cid, err := parseCommentID(in.CommentID)
	if err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "approveComment", in.IdempotencyKey, in, func(rec *idem) (*Comment, error) {
		// seen is the status the first read found: the moderator decided
		// on it, and a retry that finds another decided otherwise.
		var seen CommentStatus
		return dynamo.RetryWrite(ctx, func() (*Comment, error) {
			ks := append(s.ks.CommentKeys(in.PostID, cid), s.ks.PostCount(in.PostID))
			found, err := s.db.ReadTogether(ctx, ks)
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(s.ks, found, in.PostID, cid)
			if err != nil {
				return nil, err
			}
			if seen == "" {
				seen = c.status()
			}
			if err := decide(in.CommentID, c, held, seen, in.OverturnRejection); err != nil {
				return nil, err
			}
			if _, err := s.countsOrSplit(ctx, found, in.PostID); err != nil {
				return nil, err
			}
			pub := *c
			k := s.ks.Comment(in.PostID, cid)
			pub.PK, pub.SK, pub.GSI1PK, pub.GSI1SK = k.PK, k.SK, "", ""
			pub.Status, pub.ExpiresAt, pub.Version, pub.ApprovedAt = "", 0, c.Version+1, keys.Time(s.Now())
			t := s.db.NewTxn()
			err = firstErr(
				t.Delete(s.ks.Held(in.PostID, cid), ptr(condHeldAs(c)), dynamo.ErrRetry),
				t.Put(pub, ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
				countComment(s.ks, t, in.PostID, 1, b2i(cid.Parent == nil), dynamo.CondExists()),
			)
			if err == nil && c.status() == CommentPending {
				err = t.Delete(s.ks.QueueEntry(in.PostID, cid), nil, nil)
			}
			if err == nil && cid.Parent != nil {
				var parent commentItem
				if perr := dynamo.DecodeFound(found, s.ks.Comment(in.PostID, *cid.Parent), &parent); perr != nil || parent.Deleted {
					return nil, invalid("id", "the comment it replies to was deleted")
				}
				if err := s.knowReplies(ctx, t, in.PostID, &parent, ""); err != nil {
					return nil, err
				}
				err = putComment(t, parent.withReply(&pub), parent.Version)
			}
			if err != nil {
				return nil, err
			}
			return s.execComment(ctx, t, rec, pub.comment())
		})
	})
}

// RejectComment rejects a pending comment: it leaves the moderation
// queues and stays, REJECTED and in no list, for its writer and the
// moderators to see until RejectedTTL has passed, on the condition that
// it is still pending as read. A rejected or published comment is
// ErrNotPending, and so is one another moderator decided on while this
// call read it; a resend with the idempotency key of a call that
// succeeded answers what that call did.
func (s *Store) RejectComment(ctx context.Context, in CommentRef) (*Comment, error) {
	if err := validateID("postId", in.PostID); err != nil {
		return nil, err
	}
	cid, err := parseCommentID(in.CommentID)
	if err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "rejectComment", in.IdempotencyKey, in, func(rec *idem) (*Comment, error) {
		return dynamo.RetryWrite(ctx, func() (*Comment, error) {
			found, err := s.db.ReadTogether(ctx, []key{s.ks.Comment(in.PostID, cid), s.ks.Held(in.PostID, cid)})
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(s.ks, found, in.PostID, cid)
			if err != nil {
				return nil, err
			}
			if err := decide(in.CommentID, c, held, CommentPending, false); err != nil {
				return nil, err
			}
			rejected := *c
			rejected.Status, rejected.GSI1PK, rejected.GSI1SK = string(CommentRejected), "", ""
			rejected.Version, rejected.ExpiresAt = c.Version+1, s.Now().Add(RejectedTTL).Unix()
			t := s.db.NewTxn()
			err = firstErr(
				t.Put(rejected, ptr(condHeldAs(c)), dynamo.ErrRetry),
				t.Delete(s.ks.QueueEntry(in.PostID, cid), nil, nil),
			)
			if err != nil {
				return nil, err
			}
			return s.execComment(ctx, t, rec, rejected.comment())
		})
	})
}

// decide returns nil when a moderator's decision may apply to the
// comment c (held tells where it was found), seen being the status the
// decision was made on: a pending comment, or a rejected one when
// overturn says so, still as seen. Any other state is ErrNotPending.
func decide(id string, c *commentItem, held bool, seen CommentStatus, overturn bool) error {
	switch st := c.status(); {
	case !held, st != seen:
	case st == CommentPending, st == CommentRejected && overturn:
		return nil
	}
	return fmt.Errorf("comment %q: %w", id, ErrNotPending)
}

// condHeldAs is the condition that the held comment c is stored as read:
// the same version, and so the same status.
func condHeldAs(c *commentItem) expression.ConditionBuilder {
	return condCommentVersion(c.Version).And(expression.Name("status").Equal(expression.Value(string(c.status()))))
}

// hold makes c a pending comment on a post of authorID: under HELD#, and
// in that author's moderation queue.
func (c *commentItem) hold(ks keys.Space, authorID string, cid keys.CommentID) {
	k := ks.Held(c.PostID, cid)
	c.PK, c.SK, c.Status = k.PK, k.SK, string(CommentPending)
	c.GSI1PK, c.GSI1SK = ks.AuthorQueue(authorID), keys.QueueSort(c.PostID, cid)
}

// queueCopy returns the entry of the pending comment c in the admins'
// queue.
func (c commentItem) queueCopy(ks keys.Space, cid keys.CommentID) commentItem {
	k := ks.QueueEntry(c.PostID, cid)
	c.PK, c.SK, c.Type, c.GSI1PK, c.GSI1SK = k.PK, k.SK, typeQueued, "", ""
	return c
}
