package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/blogql/blog/storage/internal/keys"
)

// The check that a deleted account left nothing, and that every reader's
// trail names all they left in the publication (privacy.go). It reads
// the items of the check's one scan:
//
//   - an account closed and no longer holding its address is deleted
//     (its tombstone): nothing may name its id, neither a session, a
//     trail entry, a profile, a membership, a staff role, a comment or a
//     reply its parent carries, a reaction, a pending sign-in, nor the
//     claim of an address;
//   - an account closed and still holding its address is a deletion that
//     did not finish: deleteMyAccount sent again finishes it;
//   - what only an account has (a session, a membership, a pending
//     sign-in, the claim of an address) names an account that exists: after the tombstone expired (ClosedAccountTTL), this is
//     what is left to prove, since a comment's or a reaction's reader id
//     may be an external identity's, which has no account here;
//   - an email of the outbox that is not a sign-in link, waiting, sent
//     or failed, names an address an account holds (a newsletter or a
//     reply notification goes only to a member), or DeletedRecipient
//     once its account was deleted; a sign-in link made for an account
//     names the account (accountId), which must not be deleted;
//   - each comment, reaction and membership of a reader, and each staff
//     role of an account, is in the reader's trail, or the deletion of
//     their account would miss it (MigrateTrails and MigrateStaffTrails
//     write the entries of those made before the trail).

// privacyItems are the items of a scan that name accounts and readers.
type privacyItems struct {
	accounts map[string]*accountItem      // by id
	emails   map[string]*accountEmailItem // by address
	sessions []*sessionItem
	signIns  []*signInItem
	members  []*memberItem
	staff    []*staffItem
	mails    []*mailItem
	// trails are the keys of trail entries, by reader id then sort key.
	trails map[string]map[string]bool
	// reactions are the keys of the readers' reaction items.
	reactions []key
}

// add decodes the item it of the type typ.
func (p *privacyItems) add(typ string, it item) error {
	if p.accounts == nil {
		p.accounts, p.emails, p.trails = map[string]*accountItem{}, map[string]*accountEmailItem{}, map[string]map[string]bool{}
	}
	var err error
	switch typ {
	case typeAccount:
		a := &accountItem{}
		err = attributevalue.UnmarshalMap(it, a)
		p.accounts[a.ID] = a
	case typeAccountEmail:
		e := &accountEmailItem{}
		err = attributevalue.UnmarshalMap(it, e)
		p.emails[strings.TrimPrefix(e.PK, keys.PrefixAccountEmail)] = e
	case typeSession:
		x := &sessionItem{}
		err = attributevalue.UnmarshalMap(it, x)
		p.sessions = append(p.sessions, x)
	case typeSignIn:
		x := &signInItem{}
		err = attributevalue.UnmarshalMap(it, x)
		p.signIns = append(p.signIns, x)
	case typeMember:
		x := &memberItem{}
		err = attributevalue.UnmarshalMap(it, x)
		p.members = append(p.members, x)
	case typeStaff:
		x := &staffItem{}
		err = attributevalue.UnmarshalMap(it, x)
		p.staff = append(p.staff, x)
	case typeMail:
		x := &mailItem{}
		err = attributevalue.UnmarshalMap(it, x)
		p.mails = append(p.mails, x)
	case typeTrail, typeReaction:
		var k key
		err = attributevalue.UnmarshalMap(it, &k)
		if typ == typeReaction {
			p.reactions = append(p.reactions, k)
			break
		}
		id := strings.TrimPrefix(k.PK, keys.PrefixReader)
		if p.trails[id] == nil {
			p.trails[id] = map[string]bool{}
		}
		p.trails[id][k.SK] = true
	}
	return err
}

// checkPrivacy reports what a deleted account left, and what is missing
// from a reader's trail (see above).
func checkPrivacy(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
	p := &t.privacy
	now := s.Now().Unix()
	deleted := map[string]bool{}
	for id, a := range p.accounts {
		switch {
		case a.ClosedAt != "" && a.Email == "":
			deleted[id] = true
		case a.ClosedAt != "":
			badf("account %q is closed but its deletion did not finish", id)
		}
	}
	// left reports a thing that names the account id when it is deleted,
	// or, when onlyAccounts, when no account has that id.
	left := func(id, what string, onlyAccounts bool) {
		switch {
		case deleted[id]:
			badf("deleted account %q left %s", id, what)
		case onlyAccounts && p.accounts[id] == nil:
			badf("%s names account %q, which does not exist", what, id)
		}
	}
	for _, x := range p.sessions {
		left(strings.TrimPrefix(x.PK, keys.PrefixAccount), "session "+x.ID, true)
	}
	for _, x := range p.signIns {
		if x.AccountID != "" && x.ExpiresAt > now {
			left(x.AccountID, "a pending sign-in", true)
		}
	}
	for email, x := range p.emails {
		left(x.AccountID, "the claim of address "+email, true)
	}
	for _, x := range p.members {
		left(x.AccountID, "its membership", true)
	}
	for _, x := range p.staff {
		left(x.AccountID, "its staff role", false)
	}
	for id, entries := range p.trails {
		for sk := range entries {
			left(id, "trail entry "+sk, false)
		}
	}
	for id := range t.readers {
		left(id, "its reader profile", false)
	}
	trailed := func(readerID, kind, ref, what string) {
		if !p.trails[readerID][s.ks.Trail(readerID, kind, ref).SK] && !deleted[readerID] {
			badf("%s of reader %q is not in the reader's trail", what, readerID)
		}
	}
	for _, c := range append(t.comments, t.queued...) {
		if c.ReaderID == "" {
			continue
		}
		left(c.ReaderID, "comment "+c.ID, false)
		if c.Type == typeComment {
			trailed(c.ReaderID, keys.TrailComment, c.PostID+"#"+c.ID, "comment "+c.ID)
		}
		for _, r := range c.Replies {
			if r.ReaderID != "" {
				left(r.ReaderID, fmt.Sprintf("a copy of reply %s", r.ID), false)
			}
		}
	}
	postPrefix := s.ks.Prefix() + keys.PrefixPost
	for _, k := range p.reactions {
		postID := strings.TrimPrefix(k.PK, postPrefix)
		subject, readerID, ok := keys.ParseReaction(k.SK)
		if !ok {
			badf("reaction %s/%s has wrong keys", k.PK, k.SK)
			continue
		}
		left(readerID, "a reaction to "+postID+"#"+subject, false)
		trailed(readerID, keys.TrailReaction, postID+"#"+subject, "reaction to "+postID+"#"+subject)
	}
	for _, x := range p.members {
		trailed(x.AccountID, keys.TrailMember, "", "membership")
	}
	for _, x := range p.staff {
		if !p.trails[x.AccountID][s.ks.Role(x.AccountID).SK] && !deleted[x.AccountID] {
			badf("staff role of account %q is not in the account's trail", x.AccountID)
		}
	}
	for _, x := range p.mails {
		if x.AccountID != "" {
			left(x.AccountID, "email "+x.ID+" to its address", false)
		}
		switch {
		case x.To == DeletedRecipient, x.Kind == "sign-in", p.emails[strings.ToLower(x.To)] != nil:
		case x.State == MailPending:
			badf("pending %s email %s goes to an address no account holds", x.Kind, x.ID)
		default:
			badf("%s %s email %s names an address no account holds: its account's deletion left it", strings.ToLower(x.State), x.Kind, x.ID)
		}
	}
}
