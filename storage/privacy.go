package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Privacy: a reader's export of their data and the deletion of their
// account. Everything a reader leaves in a publication (a comment, a
// reaction, a membership) is found through the reader's trail
// (keys/privacy.go): an entry in the reader's global partition written in
// the transaction that leaves the thing, so a consistent Query of that
// partition sees every committed comment, reaction and membership, and
// neither the export nor the deletion ever scans the table.
//
// The transactions that leave a trail also check that the reader's
// account is not closed (attribute closedAt absent, as it is of a reader
// with no account), so once a deletion has marked the account, no
// comment or reaction of it commits anywhere. Deletion is:
//
//  1. mark the account closed (one UpdateItem): its sign-ins, comments
//     and reactions are refused from then on; an account with staff
//     roles loses them in the same transaction, and the last owner of a
//     publication is refused before anything changes (staffroles.go);
//  2. sweep the trail, 100 entries a Query: each comment deleted as
//     deleteComment deletes it (a top-level comment with replies stays as
//     a tombstone, whose writer is then removed too), each reaction taken
//     back (its counts go down, never below zero), each membership
//     deleted, then the page's entries;
//  3. delete the sessions, the reader's profile, the address's pending
//     sign-ins, its sign-in rate, the emails to it still waiting in the
//     outbox (pendingMailTo) and those sent, and scrub the address from
//     those that failed (finishedMailTo, privacymail.go);
//  4. in one transaction, release the address and leave in place of the
//     account a tombstone of its id alone (closedAt, expiring after
//     ClosedAccountTTL), so the account's access tokens, which outlive
//     the sessions by up to their lifetime, stay refused.
//
// Every step is idempotent and the trail shrinks as it goes, so running
// the deletion again after a crash, or twice at once, finishes it.
// Request budgets (N comments, R reactions of k kinds, M memberships, S
// sessions):
//
//	ExportAccount   2 GetItem + 1 Query of sessions + per 100 trail entries: 1 Query + 1 BatchGetItem of the memberships, reactions and comments + 1 BatchGetItem of the posts; then per 100 staff roles (exportroles.go): 1 Query + 1 BatchGetItem of the roles and their publications a 50
//	DeleteAccount   2 GetItem + 1 Query of staff roles + 1 UpdateItem (staffroles.go for an account with roles) + per 100 trail entries 1 Query + 1 BatchWriteItem (4 calls of 25), per comment 2 to 3 (deleteComment: 1 read, 1 TransactWriteItems; +1 Query for a reply its parent carries, +1 UpdateItem for a top-level comment), per reaction 1 GetItem + k TransactWriteItems, per membership 1 DeleteItem; then 1 Query + a BatchWriteItem per 25 sessions, 1 Query of pending sign-ins + 1 Query of the mail queue a megabyte + 1 Query of the emails sent or failed a megabyte + 1 UpdateItem a failed one + 1 BatchWriteItem, 1 TransactWriteItems

// ClosedAccountTTL is how long a deleted account's tombstone refuses its
// tokens: longer than any access token lives.
const ClosedAccountTTL = 24 * time.Hour

// trailPage is how many trail entries one Query of the export or the
// deletion reads.
const trailPage = 100

const (
	typeTrail    = "trail"
	attrClosedAt = "closedAt"
)

type trailItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	CreatedAt string `dynamodbav:"createdAt"`
}

func newTrail(k key, now time.Time) trailItem {
	return trailItem{PK: k.PK, SK: k.SK, Type: typeTrail, CreatedAt: keys.Time(now)}
}

// closedAccountItem is what is left of a deleted account.
type closedAccountItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	ClosedAt  string `dynamodbav:"closedAt"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// leaveTrail adds to t the reader's trail entry of kind and ref in the
// Store's publication, and the check that the reader's account is not
// closed (ErrAccountClosed).
func (s *Store) leaveTrail(t *dynamo.Txn, readerID, kind, ref string, now time.Time) error {
	if err := t.Put(newTrail(s.ks.Trail(readerID, kind, ref), now), nil, nil); err != nil {
		return err
	}
	return t.Check(keys.Account(readerID), expression.AttributeNotExists(expression.Name(attrClosedAt)), ErrAccountClosed)
}

// in returns the Store of the publication pubID on the same table, or an
// error for an id that names none.
func (s *Store) in(pubID string) (*Store, error) {
	if pubID == s.ks.ID() {
		return s, nil
	}
	ks, err := keys.In(pubID)
	if err != nil {
		return nil, fmt.Errorf("publication %q: %w", pubID, err)
	}
	c := *s
	c.ks, c.db = ks, s.db.Unconfined().Confine(ks.Prefix(), keys.Global)
	return &c, nil
}

// trailEntry is a parsed entry of a reader's trail.
type trailEntry struct {
	k                key
	pubID, kind, ref string
	postID, rest     string // ref split at its first #
}

// trailPageOf returns the next page of the reader's trail after the
// sort key after ("" for the first), and whether more follow.
func (s *Store) trailPageOf(ctx context.Context, readerID, after string) ([]trailEntry, bool, error) {
	kc := expression.Key(keys.AttrPK).Equal(expression.Value(keys.PrefixReader + readerID)).
		And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixTrail))
	in, err := s.db.KeyQuery(kc)
	if err != nil {
		return nil, false, err
	}
	in.ConsistentRead, in.Limit = aws.Bool(true), aws.Int32(trailPage)
	if after != "" {
		in.ExclusiveStartKey = dynamo.MustKey(key{PK: keys.PrefixReader + readerID, SK: after})
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("trail of reader %q: %w", readerID, err)
	}
	var items []trailItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, false, fmt.Errorf("decode trail: %w", err)
	}
	list := make([]trailEntry, 0, len(items))
	for _, it := range items {
		pub, kind, ref, ok := keys.ParseTrail(it.SK)
		if !ok {
			continue
		}
		e := trailEntry{k: key{PK: it.PK, SK: it.SK}, pubID: pub, kind: kind, ref: ref}
		e.postID, e.rest, _ = strings.Cut(ref, "#")
		list = append(list, e)
	}
	return list, len(out.LastEvaluatedKey) > 0, nil
}

// closeAccount marks the account closed, unless it is already, taking
// away its staff roles in the same transaction (staffroles.go), and
// returns its email address. It returns ErrNotFound when there is no
// such account, ErrAccountClosed when only its tombstone is left, a
// *ValidationError of email when confirm is not its address, and a
// *LastOwnerError when it is the last owner of a publication; nothing
// is changed then.
func (s *Store) closeAccount(ctx context.Context, id, confirm string) (string, error) {
	var it accountItem
	if err := s.db.Get(ctx, keys.Account(id), true, &it); err != nil {
		return "", fmt.Errorf("account %q: %w", id, err)
	}
	switch {
	case it.ClosedAt != "" && it.Email == "":
		return "", ErrAccountClosed
	case !strings.EqualFold(confirm, it.Email):
		return "", invalid("email", "must be the account's email address")
	case it.ClosedAt != "":
		return it.Email, nil
	}
	upd := expression.Set(expression.Name(attrClosedAt), expression.Value(keys.Time(s.Now())))
	if err := s.closeWithRoles(ctx, id, upd); err != nil {
		return "", err
	}
	return it.Email, nil
}

// DeleteAccount deletes the account id and everything its reader left:
// their comments (a top-level comment with replies stays as a tombstone
// with no text and no writer), reactions (taken back from the counts),
// memberships, staff roles, sessions, profile, pending sign-ins, the
// emails to them (a failed one kept without the address), and the claim of
// their address, which a later sign-in makes a new account with. It is
// idempotent: a deletion cut short is finished by the next call. It
// returns ErrNotFound when there is no such account, and nil when it
// was deleted already (its tombstone is still there), and a
// *ValidationError, having changed nothing, when confirm is not the
// account's email address.
func (s *Store) DeleteAccount(ctx context.Context, id, confirm string) error {
	if validateReaderID(id) != nil {
		return fmt.Errorf("account: %w", ErrNotFound)
	}
	email, err := s.closeAccount(ctx, id, confirm)
	if errors.Is(err, ErrAccountClosed) {
		return nil
	}
	if err != nil {
		return err
	}
	for {
		page, more, err := s.trailPageOf(ctx, id, "")
		if err != nil {
			return err
		}
		done := make([]item, 0, len(page))
		for _, e := range page {
			if err := s.eraseTrailEntry(ctx, id, e); err != nil {
				return fmt.Errorf("delete account %q: %w", id, err)
			}
			done = append(done, dynamo.MustKey(e.k))
		}
		if err := s.deleteAll(ctx, done); err != nil {
			return err
		}
		if !more {
			break
		}
	}
	return s.forgetAccount(ctx, id, email)
}

// eraseTrailEntry removes what the trail entry e names; what is gone
// already is no error.
func (s *Store) eraseTrailEntry(ctx context.Context, readerID string, e trailEntry) error {
	ps, err := s.in(e.pubID)
	if err != nil {
		return err
	}
	switch e.kind {
	case keys.TrailComment:
		return ps.eraseComment(ctx, readerID, e.postID, e.rest)
	case keys.TrailReaction:
		return ps.eraseReactions(ctx, readerID, e.postID, e.rest)
	case keys.TrailMember:
		return ps.deleteIf(ctx, ps.ks.Member(readerID), dynamo.CondExists())
	}
	return nil
}

// eraseComment deletes the reader's comment, and removes the writer from
// the tombstone a top-level comment with replies leaves.
func (s *Store) eraseComment(ctx context.Context, readerID, postID, commentID string) error {
	cid, err := keys.ParseCommentID(commentID)
	if err != nil {
		return nil // no comment has such an id
	}
	if _, err := s.DeleteComment(ctx, CommentRef{PostID: postID, CommentID: commentID}); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("comment %q: %w", commentID, err)
	}
	if cid.Parent != nil {
		return nil // a reply never stays as a tombstone
	}
	cond := expression.Name("deleted").Equal(expression.Value(true)).
		And(expression.Name("readerId").Equal(expression.Value(readerID)))
	if _, err := s.db.UpdateIf(ctx, s.ks.Comment(postID, cid), expression.Remove(expression.Name("readerId")), cond); err != nil {
		return fmt.Errorf("comment %q: %w", commentID, err)
	}
	return nil
}

// eraseReactions takes back every reaction of the reader to the subject
// of the post, then deletes their emptied reaction item.
func (s *Store) eraseReactions(ctx context.Context, readerID, postID, subject string) error {
	k := s.ks.Reaction(postID, subject, readerID)
	var it struct {
		Kinds []string `dynamodbav:"kinds,stringset"`
	}
	if err := s.db.Get(ctx, k, true, &it); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return fmt.Errorf("reactions: %w", err)
	}
	sub := Subject{PostID: postID}
	if subject != keys.ReactionSubject("") {
		sub.CommentID = subject
	}
	for _, kind := range it.Kinds {
		if err := s.Unreact(ctx, sub, readerID, kind); err != nil && !errors.Is(err, errNegativeCount) {
			return err
		}
	}
	return s.deleteIf(ctx, k, dynamo.CondExists())
}

// forgetAccount deletes the account's sessions, profile, pending sign-ins
// and sign-in rate, then releases its address and leaves its tombstone.
func (s *Store) forgetAccount(ctx context.Context, id, email string) error {
	var gone []item
	collect := func(av item) error {
		gone = append(gone, item{keys.AttrPK: av[keys.AttrPK], keys.AttrSK: av[keys.AttrSK]})
		return nil
	}
	sessions := expression.Key(keys.AttrPK).Equal(expression.Value(keys.Account(id).PK)).
		And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixSession))
	in, err := s.db.KeyQuery(sessions)
	if err != nil {
		return err
	}
	in.ConsistentRead, in.ProjectionExpression = aws.Bool(true), aws.String("PK, SK")
	if err := s.db.QueryAll(ctx, in, collect); err != nil {
		return fmt.Errorf("sessions of account %q: %w", id, err)
	}
	gone = append(gone, dynamo.MustKey(keys.Reader(id)))
	if email != "" {
		gone = append(gone, dynamo.MustKey(keys.SignInEmailRate(email)))
		pending := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(keys.SignInCodePartition(email)))
		in, err := s.db.KeyQuery(pending)
		if err != nil {
			return err
		}
		in.IndexName, in.ConsistentRead = aws.String(keys.IndexGSI1), nil
		if err := s.db.QueryAll(ctx, in, collect); err != nil {
			return fmt.Errorf("pending sign-ins: %w", err)
		}
		if err := s.pendingMailTo(ctx, email, collect); err != nil {
			return err
		}
		if err := s.finishedMailTo(ctx, email, collect); err != nil {
			return err
		}
	}
	if err := s.deleteAll(ctx, gone); err != nil {
		return err
	}
	now := s.Now()
	ak := keys.Account(id)
	t := s.db.NewTxn()
	if email != "" {
		ours := expression.AttributeNotExists(expression.Name(keys.AttrPK)).Or(expression.Name("accountId").Equal(expression.Value(id)))
		if err := t.Delete(keys.AccountEmail(email), &ours, nil); err != nil {
			return err
		}
	}
	closed := expression.AttributeExists(expression.Name(attrClosedAt))
	if err := t.Put(closedAccountItem{PK: ak.PK, SK: ak.SK, Type: typeAccount, ID: id, ClosedAt: keys.Time(now),
		ExpiresAt: now.Add(ClosedAccountTTL).Unix()}, &closed, ErrAccountClosed); err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil && !errors.Is(err, ErrAccountClosed) {
		return fmt.Errorf("forget account %q: %w", id, err)
	}
	return nil
}

// pendingMailTo passes to f the keys of the emails to the address email
// still waiting in the outbox: sign-in links, newsletters and reply
// notifications not yet sent. The outbox is one partition by creation
// time with no index by recipient, so they are found in the queues of
// what waits (GSI1 partitions MAILQ and MAILQ#URGENT, one a lane),
// filtered by recipient: one Query a lane and a megabyte of it, which
// the senders keep short but a newsletter being sent to every member
// fills for the time of its sending.
func (s *Store) pendingMailTo(ctx context.Context, email string, f func(item) error) error {
	for _, lane := range []MailLane{LaneUrgent, LaneBulk} {
		expr, err := dynamo.BuildExpr(expression.NewBuilder().
			WithKeyCondition(expression.Key(keys.AttrGSI1PK).Equal(expression.Value(lane.partition()))).
			WithFilter(expression.Name("to").Equal(expression.Value(email))).
			WithProjection(expression.NamesList(expression.Name(keys.AttrPK), expression.Name(keys.AttrSK))))
		if err != nil {
			return err
		}
		in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1),
			KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(), ProjectionExpression: expr.Projection(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
		if err := s.db.QueryAll(ctx, in, f); err != nil {
			return fmt.Errorf("pending mail: %w", err)
		}
	}
	return nil
}

// deleteAll deletes the items of the keys ks, 25 a BatchWriteItem.
func (s *Store) deleteAll(ctx context.Context, ks []item) error {
	for len(ks) > 0 {
		n := min(len(ks), 25)
		if err := s.batchDelete(ctx, ks[:n]); err != nil {
			return err
		}
		ks = ks[n:]
	}
	return nil
}

// exportWriter writes an export's JSON document as it is read.
type exportWriter struct {
	w     io.Writer
	err   error
	first bool
}

func (x *exportWriter) raw(s string) {
	if x.err == nil {
		_, x.err = io.WriteString(x.w, s)
	}
}

func (x *exportWriter) value(v any) {
	if x.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		x.err = err
		return
	}
	_, x.err = x.w.Write(b)
}

// field writes "name": v, after a comma unless it is the first field.
func (x *exportWriter) field(name string, v any) {
	if !x.first {
		x.raw(",")
	}
	x.first = false
	x.value(name)
	x.raw(":")
	x.value(v)
}

// element writes v as an element of the list open, after a comma unless
// it is the first.
func (x *exportWriter) element(v any, first *bool) {
	if !*first {
		x.raw(",")
	}
	*first = false
	x.value(v)
}
