package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var readerSecret = []byte("a-reader-secret-of-32-bytes-or-more")

// newTwoDomains returns a verifier of staff tokens signed with secret and
// reader tokens signed with readerSecret.
func newTwoDomains(t *testing.T, reader ReaderConfig) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{Secret: secret, Issuer: "https://id.example.com/", Audience: "blog",
		Reader: reader, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestReaderKeysSignReadersOnly verifies tokens of both trust domains: the
// staff's key signs every role, the readers' the reader role (or none),
// and a reader-key token claiming any other role is refused, not made a
// reader's.
func TestReaderKeysSignReadersOnly(t *testing.T) {
	v := newTwoDomains(t, ReaderConfig{Secret: readerSecret})
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		key   []byte
		roles []string
		ok    bool
	}{
		{"a staff admin", secret, []string{RoleAdmin}, true},
		{"a staff author", secret, []string{RoleAuthor}, true},
		{"a reader signed with the staff key", secret, []string{RoleReader}, true},
		{"a reader", readerSecret, []string{RoleReader}, true},
		{"a reader without roles", readerSecret, nil, true},
		{"a reader-key admin", readerSecret, []string{RoleAdmin}, false},
		{"a reader-key author", readerSecret, []string{RoleAuthor}, false},
		{"a reader-key editor", readerSecret, []string{"editor"}, false},
		{"a reader-key reader and admin", readerSecret, []string{RoleReader, RoleAdmin}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := v.Verify(ctx, sign(t, c.key, claims("someone", c.roles...)))
			switch {
			case c.ok && err != nil:
				t.Fatalf("Verify = %v, want the actor", err)
			case !c.ok && (!errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "reader key")):
				t.Fatalf("Verify = %+v, %v, want ErrUnauthenticated naming the reader key", a, err)
			case c.ok && len(a.Roles) != len(c.roles):
				t.Errorf("roles = %v, want %v", a.Roles, c.roles)
			}
		})
	}
	if _, err := v.Verify(ctx, sign(t, []byte("neither-the-staff-nor-the-reader-key"), claims("x", RoleReader))); !errors.Is(err, ErrUnauthenticated) ||
		!strings.Contains(err.Error(), "signature does not verify") {
		t.Errorf("a token of neither key: %v, want a signature that does not verify", err)
	}
	bound := claims("x", RoleReader)
	bound.Publication = "mag"
	if _, err := v.Verify(ctx, sign(t, readerSecret, bound)); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "bound to a publication") {
		t.Errorf("a reader-key token bound to a publication: %v, want ErrUnauthenticated", err)
	}
	if a, err := v.Verify(ctx, sign(t, secret, bound)); err != nil || a.Publication != "mag" {
		t.Errorf("a staff-key token bound to a publication = %+v, %v, want it bound to mag", a, err)
	}
	// A reader session's token names the publication it was made on,
	// which never binds it as staff.
	bound.SessionID = "s1"
	if a, err := v.Verify(ctx, sign(t, readerSecret, bound)); err != nil || a.Publication != "" || a.SessionPublication != "mag" || a.Session != "s1" {
		t.Errorf("a reader session's token of a publication = %+v, %v, want the session of mag, bound as staff to none", a, err)
	}
	expired := claims("x", RoleReader)
	expired.IssuedAt, expired.ExpiresAt = jwt.NewNumericDate(now.Add(-2*time.Hour)), jwt.NewNumericDate(now.Add(-time.Hour))
	if _, err := v.Verify(ctx, sign(t, readerSecret, expired)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired reader token: %v, want it to say it expired", err)
	}
}

// TestReaderKeyDecidesWhateverTheTokenSays signs admin tokens with a
// reader identity provider's key under the staff key's id, and with the
// reader secret under the staff's kid and issuer: the key that verifies
// the signature decides, so they are refused.
func TestReaderKeyDecidesWhateverTheTokenSays(t *testing.T) {
	staffIDP, readerIDP := newIDP(t), newIDP(t)
	staffKey := newRSA(t, "staff-1", 2048)
	forger := newRSA(t, "staff-1", 2048) // the reader provider's key, under the staff key's id
	staffIDP.serve(staffKey.jwk())
	readerIDP.serve(forger.jwk())
	c := newClock()
	v, err := NewVerifier(Config{JWKSURL: staffIDP.url, Issuer: "https://id.example.com/", Audience: "blog", Now: c.now,
		Reader: ReaderConfig{JWKSURL: readerIDP.url, Secret: readerSecret}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if a, err := v.Verify(ctx, staffKey.sign(t, claims("ada", RoleAdmin))); err != nil || !a.IsAdmin() {
		t.Fatalf("the staff provider's admin = %+v, %v", a, err)
	}
	if _, err := v.Verify(ctx, forger.sign(t, claims("ada", RoleAdmin))); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "reader key") {
		t.Errorf("an admin token of the reader provider under the staff kid: %v, want refused", err)
	}
	if a, err := v.Verify(ctx, forger.sign(t, claims("rosa", RoleReader))); err != nil || a.IsAdmin() {
		t.Errorf("a reader of the reader provider = %+v, %v, want a reader", a, err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("ada", RoleAdmin))
	tok.Header["kid"] = "staff-1"
	signed, err := tok.SignedString(readerSecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, signed); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "reader key") {
		t.Errorf("an admin token of the reader secret under the staff kid and issuer: %v, want refused", err)
	}
}

// TestNewVerifierKeepsTheDomainsApart refuses configurations in which one
// key would sign in both domains.
func TestNewVerifierKeepsTheDomainsApart(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"the same secret", Config{Secret: secret, Reader: ReaderConfig{Secret: append([]byte(nil), secret...)}}, "differ"},
		{"the same JWKS", Config{JWKSURL: "https://id.example.com/jwks", Reader: ReaderConfig{JWKSURL: "https://id.example.com/jwks"}}, "differ"},
		{"a short reader secret", Config{Secret: secret, Reader: ReaderConfig{Secret: []byte("short")}}, "32 bytes"},
		{"a reader JWKS over http", Config{Secret: secret, Reader: ReaderConfig{JWKSURL: "http://id.example.com/jwks"}}, "https"},
		{"reader keys only", Config{Reader: ReaderConfig{Secret: readerSecret}}, "secret or a JWKS URL"},
	} {
		if _, err := NewVerifier(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
