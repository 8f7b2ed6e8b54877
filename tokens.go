package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// devSecretName names the table's key (storage.Store.Secret) that signs
// development tokens: random, made the first time, and kept with the data,
// so a token works on this data store only and as long as its data.
const devSecretName = "dev-jwt"

// devTokenLife is how long the development tokens printed at startup stay
// valid: long enough to keep in a frontend's local settings.
const devTokenLife = 365 * 24 * time.Hour

// devActors are the demo authors the development tokens sign in as.
var devActors = []struct{ id, role string }{
	{"ada-lovelace", auth.RoleAdmin},
	{"grace-hopper", auth.RoleAuthor},
	{"jamie-rivera", auth.RoleReader},
}

// newVerifier returns the token verifier cfg configures. In the embedded
// mode without a secret or JWKS URL it returns nil and dev true: the
// development verifier (devVerifier) needs the table. Outside it, a missing
// secret and JWKS URL is an error: the server does not start rather than
// take writes it cannot attribute.
func newVerifier(cfg *config, backend string) (v *auth.Verifier, dev bool, err error) {
	ac := authConfig(cfg)
	if ac.Secret == nil && ac.JWKSURL == "" {
		if backend != backendEmbedded {
			return nil, false, errors.New("no way to verify tokens: set JWT_SECRET (HS256, at least 32 bytes) or JWT_JWKS_URL; " +
				"only the embedded engine runs with a development secret")
		}
		return nil, true, nil
	}
	v, err = auth.NewVerifier(ac)
	return v, false, err
}

// authConfig returns the token settings of cfg.
func authConfig(cfg *config) auth.Config {
	ac := auth.Config{JWKSURL: cfg.jwksURL, Issuer: cfg.jwtIssuer, Audience: cfg.jwtAudience}
	if cfg.jwtSecret != "" {
		ac.Secret = []byte(cfg.jwtSecret)
	}
	return ac
}

// devVerifier returns the verifier of development tokens, signed with the
// table's own random key, and logs a ready-to-paste Authorization header
// for each of devActors. A server that listens beyond loopback accepts
// none (it returns nil) unless cfg.insecureDevTokens asks for them: anyone
// who reaches it could otherwise write as the demo admin. headers is the
// admin's header for the playground to prefill, on loopback only: the
// page is served to whoever asks.
func devVerifier(ctx context.Context, logger *slog.Logger, cfg *config, store *storage.Store, loopback bool, now time.Time) (v *auth.Verifier, headers map[string]string, err error) {
	if !loopback && !cfg.insecureDevTokens {
		logger.Warn("development tokens are off: the server listens beyond loopback; " +
			"set JWT_SECRET or JWT_JWKS_URL to accept tokens, or -insecure-dev-tokens to accept development tokens anyway")
		return nil, nil, nil
	}
	secret, err := store.Secret(ctx, devSecretName)
	if err != nil {
		return nil, nil, fmt.Errorf("development secret: %w", err)
	}
	ac := authConfig(cfg)
	ac.Secret = secret
	if v, err = auth.NewVerifier(ac); err != nil {
		return nil, nil, err
	}
	for _, a := range devActors {
		c := auth.Claims{
			RegisteredClaims: jwt.RegisteredClaims{
				Subject:   a.id,
				Issuer:    cfg.jwtIssuer,
				IssuedAt:  jwt.NewNumericDate(now),
				ExpiresAt: jwt.NewNumericDate(now.Add(devTokenLife)),
			},
			Roles: []string{a.role},
		}
		if cfg.jwtAudience != "" {
			c.Audience = jwt.ClaimStrings{cfg.jwtAudience}
		}
		token, err := auth.Sign(secret, c)
		if err != nil {
			return nil, nil, fmt.Errorf("development token: %w", err)
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

//END
