package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// Readers sign in by an email link or code (requestSignInLink,
// completeSignIn) and get a session: an access token, a JWT signed with
// the reader key (so it can never pass for a staff token), and an opaque
// refresh token the store keeps hashed and rotates on every use
// (storage/signin.go, storage/sessions.go).

// DefaultAccessTokenTTL is how long a session's access token works.
const DefaultAccessTokenTTL = 15 * time.Minute

// SignInOptions configure readers' sign-in.
type SignInOptions struct {
	// Key signs the access tokens: the reader key (READER_JWT_SECRET, or
	// the table's). Nil turns sign-in off: its mutations are FORBIDDEN.
	Key []byte
	// Issuer and Audience go into the access tokens, as the verifier
	// wants of reader tokens.
	Issuer, Audience string
	// AccessTTL is how long an access token works; zero means
	// DefaultAccessTokenTTL.
	AccessTTL time.Duration
	// LinkTTL is how long a link and code work; zero means
	// storage.DefaultSignInTTL.
	LinkTTL time.Duration
	// ClientAddresses bounds the addresses one client may send sign-in
	// emails to in an hour; zero means storage.DefaultSignInClientAddresses.
	ClientAddresses int
	// Origins are the origins a link may lead to ("https://blog.example"):
	// the site's and the CORS origins.
	Origins []string
	// SiteName names the blog in the emails.
	SiteName string
	// Enqueued is called when an email was put in the outbox: the mail
	// worker's Wake.
	Enqueued func()
}

type clientKey struct{}

// clientInfo is what a request tells of its client: its address and its
// User-Agent.
type clientInfo struct{ address, userAgent string }

// withClient puts the client's address and User-Agent in the request's
// context, for the sign-in limits and the sessions' list.
func withClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ci := clientInfo{address: gqlhttp.ClientAddress(r), userAgent: r.UserAgent()}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, ci)))
	})
}

func clientOf(ctx context.Context) clientInfo {
	ci, _ := ctx.Value(clientKey{}).(clientInfo)
	return ci
}

var errSignInOff = fmt.Errorf("%w: this server does not sign readers in", auth.ErrForbidden)

// allowedRedirect returns nil when raw is an absolute http or https URL
// of one of the configured origins, else a *storage.ValidationError of
// redirectTo.
func (o *SignInOptions) allowedRedirect(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && len(raw) <= storage.MaxURLLength && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && u.Opaque == "" {
		host := u.Host
		if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
			host = u.Hostname() // an origin leaves out its scheme's port
		}
		origin := strings.ToLower(u.Scheme + "://" + host)
		for _, o := range o.Origins {
			if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
				return nil
			}
		}
	}
	return &storage.ValidationError{Field: "redirectTo", Reason: fmt.Sprintf("must be an absolute URL of at most %d characters of the site or of an origin the server allows", storage.MaxURLLength)}
}

func (r *Resolver) requestSignInLink(ctx context.Context, in model.RequestSignInLinkInput) (*model.RequestSignInLinkPayload, error) {
	o := &r.signIn
	if o.Key == nil {
		return nil, errSignInOff
	}
	if _, err := storage.NormalizeEmail(in.Email); err != nil {
		return nil, err
	}
	if err := o.allowedRedirect(in.RedirectTo); err != nil {
		return nil, err
	}
	ttl := o.LinkTTL
	if ttl <= 0 {
		ttl = storage.DefaultSignInTTL
	}
	err := r.store.RequestSignIn(ctx, storage.SignInRequest{
		Email: in.Email, RedirectTo: in.RedirectTo, Client: clientOf(ctx).address,
		ClientAddresses: o.ClientAddresses, TTL: ttl,
		Compose: func(token, code string) (storage.Email, error) {
			return mailer.SignIn(o.SiteName, in.RedirectTo, token, code, ttl)
		},
	})
	if err != nil {
		return nil, err
	}
	if o.Enqueued != nil {
		o.Enqueued()
	}
	return &model.RequestSignInLinkPayload{Sent: true, ExpiresAt: r.store.Now().Add(ttl)}, nil
}

func (r *Resolver) completeSignIn(ctx context.Context, in model.CompleteSignInInput) (*model.ReaderSessionPayload, error) {
	if r.signIn.Key == nil {
		return nil, errSignInOff
	}
	token, email, code := deref(in.Token), deref(in.Email), deref(in.Code)
	if (token == "") == (email == "" || code == "") || (token != "" && (email != "" || code != "")) {
		return nil, &storage.ValidationError{Field: "input", Reason: "give the link's token, or the email and its code"}
	}
	done, err := r.store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token, Email: email, Code: code, UserAgent: clientOf(ctx).userAgent})
	if err != nil {
		return nil, err
	}
	p, err := r.sessionPayload(done.Account, done.Session, done.RefreshToken)
	if err != nil {
		return nil, err
	}
	p.RedirectTo = &done.RedirectTo
	return p, nil
}

func (r *Resolver) refreshSession(ctx context.Context, in model.RefreshSessionInput) (*model.ReaderSessionPayload, error) {
	if r.signIn.Key == nil {
		return nil, errSignInOff
	}
	sess, refresh, err := r.store.RefreshSession(ctx, in.RefreshToken)
	if err != nil {
		return nil, err
	}
	// The account is read only when the answer asks more than its id.
	acct := storage.Account{ID: sess.AccountID}
	if names, _ := selectionAt(ctx, nil, "account"); !onlyOf(names, "id", "sessions") {
		if acct, err = r.store.AccountByID(ctx, sess.AccountID); err != nil {
			return nil, err
		}
	}
	return r.sessionPayload(acct, sess, refresh)
}

// sessionPayload returns the answer of a new access token of the session.
func (r *Resolver) sessionPayload(acct storage.Account, sess storage.Session, refresh string) (*model.ReaderSessionPayload, error) {
	ttl := r.signIn.AccessTTL
	if ttl <= 0 {
		ttl = DefaultAccessTokenTTL
	}
	now := r.store.Now()
	c := auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject: acct.ID, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
		// The session's token is the publication's it is made on: refused
		// on any other (staffActor), where the reader signs in again.
		Roles: []string{auth.RoleReader}, SessionID: sess.ID, Publication: r.store.Publication(),
	}
	if r.signIn.Issuer != "" {
		c.Issuer = r.signIn.Issuer
	}
	if r.signIn.Audience != "" {
		c.Audience = jwt.ClaimStrings{r.signIn.Audience}
	}
	token, err := auth.Sign(r.signIn.Key, c)
	if err != nil {
		return nil, fmt.Errorf("sign access token: %w", err)
	}
	return &model.ReaderSessionPayload{AccessToken: token, AccessTokenExpiresAt: now.Add(ttl), RefreshToken: refresh,
		Session: sessionModel(sess), Account: accountModel(acct)}, nil
}

// sessionActor returns the actor of ctx when its token is a reader
// session's, else an error wrapping auth.ErrUnauthenticated or
// auth.ErrForbidden.
func sessionActor(ctx context.Context) (auth.Actor, error) {
	a, err := signedIn(ctx)
	if err == nil && a.Session == "" {
		err = fmt.Errorf("%w: only a reader's session token (completeSignIn) has sessions", auth.ErrForbidden)
	}
	return a, err
}

func (r *Resolver) signOut(ctx context.Context, in *model.SignOutInput) (*model.SignOutPayload, error) {
	if in != nil && in.RefreshToken != nil {
		if err := r.store.RevokeRefresh(ctx, *in.RefreshToken); err != nil {
			return nil, err
		}
		_, id, _ := strings.Cut(*in.RefreshToken, ".")
		id, _, _ = strings.Cut(id, ".")
		return &model.SignOutPayload{SessionID: id}, nil
	}
	a, err := sessionActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.store.RevokeSession(ctx, a.ID, a.Session); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	return &model.SignOutPayload{SessionID: a.Session}, nil
}

func (r *Resolver) revokeSession(ctx context.Context, in model.RevokeSessionInput) (*model.SignOutPayload, error) {
	a, err := sessionActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.store.RevokeSession(ctx, a.ID, in.ID); err != nil {
		return nil, err
	}
	return &model.SignOutPayload{SessionID: in.ID}, nil
}

func (r *Resolver) account(ctx context.Context) (*model.Account, error) {
	a := auth.ActorFrom(ctx)
	if a.Session == "" {
		return nil, nil
	}
	acct, err := r.store.AccountByID(ctx, a.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return accountModel(acct), nil
}

func (r *Resolver) accountSessions(ctx context.Context, obj *model.Account) ([]*model.ReaderSession, error) {
	list, err := r.store.Sessions(ctx, obj.ID)
	if err != nil {
		return nil, err
	}
	out := make([]*model.ReaderSession, 0, len(list))
	for _, s := range list {
		out = append(out, sessionModel(s))
	}
	return out, nil
}

// maxOutboxEmails bounds outboxEmails' first.
const maxOutboxEmails = 100

// errPlatformOutbox is the error of outboxEmails on a publication other
// than the default: the outbox holds every publication's emails, sign-in
// codes included.
var errPlatformOutbox = fmt.Errorf("%w: the outbox holds every publication's emails; read it on the default publication", auth.ErrForbidden)

func (r *Resolver) outboxEmails(ctx context.Context, first *int) ([]*model.OutboxEmail, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if r.store.Publication() != storage.DefaultPublication {
		return nil, errPlatformOutbox
	}
	n := 20
	if first != nil {
		n = *first
	}
	if n < 1 || n > maxOutboxEmails {
		return nil, &storage.ValidationError{Field: "first", Reason: fmt.Sprintf("must be 1 to %d", maxOutboxEmails)}
	}
	list, err := r.store.Mails(ctx, n)
	if err != nil {
		return nil, err
	}
	out := make([]*model.OutboxEmail, 0, len(list))
	for _, e := range list {
		m := &model.OutboxEmail{ID: e.ID, To: e.To, Subject: e.Subject, Kind: e.Kind, State: e.State,
			Transport: nonEmpty(e.Transport), Text: nonEmpty(e.Text), HTML: nonEmpty(e.HTML), Attempts: e.Attempts,
			LastError: nonEmpty(e.LastError), CreatedAt: e.CreatedAt}
		if !e.SentAt.IsZero() {
			m.SentAt = &e.SentAt
		}
		out = append(out, m)
	}
	return out, nil
}

func sessionModel(s storage.Session) *model.ReaderSession {
	return &model.ReaderSession{ID: s.ID, CreatedAt: s.CreatedAt, LastUsedAt: s.LastUsedAt, UserAgent: nonEmpty(s.UserAgent)}
}

func accountModel(a storage.Account) *model.Account {
	return &model.Account{ID: a.ID, Email: a.Email, EmailVerified: a.EmailVerified, CreatedAt: a.CreatedAt}
}
