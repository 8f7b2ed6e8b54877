package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Reader sessions: one item per session in its account's partition
// (SK SESSION#<id>), holding the hash of its current refresh token and
// of the ones it replaced. A refresh token is "<account id>.<session
// id>.<secret>"; exchanging it replaces the hash on the condition that it
// is still the current one, so of two exchanges of one token one wins,
// and a token that was replaced coming again deletes the session (it
// was stolen, or the reader's copy was). Request budgets:
//
//	RefreshSession   1 GetItem + 1 UpdateItem (1 DeleteItem on reuse; +1 UpdateItem of the membership at a session's first refresh of a day)
//	RevokeSession    1 DeleteItem
//	Sessions         1 Query

// Session limits.
const (
	// SessionIdleTTL is how long a session lives without a refresh.
	SessionIdleTTL = 30 * 24 * time.Hour
	// MaxUserAgentLength bounds the user agent a session keeps.
	MaxUserAgentLength = 256
	// keptRefreshHashes is how many replaced refresh tokens a session
	// recognises.
	keptRefreshHashes = 20
)

const typeSession = "session"

// Session is a reader's signed-in device.
type Session struct {
	ID         string
	AccountID  string
	CreatedAt  time.Time
	LastUsedAt time.Time
	UserAgent  string
	// Publication is the id of the publication the session was made on.
	Publication string
}

type sessionItem struct {
	PK          string   `dynamodbav:"PK"`
	SK          string   `dynamodbav:"SK"`
	Type        string   `dynamodbav:"type"`
	ID          string   `dynamodbav:"id"`
	AccountID   string   `dynamodbav:"accountId"`
	RefreshHash string   `dynamodbav:"refreshHash"`
	Replaced    []string `dynamodbav:"replaced,omitempty"`
	CreatedAt   string   `dynamodbav:"createdAt"`
	LastUsedAt  string   `dynamodbav:"lastUsedAt"`
	UserAgent   string   `dynamodbav:"userAgent,omitempty"`
	ExpiresAt   int64    `dynamodbav:"expiresAt"`
	// Publication is the publication the session was made on; none on a
	// session made before sessions named theirs, when readers signed in
	// on the default publication only.
	Publication string `dynamodbav:"publication,omitempty"`
}

func (it *sessionItem) session() Session {
	return Session{ID: it.ID, AccountID: it.AccountID, CreatedAt: keys.ParseTime(it.CreatedAt),
		LastUsedAt: keys.ParseTime(it.LastUsedAt), UserAgent: it.UserAgent, Publication: cmp.Or(it.Publication, DefaultPublication)}
}

// putSession adds to t a new session of the account and returns it and
// its refresh token.
func putSession(t *dynamo.Txn, accountID, publication, userAgent string, now time.Time) (Session, string, error) {
	id, secret := newID(), randomToken()
	k := keys.Session(accountID, id)
	it := sessionItem{PK: k.PK, SK: k.SK, Type: typeSession, ID: id, AccountID: accountID, RefreshHash: hashSecret(secret),
		CreatedAt: keys.Time(now), LastUsedAt: keys.Time(now), UserAgent: cleanUserAgent(userAgent),
		ExpiresAt: now.Add(SessionIdleTTL).Unix(), Publication: publication}
	if err := t.Put(it, ptr(dynamo.CondNotExists()), dynamo.ErrRetry); err != nil {
		return Session{}, "", err
	}
	return it.session(), accountID + "." + id + "." + secret, nil
}

func cleanUserAgent(ua string) string {
	ua = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(ua, ""))
	for len(ua) > MaxUserAgentLength {
		_, n := lastRune(ua)
		ua = ua[:len(ua)-n]
	}
	return ua
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xc0 != 0x80 {
			return rune(s[i]), len(s) - i
		}
	}
	return 0, 1
}

// splitRefresh returns the account id, the session id and the secret of a
// refresh token, or false.
func splitRefresh(token string) (string, string, string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || validateReaderID(parts[0]) != nil || validateID("session", parts[1]) != nil || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// RefreshSession exchanges a session's refresh token for a new one and
// returns the session and the new token. It returns ErrSessionInvalid for
// a token of no live session, ErrRefreshReused, having deleted the
// session, for a token that was exchanged already, and
// ErrSessionElsewhere, changing nothing, for a session made on another
// publication than s's.
func (s *Store) RefreshSession(ctx context.Context, token string) (Session, string, error) {
	accountID, id, secret, ok := splitRefresh(token)
	if !ok {
		return Session{}, "", ErrSessionInvalid
	}
	k := keys.Session(accountID, id)
	var it sessionItem
	if err := s.db.Get(ctx, k, true, &it); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Session{}, "", ErrSessionInvalid
		}
		return Session{}, "", fmt.Errorf("session: %w", err)
	}
	now, h := s.Now(), hashSecret(secret)
	switch {
	case it.ExpiresAt <= now.Unix():
		return Session{}, "", ErrSessionInvalid
	case slices.Contains(it.Replaced, h):
		return Session{}, "", s.revokeReused(ctx, k)
	case h != it.RefreshHash:
		return Session{}, "", ErrSessionInvalid
	case cmp.Or(it.Publication, DefaultPublication) != s.Publication():
		return Session{}, "", ErrSessionElsewhere
	}
	next := randomToken()
	replaced := append(it.Replaced, h)
	if len(replaced) > keptRefreshHashes {
		replaced = replaced[len(replaced)-keptRefreshHashes:]
	}
	upd := expression.Set(expression.Name("refreshHash"), expression.Value(hashSecret(next))).
		Set(expression.Name("replaced"), expression.Value(replaced)).
		Set(expression.Name("lastUsedAt"), expression.Value(keys.Time(now))).
		Set(expression.Name("expiresAt"), expression.Value(now.Add(SessionIdleTTL).Unix()))
	done, err := s.db.UpdateIf(ctx, k, upd, expression.Name("refreshHash").Equal(expression.Value(h)))
	switch {
	case err != nil:
		return Session{}, "", fmt.Errorf("refresh session: %w", err)
	case !done:
		// Another exchange of the same token came first: one of the
		// two holders is not the reader.
		return Session{}, "", s.revokeReused(ctx, k)
	}
	if keys.ParseTime(it.LastUsedAt).UTC().Truncate(24 * time.Hour).Before(now.UTC().Truncate(24 * time.Hour)) {
		// The first refresh of the day marks the member seen: a write
		// a day per session, which the refresh does not fail for.
		if err := s.seeMember(ctx, accountID, now); err != nil {
			slog.WarnContext(ctx, "member seen", "err", err)
		}
	}
	it.LastUsedAt = keys.Time(now)
	return it.session(), accountID + "." + id + "." + next, nil
}

func (s *Store) revokeReused(ctx context.Context, k key) error {
	if err := s.deleteIf(ctx, k, dynamo.CondExists()); err != nil {
		return err
	}
	return ErrRefreshReused
}

// RevokeSession deletes the session id of the account. It returns
// ErrNotFound when the account has no such session.
func (s *Store) RevokeSession(ctx context.Context, accountID, id string) error {
	if validateReaderID(accountID) != nil || validateID("session", id) != nil {
		return fmt.Errorf("session: %w", ErrNotFound)
	}
	t := s.db.NewTxn()
	if err := t.Delete(keys.Session(accountID, id), ptr(dynamo.CondExists()), ErrNotFound); err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return fmt.Errorf("revoke session %q: %w", id, err)
	}
	return nil
}

// RevokeRefresh deletes the session of a refresh token, when the token
// is its current one and the session was made on s's publication. It
// returns ErrSessionInvalid otherwise: a session of another publication
// is signed out only on its own hosts.
func (s *Store) RevokeRefresh(ctx context.Context, token string) error {
	accountID, id, secret, ok := splitRefresh(token)
	if !ok {
		return ErrSessionInvalid
	}
	t := s.db.NewTxn()
	mine := expression.Name("publication").Equal(expression.Value(s.Publication()))
	if s.Publication() == DefaultPublication {
		mine = mine.Or(expression.AttributeNotExists(expression.Name("publication")))
	}
	cond := expression.Name("refreshHash").Equal(expression.Value(hashSecret(secret))).And(mine)
	if err := t.Delete(keys.Session(accountID, id), &cond, ErrSessionInvalid); err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return fmt.Errorf("sign out: %w", err)
	}
	return nil
}

// Sessions returns the live sessions of the account, oldest first, in
// one Query.
func (s *Store) Sessions(ctx context.Context, accountID string) ([]Session, error) {
	if validateReaderID(accountID) != nil {
		return nil, nil
	}
	kc := expression.Key(keys.AttrPK).Equal(expression.Value(keys.Account(accountID).PK)).
		And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixSession))
	in, err := s.db.KeyQuery(kc)
	if err != nil {
		return nil, err
	}
	in.ConsistentRead = aws.Bool(true)
	now := s.Now().Unix()
	var out []Session
	err = s.db.QueryAll(ctx, in, func(av item) error {
		var it sessionItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return err
		}
		if it.ExpiresAt > now {
			out = append(out, it.session())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	slices.SortFunc(out, func(a, b Session) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}
