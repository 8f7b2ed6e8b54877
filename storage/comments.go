package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Comments: adding, editing and deleting one. Each write is one
// transaction that changes the comment, the counts on its post and the
// post's copies, and a reply's copy on its top-level comment together, so
// no count or copy is ever behind. Moderation is in moderation.go, the
// copies of replies in replies.go, the writer's profile and rate limit in
// readers.go.

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
	var parent *keys.CommentID
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
		var p keys.CommentID
		if p, err = parseCommentID(in.ParentID); err == nil {
			parent = &p
			if p.Parent != nil {
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
		return dynamo.RetryWrite(ctx, func() (*Comment, error) { return s.addComment(ctx, rec, in, parent) })
	})
}

// errDoubt means that a write built from hints would refuse: it reads
// before it does.
var errDoubt = errors.New("refusal from hints")

// addComment makes one attempt at adding the comment: from what the store
// remembers of the items it depends on when it remembers them all (one
// request), else from a consistent read of them (two).
func (s *Store) addComment(ctx context.Context, rec *idem, in NewComment, parent *keys.CommentID) (*Comment, error) {
	ks := []key{s.ks.PostCount(in.PostID)}
	if in.AuthorID != "" {
		ks = append(ks, s.ks.Author(in.AuthorID))
	}
	if in.Reader != nil {
		ks = append(ks, keys.Reader(in.Reader.ID), s.ks.Rate(in.Reader.ID))
	}
	if parent != nil {
		ks = append(ks, s.ks.Comment(in.PostID, *parent))
	}
	// The reader's items may be missing; the post, the author and the
	// parent must be there.
	required := func(k key) bool { return k != readerKeyOf(in.Reader) && k != rateKeyOf(s.ks, in.Reader) }
	if found, ok := s.hints.recall(ks, required); ok {
		c, err := s.addCommentFrom(ctx, rec, in, parent, found, true)
		if !errors.Is(err, errDoubt) {
			return c, err
		}
	}
	found, err := s.db.BatchGet(ctx, ks, true)
	if err != nil {
		return nil, err
	}
	return s.addCommentFrom(ctx, rec, in, parent, found, false)
}

// addCommentFrom adds the comment from found, the items it depends on,
// read or (hinted) remembered. A refusal from remembered items is
// errDoubt, for the caller to read them first.
func (s *Store) addCommentFrom(ctx context.Context, rec *idem, in NewComment, parent *keys.CommentID, found map[key]item, hinted bool) (*Comment, error) {
	refuse := func(err error) (*Comment, error) {
		if hinted {
			return nil, errDoubt
		}
		return nil, err
	}
	now := s.Now()
	// The post's count item: whether it is visible, and its author.
	post, err := decodeCounts(s.ks, found, in.PostID)
	if err != nil || !post.visibleAt(keys.Time(now)) {
		return refuse(fmt.Errorf("post %q: %w", in.PostID, ErrNotFound))
	}
	var pc *commentItem
	if parent != nil {
		pc = &commentItem{}
		if err := dynamo.DecodeFound(found, s.ks.Comment(in.PostID, *parent), pc); err != nil {
			return refuse(fmt.Errorf("parent comment %q: %w", in.ParentID, ErrNotFound))
		}
		if pc.Deleted {
			return refuse(invalid("parentId", "the comment was deleted"))
		}
	}
	t := s.db.NewTxn()
	if pc != nil && !(in.Reader != nil && in.Rules.Hold) {
		if err := s.knowReplies(ctx, t, in.PostID, pc, ""); err != nil {
			return nil, err
		}
	}
	cid := keys.CommentID{Created: now, Random: randomHex(8), Parent: parent}
	c := commentItem{
		Type: typeComment, ID: cid.String(), PostID: in.PostID, ParentID: in.ParentID,
		Body: in.Body, CreatedAt: keys.Time(now), Version: 1,
	}
	held := false
	_, isAuthor := found[s.ks.Author(in.AuthorID)]
	switch {
	case in.AuthorID != "" && isAuthor:
		c.AuthorID = in.AuthorID
	case in.Reader != nil:
		c.ReaderID, held = in.Reader.ID, in.Rules.Hold
		if err := s.refreshReader(t, found, in.Reader, now, hinted); err != nil {
			return nil, err
		}
		if err := s.leaveTrail(t, in.Reader.ID, keys.TrailComment, in.PostID+"#"+cid.String(), now); err != nil {
			return nil, err
		}
		if !in.Rules.Unchecked {
			err := countRate(s.ks, t, found, in, now)
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
	stillVisible := condVisible(keys.Time(now))
	if held {
		c.hold(s.ks, post.AuthorID, cid)
		err = firstErr(
			t.Put(c, ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
			t.Put(c.queueCopy(s.ks, cid), ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
			t.Check(s.ks.PostCount(in.PostID), stillVisible, dynamo.ErrRetry),
		)
	} else {
		k := s.ks.Comment(in.PostID, cid)
		c.PK, c.SK = k.PK, k.SK
		err = firstErr(
			t.Put(c, ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
			countComment(s.ks, t, in.PostID, 1, b2i(parent == nil), stillVisible),
		)
		if err == nil && pc != nil {
			err = putComment(t, pc.withReply(&c), pc.Version)
		}
	}
	if err != nil {
		return nil, err
	}
	t.ReturnOld()
	return s.execComment(ctx, t, rec, c.comment())
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
		return dynamo.RetryWrite(ctx, func() (*Comment, error) {
			ks := s.ks.CommentKeys(in.PostID, cid)
			if in.Reader != nil {
				ks = append(ks, keys.Reader(in.Reader.ID))
				if in.Rules.HoldEdits {
					ks = append(ks, s.ks.PostCount(in.PostID))
				}
			}
			found, err := s.db.ReadTogether(ctx, ks)
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(s.ks, found, in.PostID, cid)
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
			edited.Body, edited.EditedAt, edited.Version = in.Body, keys.Time(now), c.Version+1
			t := s.db.NewTxn()
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
				err = t.Put(edited.queueCopy(s.ks, cid), ptr(dynamo.CondExists()), dynamo.ErrRetry)
			case !held && cid.Parent != nil:
				var parent commentItem
				if err := dynamo.DecodeFound(found, s.ks.Comment(in.PostID, *cid.Parent), &parent); err != nil {
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
					err = t.Check(s.ks.Comment(in.PostID, *cid.Parent), condCommentVersion(parent.Version), dynamo.ErrRetry)
				}
			}
			if err == nil && in.Reader != nil && in.Reader.ID == c.ReaderID {
				err = s.refreshReader(t, found, in.Reader, now, false)
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
func (s *Store) holdAgain(ctx context.Context, t *dynamo.Txn, postID string, cid keys.CommentID, c, edited *commentItem, found map[key]item) error {
	if c.ReplyCount > 0 {
		return invalid("body", "a comment with replies cannot change while edits are moderated")
	}
	post, err := s.countsOrSplit(ctx, found, postID)
	if err != nil {
		return err
	}
	threads := int64(-1)
	if cid.Parent != nil {
		threads, err = s.deleteReply(ctx, t, postID, cid, c, found)
	} else {
		err = t.Delete(s.ks.Comment(postID, cid), ptr(condCommentVersion(c.Version)), dynamo.ErrRetry)
	}
	if err != nil {
		return err
	}
	edited.Replies, edited.ReplyCount = nil, 0
	edited.hold(s.ks, post.AuthorID, cid)
	return firstErr(
		t.Put(*edited, ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
		t.Put(edited.queueCopy(s.ks, cid), ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
		countComment(s.ks, t, postID, -1, threads, dynamo.CondExists()),
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
		return dynamo.RetryWrite(ctx, func() (*Comment, error) {
			ck := s.ks.Comment(in.PostID, cid)
			ks := append(s.ks.CommentKeys(in.PostID, cid), s.ks.PostCount(in.PostID))
			found, err := s.db.ReadTogether(ctx, ks)
			if err != nil {
				return nil, err
			}
			c, held, err := findComment(s.ks, found, in.PostID, cid)
			if err != nil {
				return nil, err
			}
			t := s.db.NewTxn()
			gone := *c
			gone.Deleted, gone.Body = true, ""
			if held {
				err = t.Delete(s.ks.Held(in.PostID, cid), ptr(condCommentVersion(c.Version)), dynamo.ErrRetry)
				if err == nil && c.status() == CommentPending {
					err = t.Delete(s.ks.QueueEntry(in.PostID, cid), nil, nil)
				}
				if err != nil {
					return nil, err
				}
				return s.execComment(ctx, t, rec, gone.comment())
			}
			if _, err := s.countsOrSplit(ctx, found, in.PostID); err != nil {
				return nil, err
			}
			threads := int64(0)
			switch {
			case cid.Parent != nil:
				threads, err = s.deleteReply(ctx, t, in.PostID, cid, c, found)
			case c.ReplyCount > 0:
				gone.Version++
				err = putComment(t, gone, c.Version)
			default:
				threads = -1
				err = t.Delete(ck, ptr(condCommentVersion(c.Version)), dynamo.ErrRetry)
			}
			if err == nil {
				err = countComment(s.ks, t, in.PostID, -1, threads, dynamo.CondExists())
			}
			if err != nil {
				return nil, err
			}
			return s.execComment(ctx, t, rec, gone.comment())
		})
	})
}

// findComment decodes the comment cid of postID from found: published, or
// held (held is true then). A missing or deleted comment is ErrNotFound.
func findComment(ks keys.Space, found map[key]item, postID string, cid keys.CommentID) (*commentItem, bool, error) {
	var c commentItem
	err := dynamo.DecodeFound(found, ks.Comment(postID, cid), &c)
	switch {
	case err == nil && c.Deleted:
		return nil, false, fmt.Errorf("comment %q: %w", cid, ErrNotFound)
	case err == nil:
		return &c, false, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, fmt.Errorf("decode comment %q: %w", cid, err)
	}
	err = dynamo.DecodeFound(found, ks.Held(postID, cid), &c)
	switch {
	case err == nil:
		return &c, true, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, fmt.Errorf("decode comment %q: %w", cid, err)
	}
	return nil, false, fmt.Errorf("comment %q: %w", cid, ErrNotFound)
}

// putComment puts the whole comment item c on the condition that the
// stored one still has the version read, so nothing written meanwhile is
// lost.
func putComment(t *dynamo.Txn, c commentItem, readVersion int64) error {
	return t.Put(c, ptr(condCommentVersion(readVersion)), dynamo.ErrRetry)
}

// condCommentVersion is the condition that a comment item exists with
// version v; items written before comments had versions have none (0).
func condCommentVersion(v int64) expression.ConditionBuilder {
	if v == 0 {
		return dynamo.CondExists().And(expression.AttributeNotExists(expression.Name("version")))
	}
	return expression.Name("version").Equal(expression.Value(v))
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

// countComment adds to the comment counts of the post postID on its count
// item, guarded by cond: the one item a comment write changes besides the
// comment. The post item and its copies, summaries, follow from the
// change feed (their counts are the counts helper's).
func countComment(ks keys.Space, t *dynamo.Txn, postID string, comments, threads int64, cond expression.ConditionBuilder) error {
	upd := expression.Add(expression.Name("commentCount"), expression.Value(comments))
	if threads != 0 {
		upd = upd.Add(expression.Name("threadCount"), expression.Value(threads))
	}
	return t.Update(ks.PostCount(postID), upd, &cond, dynamo.ErrRetry)
}

func (s *Store) execComment(ctx context.Context, t *dynamo.Txn, rec *idem, c *Comment) (*Comment, error) {
	if err := s.record(t, rec, c); err != nil {
		return nil, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return nil, err
	}
	return c, nil
}

// parseCommentID parses the comment id s, or fails with a
// *ValidationError when it is not one.
func parseCommentID(s string) (keys.CommentID, error) {
	c, err := keys.ParseCommentID(s)
	if err != nil {
		return keys.CommentID{}, &ValidationError{Field: "commentId", Reason: "is not a comment id"}
	}
	return c, nil
}
