package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
)

// devSecret signs tokens in the embedded mode when neither a secret nor a
// JWKS URL is configured. Anyone can read it here, which is fine for what
// it guards: the embedded engine's in-memory demo blog, nothing else.
const devSecret = "blog-embedded-mode-development-secret-never-in-production"

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
// mode without a secret or JWKS URL it uses devSecret, and dev is true.
// Outside it, a missing secret and JWKS URL is an error: the server does
// not start rather than take writes it cannot attribute.
func newVerifier(cfg *config, backend string) (v *auth.Verifier, dev bool, err error) {
	ac := auth.Config{JWKSURL: cfg.jwksURL, Issuer: cfg.jwtIssuer, Audience: cfg.jwtAudience}
	if cfg.jwtSecret != "" {
		ac.Secret = []byte(cfg.jwtSecret)
	}
	if ac.Secret == nil && ac.JWKSURL == "" {
		if backend != backendEmbedded {
			return nil, false, errors.New("no way to verify tokens: set JWT_SECRET (HS256, at least 32 bytes) or JWT_JWKS_URL; " +
				"only the embedded engine runs with a development secret")
		}
		ac.Secret, dev = []byte(devSecret), true
	}
	v, err = auth.NewVerifier(ac)
	return v, dev, err
}

// logDevTokens logs a ready-to-paste Authorization header for each of
// devActors, signed with devSecret. It returns the first one's header (the
// admin's) for the playground to prefill.
func logDevTokens(logger *slog.Logger, cfg *config, now time.Time) (map[string]string, error) {
	var first map[string]string
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
		token, err := auth.Sign([]byte(devSecret), c)
		if err != nil {
			return nil, fmt.Errorf("development token: %w", err)
		}
		logger.Warn(fmt.Sprintf("DEVELOPMENT ONLY: token of the demo %s %s, signed with the built-in development secret; "+
			"send this header with requests to act as them", a.role, a.id),
			"author", a.id, "role", a.role, "header", "Authorization: Bearer "+token)
		if first == nil {
			first = map[string]string{"Authorization": "Bearer " + token}
		}
	}
	return first, nil
}
