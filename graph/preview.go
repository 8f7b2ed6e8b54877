package graph

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blogql/blog/storage"
)

// Preview tokens show one post, whatever its status, to whoever holds one.
// A token is "<payload>.<signature>", both base64url: the payload names
// the post and when the token expires, the signature is an HMAC-SHA256 of
// it with the table's "preview" key (storage.Store.Secret), so every
// server on the table verifies what any of them made, and no one can make
// or change one without the key. Nothing is stored: a token stops working
// when it expires or its post is deleted.

// Preview token lifetimes.
const (
	DefaultPreviewTTL = 7 * 24 * time.Hour
	MinPreviewTTL     = time.Minute
	MaxPreviewTTL     = 30 * 24 * time.Hour
)

// previewSecret is the name of the table's key that signs preview tokens.
const previewSecret = "preview"

// errNoSuchPost is what every failure to show a post by preview token
// says, whatever the cause (unknown, altered or expired token, deleted
// post): nothing tells a holder whether the post exists, and no message
// carries an internal id.
var errNoSuchPost = fmt.Errorf("post: %w", storage.ErrNotFound)

// keyCache holds the table's preview key once read: it never changes, so
// one read per server is enough.
type keyCache struct {
	mu  sync.Mutex
	key []byte
}

// previewKey returns the table's preview key, reading it the first time
// only. With create it makes the key when the table has none; without, that
// is storage.ErrNotFound, so that checking a token never writes.
func (r *Resolver) previewKey(ctx context.Context, create bool) ([]byte, error) {
	r.previews.mu.Lock()
	defer r.previews.mu.Unlock()
	if r.previews.key == nil {
		get := r.store.KnownSecret
		if create {
			get = r.store.Secret
		}
		key, err := get(ctx, previewSecret)
		if err != nil {
			return nil, fmt.Errorf("preview key: %w", err)
		}
		r.previews.key = key
	}
	return r.previews.key, nil
}

// previewToken returns a token for the post id that expires at expires.
func (r *Resolver) previewToken(ctx context.Context, id string, expires time.Time) (string, error) {
	key, err := r.previewKey(ctx, true)
	if err != nil {
		return "", err
	}
	payload := []byte("v1\n" + id + "\n" + strconv.FormatInt(expires.Unix(), 10))
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(sign(key, payload)), nil
}

// previewedPost returns the post a preview token shows, or errNoSuchPost.
// A token that cannot be one, or has expired, costs no read.
func (r *Resolver) previewedPost(ctx context.Context, token string) (*storage.Post, error) {
	payload, mac, ok := parsePreview(token, r.store.Now())
	if !ok {
		return nil, errNoSuchPost
	}
	key, err := r.previewKey(ctx, false)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchPost
	}
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(mac, sign(key, payload.raw)) {
		return nil, errNoSuchPost
	}
	id := payload.postID
	p, err := r.store.GetPost(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchPost
	}
	return p, err
}

// previewPayload is what a token says, before its signature is checked.
type previewPayload struct {
	raw    []byte
	postID string
}

// parsePreview returns the payload and signature of a token that has the
// shape of one and has not expired at now; whether it is signed with the
// key is for the caller to check.
func parsePreview(token string, now time.Time) (previewPayload, []byte, bool) {
	if len(token) > 512 {
		return previewPayload{}, nil, false
	}
	enc, sig, ok := strings.Cut(token, ".")
	if !ok {
		return previewPayload{}, nil, false
	}
	raw, err1 := base64.RawURLEncoding.Strict().DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err1 != nil || err2 != nil || len(mac) != sha256.Size {
		return previewPayload{}, nil, false
	}
	parts := strings.Split(string(raw), "\n")
	if len(parts) != 3 || parts[0] != "v1" || parts[1] == "" {
		return previewPayload{}, nil, false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return previewPayload{}, nil, false
	}
	return previewPayload{raw: raw, postID: parts[1]}, mac, true
}

func sign(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("blog-preview\n"))
	m.Write(payload)
	return m.Sum(nil)
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
