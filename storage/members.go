package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Members: a reader who completes a sign-in on a publication becomes its
// member. The membership is one item in the publication's space, written
// by an UpdateItem in the sign-in's own transaction (signin.go), so a
// first and a later sign-in are the same action and a member is never
// listed twice. Its GSI1 entry sorts the members by address, so a search
// by the start of an address is one Query. Request budgets:
//
//	Members           1 Query of GSI1 per page
//	member lastSeenAt 1 UpdateItem at the first refresh of a session on a new day (RefreshSession)

// MemberTier is the plan a member is on.
type MemberTier string

// The tiers: paid tiers will be more of them.
const (
	TierFree MemberTier = "FREE"
)

const typeMember = "member"

// MaxMemberQueryLength bounds the address prefix a members search takes.
const MaxMemberQueryLength = MaxEmailLength

// Member is a reader's membership of the publication.
type Member struct {
	AccountID     string
	Email         string
	EmailVerified bool
	Tier          MemberTier
	// Newsletters are the ids of the newsletters the member gets.
	Newsletters []string
	// Newsletter is whether the member gets the publication's newsletter
	// (newsletter.go): on when they join.
	Newsletter bool
	// ReplyNotifications is whether the member is emailed when someone
	// replies to their comment (replynotify.go): on unless they turned
	// it off.
	ReplyNotifications bool
	CreatedAt          time.Time
	// LastSeenAt is when the member last signed in or refreshed a
	// session, to the day.
	LastSeenAt time.Time
}

type memberItem struct {
	PK            string   `dynamodbav:"PK"`
	SK            string   `dynamodbav:"SK"`
	GSI1PK        string   `dynamodbav:"GSI1PK"`
	GSI1SK        string   `dynamodbav:"GSI1SK"`
	Type          string   `dynamodbav:"type"`
	AccountID     string   `dynamodbav:"accountId"`
	Email         string   `dynamodbav:"email"`
	EmailVerified bool     `dynamodbav:"emailVerified"`
	Tier          string   `dynamodbav:"tier"`
	Newsletters   []string `dynamodbav:"newsletters,stringset,omitempty"`
	Newsletter    bool     `dynamodbav:"newsletter"`
	// Replies is set when the member turned reply notifications on.
	Replies    bool   `dynamodbav:"replyNotifications,omitempty"`
	CreatedAt  string `dynamodbav:"createdAt"`
	LastSeenAt string `dynamodbav:"lastSeenAt"`
}

func (it *memberItem) member() *Member {
	return &Member{AccountID: it.AccountID, Email: it.Email, EmailVerified: it.EmailVerified, Tier: MemberTier(it.Tier),
		Newsletters: it.Newsletters, Newsletter: it.Newsletter, ReplyNotifications: it.Replies, CreatedAt: keys.ParseTime(it.CreatedAt), LastSeenAt: keys.ParseTime(it.LastSeenAt)}
}

// putMember adds to t the membership of the account acct, made now on a
// first sign-in on the publication (free tier) and seen now on a later
// one; its tier, newsletters and creation time stay as they are. The
// newsletter is on for a new member, and for one who joined before
// there was a newsletter; a member's own choice stays.
func (s *Store) putMember(t *dynamo.Txn, acct Account, now time.Time) error {
	k := s.ks.Member(acct.ID)
	at := keys.Time(now)
	upd := expression.Set(expression.Name("GSI1PK"), expression.Value(s.ks.MembersPartition())).
		Set(expression.Name("GSI1SK"), expression.Value(keys.MemberSort(acct.Email, acct.ID))).
		Set(expression.Name("type"), expression.Value(typeMember)).
		Set(expression.Name("accountId"), expression.Value(acct.ID)).
		Set(expression.Name("email"), expression.Value(acct.Email)).
		Set(expression.Name("emailVerified"), expression.Value(acct.EmailVerified)).
		Set(expression.Name("lastSeenAt"), expression.Value(at)).
		Set(expression.Name("tier"), expression.IfNotExists(expression.Name("tier"), expression.Value(string(TierFree)))).
		Set(expression.Name("newsletter"), expression.IfNotExists(expression.Name("newsletter"), expression.Value(true))).
		Set(expression.Name("createdAt"), expression.IfNotExists(expression.Name("createdAt"), expression.Value(at)))
	return t.Update(k, upd, nil, nil)
}

// Member returns the membership of the account accountID with one
// GetItem, or ErrNotFound when the account is not a member.
func (s *Store) Member(ctx context.Context, accountID string) (*Member, error) {
	if validateReaderID(accountID) != nil {
		return nil, fmt.Errorf("member: %w", ErrNotFound)
	}
	var it memberItem
	if err := s.db.Get(ctx, s.ks.Member(accountID), false, &it); err != nil {
		return nil, fmt.Errorf("member %q: %w", accountID, err)
	}
	return it.member(), nil
}

// Members returns a page of the members whose address starts with
// prefix (every member when it is empty), by address: one Query of
// GSI1. It returns a *ValidationError for a prefix longer than
// MaxMemberQueryLength.
func (s *Store) Members(ctx context.Context, prefix string, p PageArgs) (*Result[*Member], error) {
	if len(prefix) > MaxMemberQueryLength {
		return nil, invalid("query", "must be at most %d bytes", MaxMemberQueryLength)
	}
	cond := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.MembersPartition()))
	list := "members"
	if prefix = strings.ToLower(prefix); prefix != "" {
		cond = cond.And(expression.Key(keys.AttrGSI1SK).BeginsWith(prefix))
		list += "~" + prefix // a cursor of one search is no cursor of another
	}
	return queryPage(ctx, s, listQuery{list: list, index: true, forward: true, cond: cond}, p, (*memberItem).member)
}

// seeMember sets the member's lastSeenAt to now with one conditional
// UpdateItem when it is of an earlier day, and does nothing when the
// account is not a member of the publication.
func (s *Store) seeMember(ctx context.Context, accountID string, now time.Time) error {
	day := keys.Time(now.UTC().Truncate(24 * time.Hour))
	cond := dynamo.CondExists().And(expression.Name("lastSeenAt").LessThan(expression.Value(day)))
	if _, err := s.db.UpdateIf(ctx, s.ks.Member(accountID), expression.Set(expression.Name("lastSeenAt"), expression.Value(keys.Time(now))), cond); err != nil {
		return fmt.Errorf("member %q seen: %w", accountID, err)
	}
	return nil
}

// Visibility says who may read a post's body.
type Visibility string

// The visibilities of a post.
const (
	// VisibilityPublic posts are read by everyone.
	VisibilityPublic Visibility = "PUBLIC"
	// VisibilityMembers posts show their body to the publication's
	// members and its staff; everyone else gets the excerpt.
	VisibilityMembers Visibility = "MEMBERS"
)

func validateVisibility(v Visibility) error {
	switch v {
	case "", VisibilityPublic, VisibilityMembers:
		return nil
	}
	return invalid("visibility", "must be PUBLIC or MEMBERS")
}

// setVisibility keeps v on the post and so on its copies; a public post
// keeps none, as every post written before visibilities was.
func (it *postItem) setVisibility(v Visibility) {
	it.Visibility = ""
	if v == VisibilityMembers {
		it.Visibility = string(v)
	}
}

func validateVisibilityOpt(v *Visibility) error {
	if v == nil {
		return nil
	}
	return validateVisibility(*v)
}
