package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Reactions: a reader reacts to a post or a comment with some of a fixed
// set of kinds, once a kind. React and Unreact are one TransactWriteItems
// each: the reader's item gains or loses the kind on the condition that it
// lacks or has it, and the subject's count item adds 1 or -1 in the same
// transaction (-1 on the condition that the count is positive), so the
// count is always the number of readers holding the kind, never negative,
// however many readers write at once. The counts sit on an item of their
// own, not the post's, which views and comments write. A reader signed
// in by a reader session must be a member of the publication to react,
// checked in the same transaction (a ConditionCheck on the membership
// item), so it costs no request; taking a reaction back needs no
// membership.

// The kinds of reactions.
const (
	ReactionLike       = "LIKE"
	ReactionLove       = "LOVE"
	ReactionClap       = "CLAP"
	ReactionInsightful = "INSIGHTFUL"
)

// ReactionKinds are the kinds of reactions, in the order counts list them.
var ReactionKinds = []string{ReactionLike, ReactionLove, ReactionClap, ReactionInsightful}

// The item types of reactions.
const (
	typeReaction  = "reaction"
	typeReactions = "reactions"
)

// attrKinds is the string set of a reader's reaction item.
const attrKinds = "kinds"

// Subject is what a reaction is to: a post, or a comment of it.
type Subject struct {
	PostID    string
	CommentID string // empty for the post itself
}

// errReactionHeld and errReactionMissing mean that React found the kind
// already chosen, and Unreact found it not chosen: nothing to do.
var (
	errReactionHeld    = errors.New("reaction already held")
	errReactionMissing = errors.New("reaction not held")
	errNegativeCount   = errors.New("reaction count would go negative")
)

// ErrNotMember means that a reader who must be a member of the
// publication to react is not one.
var ErrNotMember = errors.New("only members of the publication may react")

// Reactor is who reacts: a reader's id, and whether they must be a member
// of the publication (a reader session's reader) or not (a reader the
// publication's own tokens vouch for).
type Reactor struct {
	ID          string
	NeedsMember bool
}

// React records that the reader r reacts to s with kind: one
// TransactWriteItems that checks s is visible (a published post, a
// published comment of it) and, when r.NeedsMember, that r is a member of
// the publication (its membership item exists), adds kind to the reader's
// item and 1 to the count. Reacting again with the same kind changes
// nothing. It fails with ErrInvalidInput for an unknown kind or reader id,
// ErrNotFound when s is missing or hidden, and ErrNotMember when r must be
// a member and is not; nothing changes then.
func (s *Store) React(ctx context.Context, sub Subject, r Reactor, kind string) error {
	readerID := r.ID
	if err := checkReaction(sub, readerID, kind); err != nil {
		return err
	}
	subject := keys.ReactionSubject(sub.CommentID)
	t := s.db.NewTxn()
	notFound := fmt.Errorf("react: %w", ErrNotFound)
	if err := t.Check(s.ks.PostCount(sub.PostID), condVisible(s.nowKey()), notFound); err != nil {
		return err
	}
	if sub.CommentID != "" {
		cid, err := keys.ParseCommentID(sub.CommentID)
		if err != nil {
			return fmt.Errorf("%w: not a comment id", ErrNotFound)
		}
		if err := t.Check(s.ks.Comment(sub.PostID, cid), dynamo.CondExists().And(expression.Name("deleted").AttributeNotExists()), notFound); err != nil {
			return err
		}
	}
	set := &types.AttributeValueMemberSS{Value: []string{kind}}
	cond := expression.Name(attrKinds).AttributeNotExists().Or(expression.Not(expression.Contains(expression.Name(attrKinds), kind)))
	if err := t.Update(s.ks.Reaction(sub.PostID, subject, readerID),
		expression.Add(expression.Name(attrKinds), expression.Value(set)).Set(expression.Name("type"), expression.Value(typeReaction)),
		&cond, errReactionHeld); err != nil {
		return err
	}
	if err := t.Update(s.ks.Reactions(sub.PostID, subject),
		expression.Add(expression.Name(kind), expression.Value(1)).Set(expression.Name("type"), expression.Value(typeReactions)),
		nil, nil); err != nil {
		return err
	}
	if err := s.leaveTrail(t, readerID, keys.TrailReaction, sub.PostID+"#"+subject, s.Now()); err != nil {
		return err
	}
	// After the account's check: a closed account is told so, not that
	// it is no member (its membership went with it).
	if r.NeedsMember {
		if err := t.Check(s.ks.Member(readerID), dynamo.CondExists(), fmt.Errorf("react: %w", ErrNotMember)); err != nil {
			return err
		}
	}
	switch err := s.db.Exec(ctx, t); {
	case errors.Is(err, errReactionHeld):
		return nil
	case err != nil:
		return fmt.Errorf("react: %w", err)
	}
	return nil
}

// Unreact takes back the reaction kind of the reader readerID to s: one
// TransactWriteItems that removes kind from the reader's item and 1 from
// the count, which must be positive. Taking back a reaction not held
// changes nothing. It fails with ErrInvalidInput for an unknown kind or
// reader id.
func (s *Store) Unreact(ctx context.Context, sub Subject, readerID, kind string) error {
	if err := checkReaction(sub, readerID, kind); err != nil {
		return err
	}
	subject := keys.ReactionSubject(sub.CommentID)
	t := s.db.NewTxn()
	set := &types.AttributeValueMemberSS{Value: []string{kind}}
	has := expression.Contains(expression.Name(attrKinds), kind)
	if err := t.Update(s.ks.Reaction(sub.PostID, subject, readerID),
		expression.Delete(expression.Name(attrKinds), expression.Value(set)), &has, errReactionMissing); err != nil {
		return err
	}
	positive := expression.Name(kind).GreaterThan(expression.Value(0))
	if err := t.Update(s.ks.Reactions(sub.PostID, subject),
		expression.Add(expression.Name(kind), expression.Value(-1)), &positive, errNegativeCount); err != nil {
		return err
	}
	switch err := s.db.Exec(ctx, t); {
	case errors.Is(err, errReactionMissing):
		return nil
	case err != nil:
		return fmt.Errorf("unreact: %w", err)
	}
	return nil
}

func checkReaction(sub Subject, readerID, kind string) error {
	switch {
	case !slices.Contains(ReactionKinds, kind):
		return &ValidationError{Field: "kind", Reason: "is not a kind of reaction"}
	case readerID == "" || len(readerID) > MaxReaderIDLength:
		return &ValidationError{Field: "reader", Reason: "is not a reader id"}
	case !ValidID(sub.PostID):
		return fmt.Errorf("react: %w", ErrNotFound)
	}
	return nil
}

// ReactionCounts returns the counts by kind of each subject of subs, in
// order (kinds without reactions left out): one BatchGetItem of their
// count items.
func (s *Store) ReactionCounts(ctx context.Context, subs []Subject) ([]map[string]int64, error) {
	ks := make([]key, len(subs))
	for i, sub := range subs {
		ks[i] = s.ks.Reactions(sub.PostID, keys.ReactionSubject(sub.CommentID))
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	if err != nil {
		return nil, fmt.Errorf("reaction counts: %w", err)
	}
	out := make([]map[string]int64, len(subs))
	for i, k := range ks {
		out[i] = map[string]int64{}
		for _, kind := range ReactionKinds {
			var n int64
			if v, ok := found[k][kind]; ok && attributevalue.Unmarshal(v, &n) == nil && n > 0 {
				out[i][kind] = n
			}
		}
	}
	return out, nil
}

// ReactionsOf returns the kinds the reader readerID chose for each subject
// of subs, in order and in the order of ReactionKinds: one BatchGetItem
// of the reader's items.
func (s *Store) ReactionsOf(ctx context.Context, readerID string, subs []Subject) ([][]string, error) {
	out := make([][]string, len(subs))
	if readerID == "" || len(readerID) > MaxReaderIDLength {
		return out, nil
	}
	ks := make([]key, len(subs))
	for i, sub := range subs {
		ks[i] = s.ks.Reaction(sub.PostID, keys.ReactionSubject(sub.CommentID), readerID)
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	if err != nil {
		return nil, fmt.Errorf("reactions of reader: %w", err)
	}
	for i, k := range ks {
		var it struct {
			Kinds []string `dynamodbav:"kinds,stringset"`
		}
		if raw, ok := found[k]; ok {
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return nil, fmt.Errorf("reactions of reader: %w", err)
			}
		}
		for _, kind := range ReactionKinds {
			if slices.Contains(it.Kinds, kind) {
				out[i] = append(out[i], kind)
			}
		}
	}
	return out, nil
}
