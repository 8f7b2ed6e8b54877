package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Key set limits.
const (
	// minRefresh is the least time between two fetches of the JWKS, so a
	// flood of tokens with made-up key ids cannot flood the identity
	// provider.
	minRefresh = time.Minute
	// maxKeyAge is how long fetched keys are used before they are fetched
	// again, so a key the identity provider withdrew stops working.
	maxKeyAge = time.Hour
	// maxJWKSBytes bounds the JWKS document read.
	maxJWKSBytes = 1 << 20
	// minRSABits is the smallest RSA modulus accepted.
	minRSABits = 2048
)

// errKeysUnavailable means the JWKS could not be fetched: the token may
// be fine, the server cannot tell.
var errKeysUnavailable = errors.New("signing keys unavailable")

// keySet is an identity provider's public keys by key id, fetched from its
// JWKS URL when a token names a key id not yet known, and again when they
// are older than maxKeyAge.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	fetchMu sync.Mutex // held while fetching, so one request fetches for all
	tried   time.Time  // when a fetch last started; guarded by fetchMu

	mu      sync.Mutex
	keys    map[string]any // *rsa.PublicKey or *ecdsa.PublicKey
	fetched time.Time      // when keys were fetched
}

func newKeySet(rawURL string, client *http.Client, now func() time.Time) (*keySet, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		return nil, fmt.Errorf("auth: JWKS URL %q: must be an https URL (http only on a loopback host)", rawURL)
	}
	return &keySet{url: rawURL, client: client, now: now}, nil
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// key returns the public key with id kid. It fetches the JWKS when kid is
// unknown or the keys are old, at most once every minRefresh; a key that
// is known but old is still used when the fetch fails. A failed fetch
// with no key to fall back on is an error wrapping errKeysUnavailable.
func (s *keySet) key(ctx context.Context, kid string) (any, error) {
	if kid == "" {
		return nil, errors.New("the token names no key id (kid)")
	}
	if k, fresh := s.lookup(kid); fresh {
		return k, nil
	}
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	k, fresh := s.lookup(kid) // another request may have fetched meanwhile
	if fresh {
		return k, nil
	}
	if s.tried.IsZero() || s.now().Sub(s.tried) >= minRefresh {
		s.tried = s.now()
		// The fetch outlives a request that gives up, so the keys it
		// brings serve the requests that follow.
		err := s.fetch(context.WithoutCancel(ctx))
		switch {
		case err == nil:
			k, _ = s.lookup(kid)
		case k == nil:
			return nil, err
		}
	}
	if k == nil {
		return nil, fmt.Errorf("no signing key has the id %q", kid)
	}
	return k, nil
}

// lookup returns the key with id kid, or nil, and whether the keys are
// younger than maxKeyAge.
func (s *keySet) lookup(kid string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[kid]
	return k, k != nil && s.now().Sub(s.fetched) < maxKeyAge
}

// fetch replaces the keys with those the JWKS URL serves now. It returns
// an error wrapping errKeysUnavailable when the request fails or the
// document holds no usable key, and then keeps the keys it had.
func (s *keySet) fetch(ctx context.Context) error {
	keys, err := s.get(ctx)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errKeysUnavailable, s.url, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys, s.fetched = keys, s.now()
	return nil
}

func (s *keySet) get(ctx context.Context) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	switch {
	case err != nil:
		return nil, err
	case len(body) > maxJWKSBytes:
		return nil, fmt.Errorf("document larger than %d bytes", maxJWKSBytes)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	keys := make(map[string]any, len(doc.Keys))
	for _, k := range doc.Keys {
		// Keys of other types, keys for encryption and malformed or weak
		// keys are skipped: a JWKS may hold keys for other uses than ours.
		if pub, err := k.publicKey(); err == nil && k.Kid != "" && k.Use != "enc" {
			keys[k.Kid] = pub
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no RS256 or ES256 signing key with a key id")
	}
	return keys, nil
}

// jwk is a JSON Web Key (RFC 7517) as far as RS256 and ES256 need it.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

var b64 = base64.RawURLEncoding

// publicKey returns the key as an *rsa.PublicKey for RS256 or an
// *ecdsa.PublicKey for ES256, or an error for any other or a malformed key.
func (k jwk) publicKey() (any, error) {
	switch {
	case k.Kty == "RSA" && (k.Alg == "" || k.Alg == "RS256"):
		n, err := b64.DecodeString(k.N)
		if err != nil {
			return nil, err
		}
		e, err := b64.DecodeString(k.E)
		if err != nil || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("bad RSA exponent")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits || pub.E < 3 || pub.E%2 == 0 {
			return nil, errors.New("weak RSA key")
		}
		return pub, nil
	case k.Kty == "EC" && k.Crv == "P-256" && (k.Alg == "" || k.Alg == "ES256"):
		x, errX := b64.DecodeString(k.X)
		y, errY := b64.DecodeString(k.Y)
		if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return nil, errors.New("bad P-256 point")
		}
		return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	}
	return nil, fmt.Errorf("unsupported key type %q (alg %q)", k.Kty, k.Alg)
}
