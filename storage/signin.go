package storage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/mail"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Passwordless sign-in. A request puts, in one transaction, the sign-in
// item (by the hash of its link's token: the token itself is only in the
// email), the counts of the rate limits (the address's, the client's,
// each guarded by its version) and the email in the outbox (mail.go).
// Completing it deletes the sign-in item on the condition that it is
// still there and not expired, in the transaction that creates the
// session (and the account on a first sign-in) and makes the account a
// member of the publication (members.go), so a link or code makes one
// session however many servers complete it at once. Request budgets:
//
//	RequestSignIn    1 BatchGetItem (the two rate items, the address's account) + 1 TransactWriteItems
//	CompleteSignIn   1 GetItem (by link) or 1 Query of GSI1 (by code) + 1 TransactWriteItems

// Sign-in limits.
const (
	// SignInEmailsPerHour is how many sign-in emails one address gets in
	// any hour.
	SignInEmailsPerHour = 5
	// DefaultSignInClientAddresses is how many addresses one client may
	// send sign-in emails to in any hour, unless configured.
	DefaultSignInClientAddresses = 10
	// DefaultSignInTTL is how long a sign-in link and code work.
	DefaultSignInTTL = 15 * time.Minute
	// MaxEmailLength bounds an email address (RFC 5321's path limit).
	MaxEmailLength = 254
	// MaxCodeAttempts is how many wrong codes a sign-in request takes
	// before it is withdrawn.
	MaxCodeAttempts = 5
	// signInWindow is the span the rate limits count over.
	signInWindow = time.Hour
	// codeDigits is the length of a sign-in code.
	codeDigits = 6
)

const (
	typeAccount      = "account"
	typeAccountEmail = "accountEmail"
	typeSignIn       = "signIn"
	typeSignInRate   = "signInRate"
)

// SignInRequest asks for a sign-in email.
type SignInRequest struct {
	Email      string
	RedirectTo string
	// Client is the address the request came from.
	Client string
	// ClientAddresses bounds the addresses Client may mail in an hour;
	// zero means DefaultSignInClientAddresses.
	ClientAddresses int
	// TTL is how long the link and code work; zero means DefaultSignInTTL.
	TTL time.Duration
	// Compose makes the email of the link's token and the code.
	Compose func(token, code string) (Email, error)
}

// SignInCredentials complete a sign-in: the link's Token, or the Email
// and its Code.
type SignInCredentials struct {
	Token string
	Email string
	Code  string
	// UserAgent describes the device, as its sessions list it.
	UserAgent string
}

// Account is a reader's platform account.
type Account struct {
	ID            string
	Email         string
	EmailVerified bool
	CreatedAt     time.Time
}

// SignedIn is what a completed sign-in gives: the account, its new
// session, the session's refresh token and where the link pointed.
type SignedIn struct {
	Account      Account
	Session      Session
	RefreshToken string
	RedirectTo   string
}

type accountItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	ID            string `dynamodbav:"id"`
	Email         string `dynamodbav:"email"`
	EmailVerified bool   `dynamodbav:"emailVerified"`
	CreatedAt     string `dynamodbav:"createdAt"`
	SignedInAt    string `dynamodbav:"signedInAt"`
	// ClosedAt is when the account's deletion began (privacy.go).
	ClosedAt string `dynamodbav:"closedAt,omitempty"`
}

type accountEmailItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	AccountID string `dynamodbav:"accountId"`
	CreatedAt string `dynamodbav:"createdAt"`
}

type signInItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	Type      string `dynamodbav:"type"`
	Email     string `dynamodbav:"email"`
	AccountID string `dynamodbav:"accountId,omitempty"`
	// AccountCreatedAt is when the account of AccountID was made.
	AccountCreatedAt string `dynamodbav:"accountCreatedAt,omitempty"`
	RedirectTo       string `dynamodbav:"redirectTo"`
	CodeHash         string `dynamodbav:"codeHash"`
	Attempts         int    `dynamodbav:"attempts"`
	CreatedAt        string `dynamodbav:"createdAt"`
	ExpiresAt        int64  `dynamodbav:"expiresAt"`
}

type signInRateItem struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Type string `dynamodbav:"type"`
	// Sent are "<time>#<address hash>" entries of the last hour.
	Sent      []string `dynamodbav:"sent"`
	Version   int64    `dynamodbav:"version"`
	ExpiresAt int64    `dynamodbav:"expiresAt"`
}

// NormalizeEmail returns the address email as the store keeps it (lower
// case), or a *ValidationError of field email when it is not one bare
// address of at most MaxEmailLength bytes with a dotted domain.
func NormalizeEmail(email string) (string, error) {
	bad := invalid("email", "must be one email address such as reader@example.com, at most %d bytes", MaxEmailLength)
	if len(email) > MaxEmailLength || strings.ContainsFunc(email, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", bad
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Name != "" || a.Address != email {
		return "", bad
	}
	at := strings.LastIndexByte(email, '@')
	if domain := email[at+1:]; !strings.Contains(domain, ".") || strings.HasPrefix(domain, "[") || strings.HasSuffix(domain, ".") {
		return "", bad
	}
	return strings.ToLower(email), nil
}

// hashSecret returns the hex SHA-256 of a secret: secrets of 256 random
// bits need no slow hash, and the table never holds one that works.
func hashSecret(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:])
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func randomCode() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(int64(math.Pow10(codeDigits))))
	return fmt.Sprintf("%0*d", codeDigits, n.Int64())
}

// RequestSignIn sends (through the outbox) a sign-in email to in.Email,
// whether or not an account has it. It returns a *ValidationError for a
// malformed address and a *SignInLimitError when the address had
// SignInEmailsPerHour emails in the last hour or the client mailed as
// many other addresses as it may; nothing is written then.
func (s *Store) RequestSignIn(ctx context.Context, in SignInRequest) error {
	email, err := NormalizeEmail(in.Email)
	if err != nil {
		return err
	}
	bound, ttl := in.ClientAddresses, in.TTL
	if bound <= 0 {
		bound = DefaultSignInClientAddresses
	}
	if ttl <= 0 {
		ttl = DefaultSignInTTL
	}
	token, code := randomToken(), randomCode()
	msg, err := in.Compose(token, code)
	if err != nil {
		return fmt.Errorf("sign-in email: %w", err)
	}
	tokenHash, emailHash := hashSecret(token), hashSecret(email)[:16]
	ek, ck, ak := keys.SignInEmailRate(email), keys.SignInClientRate(in.Client), keys.AccountEmail(email)
	_, err = dynamo.RetryWrite(ctx, func() (struct{}, error) {
		found, err := s.db.BatchGet(ctx, []key{ek, ck, ak}, true)
		if err != nil {
			return struct{}{}, fmt.Errorf("sign-in limits: %w", err)
		}
		now := s.Now()
		t := s.db.NewTxn()
		if err := countSignIn(t, found, ek, "", SignInEmailsPerHour, now, "EMAIL"); err != nil {
			return struct{}{}, err
		}
		if err := countSignIn(t, found, ck, emailHash, bound, now, "CLIENT"); err != nil {
			return struct{}{}, err
		}
		var acct accountEmailItem
		if err := dynamo.DecodeFound(found, ak, &acct); err != nil && !errors.Is(err, ErrNotFound) {
			return struct{}{}, fmt.Errorf("decode account of an email: %w", err)
		}
		k := keys.SignIn(tokenHash)
		it := signInItem{PK: k.PK, SK: k.SK, GSI1PK: keys.SignInCodePartition(email), GSI1SK: keys.Time(now),
			Type: typeSignIn, Email: email, AccountID: acct.AccountID, AccountCreatedAt: acct.CreatedAt, RedirectTo: in.RedirectTo,
			CodeHash: hashSecret(tokenHash, code), CreatedAt: keys.Time(now), ExpiresAt: now.Add(ttl).Unix()}
		if err := t.Put(it, ptr(dynamo.CondNotExists()), dynamo.ErrRetry); err != nil {
			return struct{}{}, err
		}
		msg.ID, msg.To, msg.CreatedAt, msg.AccountID = tokenHash[:32], email, now, acct.AccountID
		if err := putMail(t, msg, now); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, s.db.Exec(ctx, t)
	})
	if err != nil {
		return fmt.Errorf("request sign-in: %w", err)
	}
	return nil
}

// countSignIn adds to t the write of the rate item at k with one more
// email counted, or returns a *SignInLimitError. With an address hash,
// the item counts distinct addresses (a client's), else emails (an
// address's).
func countSignIn(t *dynamo.Txn, found map[key]item, k key, address string, limit int, now time.Time, what string) error {
	var rate signInRateItem
	err := dynamo.DecodeFound(found, k, &rate)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("decode sign-in rate: %w", err)
	}
	since := keys.Time(now.Add(-signInWindow))
	var sent []string
	seen := map[string]string{} // address → its earliest time in the window
	for _, e := range rate.Sent {
		at, h, _ := strings.Cut(e, "#")
		if at <= since {
			continue
		}
		sent = append(sent, e)
		if _, ok := seen[h]; !ok {
			seen[h] = at
		}
	}
	counted := len(sent)
	oldest := ""
	if len(sent) > 0 {
		oldest, _, _ = strings.Cut(sent[0], "#")
	}
	if address != "" {
		counted = len(seen)
		if _, ok := seen[address]; ok {
			counted = 0 // an address already mailed costs no more of the bound
		}
	}
	if counted >= limit {
		wait := keys.ParseTime(oldest).Add(signInWindow).Sub(now)
		return &SignInLimitError{Limit: what, RetryAfter: time.Duration(math.Ceil(wait.Seconds())) * time.Second}
	}
	sent = append(sent, keys.Time(now)+"#"+address)
	cond := dynamo.CondNotExists()
	if exists {
		cond = expression.Name("version").Equal(expression.Value(rate.Version))
	}
	return t.Put(signInRateItem{PK: k.PK, SK: k.SK, Type: typeSignInRate, Sent: sent, Version: rate.Version + 1,
		ExpiresAt: now.Add(signInWindow).Unix() + 1}, &cond, dynamo.ErrRetry)
}

// CompleteSignIn consumes the sign-in request c names (its link's token,
// or its address and code) and returns a new session of the address's
// account, made now if it had none. It returns ErrSignInInvalid when no
// pending request has that token or code (never sent, expired, already
// used, or withdrawn after MaxCodeAttempts wrong codes), and a
// *ValidationError for a malformed address.
func (s *Store) CompleteSignIn(ctx context.Context, c SignInCredentials) (SignedIn, error) {
	var it signInItem
	var tokenHash string
	if c.Token != "" {
		tokenHash = hashSecret(c.Token)
		if err := s.db.Get(ctx, keys.SignIn(tokenHash), true, &it); err != nil {
			if errors.Is(err, ErrNotFound) {
				return SignedIn{}, ErrSignInInvalid
			}
			return SignedIn{}, fmt.Errorf("sign-in request: %w", err)
		}
	} else {
		var err error
		if tokenHash, it, err = s.signInByCode(ctx, c.Email, c.Code); err != nil {
			return SignedIn{}, err
		}
	}
	if it.ExpiresAt <= s.Now().Unix() {
		return SignedIn{}, ErrSignInInvalid
	}
	return dynamo.RetryWrite(ctx, func() (SignedIn, error) { return s.signIn(ctx, tokenHash, &it, c.UserAgent) })
}

// signInByCode returns the pending request to email whose code is code.
// A wrong code counts against the newest request, which is withdrawn at
// MaxCodeAttempts.
func (s *Store) signInByCode(ctx context.Context, email, code string) (string, signInItem, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", signInItem{}, err
	}
	kc := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(keys.SignInCodePartition(email)))
	in, err := s.db.KeyQuery(kc)
	if err != nil {
		return "", signInItem{}, err
	}
	in.IndexName, in.ConsistentRead = aws.String(keys.IndexGSI1), nil // an index reads eventually consistent only
	in.ScanIndexForward, in.Limit = aws.Bool(false), aws.Int32(SignInEmailsPerHour)
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return "", signInItem{}, fmt.Errorf("sign-in requests: %w", err)
	}
	var pending []signInItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &pending); err != nil {
		return "", signInItem{}, fmt.Errorf("decode sign-in requests: %w", err)
	}
	now := s.Now().Unix()
	var newest *signInItem
	for i := range pending {
		p := &pending[i]
		if p.ExpiresAt <= now || p.Attempts >= MaxCodeAttempts {
			continue
		}
		h := strings.TrimPrefix(p.PK, keys.PrefixSignIn)
		if subtle.ConstantTimeCompare([]byte(hashSecret(h, code)), []byte(p.CodeHash)) == 1 {
			return h, *p, nil
		}
		if newest == nil {
			newest = p
		}
	}
	if newest != nil {
		k := dynamo.Key{PK: newest.PK, SK: newest.SK}
		cond := expression.Name("attempts").Equal(expression.Value(newest.Attempts))
		if newest.Attempts+1 >= MaxCodeAttempts {
			err = s.deleteIf(ctx, k, cond)
		} else {
			_, err = s.db.UpdateIf(ctx, k, expression.Set(expression.Name("attempts"), expression.Value(newest.Attempts+1)), cond)
		}
		if err != nil {
			return "", signInItem{}, fmt.Errorf("count a wrong code: %w", err)
		}
	}
	return "", signInItem{}, ErrSignInInvalid
}

// putNewAccount adds to t the items of the new account acct, signed in
// at its creation with its address verified: the account and its
// address's item, which fails t with taken when the address has one.
func putNewAccount(t *dynamo.Txn, acct Account, taken error) error {
	at := keys.Time(acct.CreatedAt)
	ak, ek := keys.Account(acct.ID), keys.AccountEmail(acct.Email)
	if err := t.Put(accountItem{PK: ak.PK, SK: ak.SK, Type: typeAccount, ID: acct.ID, Email: acct.Email, EmailVerified: true,
		CreatedAt: at, SignedInAt: at}, ptr(dynamo.CondNotExists()), ErrAlreadyExists); err != nil {
		return err
	}
	return t.Put(accountEmailItem{PK: ek.PK, SK: ek.SK, Type: typeAccountEmail, AccountID: acct.ID, CreatedAt: at},
		ptr(dynamo.CondNotExists()), taken)
}

// signIn is one attempt of the transaction that consumes the request and
// makes the session.
func (s *Store) signIn(ctx context.Context, tokenHash string, it *signInItem, userAgent string) (SignedIn, error) {
	now := s.Now()
	t := s.db.NewTxn()
	consume := dynamo.CondExists().And(expression.Name("expiresAt").GreaterThan(expression.Value(now.Unix())))
	if err := t.Delete(keys.SignIn(tokenHash), &consume, ErrSignInInvalid); err != nil {
		return SignedIn{}, err
	}
	acct := Account{ID: it.AccountID, Email: it.Email, EmailVerified: true, CreatedAt: keys.ParseTime(it.AccountCreatedAt)}
	if acct.ID == "" {
		acct.ID, acct.CreatedAt = newID(), now
		if err := putNewAccount(t, acct, errEmailTaken); err != nil {
			return SignedIn{}, err
		}
	} else {
		upd := expression.Set(expression.Name("emailVerified"), expression.Value(true)).
			Set(expression.Name("signedInAt"), expression.Value(keys.Time(now)))
		open := dynamo.CondExists().And(expression.AttributeNotExists(expression.Name(attrClosedAt)))
		if err := t.Update(keys.Account(acct.ID), upd, &open, errSignInClosed); err != nil {
			return SignedIn{}, err
		}
	}
	sess, refresh, err := putSession(t, acct.ID, s.Publication(), userAgent, now)
	if err != nil {
		return SignedIn{}, err
	}
	if err := s.putMember(t, acct, now); err != nil {
		return SignedIn{}, err
	}
	if err := t.Put(newTrail(s.ks.Trail(acct.ID, keys.TrailMember, ""), now), nil, nil); err != nil {
		return SignedIn{}, err
	}
	err = s.db.Exec(ctx, t)
	if errors.Is(err, errEmailTaken) {
		// Another request to the same address made its account first.
		var e accountEmailItem
		if err := s.db.Get(ctx, keys.AccountEmail(it.Email), true, &e); err != nil {
			return SignedIn{}, fmt.Errorf("account of %s: %w", it.Email, err)
		}
		it.AccountID, it.AccountCreatedAt = e.AccountID, e.CreatedAt
		return SignedIn{}, dynamo.ErrRetry
	}
	if errors.Is(err, errSignInClosed) {
		return SignedIn{}, ErrSignInInvalid
	}
	if errors.Is(err, ErrSignInInvalid) && s.madeSession(ctx, acct.ID, sess.ID) {
		// The request was consumed by this very transaction: it was sent
		// again after an answer that was lost (the SDK's retry) and
		// refused the second time. Its session is there: it committed.
		err = nil
	}
	if err != nil {
		return SignedIn{}, fmt.Errorf("complete sign-in: %w", err)
	}
	return SignedIn{Account: acct, Session: sess, RefreshToken: refresh, RedirectTo: it.RedirectTo}, nil
}

// madeSession reports whether the session id of the account exists: one
// consistent GetItem, made only when a sign-in's transaction was refused.
// Session ids are random, so a session found is the one the transaction
// wrote.
func (s *Store) madeSession(ctx context.Context, accountID, id string) bool {
	var it sessionItem
	return s.db.Get(ctx, keys.Session(accountID, id), true, &it) == nil
}

// errSignInClosed means the account a sign-in is for is closed (being
// deleted): the caller is told the link is invalid.
var errSignInClosed = errors.New("the account is closed")

// errEmailTaken means a first sign-in met another that made the
// address's account.
var errEmailTaken = errors.New("the address has an account")

// AccountByID returns the account id, or ErrNotFound, or ErrAccountClosed
// for an account being deleted or deleted.
func (s *Store) AccountByID(ctx context.Context, id string) (Account, error) {
	var it accountItem
	if err := validateReaderID(id); err != nil {
		return Account{}, fmt.Errorf("account: %w", ErrNotFound)
	}
	if err := s.db.Get(ctx, keys.Account(id), false, &it); err != nil {
		return Account{}, fmt.Errorf("account %q: %w", id, err)
	}
	if it.ClosedAt != "" {
		return Account{}, ErrAccountClosed
	}
	return Account{ID: it.ID, Email: it.Email, EmailVerified: it.EmailVerified, CreatedAt: keys.ParseTime(it.CreatedAt)}, nil
}

// deleteIf deletes the item at k (one DeleteItem) when cond holds of it;
// a condition that does not hold is no error.
func (s *Store) deleteIf(ctx context.Context, k key, cond expression.ConditionBuilder) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(cond))
	if err != nil {
		return err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(k), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if _, failed := errors.AsType[*types.ConditionalCheckFailedException](err); failed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", k.PK, err)
	}
	return nil
}
