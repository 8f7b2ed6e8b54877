package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinSecretBytes is the shortest HS256 secret NewVerifier accepts: a
// shorter one can be guessed offline from a single token.
const MinSecretBytes = 32

// MaxSubjectLength is the longest subject a token may have: OpenID
// Connect's limit. A longer one is refused like any malformed token.
const MaxSubjectLength = 255

// leeway absorbs clock skew between a token's issuer and this server.
const leeway = 30 * time.Second

// Config configures a Verifier. It needs a Secret, a JWKSURL or both.
type Config struct {
	// Secret verifies HS256 tokens. It must be at least MinSecretBytes
	// long.
	Secret []byte
	// JWKSURL is where an identity provider publishes the public keys of
	// its RS256 and ES256 tokens: an https URL, or http on a loopback host.
	JWKSURL string
	// Issuer, when set, must equal a token's iss claim.
	Issuer string
	// Audience, when set, must be one of a token's aud claim.
	Audience string
	// HTTPClient fetches the JWKS; nil means one with a 5 second timeout.
	HTTPClient *http.Client
	// Now is the clock tokens are checked against; nil means time.Now.
	Now func() time.Time
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	secret []byte
	keys   *keySet // nil without a JWKS URL
	parser *jwt.Parser
}

// NewVerifier returns a Verifier for cfg. It returns an error when cfg
// has neither a secret nor a JWKS URL, when the secret is too short, or
// when the JWKS URL is not one to fetch keys from. It fetches nothing
// yet: keys are fetched when the first token needs them.
func NewVerifier(cfg Config) (*Verifier, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	v := &Verifier{}
	var methods []string
	if cfg.Secret != nil {
		if len(cfg.Secret) < MinSecretBytes {
			return nil, fmt.Errorf("auth: the secret must be at least %d bytes long", MinSecretBytes)
		}
		v.secret = cfg.Secret
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKSURL != "" {
		client := cfg.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: 5 * time.Second}
		}
		ks, err := newKeySet(cfg.JWKSURL, client, now)
		if err != nil {
			return nil, err
		}
		v.keys = ks
		methods = append(methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg())
	}
	if len(methods) == 0 {
		return nil, errors.New("auth: a secret or a JWKS URL is needed to verify tokens")
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(now),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// Verify returns the actor token names. It returns an error wrapping
// ErrUnauthenticated, with a message for the client, when the token is
// malformed (claims of the wrong type included, such as an exp that is a
// string), signed by an unknown key or with an algorithm not configured,
// marked with critical header extensions, expired, not yet valid or issued
// in the future, for another issuer or audience, or without a subject or
// with one longer than MaxSubjectLength. Any other error means
// the identity provider's keys could not be fetched.
func (v *Verifier) Verify(ctx context.Context, token string) (Actor, error) {
	var c Claims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["crit"]; ok {
			return nil, errCritical
		}
		if t.Method.Alg() == jwt.SigningMethodHS256.Alg() {
			return v.secret, nil
		}
		kid, _ := t.Header["kid"].(string)
		return v.keys.key(ctx, kid)
	})
	switch {
	case errors.Is(err, errKeysUnavailable):
		return Actor{}, err
	case err != nil:
		return Actor{}, fmt.Errorf("%w: %s", ErrUnauthenticated, describe(err))
	case c.Subject == "":
		return Actor{}, fmt.Errorf("%w: invalid token: no subject", ErrUnauthenticated)
	case len(c.Subject) > MaxSubjectLength:
		return Actor{}, fmt.Errorf("%w: invalid token: the subject is longer than %d characters", ErrUnauthenticated, MaxSubjectLength)
	}
	a := Actor{ID: c.Subject, Roles: c.Roles, Name: c.Name, Picture: c.Picture}
	if c.ExpiresAt != nil {
		a.Expires = c.ExpiresAt.Time
	}
	return a, nil
}

// ErrAmbiguousCredentials means a request carries more than one
// Authorization header: which one it acts with is not for the server to
// guess.
var ErrAmbiguousCredentials = errors.New("more than one Authorization header")

// Authenticate returns who sent r: the anonymous Actor when r has no
// Authorization header, else the actor its bearer token names. A header
// that is not "Bearer <token>", an empty one included, is
// ErrUnauthenticated, and so is any token when v is nil: such a server
// accepts none. Two headers are ErrAmbiguousCredentials. Other errors are
// those of Verify.
func (v *Verifier) Authenticate(r *http.Request) (Actor, error) {
	values := r.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return Actor{}, nil
	case 1:
	default:
		return Actor{}, ErrAmbiguousCredentials
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	token = strings.TrimSpace(token)
	switch {
	case !strings.EqualFold(scheme, "Bearer") || token == "":
		return Actor{}, fmt.Errorf(`%w: the Authorization header must be "Bearer <token>"`, ErrUnauthenticated)
	case v == nil:
		return Actor{}, fmt.Errorf("%w: this server accepts no tokens", ErrUnauthenticated)
	}
	return v.Verify(r.Context(), token)
}

// Sign returns an HS256 token for c signed with secret. It fails only when
// c cannot be encoded.
func Sign(secret []byte, c Claims) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
}
