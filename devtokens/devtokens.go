// Package devtokens makes the development tokens of the embedded mode:
// tokens of the demo blog's authors, signed with a random key the table
// keeps, logged at startup to be pasted into a client; and, with Mint,
// the token of any subject and role signed with a configured secret
// (the "token" command).
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

// secretName names the table's key (storage.Store.Secret) that signs
// development tokens: random, made the first time, and kept with the data,
// so a token works on this data store only and as long as its data.
const secretName = "dev-jwt"

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
	// and Audience, and are signed with the data store's key instead of
	// its Secret.
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
// data store's own random key (secrets), and logs a ready-to-paste
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
	if v, err = auth.NewVerifier(ac); err != nil {
		return nil, nil, err
	}
	for _, a := range actors {
		token, err := Mint(ac, a.id, a.role, now, tokenLife)
		if err != nil {
			return nil, nil, err
		}
		where := "this data store's development key"
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
var Roles = []string{auth.RoleAdmin, auth.RoleAuthor, auth.RoleReader}

// Mint returns a token for sub with role, signed with c.Secret and
// carrying c's Issuer and Audience, issued at now and valid for life: the
// token a server with c accepts. It fails for a role not in Roles, an
// empty sub, a life of zero or less, or a secret shorter than
// auth.MinSecretBytes.
func Mint(c auth.Config, sub, role string, now time.Time, life time.Duration) (string, error) {
	switch {
	case !slices.Contains(Roles, role):
		return "", fmt.Errorf("role %q: must be one of %s", role, strings.Join(Roles, ", "))
	case sub == "":
		return "", errors.New("subject: must be set (an author's id, e.g. ada-lovelace)")
	case life <= 0:
		return "", fmt.Errorf("lifetime %s: must be positive", life)
	case len(c.Secret) < auth.MinSecretBytes:
		return "", fmt.Errorf("secret: must be at least %d bytes", auth.MinSecretBytes)
	}
	claims := auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   sub,
			Issuer:    c.Issuer,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(life)),
		},
		Roles: []string{role},
	}
	if c.Audience != "" {
		claims.Audience = jwt.ClaimStrings{c.Audience}
	}
	token, err := auth.Sign(c.Secret, claims)
	if err != nil {
		return "", fmt.Errorf("sign a token for %s: %w", sub, err)
	}
	return token, nil
}
