package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The newsletter: a member gets every post of the publication by email
// when it is first published, unless they turned it off (the member's
// newsletter attribute, on when they join) or the publish chose not to
// send it (the post item's noNewsletter, which a scheduled post keeps
// until it goes live). The change feed's
// "newsletter" worker sends a post in pages of members: each email is
// put into the mail outbox under an id made of the publication, the post
// and the member, only when absent, so a page enqueued twice (a retry, a
// crash, a second server) makes no second email; after each page the
// post's sending item (<P>NEWSLETTER#<postId>) moves its checkpoint, the
// last member enqueued, on the condition that nobody moved it since, so
// a restart resumes after that member and two servers never both go on.
// Once every member is enqueued the item is marked sent, and the post
// is never sent again: not after an edit, nor when it is published
// again after an unpublish. Request budgets:
//
//	StartNewsletter        1 PutItem, + 1 GetItem when the sending exists
//	NewsletterSubscribers  1 Query of GSI1 per page (a filter keeps the subscribed)
//	EnqueueMail            1 PutItem per email
//	NewsletterProgress     1 UpdateItem per page
//	SetNewsletter          1 UpdateItem

const typeNewsletterSend = "newsletterSend"

// Sending states.
const (
	newsletterSending = "SENDING"
	newsletterSent    = "SENT"
)

// NewsletterSend is the sending of a post to the members who get the
// newsletter.
type NewsletterSend struct {
	PostID string
	// StartedAt is when the sending began: every email of it is created
	// at that time, so its outbox key is the same on every attempt.
	StartedAt time.Time
	// After is the members' sort key of the last member enqueued; empty
	// before the first page.
	After string
	// Pages counts the pages enqueued, Enqueued the emails.
	Pages    int
	Enqueued int
	// Sent: every member was enqueued.
	Sent bool
}

type newsletterSendItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	PostID    string `dynamodbav:"postId"`
	State     string `dynamodbav:"state"`
	StartedAt string `dynamodbav:"startedAt"`
	After     string `dynamodbav:"after,omitempty"`
	Pages     int    `dynamodbav:"pages"`
	Enqueued  int    `dynamodbav:"enqueued"`
	SentAt    string `dynamodbav:"sentAt,omitempty"`
}

func (it *newsletterSendItem) send() *NewsletterSend {
	return &NewsletterSend{PostID: it.PostID, StartedAt: keys.ParseTime(it.StartedAt), After: it.After,
		Pages: it.Pages, Enqueued: it.Enqueued, Sent: it.State == newsletterSent}
}

// StartNewsletter returns the sending of the post postID: begun now when
// there was none, else as it stands (read strongly consistent), which may
// be sent already. It returns the DynamoDB error when it could do
// neither.
func (s *Store) StartNewsletter(ctx context.Context, postID string) (*NewsletterSend, error) {
	k := s.ks.NewsletterSend(postID)
	it := newsletterSendItem{PK: k.PK, SK: k.SK, Type: typeNewsletterSend, PostID: postID, State: newsletterSending,
		StartedAt: keys.Time(s.Now())}
	made, err := s.db.PutIf(ctx, it, dynamo.CondNotExists())
	if err != nil {
		return nil, fmt.Errorf("start newsletter of post %q: %w", postID, err)
	}
	if made {
		return it.send(), nil
	}
	return s.newsletterSend(ctx, postID)
}

func (s *Store) newsletterSend(ctx context.Context, postID string) (*NewsletterSend, error) {
	var it newsletterSendItem
	if err := s.db.Get(ctx, s.ks.NewsletterSend(postID), true, &it); err != nil {
		return nil, fmt.Errorf("newsletter of post %q: %w", postID, err)
	}
	return it.send(), nil
}

// ErrNewsletterMoved means the sending's checkpoint moved since it was
// read: another server sends the post, or did.
var ErrNewsletterMoved = errors.New("the newsletter's sending moved on elsewhere")

// NewsletterProgress moves the checkpoint of send past a page of n emails
// ending with the member whose sort key is after, and marks it sent when
// done, with one conditional UpdateItem. It returns ErrNewsletterMoved
// when the checkpoint is no longer where send says, and send as it now
// stands otherwise.
func (s *Store) NewsletterProgress(ctx context.Context, send *NewsletterSend, after string, n int, done bool) (*NewsletterSend, error) {
	upd := expression.Set(expression.Name("pages"), expression.Value(send.Pages+1)).
		Set(expression.Name("enqueued"), expression.Value(send.Enqueued+n))
	if after != "" {
		upd = upd.Set(expression.Name("after"), expression.Value(after))
	}
	if done {
		upd = upd.Set(expression.Name("state"), expression.Value(newsletterSent)).
			Set(expression.Name("sentAt"), expression.Value(keys.Time(s.Now())))
	}
	cond := expression.Name("pages").Equal(expression.Value(send.Pages)).
		And(expression.Name("state").Equal(expression.Value(newsletterSending)))
	ok, err := s.db.UpdateIf(ctx, s.ks.NewsletterSend(send.PostID), upd, cond)
	if err != nil {
		return nil, fmt.Errorf("newsletter of post %q: %w", send.PostID, err)
	}
	if !ok {
		return nil, fmt.Errorf("newsletter of post %q: %w", send.PostID, ErrNewsletterMoved)
	}
	next := *send
	next.Pages++
	next.Enqueued += n
	next.Sent = done
	if after != "" {
		next.After = after
	}
	return &next, nil
}

// NewsletterSubscribers returns the members who get the newsletter among
// up to limit members after the member whose sort key is after (from the
// first when it is empty), by address, with the sort key of the last
// member read: one Query of GSI1. That key is empty when no member
// follows.
func (s *Store) NewsletterSubscribers(ctx context.Context, after string, limit int) ([]*Member, string, error) {
	kc := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.MembersPartition()))
	if after != "" {
		kc = kc.And(expression.Key(keys.AttrGSI1SK).GreaterThan(expression.Value(after)))
	}
	filter := expression.Name("newsletter").Equal(expression.Value(true))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc).WithFilter(filter))
	if err != nil {
		return nil, "", err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1), KeyConditionExpression: expr.KeyCondition(),
		FilterExpression: expr.Filter(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, "", fmt.Errorf("newsletter subscribers: %w", err)
	}
	var items []memberItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, "", fmt.Errorf("decode members: %w", err)
	}
	members := make([]*Member, 0, len(items))
	for i := range items {
		members = append(members, items[i].member())
	}
	var last string
	if out.LastEvaluatedKey != nil {
		var k struct {
			SK string `dynamodbav:"GSI1SK"`
		}
		if err := attributevalue.UnmarshalMap(out.LastEvaluatedKey, &k); err != nil {
			return nil, "", fmt.Errorf("decode members' last key: %w", err)
		}
		last = k.SK
	}
	return members, last, nil
}

// MemberSortKey returns the sort key of m among the members, which
// NewsletterSubscribers resumes after.
func MemberSortKey(m *Member) string { return keys.MemberSort(m.Email, m.AccountID) }

// NewsletterMailID returns the outbox id of the email of the post postID
// to the member accountID: the same on every server and attempt, and
// another for every publication, post and member.
func (s *Store) NewsletterMailID(postID, accountID string) string {
	h := sha256.Sum256([]byte("newsletter\x00" + s.Publication() + "\x00" + postID + "\x00" + accountID))
	return hex.EncodeToString(h[:16])
}

// EnqueueMail puts e into the mail outbox, due now, unless the outbox has
// an email of its id and creation time: one conditional PutItem. It
// reports whether e is new.
func (s *Store) EnqueueMail(ctx context.Context, e Email) (bool, error) {
	it, err := newMailItem(e, s.Now())
	if err != nil {
		return false, err
	}
	made, err := s.db.PutIf(ctx, it, dynamo.CondNotExists())
	if err != nil {
		return false, fmt.Errorf("enqueue mail %s: %w", e.ID, err)
	}
	return made, nil
}

// SetNewsletter turns the newsletter on or off for the member accountID
// with one UpdateItem. It returns ErrNotFound when the account is not a
// member of the publication.
func (s *Store) SetNewsletter(ctx context.Context, accountID string, on bool) error {
	if validateReaderID(accountID) != nil {
		return fmt.Errorf("member: %w", ErrNotFound)
	}
	ok, err := s.db.UpdateIf(ctx, s.ks.Member(accountID), expression.Set(expression.Name("newsletter"), expression.Value(on)), dynamo.CondExists())
	if err != nil {
		return fmt.Errorf("member %q newsletter: %w", accountID, err)
	}
	if !ok {
		return fmt.Errorf("member %q: %w", accountID, ErrNotFound)
	}
	return nil
}
