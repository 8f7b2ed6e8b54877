package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The mail outbox: one item per email (PK MAILBOX, SK MAIL#<createdAt>#<id>),
// put only when absent in the transaction of what it tells of, so a
// retried write sends it once. While it waits to be sent it is in GSI1
// partition MAILQ under the time of its next attempt, so what is due is
// one Query. Emails a reader waits for (sign-in) wait in a lane of their
// own, GSI1 partition MAILQ#URGENT, so a newsletter of thousands queued
// before them does not delay them. A sender claims an attempt by moving
// that time past the attempt's timeout on the condition that nobody
// moved it since, so one attempt is made however many servers see it
// due. By SMTP, the attempt records the email as sent (CommitMail) when the server has all
// of it but the final dot that makes it take it, so a sender killed
// after the dot never leaves it to be sent twice. Once sent, or failed
// for good, it leaves the queue for its recipient's GSI1 partition
// (MAILTO#<address>, by creation time), where the deletion of the
// recipient's account finds it (privacy.go), and expires after
// MailRetention. An
// email sent by SMTP keeps its headers but not its bodies, which may hold
// a sign-in link; one kept in the local outbox (no SMTP configured) keeps
// them, for an admin to read. Request budgets:
//
//	DueMail      1 Query of GSI1 (of one lane)
//	ClaimMail    1 UpdateItem
//	CommitMail   1 UpdateItem (by SMTP, before the final dot)
//	FinishMail   1 UpdateItem
//	Mails        1 Query

// Mail limits.
const (
	// MailRetention is how long sent and failed emails are kept.
	MailRetention = 7 * 24 * time.Hour
	// MaxMailBodyBytes bounds each part of an email, the text's and the
	// HTML's.
	MaxMailBodyBytes = 32 << 10
	// MaxMailErrorBytes bounds the reason of a failure kept.
	MaxMailErrorBytes = 1000
)

// Email states.
const (
	MailPending = "PENDING"
	MailSent    = "SENT"
	MailFailed  = "FAILED"
)

const typeMail = "mail"

// MailLane is a queue of the outbox: a lane's emails go in the order they
// are due, and no lane waits for another's.
type MailLane int

// Mail lanes.
const (
	// LaneBulk holds newsletters and notifications.
	LaneBulk MailLane = iota
	// LaneUrgent holds the emails a reader waits for (Email.Urgent).
	LaneUrgent
)

func (l MailLane) partition() string {
	if l == LaneUrgent {
		return keys.MailUrgentPartition
	}
	return keys.MailQueuePartition
}

// Email is an email of the outbox.
type Email struct {
	ID      string
	To      string
	Subject string
	Text    string
	HTML    string
	// Kind says what it is for ("sign-in").
	Kind string
	// Urgent puts it in LaneUrgent: a reader waits for it (a sign-in
	// email), and a newsletter being sent must not delay it. It is
	// reported only while the email waits to be sent.
	Urgent        bool
	State         string
	Attempts      int
	NextAttemptAt time.Time
	CreatedAt     time.Time
	SentAt        time.Time
	// Transport is how it went: "smtp", or "local" for the local outbox.
	Transport string
	LastError string
	// AccountID is the id of the account that held the address To when
	// the email was made, when one did (a sign-in link's); the checker
	// proves with it that no email names a deleted account.
	AccountID string
	// ListUnsubscribe, when set, is the URL of the recipient's one-click
	// unsubscribe (RFC 8058): the List-Unsubscribe header names it and
	// List-Unsubscribe-Post says a POST to it is enough.
	ListUnsubscribe string
}

type mailItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK    string `dynamodbav:"GSI1SK,omitempty"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	To        string `dynamodbav:"to"`
	Subject   string `dynamodbav:"subject"`
	Text      string `dynamodbav:"text,omitempty"`
	HTML      string `dynamodbav:"html,omitempty"`
	Kind      string `dynamodbav:"kind"`
	State     string `dynamodbav:"state"`
	Attempts  int    `dynamodbav:"attempts"`
	Next      string `dynamodbav:"nextAttemptAt,omitempty"`
	CreatedAt string `dynamodbav:"createdAt"`
	SentAt    string `dynamodbav:"sentAt,omitempty"`
	Transport string `dynamodbav:"transport,omitempty"`
	LastError string `dynamodbav:"lastError,omitempty"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
	AccountID string `dynamodbav:"accountId,omitempty"`
	// Unsubscribe is the email's List-Unsubscribe URL.
	Unsubscribe string `dynamodbav:"listUnsubscribe,omitempty"`
}

func (it *mailItem) email() Email {
	return Email{ID: it.ID, To: it.To, Subject: it.Subject, Text: it.Text, HTML: it.HTML, Kind: it.Kind, State: it.State,
		Attempts: it.Attempts, NextAttemptAt: keys.ParseTime(it.Next), CreatedAt: keys.ParseTime(it.CreatedAt),
		SentAt: keys.ParseTime(it.SentAt), Transport: it.Transport, LastError: it.LastError, ListUnsubscribe: it.Unsubscribe, AccountID: it.AccountID,
		Urgent: it.GSI1PK == keys.MailUrgentPartition}
}

func mailDueKey(at time.Time, id string) string { return keys.Time(at) + "#" + id }

// putMail adds to t the email e, due now, unless the outbox has it.
func putMail(t *dynamo.Txn, e Email, now time.Time) error {
	it, err := newMailItem(e, now)
	if err != nil {
		return err
	}
	return t.Put(it, ptr(dynamo.CondNotExists()), dynamo.ErrRetry)
}

// newMailItem returns the outbox's item of e, due now.
func newMailItem(e Email, now time.Time) (mailItem, error) {
	if len(e.Text) > MaxMailBodyBytes || len(e.HTML) > MaxMailBodyBytes {
		return mailItem{}, fmt.Errorf("email %s: a part passes %d bytes", e.ID, MaxMailBodyBytes)
	}
	k := keys.Mail(keys.Time(e.CreatedAt), e.ID)
	lane := LaneBulk
	if e.Urgent {
		lane = LaneUrgent
	}
	return mailItem{PK: k.PK, SK: k.SK, GSI1PK: lane.partition(), GSI1SK: mailDueKey(now, e.ID), Type: typeMail,
		ID: e.ID, To: e.To, Subject: e.Subject, Text: e.Text, HTML: e.HTML, Kind: e.Kind, State: MailPending,
		Next: keys.Time(now), CreatedAt: keys.Time(e.CreatedAt), Unsubscribe: e.ListUnsubscribe, AccountID: e.AccountID}, nil
}

// DueMail returns up to limit emails of lane whose next attempt is due at
// now, earliest first, in one Query of GSI1. The index is eventually
// consistent: ClaimMail tells which are still due.
func (s *Store) DueMail(ctx context.Context, lane MailLane, now time.Time, limit int) ([]Email, error) {
	kc := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(lane.partition())).
		And(expression.Key(keys.AttrGSI1SK).LessThan(expression.Value(keys.Time(now) + "$")))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("due mail: %w", err)
	}
	return decodeMails(out.Items)
}

func decodeMails(avs []item) ([]Email, error) {
	var items []mailItem
	if err := attributevalue.UnmarshalListOfMaps(avs, &items); err != nil {
		return nil, fmt.Errorf("decode mail: %w", err)
	}
	out := make([]Email, 0, len(items))
	for i := range items {
		out = append(out, items[i].email())
	}
	return out, nil
}

// ClaimMail claims the next attempt at e: its next attempt moves to
// until, provided nothing moved it since e was read, so a server that
// stops mid-attempt leaves it due again at until. It reports false when
// another claim or a result came first.
func (s *Store) ClaimMail(ctx context.Context, e Email, until time.Time) (bool, error) {
	upd := expression.Set(expression.Name("nextAttemptAt"), expression.Value(keys.Time(until))).
		Set(expression.Name(keys.AttrGSI1SK), expression.Value(mailDueKey(until, e.ID))).
		Set(expression.Name("attempts"), expression.Value(e.Attempts+1))
	cond := expression.Name("nextAttemptAt").Equal(expression.Value(keys.Time(e.NextAttemptAt))).
		And(expression.Name("state").Equal(expression.Value(MailPending)))
	ok, err := s.db.UpdateIf(ctx, keys.Mail(keys.Time(e.CreatedAt), e.ID), upd, cond)
	if err != nil {
		return false, fmt.Errorf("claim mail %s: %w", e.ID, err)
	}
	return ok, nil
}

// CommitMail records the email e, claimed by the attempt that counts
// e.Attempts, as sent by transport, provided no other claim came since:
// the moment before the email's server takes it for good (SMTP's final
// dot), so no server sends it again whatever becomes of this one. Its
// bodies stay until FinishMail records the outcome: the server may still
// refuse it. It returns an error wrapping ErrVersionConflict when another
// claim or a result came first: the email must not go.
func (s *Store) CommitMail(ctx context.Context, e Email, transport string) error {
	now := s.Now()
	upd := expression.Set(expression.Name("state"), expression.Value(MailSent)).
		Set(expression.Name("sentAt"), expression.Value(keys.Time(now))).
		Set(expression.Name("transport"), expression.Value(transport)).
		Set(expression.Name("expiresAt"), expression.Value(now.Add(MailRetention).Unix())).
		Remove(expression.Name("nextAttemptAt"))
	upd = byRecipient(upd, e)
	cond := expression.Name("attempts").Equal(expression.Value(e.Attempts)).
		And(expression.Name("state").Equal(expression.Value(MailPending)))
	ok, err := s.db.UpdateIf(ctx, keys.Mail(keys.Time(e.CreatedAt), e.ID), upd, cond)
	switch {
	case err != nil:
		return fmt.Errorf("commit mail %s: %w", e.ID, err)
	case !ok:
		return fmt.Errorf("commit mail %s: %w", e.ID, ErrVersionConflict)
	}
	return nil
}

// byRecipient adds to upd the move of the email e, sent or failed, from
// its lane's GSI1 partition to its recipient's (MailToPartition), where
// deleting the recipient's account finds it: the same index entry, moved
// in the update that takes it out of the lane.
func byRecipient(upd expression.UpdateBuilder, e Email) expression.UpdateBuilder {
	return upd.Set(expression.Name(keys.AttrGSI1PK), expression.Value(keys.MailToPartition(e.To))).
		Set(expression.Name(keys.AttrGSI1SK), expression.Value(keys.Time(e.CreatedAt)+"#"+e.ID))
}

// MailResult is the outcome of an attempt to send an email.
type MailResult struct {
	// Sent: the email went (Transport says how).
	Sent      bool
	Transport string
	// Err is why it did not go; RetryAt, when it is tried again (zero:
	// never, the email failed for good).
	Err     string
	RetryAt time.Time
}

// FinishMail records the outcome of the attempt at e that ClaimMail
// claimed. It returns the DynamoDB error when it could not.
func (s *Store) FinishMail(ctx context.Context, e Email, r MailResult) error {
	now := s.Now()
	if len(r.Err) > MaxMailErrorBytes {
		r.Err = strings.ToValidUTF8(r.Err[:MaxMailErrorBytes], "")
	}
	var upd expression.UpdateBuilder
	switch {
	case r.Sent:
		upd = expression.Set(expression.Name("state"), expression.Value(MailSent)).
			Set(expression.Name("sentAt"), expression.Value(keys.Time(now))).
			Set(expression.Name("transport"), expression.Value(r.Transport)).
			Set(expression.Name("expiresAt"), expression.Value(now.Add(MailRetention).Unix())).
			Remove(expression.Name("nextAttemptAt")).Remove(expression.Name("lastError"))
		upd = byRecipient(upd, e)
		if r.Transport != "local" {
			upd = upd.Remove(expression.Name("text")).Remove(expression.Name("html"))
		}
	case r.RetryAt.IsZero():
		upd = expression.Set(expression.Name("state"), expression.Value(MailFailed)).
			Set(expression.Name("lastError"), expression.Value(r.Err)).
			Set(expression.Name("expiresAt"), expression.Value(now.Add(MailRetention).Unix())).
			Remove(expression.Name("nextAttemptAt")).Remove(expression.Name("text")).Remove(expression.Name("html"))
		upd = byRecipient(upd, e)
	default:
		// Pending again, in its lane, should CommitMail have taken it
		// out before the server refused it.
		lane := LaneBulk
		if e.Urgent {
			lane = LaneUrgent
		}
		upd = expression.Set(expression.Name("lastError"), expression.Value(r.Err)).
			Set(expression.Name("state"), expression.Value(MailPending)).
			Set(expression.Name("nextAttemptAt"), expression.Value(keys.Time(r.RetryAt))).
			Set(expression.Name(keys.AttrGSI1PK), expression.Value(lane.partition())).
			Set(expression.Name(keys.AttrGSI1SK), expression.Value(mailDueKey(r.RetryAt, e.ID))).
			Remove(expression.Name("sentAt")).Remove(expression.Name("transport")).Remove(expression.Name("expiresAt"))
	}
	if _, err := s.db.UpdateIf(ctx, keys.Mail(keys.Time(e.CreatedAt), e.ID), upd, dynamo.CondExists()); err != nil {
		return fmt.Errorf("finish mail %s: %w", e.ID, err)
	}
	return nil
}

// Mails returns up to limit emails of the outbox, newest first, in one
// Query.
func (s *Store) Mails(ctx context.Context, limit int) ([]Email, error) {
	in, err := s.db.KeyQuery(expression.Key(keys.AttrPK).Equal(expression.Value(keys.MailPartition)))
	if err != nil {
		return nil, err
	}
	in.ScanIndexForward, in.Limit = aws.Bool(false), aws.Int32(int32(limit))
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("mails: %w", err)
	}
	return decodeMails(out.Items)
}
