package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Reply notifications: when a published reply answers a comment of a
// member, the change feed's "reply-notifications" worker puts one email
// to the member into the mail outbox, under an id made of the
// publication, the post and the reply and created at the reply's
// creation time, only when absent: the same reply handled twice (a
// retry, a second server, the log read again) makes one email. Only a
// comment a member wrote (a reader who signed in by email link on the
// publication, whose address the membership holds) is notified of: a
// staff author's and an external identity's comments have no address
// here. A reply held for moderation notifies when it is approved
// (comment.approved), never while pending or once rejected. The
// emails are opt-in: the member's replyNotifications attribute, absent
// when they join, turns them on. Request budgets:
//
//	SetReplyNotifications  1 UpdateItem
//	ReplyMailID            none

// SetReplyNotifications turns the reply notifications on or off for the
// member accountID with one UpdateItem. It returns ErrNotFound when the
// account is not a member of the publication.
func (s *Store) SetReplyNotifications(ctx context.Context, accountID string, on bool) error {
	if validateReaderID(accountID) != nil {
		return fmt.Errorf("member: %w", ErrNotFound)
	}
	upd := expression.Remove(expression.Name("replyNotifications"))
	if on {
		upd = expression.Set(expression.Name("replyNotifications"), expression.Value(true))
	}
	ok, err := s.db.UpdateIf(ctx, s.ks.Member(accountID), upd, dynamo.CondExists())
	if err != nil {
		return fmt.Errorf("member %q reply notifications: %w", accountID, err)
	}
	if !ok {
		return fmt.Errorf("member %q: %w", accountID, ErrNotFound)
	}
	return nil
}

// ReplyMailID returns the outbox id of the notification of the reply
// commentID on the post postID: the same on every server and attempt,
// and another for every publication and reply.
func (s *Store) ReplyMailID(postID, commentID string) string {
	h := sha256.Sum256([]byte("reply\x00" + s.Publication() + "\x00" + postID + "\x00" + commentID))
	return hex.EncodeToString(h[:16])
}
