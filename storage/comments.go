package storage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Comment limits.
const (
	// MaxReplyPage is the most replies a page of a thread holds, and how
	// many replies a top-level comment carries with it, so the first page
	// of every thread of a page of comments costs no request.
	MaxReplyPage = 10
	// MaxCommentsPerMinute is the highest rate limit a reader can be
	// given (ReaderRules.PerMinute).
	MaxCommentsPerMinute = 1000
	// MaxReaderIDLength bounds a reader's id, their token's subject.
	MaxReaderIDLength = 255
	// DefaultReaderName is the name of a reader whose token never gave a
	// valid one.
	DefaultReaderName = "Reader"
	// RateWindow is the span a reader's comments are counted over, and
	// in which the same comment sent again is a duplicate.
	RateWindow = time.Minute
	// RejectedTTL is how long a rejected comment is kept for its writer
	// and the moderators to see before DynamoDB's TTL removes it.
	RejectedTTL = 30 * 24 * time.Hour
	// maxRecent bounds the entries a reader's rate item keeps when there
	// is no rate limit: enough to find duplicates of the last minute.
	maxRecent = 100
)

// AddComment adds a comment, or a reply to a top-level comment, to a
// visible post. An author writes it when in.AuthorID names one, else the
// reader in.Reader, whose stored profile is refreshed from it in the same
// transaction. A reader's comment is refused with a *RateLimitError past
// in.Rules.PerMinute, with ErrDuplicateComment when the same text went to
// the same place less than RateWindow ago, and is held as pending with
// in.Rules.Hold. A published comment is counted on the post and all its
// copies, and a reply on its parent, in the same transaction. A post that
// does not exist or is not visible is ErrNotFound.
func (s *Store) AddComment(ctx context.Context, in NewComment) (*Comment, error) {
	var parent *commentID
	err := firstErr(
		validateID("postId", in.PostID),
		validateWriter(in.AuthorID, in.Reader),
		validateText("body", in.Body, true, MaxCommentBytes),
		validateBody("body", in.Body, MaxCommentBytes),
	)
	if err == nil && (in.Rules.PerMinute < 0 || in.Rules.PerMinute > MaxCommentsPerMinute) {
		err = invalid("perMinute", "must be 0 to %d", MaxCommentsPerMinute)
	}
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
	request := struct{ PostID, ParentID, AuthorID, ReaderID, Body string }{
		in.PostID, in.ParentID, in.AuthorID, readerIDOf(in.Reader), in.Body,
	}
	return idempotentWrite(ctx, s, "addComment", in.IdempotencyKey, request, func(rec *idem) (*Comment, error) {
		return retryWrite(ctx, func() (*Comment, error) { return s.addComment(ctx, rec, in, parent) })
	})
}

// errDoubt means that a write built from hints would refuse: it reads
// before it does.
var errDoubt = errors.New("refusal from hints")

// addComment makes one attempt at adding the comment: from what the store
// remembers of the items it depends on when it remembers them all (one
// request), else from a consistent read of them (two).
func (s *Store) addComment(ctx context.Context, rec *idem, in NewComment, parent *commentID) (*Comment, error) {
	keys := []key{postKey(in.PostID)}
	if in.AuthorID != "" {
		keys = append(keys, authorKey(in.AuthorID))
	}
	if in.Reader != nil {
		keys = append(keys, readerKey(in.Reader.ID), rateKey(in.Reader.ID))
	}
	if parent != nil {
		keys = append(keys, commentKey(in.PostID, *parent))
	}
	// The reader's items may be missing; the post, the author and the
	// parent must be there.
	required := func(k key) bool { return k != readerKeyOf(in.Reader) && k != rateKeyOf(in.Reader) }
	if found, ok := s.hints.recall(keys, required); ok {
		c, err := s.addCommentFrom(ctx, rec, in, parent, found, true)
		if !errors.Is(err, errDoubt) {
			return c, err
		}
	}
	found, err := s.batchGet(ctx, keys, true)
	if err != nil {
		return nil, err
	}
	return s.addCommentFrom(ctx, rec, in, parent, found, false)
}

// addCommentFrom adds the comment from found, the items it depends on,
// read or (hinted) remembered. A refusal from remembered items is
// errDoubt, for the caller to read them first.
func (s *Store) addCommentFrom(ctx context.Context, rec *idem, in NewComment, parent *commentID, found map[key]item, hinted bool) (*Comment, error) {
	refuse := func(err error) (*Comment, error) {
		if hinted {
			return nil, errDoubt
		}
		return nil, err
	}
	var post postItem
	if err := decodeFound(found, postKey(in.PostID), &post); err != nil || !post.post().VisibleAt(s.Now()) {
		return refuse(fmt.Errorf("post %q: %w", in.PostID, ErrNotFound))
	}
	var pc *commentItem
	if parent != nil {
		pc = &commentItem{}
		if err := decodeFound(found, commentKey(in.PostID, *parent), pc); err != nil {
			return refuse(fmt.Errorf("parent comment %q: %w", in.ParentID, ErrNotFound))
		}
		if pc.Deleted {
			return refuse(invalid("parentId", "the comment was deleted"))
		}
	}
	t := s.newTxn()
	if pc != nil && !(in.Reader != nil && in.Rules.Hold) {
		if err := s.knowReplies(ctx, t, in.PostID, pc, ""); err != nil {
			return nil, err
		}
	}
	now := s.Now()
	cid := commentID{created: now, random: randomHex(8), parent: parent}
	c := commentItem{
		Type: typeComment, ID: cid.String(), PostID: in.PostID, ParentID: in.ParentID,
		Body: in.Body, CreatedAt: keyTime(now), Version: 1,
	}
	held := false
	_, isAuthor := found[authorKey(in.AuthorID)]
	switch {
	case in.AuthorID != "" && isAuthor:
		c.AuthorID = in.AuthorID
	case in.Reader != nil:
		c.ReaderID, held = in.Reader.ID, in.Rules.Hold
		if err := refreshReader(t, found, in.Reader, now, hinted); err != nil {
			return nil, err
		}
		if !in.Rules.Unchecked {
			err := countRate(t, found, in, now)
			var limited *RateLimitError
			if errors.Is(err, ErrDuplicateComment) || errors.As(err, &limited) {
				return refuse(err)
			}
			if err != nil {
				return nil, err
			}
		}
	default:
		return refuse(invalid("authorId", "no author has this id"))
	}
	stillVisible := condVersion(post.Version).And(expression.Name("status").Equal(expression.Value(string(StatusPublished))))
	var err error
	if held {
		c.hold(post.AuthorID, cid)
		err = firstErr(
			t.put(c, ptr(condNotExists()), errRetry),
			t.put(c.queueCopy(cid), ptr(condNotExists()), errRetry),
			t.check(postKey(in.PostID), stillVisible, errRetry),
		)
	} else {
		k := commentKey(in.PostID, cid)
		c.PK, c.SK = k.PK, k.SK
		err = firstErr(
			t.put(c, ptr(condNotExists()), errRetry),
			countComment(t, &post, 1, b2i(parent == nil), stillVisible),
		)
		if err == nil && pc != nil {
			err = putComment(t, pc.withReply(&c), pc.Version)
		}
	}
	if err != nil {
		return nil, err
	}
	t.returnOld()
	return s.execComment(ctx, t, rec, c.comment())
}

// readerKeyOf and rateKeyOf return the keys of a reader's items, or no
// key for no reader.
func readerKeyOf(p *ReaderProfile) key {
	if p == nil {
		return key{}
	}
	return readerKey(p.ID)
}

func rateKeyOf(p *ReaderProfile) key {
	if p == nil {
		return key{}
	}
	return rateKey(p.ID)
}

// UpdateComment changes the text of a comment, published or pending,
// and marks it edited; a reply's copy on its top-level comment changes
// with it. With in.Rules.HoldEdits, the edit of a published comment by
// the reader who wrote it holds the comment again: in the same
// transaction it leaves the post's list, its counts and its parent, as a
// deletion does, and is PENDING in the moderation queues; a top-level
// comment with replies cannot be held (a *ValidationError). The same
// text writes nothing. A comment that does not exist or was deleted is
// ErrNotFound; a rejected one is a *ValidationError.
func (s *Store) UpdateComment(ctx context.Context, in CommentEdit) (*Comment, error) {
	if err := firstErr(validateID("postId", in.PostID), in.Validate()); err != nil {
		return nil, err
	}
	cid, err := parseCommentID(in.CommentID)
	if err != nil {
		return nil, err
	}
	request := struct{ PostID, CommentID, Body string }{in.PostID, in.CommentID, in.Body}
	return idempotent(ctx, s, "updateComment", in.IdempotencyKey, request, func(rec *idem) (*Comment, error) {
		return retryWrite(ctx, func() (*Comment, error) {
			keys := []key{commentKey(in.PostID, cid), heldKey(in.PostID, cid)}
			if cid.parent != nil {
				keys = append(keys, commentKey(in.PostID, *cid.parent))
			}
			if in.Reader != nil {
				keys = append(keys, readerKey(in.Reader.ID))
				if in.Rules.HoldEdits {
					keys = append(keys, postKey(in.PostID))
				}
			}
			found, err := s.readTogether(ctx, keys)
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(found, in.PostID, cid)
			switch {
			case err != nil:
				return nil, err
			case c.status() == CommentRejected:
				return nil, invalid("id", "the comment was rejected")
			case c.Body == in.Body:
				return c.comment(), nil
			}
			now := s.Now()
			edited := *c
			edited.Body, edited.EditedAt, edited.Version = in.Body, keyTime(now), c.Version+1
			t := s.newTxn()
			// A reader's edit of their published comment is held again
			// when the rules say so: unmoderated text must not go live.
			rehold := in.Rules.HoldEdits && !held && in.Reader != nil && c.AuthorID == "" && c.ReaderID == in.Reader.ID
			if rehold {
				err = s.holdAgain(ctx, t, in.PostID, cid, c, &edited, found)
			} else {
				err = putComment(t, edited, c.Version)
			}
			switch {
			case err != nil, rehold:
			case held && c.status() == CommentPending:
				err = t.put(edited.queueCopy(cid), ptr(condExists()), errRetry)
			case !held && cid.parent != nil:
				var parent commentItem
				if err := decodeFound(found, commentKey(in.PostID, *cid.parent), &parent); err != nil {
					return nil, fmt.Errorf("parent of comment %q: %w", in.CommentID, err)
				}
				// The parent is written or checked either way: its copy of
				// the reply must never keep the old text.
				if err := s.knowReplies(ctx, t, in.PostID, &parent, c.ID); err != nil {
					return nil, err
				}
				if parent.carries(c.ID) {
					err = putComment(t, parent.withEditedReply(&edited), parent.Version)
				} else {
					err = t.check(commentKey(in.PostID, *cid.parent), condCommentVersion(parent.Version), errRetry)
				}
			}
			if err == nil && in.Reader != nil && in.Reader.ID == c.ReaderID {
				err = refreshReader(t, found, in.Reader, now, false)
			}
			if err != nil {
				return nil, err
			}
			return s.execComment(ctx, t, rec, edited.comment())
		})
	})
}

// holdAgain adds to t the move of the published comment c, cid, edited
// as edited, back to the held comments: it leaves the post's list, its
// parent and the counts as DeleteComment takes it out, and edited is
// held, PENDING, in the moderation queues, as AddComment holds a new
// one. A top-level comment with replies stays: its thread hangs on it.
func (s *Store) holdAgain(ctx context.Context, t *txn, postID string, cid commentID, c, edited *commentItem, found map[key]item) error {
	if c.ReplyCount > 0 {
		return invalid("body", "a comment with replies cannot change while edits are moderated")
	}
	var post postItem
	if err := decodeFound(found, postKey(postID), &post); err != nil {
		return fmt.Errorf("post %q: %w", postID, ErrNotFound)
	}
	threads := int64(-1)
	var err error
	if cid.parent != nil {
		threads, err = s.deleteReply(ctx, t, postID, cid, c, found)
	} else {
		err = t.delete(commentKey(postID, cid), ptr(condCommentVersion(c.Version)), errRetry)
	}
	if err != nil {
		return err
	}
	edited.Replies, edited.ReplyCount = nil, 0
	edited.hold(post.AuthorID, cid)
	return firstErr(
		t.put(*edited, ptr(condNotExists()), errRetry),
		t.put(edited.queueCopy(cid), ptr(condNotExists()), errRetry),
		countComment(t, &post, -1, threads, condVersion(post.Version)),
	)
}

// Validate returns the *ValidationError UpdateComment refuses the text or
// the reader of in with, or nil, so that a caller can check them before
// reads of its own.
func (in CommentEdit) Validate() error {
	err := firstErr(
		validateText("body", in.Body, true, MaxCommentBytes),
		validateBody("body", in.Body, MaxCommentBytes),
	)
	if err == nil && in.Reader != nil {
		err = validateReaderID(in.Reader.ID)
	}
	return err
}

// DeleteComment deletes a comment, published or held. A top-level comment
// with replies stays as a tombstone (Deleted, no body) so its thread stays
// intact; a reply that its parent carries is replaced there by the next
// one (one more Query).
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
			keys := []key{postKey(in.PostID), ck, heldKey(in.PostID, cid)}
			if cid.parent != nil {
				keys = append(keys, commentKey(in.PostID, *cid.parent))
			}
			found, err := s.readTogether(ctx, keys)
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(found, in.PostID, cid)
			if err != nil {
				return nil, err
			}
			t := s.newTxn()
			gone := *c
			gone.Deleted, gone.Body = true, ""
			if held {
				err = t.delete(heldKey(in.PostID, cid), ptr(condCommentVersion(c.Version)), errRetry)
				if err == nil && c.status() == CommentPending {
					err = t.delete(queueEntryKey(in.PostID, cid), nil, nil)
				}
				if err != nil {
					return nil, err
				}
				return s.execComment(ctx, t, rec, gone.comment())
			}
			var post postItem
			if err := decodeFound(found, postKey(in.PostID), &post); err != nil {
				return nil, fmt.Errorf("post %q: %w", in.PostID, ErrNotFound)
			}
			threads := int64(0)
			switch {
			case cid.parent != nil:
				threads, err = s.deleteReply(ctx, t, in.PostID, cid, c, found)
			case c.ReplyCount > 0:
				gone.Version++
				err = putComment(t, gone, c.Version)
			default:
				threads = -1
				err = t.delete(ck, ptr(condCommentVersion(c.Version)), errRetry)
			}
			if err == nil {
				err = countComment(t, &post, -1, threads, condVersion(post.Version))
			}
			if err != nil {
				return nil, err
			}
			return s.execComment(ctx, t, rec, gone.comment())
		})
	})
}

// deleteReply adds to t the deletion of the published reply c, cid, and
// what it changes on its parent. It returns the change to the post's
// thread count: -1 when the parent was a tombstone that goes with its
// last reply.
func (s *Store) deleteReply(ctx context.Context, t *txn, postID string, cid commentID, c *commentItem, found map[key]item) (int64, error) {
	pk := commentKey(postID, *cid.parent)
	var parent commentItem
	if err := decodeFound(found, pk, &parent); err != nil {
		return 0, fmt.Errorf("parent of comment %q: %w", c.ID, err)
	}
	if err := t.delete(commentKey(postID, cid), ptr(condCommentVersion(c.Version)), errRetry); err != nil {
		return 0, err
	}
	if parent.Deleted && parent.ReplyCount == 1 {
		// The last reply of a tombstone takes the tombstone along.
		return -1, t.delete(pk, ptr(condCommentVersion(parent.Version)), errRetry)
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
			if err := t.check(itemKeyOf(next), condCommentVersion(next.Version), errRetry); err != nil {
				return 0, err
			}
		}
	}
	return 0, putComment(t, parent.withoutReply(c.ID, next), parent.Version)
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
		return retryWrite(ctx, func() (*Comment, error) {
			keys := []key{postKey(in.PostID), commentKey(in.PostID, cid), heldKey(in.PostID, cid)}
			if cid.parent != nil {
				keys = append(keys, commentKey(in.PostID, *cid.parent))
			}
			found, err := s.readTogether(ctx, keys)
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(found, in.PostID, cid)
			if err != nil {
				return nil, err
			}
			if seen == "" {
				seen = c.status()
			}
			if err := decide(in.CommentID, c, held, seen, in.OverturnRejection); err != nil {
				return nil, err
			}
			var post postItem
			if err := decodeFound(found, postKey(in.PostID), &post); err != nil {
				return nil, fmt.Errorf("post %q: %w", in.PostID, ErrNotFound)
			}
			pub := *c
			k := commentKey(in.PostID, cid)
			pub.PK, pub.SK, pub.GSI1PK, pub.GSI1SK = k.PK, k.SK, "", ""
			pub.Status, pub.ExpiresAt, pub.Version = "", 0, c.Version+1
			t := s.newTxn()
			err = firstErr(
				t.delete(heldKey(in.PostID, cid), ptr(condHeldAs(c)), errRetry),
				t.put(pub, ptr(condNotExists()), errRetry),
				countComment(t, &post, 1, b2i(cid.parent == nil), condVersion(post.Version)),
			)
			if err == nil && c.status() == CommentPending {
				err = t.delete(queueEntryKey(in.PostID, cid), nil, nil)
			}
			if err == nil && cid.parent != nil {
				var parent commentItem
				if perr := decodeFound(found, commentKey(in.PostID, *cid.parent), &parent); perr != nil || parent.Deleted {
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
		return retryWrite(ctx, func() (*Comment, error) {
			found, err := s.readTogether(ctx, []key{commentKey(in.PostID, cid), heldKey(in.PostID, cid)})
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(found, in.PostID, cid)
			if err != nil {
				return nil, err
			}
			if err := decide(in.CommentID, c, held, CommentPending, false); err != nil {
				return nil, err
			}
			rejected := *c
			rejected.Status, rejected.GSI1PK, rejected.GSI1SK = string(CommentRejected), "", ""
			rejected.Version, rejected.ExpiresAt = c.Version+1, s.Now().Add(RejectedTTL).Unix()
			t := s.newTxn()
			err = firstErr(
				t.put(rejected, ptr(condHeldAs(c)), errRetry),
				t.delete(queueEntryKey(in.PostID, cid), nil, nil),
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

// findComment decodes the comment cid of postID from found: published, or
// held (held is true then). A missing or deleted comment is ErrNotFound.
func findComment(found map[key]item, postID string, cid commentID) (*commentItem, bool, error) {
	var c commentItem
	err := decodeFound(found, commentKey(postID, cid), &c)
	switch {
	case err == nil && c.Deleted:
		return nil, false, fmt.Errorf("comment %q: %w", cid, ErrNotFound)
	case err == nil:
		return &c, false, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, fmt.Errorf("decode comment %q: %w", cid, err)
	}
	err = decodeFound(found, heldKey(postID, cid), &c)
	switch {
	case err == nil:
		return &c, true, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, fmt.Errorf("decode comment %q: %w", cid, err)
	}
	return nil, false, fmt.Errorf("comment %q: %w", cid, ErrNotFound)
}

// hold makes c a pending comment on a post of authorID: under HELD#, and
// in that author's moderation queue.
func (c *commentItem) hold(authorID string, cid commentID) {
	k := heldKey(c.PostID, cid)
	c.PK, c.SK, c.Status = k.PK, k.SK, string(CommentPending)
	c.GSI1PK, c.GSI1SK = authorQueue(authorID), queueSortKey(c.PostID, cid)
}

// queueCopy returns the entry of the pending comment c in the admins'
// queue.
func (c commentItem) queueCopy(cid commentID) commentItem {
	k := queueEntryKey(c.PostID, cid)
	c.PK, c.SK, c.Type, c.GSI1PK, c.GSI1SK = k.PK, k.SK, typeQueued, "", ""
	return c
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

// putComment puts the whole comment item c on the condition that the
// stored one still has the version read, so nothing written meanwhile is
// lost.
func putComment(t *txn, c commentItem, readVersion int64) error {
	return t.put(c, ptr(condCommentVersion(readVersion)), errRetry)
}

// condCommentVersion is the condition that a comment item exists with
// version v; items written before comments had versions have none (0).
func condCommentVersion(v int64) expression.ConditionBuilder {
	if v == 0 {
		return condExists().And(expression.AttributeNotExists(expression.Name("version")))
	}
	return expression.Name("version").Equal(expression.Value(v))
}

func itemKeyOf(c *commentItem) key { return key{c.PK, c.SK} }

// knowReplies makes sure parent carries its first replies before a write
// changes them. A top-level comment written before comments carried their
// replies (version 0) gets them from a Query of its thread, and t checks
// that none of them changes before the write, but for the reply skip,
// which the write itself changes.
func (s *Store) knowReplies(ctx context.Context, t *txn, postID string, parent *commentItem, skip string) error {
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
			if err := t.check(itemKeyOf(r), condCommentVersion(r.Version), errRetry); err != nil {
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
func (s *Store) repliesFrom(ctx context.Context, postID string, parent *commentItem, after *commentID, n int) ([]*commentItem, error) {
	pcid, err := parseCommentID(parent.ID)
	if err != nil {
		return nil, err
	}
	expr, err := buildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(attrPK).Equal(expression.Value(prefixPost + postID)).
			And(expression.Key(attrSK).BeginsWith(threadPrefix(pcid)))))
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
		in.ExclusiveStartKey = mustKey(commentKey(postID, *after))
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

// refreshReader adds to t the write of the reader's stored profile when p
// changes it, or when there is none yet, on the condition that it is
// still as found (or still missing). With guard, an unchanged profile is
// checked in t as well: found is what the store remembered, not what it
// read.
func refreshReader(t *txn, found map[key]item, p *ReaderProfile, now time.Time, guard bool) error {
	k := readerKey(p.ID)
	var stored readerItem
	err := decodeFound(found, k, &stored)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("decode reader %q: %w", p.ID, err)
	}
	next := stored
	cond := condNotExists()
	if exists {
		cond = condReader(&stored)
	} else {
		next = readerItem{PK: k.PK, SK: k.SK, Type: typeReader, ID: p.ID, Name: DefaultReaderName, CreatedAt: keyTime(now)}
	}
	if name, ok := readerName(p.Name); ok {
		next.Name = name
	}
	if p.AvatarURL != "" && validateURL("avatarUrl", p.AvatarURL) == nil {
		next.AvatarURL = p.AvatarURL
	}
	switch {
	case exists && next == stored && guard:
		return t.check(k, cond, errRetry)
	case exists && next == stored:
		return nil
	}
	next.UpdatedAt = keyTime(now)
	return t.put(next, &cond, errRetry)
}

// condReader is the condition that a reader's stored profile is still
// stored.
func condReader(stored *readerItem) expression.ConditionBuilder {
	c := expression.Name("name").Equal(expression.Value(stored.Name))
	if stored.AvatarURL == "" {
		return c.And(expression.AttributeNotExists(expression.Name("avatarUrl")))
	}
	return c.And(expression.Name("avatarUrl").Equal(expression.Value(stored.AvatarURL)))
}

// countRate adds to t the write of the reader's rate item with the new
// comment counted, or refuses it: ErrDuplicateComment when the same text
// went to the same place within RateWindow, a *RateLimitError when
// in.Rules.PerMinute comments already did. The write is guarded by the
// item's version, so servers sharing the table count together.
func countRate(t *txn, found map[key]item, in NewComment, now time.Time) error {
	k := rateKey(in.Reader.ID)
	var rate rateItem
	err := decodeFound(found, k, &rate)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("decode rate of reader %q: %w", in.Reader.ID, err)
	}
	hash := commentHash(in.PostID, in.ParentID, in.Body)
	since := keyTime(now.Add(-RateWindow))
	var recent []string
	for _, e := range rate.Recent {
		at, h, _ := strings.Cut(e, "#")
		if at <= since {
			continue
		}
		if h == hash {
			return ErrDuplicateComment
		}
		recent = append(recent, e)
	}
	if n := in.Rules.PerMinute; n > 0 && len(recent) >= n {
		at, _, _ := strings.Cut(recent[len(recent)-n], "#")
		wait := parseKeyTime(at).Add(RateWindow).Sub(now)
		return &RateLimitError{RetryAfter: time.Duration(math.Ceil(wait.Seconds())) * time.Second}
	}
	recent = append(recent, keyTime(now)+"#"+hash)
	if in.Rules.PerMinute == 0 && len(recent) > maxRecent {
		recent = recent[len(recent)-maxRecent:]
	}
	cond := condNotExists()
	if exists {
		cond = expression.Name("version").Equal(expression.Value(rate.Version))
	}
	return t.put(rateItem{
		PK: k.PK, SK: k.SK, Type: typeRate, Recent: recent, Version: rate.Version + 1,
		ExpiresAt: now.Add(RateWindow).Unix() + 1,
	}, &cond, errRetry)
}

// commentHash identifies a comment's place and text in a reader's rate
// item.
func commentHash(postID, parentID, body string) string {
	sum := sha256.Sum256([]byte(postID + "\n" + parentID + "\n" + body))
	return hex.EncodeToString(sum[:8])
}

func readerIDOf(p *ReaderProfile) string {
	if p == nil {
		return ""
	}
	return p.ID
}

// validateWriter checks who writes a comment: an author id, a reader, or
// an author id with a reader to write as when no author has the id.
func validateWriter(authorID string, r *ReaderProfile) error {
	switch {
	case authorID == "" && r == nil:
		return invalid("authorId", "a comment needs a writer")
	case r != nil:
		if err := validateReaderID(r.ID); err != nil {
			return err
		}
	}
	if authorID != "" && r == nil {
		return validateID("authorId", authorID)
	}
	return nil
}

// validateReaderID checks a reader's id, their token's subject: 1 to
// MaxReaderIDLength bytes of UTF-8 without control characters.
func validateReaderID(id string) error {
	if id == "" || len(id) > MaxReaderIDLength || !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
		return invalid("readerId", "must be 1 to %d bytes of UTF-8 without control characters", MaxReaderIDLength)
	}
	return nil
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
	if err := s.record(t, rec, c); err != nil {
		return nil, err
	}
	if err := s.exec(ctx, t); err != nil {
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
