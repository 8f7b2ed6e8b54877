// Package devtokens makes the development tokens of the embedded mode:
// tokens of the demo blog's authors and reader, signed with random keys
// the table keeps (one for staff, one for readers, as in production),
// logged at startup to be pasted into a client; and, with Mint, the token
// of any subject and role signed with a configured secret (the "token"
// command).
package devtokens

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
)

// Names of the table's keys (storage.Store.Secret) that sign development
// tokens: random, made the first time, and kept with the data, so a token
// works on this data store only and as long as its data. The staff's key
// signs the admin's and the author's tokens, the readers' the reader's.
const (
	secretName       = "dev-jwt"
	readerSecretName = "dev-reader-jwt"
)

// tokenLife is how long the development tokens printed at startup stay
// valid: long enough to keep in a frontend's local settings.
const tokenLife = 365 * 24 * time.Hour

// actors are the demo authors the development tokens sign in as.
var actors = []struct{ id, role string }{
	{"ada-lovelace", auth.RoleAdmin},
	{"grace-hopper", auth.RoleAuthor},
	{"jamie-rivera", auth.RoleReader},
}

// Secrets keeps the random keys of a data store: storage.Store.Secret.
type Secrets interface {
	Secret(ctx context.Context, name string) ([]byte, error)
}

// Options are what Verifier needs to know of the server.
type Options struct {
	// Auth is the configured token settings; the tokens carry its Issuer
	// and Audience, and are signed with the data store's keys instead of
	// its Secret, and instead of its Reader.Secret unless Reader has a
	// key.
	Auth auth.Config
	// Loopback is whether the server listens on loopback only.
	Loopback bool
	// Insecure accepts development tokens beyond loopback too
	// (-insecure-dev-tokens).
	Insecure bool
	Logger   *slog.Logger
	// Now is when the tokens are issued.
	Now time.Time
}

// Verifier returns the verifier of development tokens, signed with the
// data store's own random keys (secrets): the staff's, and the readers'
// unless o.Auth.Reader configures reader keys; and logs a ready-to-paste
// Authorization header for each of actors. A server that listens
// beyond loopback accepts none (it returns nil) unless o.Insecure asks
// for them: anyone who reaches it could otherwise write as the demo
// admin. headers is the admin's header for the playground to prefill, on
// loopback only: the page is served to whoever asks.
func Verifier(ctx context.Context, secrets Secrets, o Options) (v *auth.Verifier, headers map[string]string, err error) {
	logger, now, loopback := o.Logger, o.Now, o.Loopback
	if !loopback && !o.Insecure {
		logger.Warn("development tokens are off: the server listens beyond loopback; " +
			"set JWT_SECRET or JWT_JWKS_URL to accept tokens, or -insecure-dev-tokens to accept development tokens anyway")
		return nil, nil, nil
	}
	secret, err := secrets.Secret(ctx, secretName)
	if err != nil {
		return nil, nil, fmt.Errorf("development secret: %w", err)
	}
	ac := o.Auth
	ac.Secret = secret
	if !ac.Reader.Configured() {
		if ac.Reader.Secret, err = secrets.Secret(ctx, readerSecretName); err != nil {
			return nil, nil, fmt.Errorf("development reader secret: %w", err)
		}
	}
	if v, err = auth.NewVerifier(ac); err != nil {
		return nil, nil, err
	}
	for _, a := range actors {
		token, err := Mint(ac, a.id, a.role, now, tokenLife)
		if err != nil {
			return nil, nil, err
		}
		where := "this data store's development staff key"
		if a.role == auth.RoleReader {
			where = "this data store's development reader key"
		}
		if !loopback {
			where += ", accepted beyond loopback because of -insecure-dev-tokens: anyone who has it can write"
		}
		logger.Warn(fmt.Sprintf("DEVELOPMENT ONLY: token of the demo %s %s, signed with %s; "+
			"send this header with requests to act as them", a.role, a.id, where),
			"author", a.id, "role", a.role, "header", "Authorization: Bearer "+token)
		if headers == nil && loopback {
			headers = map[string]string{"Authorization": "Bearer " + token}
		}
	}
	return v, headers, nil
}

// Roles are the roles Mint signs tokens for.
var Roles = []string{auth.RoleAdmin, auth.RoleAuthor, auth.RoleReader, auth.RolePlatform}

// Mint returns a token for sub with role, issued at now and valid for
// life: the token a server with c accepts. A reader's token is signed
// with c.Reader.Secret when it is set, carrying c.Reader's Issuer and
// Audience (else c's); any other role's with c.Secret, carrying c's
// Issuer and Audience: a reader key never signs a staff token. It fails
// for a role not in Roles, an empty sub, a life of zero or less, or no
// secret of the role's trust domain at least auth.MinSecretBytes long.
func Mint(c auth.Config, sub, role string, now time.Time, life time.Duration) (string, error) {
	return MintIn(c, sub, role, "", now, life)
}

// MintIn is Mint for a token bound to the publication pub (its pub claim,
// the publication's id or slug) when pub is not empty: role is then a
// role in a publication (auth.PublicationRoles), and the token is signed
// with c.Secret, the staff's key.
func MintIn(c auth.Config, sub, role, pub string, now time.Time, life time.Duration) (string, error) {
	roles := Roles
	if pub != "" {
		roles = auth.PublicationRoles
		c.Reader.Secret = nil
	}
	secret, issuer, audience := c.Secret, c.Issuer, c.Audience
	if role == auth.RoleReader && c.Reader.Secret != nil {
		secret = c.Reader.Secret
		if c.Reader.Issuer != "" {
			issuer = c.Reader.Issuer
		}
		if c.Reader.Audience != "" {
			audience = c.Reader.Audience
		}
	}
	switch {
	case !slices.Contains(roles, role):
		return "", fmt.Errorf("role %q: must be one of %s", role, strings.Join(roles, ", "))
	case sub == "":
		return "", errors.New("subject: must be set (an author's id, e.g. ada-lovelace)")
	case life <= 0:
		return "", fmt.Errorf("lifetime %s: must be positive", life)
	case secret == nil && c.Reader.Secret != nil:
		return "", fmt.Errorf("role %s: a staff token needs the staff secret; the reader secret signs reader tokens only", role)
	case len(secret) < auth.MinSecretBytes:
		return "", fmt.Errorf("secret: must be at least %d bytes", auth.MinSecretBytes)
	}
	claims := auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   sub,
			Issuer:    issuer,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(life)),
		},
		Roles:       []string{role},
		Publication: pub,
	}
	if audience != "" {
		claims.Audience = jwt.ClaimStrings{audience}
	}
	token, err := auth.Sign(secret, claims)
	if err != nil {
		return "", fmt.Errorf("sign a token for %s: %w", sub, err)
	}
	return token, nil
}
