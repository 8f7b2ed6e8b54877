package graph

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/blogql/blog/storage"
)

// Preview tokens show one post, whatever its status, to whoever holds one.
// A token is sealed as cursors are: base64url of a random nonce and the
// AES-256-GCM encryption of when it expires and the id of its post, under
// a key derived by HKDF from the table's "preview" key
// (storage.Store.Secret). So it shows nothing of the post or the table,
// every server on the table opens what any of them made, and no one can
// make or change one without the key: a token altered, forged or sealed
// with another table's key does not open, and fails as a missing post
// does. Nothing is stored: a token stops working when it expires or its
// post is deleted.

// Preview token lifetimes.
const (
	DefaultPreviewTTL = 7 * 24 * time.Hour
	MinPreviewTTL     = time.Minute
	MaxPreviewTTL     = 30 * 24 * time.Hour
)

// previewSecret is the name of the table's key that seals preview tokens.
const previewSecret = "preview"

// previewAAD is authenticated with every token: the purpose and version of
// its format, so that nothing else sealed with a key of the same secret
// opens as a token.
var previewAAD = []byte("blog preview token v2")

// Sizes of a sealed token: the nonce, the expiry, GCM's tag, and the
// longest token decoded (a post id is at most a few dozen bytes).
const (
	previewNonceBytes  = 12
	previewExpiryBytes = 8
	previewTagBytes    = 16
	maxPreviewLen      = 512
)

// errNoSuchPost is what every failure to show a post by preview token
// says, whatever the cause (unknown, altered or expired token, deleted
// post): nothing tells a holder whether the post exists, and no message
// carries an internal id.
var errNoSuchPost = fmt.Errorf("post: %w", storage.ErrNotFound)

// keyCache holds the ciphers of the table's preview key once read: the
// key never changes, so one read per server is enough.
type keyCache struct {
	mu   sync.Mutex
	keys *previewKeys
}

// previewKeys are the ciphers of the table's preview key. Tokens are
// sealed with aead, whose key is derived by HKDF; legacy, whose key was
// derived by an HMAC of the same label, still opens the tokens sealed
// before, which live up to MaxPreviewTTL: it can go once that has passed
// since every server seals with aead.
type previewKeys struct {
	aead, legacy cipher.AEAD
}

// previewCipher returns the ciphers of the table's preview key, reading
// the key the first time only. With create it makes the key when the
// table has none; without, that is storage.ErrNotFound, so that opening a
// token never writes.
func (r *Resolver) previewCipher(ctx context.Context, create bool) (*previewKeys, error) {
	r.previews.mu.Lock()
	defer r.previews.mu.Unlock()
	if r.previews.keys == nil {
		get := r.store.KnownSecret
		if create {
			get = r.store.Secret
		}
		key, err := get(ctx, previewSecret)
		if err != nil {
			return nil, fmt.Errorf("preview key: %w", err)
		}
		if r.previews.keys, err = previewKeysOf(key); err != nil {
			return nil, err
		}
	}
	return r.previews.keys, nil
}

// previewLabel names the key derived from the table's preview key.
const previewLabel = "blog preview token encryption"

// previewKeysOf returns the ciphers of the table's preview key.
func previewKeysOf(secret []byte) (*previewKeys, error) {
	aead, err := previewAEAD(secret)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(previewLabel))
	legacy, err := newGCM(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	return &previewKeys{aead: aead, legacy: legacy}, nil
}

// previewAEAD returns the AES-256-GCM cipher of the key derived by HKDF
// from the table's preview key.
func previewAEAD(secret []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, previewLabel, 32)
	if err != nil {
		return nil, fmt.Errorf("preview key: %w", err)
	}
	return newGCM(key)
}

// newGCM returns the AES-256-GCM cipher of key.
func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("preview key: %w", err)
	}
	return cipher.NewGCM(block)
}

// open returns the post id of a token sealed with k, by either key, that
// has not expired at now; false for anything else.
func (k *previewKeys) open(token string, now time.Time) (string, bool) {
	if id, ok := openPreview(k.aead, token, now); ok {
		return id, true
	}
	return openPreview(k.legacy, token, now)
}

// previewToken returns a token for the post id that expires at expires.
func (r *Resolver) previewToken(ctx context.Context, id string, expires time.Time) (string, error) {
	keys, err := r.previewCipher(ctx, true)
	if err != nil {
		return "", err
	}
	return sealPreview(keys.aead, id, expires), nil
}

// sealPreview returns the token of the post id that expires at expires,
// sealed with a random nonce.
func sealPreview(aead cipher.AEAD, id string, expires time.Time) string {
	nonce := make([]byte, previewNonceBytes)
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	return sealPreviewWith(aead, nonce, id, expires)
}

// sealPreviewWith returns the token of the post id that expires at
// expires, sealed with nonce.
func sealPreviewWith(aead cipher.AEAD, nonce []byte, id string, expires time.Time) string {
	plain := binary.BigEndian.AppendUint64(make([]byte, 0, previewExpiryBytes+len(id)), uint64(expires.Unix()))
	plain = append(plain, id...)
	out := make([]byte, previewNonceBytes, previewNonceBytes+len(plain)+previewTagBytes)
	copy(out, nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(out, nonce, plain, previewAAD))
}

// openPreview returns the post id of a token sealed with aead that has not
// expired at now; false for anything else.
func openPreview(aead cipher.AEAD, token string, now time.Time) (string, bool) {
	sealed, ok := decodePreview(token)
	if !ok {
		return "", false
	}
	plain, err := aead.Open(nil, sealed[:previewNonceBytes], sealed[previewNonceBytes:], previewAAD)
	if err != nil || len(plain) <= previewExpiryBytes {
		return "", false
	}
	exp := binary.BigEndian.Uint64(plain[:previewExpiryBytes])
	if exp > math.MaxInt64 || !now.Before(time.Unix(int64(exp), 0)) {
		return "", false
	}
	return string(plain[previewExpiryBytes:]), true
}

// decodePreview returns the bytes of what has the shape of a token: at
// most maxPreviewLen characters of strict base64url, long enough for a
// nonce, an expiry, a post id and a tag.
func decodePreview(token string) ([]byte, bool) {
	// The decoder skips line breaks: only the spelling the server hands
	// out is a token.
	if len(token) > maxPreviewLen || strings.ContainsAny(token, "\r\n") {
		return nil, false
	}
	sealed, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(sealed) <= previewNonceBytes+previewExpiryBytes+previewTagBytes {
		return nil, false
	}
	return sealed, true
}

// previewedPost returns the post a preview token shows, or errNoSuchPost.
// A token without the shape of one costs no read; opening one reads the
// key once a server.
func (r *Resolver) previewedPost(ctx context.Context, token string) (*storage.Post, error) {
	if _, ok := decodePreview(token); !ok {
		return nil, errNoSuchPost
	}
	keys, err := r.previewCipher(ctx, false)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchPost
	}
	if err != nil {
		return nil, err
	}
	id, ok := keys.open(token, r.store.Now())
	if !ok {
		return nil, errNoSuchPost
	}
	p, err := r.store.GetPost(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchPost
	}
	return p, err
}

// previewTTL returns how long a token asked for with expiresIn seconds
// lasts, or a *storage.ValidationError.
func previewTTL(expiresIn *int) (time.Duration, error) {
	if expiresIn == nil {
		return DefaultPreviewTTL, nil
	}
	lo, hi := int(MinPreviewTTL.Seconds()), int(MaxPreviewTTL.Seconds())
	if *expiresIn < lo || *expiresIn > hi {
		return 0, &storage.ValidationError{Field: "expiresIn", Reason: fmt.Sprintf("must be %d to %d seconds", lo, hi)}
	}
	return time.Duration(*expiresIn) * time.Second, nil
}
