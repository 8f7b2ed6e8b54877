package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// idp is an identity provider on loopback that serves a JWKS and counts
// how often it is fetched.
type idp struct {
	url     string
	fetches atomic.Int32

	mu     sync.Mutex
	keys   []map[string]string
	status int
	pad    int // bytes of padding added to the document
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{status: http.StatusOK}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(p.status)
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": p.keys, "padding": strings.Repeat(" ", p.pad)})
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL + "/.well-known/jwks.json"
	return p
}

// serve makes the provider publish keys from now on.
func (p *idp) serve(keys ...map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = keys
}

func (p *idp) fail(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = status
}

// signer is a private key with its id and its public half as a JWK.
type signer struct {
	kid    string
	method jwt.SigningMethod
	key    crypto.Signer
}

func newRSA(t *testing.T, kid string, bits int) signer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid, jwt.SigningMethodRS256, k}
}

func newEC(t *testing.T, kid string) signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid, jwt.SigningMethodES256, k}
}

func (s signer) jwk() map[string]string {
	switch pub := s.key.Public().(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": s.kid, "use": "sig", "alg": "RS256",
			"n": b64.EncodeToString(pub.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		b, _ := pub.Bytes()
		return map[string]string{"kty": "EC", "kid": s.kid, "crv": "P-256",
			"x": b64.EncodeToString(b[1:33]), "y": b64.EncodeToString(b[33:])}
	}
	panic("unknown key type")
}

func (s signer) sign(t *testing.T, c Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(s.method, c)
	tok.Header["kid"] = s.kid
	str, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return str
}

// testClock is a clock tests move by hand.
type testClock struct{ ns atomic.Int64 }

func newClock() *testClock {
	c := &testClock{}
	c.ns.Store(now.UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func newJWKSVerifier(t *testing.T, p *idp, c *testClock) *Verifier {
	t.Helper()
	v, err := NewVerifier(Config{JWKSURL: p.url, Issuer: "https://id.example.com/", Audience: "blog", Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tokenFor returns a token of s for grace-hopper valid at the clock's time.
func tokenFor(t *testing.T, s signer, c *testClock) string {
	t.Helper()
	cl := claims("grace-hopper", RoleAuthor)
	cl.IssuedAt, cl.ExpiresAt = jwt.NewNumericDate(c.now()), jwt.NewNumericDate(c.now().Add(2*maxKeyAge))
	return s.sign(t, cl)
}

func TestJWKSVerifiesRS256AndES256WithOneFetch(t *testing.T) {
	p, c := newIDP(t), newClock()
	rs, es := newRSA(t, "rsa-1", 2048), newEC(t, "ec-1")
	p.serve(rs.jwk(), es.jwk())
	v := newJWKSVerifier(t, p, c)
	for _, s := range []signer{rs, es, rs, es} {
		a, err := v.Verify(context.Background(), tokenFor(t, s, c))
		if err != nil || a.ID != "grace-hopper" {
			t.Fatalf("%s: Verify = %+v, %v", s.method.Alg(), a, err)
		}
	}
	if n := p.fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1", n)
	}
}

func TestJWKSFollowsKeyRotation(t *testing.T) {
	p, c := newIDP(t), newClock()
	old, next := newEC(t, "2026-02"), newEC(t, "2026-03")
	p.serve(old.jwk())
	v := newJWKSVerifier(t, p, c)
	verify := func(s signer) error {
		_, err := v.Verify(context.Background(), tokenFor(t, s, c))
		return err
	}
	if err := verify(old); err != nil {
		t.Fatal(err)
	}

	p.serve(old.jwk(), next.jwk())
	t.Run("an unknown key id is fetched at most once a minute", func(t *testing.T) {
		for range 5 {
			if err := verify(newEC(t, "made-up")); !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("token of an unknown key: %v, want ErrUnauthenticated", err)
			}
		}
		if n := p.fetches.Load(); n != 1 {
			t.Errorf("JWKS fetched %d times within a minute, want 1", n)
		}
	})
	t.Run("a new key id is fetched once the minute has passed", func(t *testing.T) {
		c.advance(minRefresh)
		if err := verify(next); err != nil {
			t.Fatal(err)
		}
		if n := p.fetches.Load(); n != 2 {
			t.Errorf("JWKS fetched %d times, want 2", n)
		}
	})
	t.Run("a withdrawn key stops working once the keys are old", func(t *testing.T) {
		p.serve(next.jwk())
		if err := verify(old); err != nil {
			t.Fatalf("the old key stopped before its keys aged: %v", err)
		}
		c.advance(maxKeyAge)
		if err := verify(old); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("withdrawn key: %v, want ErrUnauthenticated", err)
		}
		if err := verify(next); err != nil {
			t.Fatal(err)
		}
	})
}

func TestJWKSUnavailable(t *testing.T) {
	p, c := newIDP(t), newClock()
	s := newRSA(t, "rsa-1", 2048)
	p.serve(s.jwk())
	p.fail(http.StatusInternalServerError)
	v := newJWKSVerifier(t, p, c)

	_, err := v.Verify(context.Background(), tokenFor(t, s, c))
	if !errors.Is(err, errKeysUnavailable) || errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("Verify with the provider down = %v, want errKeysUnavailable, not ErrUnauthenticated", err)
	}

	p.fail(http.StatusOK)
	c.advance(minRefresh)
	if _, err := v.Verify(context.Background(), tokenFor(t, s, c)); err != nil {
		t.Fatalf("Verify after the provider recovered: %v", err)
	}
	p.fail(http.StatusServiceUnavailable)
	c.advance(maxKeyAge)
	if _, err := v.Verify(context.Background(), tokenFor(t, s, c)); err != nil {
		t.Errorf("a known key stopped working while the provider was down: %v", err)
	}
}

func TestJWKSRefusesWhatItShould(t *testing.T) {
	p, c := newIDP(t), newClock()
	good, weak, ec := newRSA(t, "good", 2048), newRSA(t, "weak", 1024), newEC(t, "enc")
	encKey := ec.jwk()
	encKey["use"] = "enc"
	p.serve(good.jwk(), weak.jwk(), encKey, map[string]string{"kty": "RSA", "kid": "garbage", "n": "!!", "e": "AQAB"})
	v := newJWKSVerifier(t, p, c)
	if _, err := v.Verify(context.Background(), tokenFor(t, good, c)); err != nil {
		t.Fatalf("good key among bad ones: %v", err)
	}

	pub, _ := good.key.Public().(*rsa.PublicKey)
	confused := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("grace-hopper", RoleAdmin))
	confused.Header["kid"] = "good"
	hs, err := confused.SignedString(pub.N.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ecAsGood := ec
	ecAsGood.kid = "good"
	noKid := jwt.NewWithClaims(jwt.SigningMethodRS256, claims("grace-hopper", RoleAuthor))
	nk, err := noKid.SignedString(good.key)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, token string }{
		{"a key under 2048 bits", tokenFor(t, weak, c)},
		{"an encryption key", tokenFor(t, ec, c)},
		{"a malformed key", tokenFor(t, signer{"garbage", jwt.SigningMethodRS256, good.key}, c)},
		{"HS256 with the public key as secret", hs},
		{"ES256 under the id of an RSA key", tokenFor(t, ecAsGood, c)},
		{"a token naming no key id", nk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := v.Verify(context.Background(), tt.token); !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("Verify = %v, want ErrUnauthenticated", err)
			}
		})
	}
}

func TestJWKSDocumentIsBounded(t *testing.T) {
	p, c := newIDP(t), newClock()
	s := newEC(t, "ec-1")
	p.serve(s.jwk())
	p.mu.Lock()
	p.pad = maxJWKSBytes
	p.mu.Unlock()
	v := newJWKSVerifier(t, p, c)
	if _, err := v.Verify(context.Background(), tokenFor(t, s, c)); !errors.Is(err, errKeysUnavailable) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Verify with an oversized JWKS = %v, want errKeysUnavailable", err)
	}
}
