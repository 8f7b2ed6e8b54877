package storage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"slices"
	"strings"
	"sync"
)

// Cursors are opaque to clients and sealed with the store's cursor key
// (WithCursorKey): the position in the list (the key attributes of the
// last item returned) is encrypted, so nothing of the table's layout
// shows, and authenticated together with the list's name, so a cursor
// that was altered, forged without the key, made with another key or
// taken from another list is refused with a ValidationError on "after".
// An empty cursor is no cursor (a PageArgs without one); the GraphQL layer
// never passes one on: `after: ""` is a client's mistake it refuses.
//
// The construction is SIV (RFC 5297) with HMAC-SHA256 in place of CMAC:
// the first 16 bytes of HMAC(list, position) are both the tag and the IV
// of AES-256-CTR over the position. It is deterministic: one position of
// one list always has the same cursor, so a page reads the same every
// time (HTTP caches compare bodies). Both keys are derived from the
// store's 32-byte key.

// MinCursorKeyBytes is the shortest key WithCursorKey accepts.
const MinCursorKeyBytes = 32

// sivBytes is the length of the tag that is also the IV.
const sivBytes = aes.BlockSize

// maxCursorLen bounds what is decoded, so a huge argument costs nothing.
const maxCursorLen = 1024

// cursorKeys seal and open cursors. macs keeps HMAC states keyed for
// the tag: keying one costs two SHA-256 blocks, and a page seals a cursor
// per item.
type cursorKeys struct {
	enc  cipher.Block
	macs *sync.Pool
}

// WithCursorKey makes the Store seal cursors with key, at least
// MinCursorKeyBytes long: every server that shares it accepts the others'
// cursors. Without it a Store makes a random key of its own. It panics on
// a shorter key.
func WithCursorKey(key []byte) Option {
	keys := newCursorKeys(key)
	return func(s *Store) { s.cursors = keys }
}

func newCursorKeys(key []byte) cursorKeys {
	if len(key) < MinCursorKeyBytes {
		panic(fmt.Sprintf("storage: a cursor key must be at least %d bytes", MinCursorKeyBytes))
	}
	derive := func(purpose string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(purpose))
		return h.Sum(nil)
	}
	enc, err := aes.NewCipher(derive("blog cursor encryption"))
	if err != nil {
		panic(err) // a 32-byte key is always an AES key
	}
	mac := derive("blog cursor authentication")
	return cursorKeys{enc: enc, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, mac) }}}
}

// randomCursorKeys returns keys of a random key, for a Store given none.
func randomCursorKeys() cursorKeys {
	key := make([]byte, MinCursorKeyBytes)
	_, _ = rand.Read(key) // crypto/rand never fails on a supported platform
	return newCursorKeys(key)
}

// siv returns the tag of position plain in list.
func (k cursorKeys) siv(list string, plain []byte) []byte {
	h := k.macs.Get().(hash.Hash)
	defer k.macs.Put(h)
	h.Reset()
	h.Write([]byte(list))
	h.Write([]byte{0})
	h.Write(plain)
	var sum [sha256.Size]byte
	return h.Sum(sum[:0])[:sivBytes]
}

// encodeCursor returns the cursor of the position pos in list.
func (s *Store) encodeCursor(list string, pos map[string]string) string {
	plain := encodePosition(pos)
	out := make([]byte, sivBytes+len(plain))
	iv := s.cursors.siv(list, plain)
	copy(out, iv)
	cipher.NewCTR(s.cursors.enc, iv).XORKeyStream(out[sivBytes:], plain)
	return base64.RawURLEncoding.EncodeToString(out)
}

// decodeCursor returns the position a cursor of list holds, or nil for an
// empty cursor. Anything but a cursor this store's key sealed for list is
// a ValidationError on "after".
func (s *Store) decodeCursor(list, cursor string) (map[string]string, error) {
	if cursor == "" {
		return nil, nil
	}
	bad := errBadCursor()
	// The decoder skips line breaks: only the spelling the server hands
	// out is a cursor.
	if len(cursor) > maxCursorLen || strings.ContainsAny(cursor, "\r\n") {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) <= sivBytes {
		return nil, bad
	}
	iv, sealed := raw[:sivBytes], raw[sivBytes:]
	plain := make([]byte, len(sealed))
	cipher.NewCTR(s.cursors.enc, iv).XORKeyStream(plain, sealed)
	if !hmac.Equal(iv, s.cursors.siv(list, plain)) {
		return nil, bad
	}
	pos, ok := decodePosition(plain)
	if !ok {
		return nil, bad
	}
	return pos, nil
}

// encodePosition writes pos as its attributes in name order, each name and
// value followed by a NUL byte: keys and names never hold one.
func encodePosition(pos map[string]string) []byte {
	names := make([]string, 0, len(pos))
	n := 0
	for k, v := range pos {
		names = append(names, k)
		n += len(k) + len(v) + 2
	}
	slices.Sort(names)
	b := make([]byte, 0, n)
	for _, k := range names {
		b = append(append(append(append(b, k...), 0), pos[k]...), 0)
	}
	return b
}

// decodePosition reads what encodePosition wrote; false when it is not a
// position of at least one attribute.
func decodePosition(b []byte) (map[string]string, bool) {
	parts := strings.Split(string(b), "\x00")
	if len(parts) < 3 || len(parts)%2 != 1 || parts[len(parts)-1] != "" {
		return nil, false
	}
	pos := make(map[string]string, len(parts)/2)
	for i := 0; i+1 < len(parts); i += 2 {
		pos[parts[i]] = parts[i+1]
	}
	return pos, true
}

// errBadCursor is the error for a cursor that does not belong to the list
// it was given to.
func errBadCursor() error {
	return &ValidationError{Field: "after", Reason: "is not a cursor of this list"}
}

// validatePage checks a page's size, and that its cursor goes with its
// direction: After with a forward page (first), Before with a backward one
// (last).
func validatePage(p PageArgs) error {
	field := "first"
	if p.Backward {
		field = "last"
	}
	switch {
	case p.Limit < 1 || p.Limit > MaxPageSize:
		return &ValidationError{Field: field, Reason: fmt.Sprintf("must be between 1 and %d", MaxPageSize)}
	case p.Backward && p.After != "":
		return &ValidationError{Field: "after", Reason: "goes with first; with last, give before"}
	case !p.Backward && p.Before != "":
		return &ValidationError{Field: "before", Reason: "goes with last; with first, give after"}
	}
	return nil
}
