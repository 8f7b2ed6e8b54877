package auth

import (
	"context"
	"crypto/hmac"
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

// Config configures a Verifier. It needs a Secret, a JWKSURL or both:
// the staff's keys. Reader, when it has a secret or a JWKS URL, adds the
// keys of reader sessions, a trust domain of their own.
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
	// Reader configures the keys that sign reader sessions only.
	Reader ReaderConfig
	// HTTPClient fetches the JWKS; nil means one with a 5 second timeout.
	HTTPClient *http.Client
	// Now is the clock tokens are checked against; nil means time.Now.
	Now func() time.Time
}

// ReaderConfig configures the reader trust domain: keys whose tokens may
// carry no role but RoleReader, so whoever holds them (a frontend's
// comment form, an identity provider for readers) can sign in readers
// and nobody else. Its zero value configures none.
type ReaderConfig struct {
	// Secret verifies HS256 reader tokens. It must be at least
	// MinSecretBytes long and differ from the staff's Secret.
	Secret []byte
	// JWKSURL is where an identity provider of readers publishes its
	// keys, as Config.JWKSURL.
	JWKSURL string
	// Issuer, when set, must equal a reader token's iss claim; empty:
	// the staff's Issuer.
	Issuer string
	// Audience, when set, must be one of a reader token's aud claim;
	// empty: the staff's Audience.
	Audience string
}

// Configured reports whether r has a key.
func (r ReaderConfig) Configured() bool { return r.Secret != nil || r.JWKSURL != "" }

// errNoKey means a trust domain has no key of a token's kind: another
// domain's key may verify it.
var errNoKey = errors.New("no key of this kind")

// domain is a trust domain: the keys that verify its tokens and the
// checks its tokens pass. Which domain's key verifies a token decides
// what the token may be, never one of its claims.
type domain struct {
	secret []byte
	keys   *keySet // nil without a JWKS URL
	parser *jwt.Parser
	// readers is whether the domain signs reader sessions only.
	readers bool
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	staff  *domain
	reader *domain // nil without reader keys
}

// NewVerifier returns a Verifier for cfg. It returns an error when cfg
// has neither a secret nor a JWKS URL, when a secret is too short or the
// reader's is the staff's, or when a JWKS URL is not one to fetch keys
// from. It fetches nothing yet: keys are fetched when the first token
// needs them.
func NewVerifier(cfg Config) (*Verifier, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Secret == nil && cfg.JWKSURL == "" {
		return nil, errors.New("auth: a secret or a JWKS URL is needed to verify tokens")
	}
	r := cfg.Reader
	switch {
	case r.Secret != nil && cfg.Secret != nil && hmac.Equal(r.Secret, cfg.Secret):
		return nil, errors.New("auth: the reader secret must differ from the staff secret: whoever holds it could sign staff tokens")
	case r.JWKSURL != "" && r.JWKSURL == cfg.JWKSURL:
		return nil, errors.New("auth: the readers' JWKS URL must differ from the staff's: the key that verifies a token decides its trust domain")
	}
	// Every domain's parser accepts the algorithms of all: a domain with
	// no key of a token's kind says so (errNoKey), and the next is tried.
	var methods []string
	if cfg.Secret != nil || r.Secret != nil {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKSURL != "" || r.JWKSURL != "" {
		methods = append(methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg())
	}
	staff, err := newDomain(cfg.Secret, cfg.JWKSURL, cfg.Issuer, cfg.Audience, methods, client, now)
	if err != nil {
		return nil, err
	}
	v := &Verifier{staff: staff}
	if r.Configured() {
		issuer, audience := r.Issuer, r.Audience
		if issuer == "" {
			issuer = cfg.Issuer
		}
		if audience == "" {
			audience = cfg.Audience
		}
		if v.reader, err = newDomain(r.Secret, r.JWKSURL, issuer, audience, methods, client, now); err != nil {
			return nil, fmt.Errorf("reader keys: %w", err)
		}
		v.reader.readers = true
	}
	return v, nil
}

func newDomain(secret []byte, jwksURL, issuer, audience string, methods []string, client *http.Client, now func() time.Time) (*domain, error) {
	d := &domain{}
	if secret != nil {
		if len(secret) < MinSecretBytes {
			return nil, fmt.Errorf("auth: the secret must be at least %d bytes long", MinSecretBytes)
		}
		d.secret = secret
	}
	if jwksURL != "" {
		ks, err := newKeySet(jwksURL, client, now)
		if err != nil {
			return nil, err
		}
		d.keys = ks
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(now),
	}
	if issuer != "" {
		opts = append(opts, jwt.WithIssuer(issuer))
	}
	if audience != "" {
		opts = append(opts, jwt.WithAudience(audience))
	}
	d.parser = jwt.NewParser(opts...)
	return d, nil
}

// parse parses token into c, verifying it with d's keys.
func (d *domain) parse(ctx context.Context, token string, c *Claims) error {
	_, err := d.parser.ParseWithClaims(token, c, func(t *jwt.Token) (any, error) {
		if _, ok := t.Header["crit"]; ok {
			return nil, errCritical
		}
		if t.Method.Alg() == jwt.SigningMethodHS256.Alg() {
			if d.secret == nil {
				return nil, errNoKey
			}
			return d.secret, nil
		}
		if d.keys == nil {
			return nil, errNoKey
		}
		kid, _ := t.Header["kid"].(string)
		return d.keys.key(ctx, kid)
	})
	return err
}

// unverified reports whether err says a domain's keys did not verify a
// token's signature, so another domain's may: any other error (the
// token's claims, its form, its crit header) is the same whichever key
// signed it.
func unverified(err error) bool {
	if errors.Is(err, errCritical) {
		return false
	}
	return errors.Is(err, jwt.ErrTokenSignatureInvalid) || errors.Is(err, jwt.ErrTokenUnverifiable)
}

// Verify returns the actor token names. The staff's keys are tried first,
// then the readers': the domain whose key verifies the signature is the
// token's, and a token a reader key verifies may carry no role but
// RoleReader, whatever its issuer, audience or key id say. It returns an
// error wrapping ErrUnauthenticated, with a message for the client, when
// the token is malformed (claims of the wrong type included, such as an
// exp that is a string), signed by an unknown key or with an algorithm not
// configured, marked with critical header extensions, expired, not yet
// valid or issued in the future, for another issuer or audience, without
// a subject or with one longer than MaxSubjectLength, or signed with a
// reader key yet claiming another role than RoleReader. Any other error
// means an identity provider's keys could not be fetched.
func (v *Verifier) Verify(ctx context.Context, token string) (Actor, error) {
	var (
		c        Claims
		err      error
		verified *domain
		first    error // the first failure that is not errNoKey
	)
	for _, d := range []*domain{v.staff, v.reader} {
		if d == nil {
			continue
		}
		c = Claims{}
		err = d.parse(ctx, token, &c)
		if !unverified(err) {
			verified = d
			break
		}
		if first == nil && !errors.Is(err, errNoKey) {
			first = err
		}
		if errors.Is(err, errKeysUnavailable) {
			first = err
		}
	}
	if verified == nil && first != nil {
		err = first
	}
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
	if verified.readers {
		for _, role := range c.Roles {
			if role != RoleReader {
				return Actor{}, fmt.Errorf("%w: the token is signed with a reader key, which signs reader sessions only, yet claims the role %q", ErrUnauthenticated, role)
			}
		}
	}
	if verified.readers && c.Publication != "" && c.SessionID == "" {
		return Actor{}, fmt.Errorf("%w: the token is signed with a reader key, which signs reader sessions only, yet is bound to a publication without a session", ErrUnauthenticated)
	}
	a := Actor{ID: c.Subject, Roles: c.Roles, Name: c.Name, Picture: c.Picture, Publication: c.Publication}
	if verified.readers {
		// Only the reader key signs the server's reader sessions; the
		// publication a session was made on never binds a staff role.
		a.Session, a.SessionPublication, a.Publication = c.SessionID, c.Publication, ""
	}
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
