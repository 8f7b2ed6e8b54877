package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	secret = []byte("0123456789abcdef0123456789abcdef")
	now    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// claims returns valid claims for sub at now, with the issuer and audience
// the test verifiers expect.
func claims(sub string, roles ...string) Claims {
	return Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   sub,
			Issuer:    "https://id.example.com/",
			Audience:  jwt.ClaimStrings{"blog"},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
		},
		Roles: roles,
	}
}

func sign(t *testing.T, key []byte, c Claims) string {
	t.Helper()
	tok, err := Sign(key, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func newHS256(t *testing.T) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{Secret: secret, Issuer: "https://id.example.com/", Audience: "blog", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyAcceptsAValidToken(t *testing.T) {
	v := newHS256(t)
	a, err := v.Verify(context.Background(), sign(t, secret, claims("grace-hopper", RoleAuthor)))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "grace-hopper" || !a.IsAuthor() || a.IsAdmin() {
		t.Errorf("actor = %+v, want author grace-hopper", a)
	}
}

func TestVerifyReadsAReadersNameAndPicture(t *testing.T) {
	v := newHS256(t)
	c := claims("auth0|12345", RoleReader)
	c.Name, c.Picture = "Lin Reader", "https://id.example.com/lin.png"
	a, err := v.Verify(context.Background(), sign(t, secret, c))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "auth0|12345" || a.Name != "Lin Reader" || a.Picture != "https://id.example.com/lin.png" || a.IsAuthor() || a.IsAdmin() {
		t.Errorf("actor = %+v, want the reader auth0|12345 with name and picture", a)
	}
}

func TestVerifyRefusesBadTokens(t *testing.T) {
	v := newHS256(t)
	with := func(change func(*Claims)) string {
		c := claims("grace-hopper", RoleAuthor)
		change(&c)
		return sign(t, secret, c)
	}
	valid := sign(t, secret, claims("grace-hopper", RoleAuthor))
	unsigned, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims("grace-hopper", RoleAdmin)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, token, says string
	}{
		{"expired", with(func(c *Claims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute)) }), "expired"},
		{"without expiry", with(func(c *Claims) { c.ExpiresAt = nil }), "exp"},
		{"not valid yet", with(func(c *Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Hour)) }), "not valid yet"},
		{"signed with another secret", sign(t, []byte("another secret, just as long as ours"), claims("grace-hopper", RoleAuthor)), "signature"},
		{"altered after signing", valid[:len(valid)-4] + "AAAA", "signature"},
		{"from another issuer", with(func(c *Claims) { c.Issuer = "https://evil.example.com/" }), "issuer"},
		{"for another audience", with(func(c *Claims) { c.Audience = jwt.ClaimStrings{"shop"} }), "audience"},
		{"without subject", with(func(c *Claims) { c.Subject = "" }), "subject"},
		{"unsigned (alg none)", unsigned, "algorithm"},
		{"not a JWT", "hello", "well-formed"},
		{"issued in the future", with(func(c *Claims) { c.IssuedAt = jwt.NewNumericDate(now.Add(time.Hour)) }), "issued in the future"},
		{"an expiry that is a string", raw(t, jwt.MapClaims{"sub": "grace-hopper", "iss": "https://id.example.com/", "aud": "blog",
			"exp": fmt.Sprint(now.Add(time.Hour).Unix()), "roles": []string{RoleAdmin}}, nil), "exp must be a number"},
		{"roles that are a string", raw(t, jwt.MapClaims{"sub": "grace-hopper", "iss": "https://id.example.com/", "aud": "blog",
			"exp": now.Add(time.Hour).Unix(), "roles": RoleAdmin}, nil), "roles must be a list of strings"},
		{"a critical header extension", raw(t, jwt.MapClaims{"sub": "grace-hopper", "iss": "https://id.example.com/", "aud": "blog",
			"exp": now.Add(time.Hour).Unix(), "roles": []string{RoleAdmin}}, map[string]any{"crit": []string{"exp-policy"}, "exp-policy": "x"}), "crit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := v.Verify(context.Background(), tt.token)
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("Verify = %+v, %v; want ErrUnauthenticated", a, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			for _, goTalk := range []string{"Claims", "[]string", "Go ", "json:", "NumericDate"} {
				if strings.Contains(err.Error(), goTalk) {
					t.Errorf("error %q speaks Go (%q)", err, goTalk)
				}
			}
		})
	}
}

// raw returns a token of claims, with extra header parameters, signed
// with the test secret: claims of types Claims cannot hold.
func raw(t *testing.T, claims jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyAllowsClockSkew(t *testing.T) {
	v := newHS256(t)
	c := claims("grace-hopper", RoleAuthor)
	c.ExpiresAt = jwt.NewNumericDate(now.Add(-leeway / 2))
	if _, err := v.Verify(context.Background(), sign(t, secret, c)); err != nil {
		t.Errorf("a token expired %v ago was refused: %v", leeway/2, err)
	}
}

func TestNewVerifierRefusesUnsafeConfigurations(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		says string
	}{
		{"nothing to verify with", Config{Issuer: "x"}, "secret or a JWKS URL"},
		{"short secret", Config{Secret: []byte("changeme")}, "at least 32 bytes"},
		{"JWKS over plain http", Config{JWKSURL: "http://id.example.com/jwks.json"}, "https"},
		{"JWKS URL without host", Config{JWKSURL: "https:///jwks.json"}, "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewVerifier(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want one saying %q", err, tt.says)
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	v := newHS256(t)
	valid := sign(t, secret, claims("ada-lovelace", RoleAdmin))
	tests := []struct {
		name     string
		v        *Verifier
		header   string
		wantID   string
		wantFail bool
	}{
		{"no header is anonymous", v, "", "", false},
		{"a bearer token names its subject", v, "Bearer " + valid, "ada-lovelace", false},
		{"the scheme is case-insensitive", v, "bearer " + valid, "ada-lovelace", false},
		{"another scheme is refused", v, "Basic YWRhOnB3", "", true},
		{"a bearer without token is refused", v, "Bearer ", "", true},
		{"a server without verifier refuses every token", nil, "Bearer " + valid, "", true},
		{"a server without verifier serves the anonymous", nil, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/graphql", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			a, err := tt.v.Authenticate(r)
			if tt.wantFail != errors.Is(err, ErrUnauthenticated) || (!tt.wantFail && err != nil) {
				t.Fatalf("Authenticate = %+v, %v", a, err)
			}
			if a.ID != tt.wantID {
				t.Errorf("actor = %q, want %q", a.ID, tt.wantID)
			}
		})
	}
}

func TestActorRoles(t *testing.T) {
	tests := []struct {
		name                   string
		a                      Actor
		admin, author, actsAda bool
	}{
		{"anonymous", Actor{}, false, false, false},
		{"anonymous with roles", Actor{Roles: []string{RoleAdmin}}, false, false, false},
		{"signed in without role", Actor{ID: "ada"}, false, false, false},
		{"author acts for itself", Actor{ID: "ada", Roles: []string{RoleAuthor}}, false, true, true},
		{"author does not act for another", Actor{ID: "grace", Roles: []string{RoleAuthor}}, false, true, false},
		{"admin acts for everyone", Actor{ID: "root", Roles: []string{RoleAdmin}}, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a.IsAdmin() != tt.admin || tt.a.IsAuthor() != tt.author || tt.a.Acts("ada") != tt.actsAda {
				t.Errorf("admin %v author %v acts for ada %v; want %v %v %v",
					tt.a.IsAdmin(), tt.a.IsAuthor(), tt.a.Acts("ada"), tt.admin, tt.author, tt.actsAda)
			}
		})
	}
	ctx := WithActor(context.Background(), Actor{ID: "ada"})
	if ActorFrom(ctx).ID != "ada" || !ActorFrom(context.Background()).Anonymous() {
		t.Error("the context does not carry the actor")
	}
}
