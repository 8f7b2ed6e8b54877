package storage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Cursors are opaque to clients and sealed with the store's cursor key
// (WithCursorKey): the position in the list (the key attributes of the
// last item returned) is encrypted, so nothing of the table's layout
// shows, and authenticated together with the list's name, so a cursor
// that was altered, forged without the key, made with another key or
// taken from another list, or from another publication's, is refused
// with a ValidationError on "after".
// An empty cursor is no cursor (a PageArgs without one); the GraphQL layer
// never passes one on: `after: ""` is a client's mistake it refuses.
//
// The construction is SIV (RFC 5297) with HMAC-SHA256 in place of CMAC:
// the first 16 bytes of HMAC(list, position) are both the tag and the IV
// of AES-256-CTR over the position. It is deterministic: one position of
// one list always has the same cursor, so a page reads the same every
// time (HTTP caches compare bodies). Both keys are derived by HKDF from
// the store's 32-byte key.
//
// Cursors sealed before the keys were derived by HKDF (with an HMAC of
// each label) are still accepted: clients keep cursors in their URLs, and
// such a cursor would otherwise fail with BAD_USER_INPUT. New cursors are
// sealed with the HKDF-derived keys only, so the legacy keys can go once
// the cursors handed out before are no longer used.

// MinCursorKeyBytes is the shortest key WithCursorKey accepts.
const MinCursorKeyBytes = 32

// sivBytes is the length of the tag that is also the IV.
const sivBytes = aes.BlockSize

// maxCursorLen bounds what is decoded, so a huge argument costs nothing.
const maxCursorLen = 1024

// Labels of the keys derived from the store's key.
const (
	cursorEncryption     = "blog cursor encryption"
	cursorAuthentication = "blog cursor authentication"
)

// cursorKeys seal and open cursors. macs keeps HMAC states keyed for
// the tag: keying one costs two SHA-256 blocks, and a page seals a cursor
// per item. legacy, when set, opens the cursors sealed with the keys
// derived by HMAC.
type cursorKeys struct {
	enc    cipher.Block
	macs   *sync.Pool
	legacy *cursorKeys
}

// WithCursorKey makes the Store seal cursors with key, at least
// MinCursorKeyBytes long: every server that shares it accepts the others'
// cursors. Without it a Store makes a random key of its own. It panics on
// a shorter key.
func WithCursorKey(key []byte) Option {
	ks := newCursorKeys(key)
	return func(s *Store) { s.cursors = ks }
}

func newCursorKeys(key []byte) cursorKeys {
	if len(key) < MinCursorKeyBytes {
		panic(fmt.Sprintf("storage: a cursor key must be at least %d bytes", MinCursorKeyBytes))
	}
	ks := cursorKeysOf(func(label string) []byte {
		k, err := hkdf.Key(sha256.New, key, nil, label, sha256.Size)
		if err != nil {
			panic(err) // only a length past 255 hashes fails
		}
		return k
	})
	legacy := cursorKeysOf(func(label string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(label))
		return h.Sum(nil)
	})
	ks.legacy = &legacy
	return ks
}

// cursorKeysOf returns the keys derive makes of their labels.
func cursorKeysOf(derive func(label string) []byte) cursorKeys {
	enc, err := aes.NewCipher(derive(cursorEncryption))
	if err != nil {
		panic(err) // a 32-byte key is always an AES key
	}
	mac := derive(cursorAuthentication)
	return cursorKeys{enc: enc, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, mac) }}}
}

// randomCursorKeys returns keys of a random key, for a Store given none.
func randomCursorKeys() cursorKeys {
	key := make([]byte, MinCursorKeyBytes)
	_, _ = rand.Read(key) // crypto/rand never fails on a supported platform
	return newCursorKeys(key)
}

// siv writes the tag of position plain in list into dst, sivBytes long.
func (k cursorKeys) siv(dst []byte, list string, plain []byte) {
	h := k.macs.Get().(hash.Hash)
	defer k.macs.Put(h)
	h.Reset()
	_, _ = io.WriteString(h, list)
	h.Write([]byte{0})
	h.Write(plain)
	var sum [sha256.Size]byte
	copy(dst, h.Sum(sum[:0]))
}

// cursorList returns the name list is sealed under: a publication's
// cursors are refused by every other publication's lists. The default
// publication's keep the bare name, so the cursors handed out before
// there were publications still open.
func (s *Store) cursorList(list string) string {
	if pub := s.Publication(); pub != DefaultPublication {
		return "publication " + pub + "\x00" + list
	}
	return list
}

// encodeCursor returns the cursor of the position pos in list.
func (s *Store) encodeCursor(list string, pos map[string]string) string {
	list = s.cursorList(list)
	// One buffer: the tag, then the position, encrypted in place.
	out := encodePosition(make([]byte, sivBytes, sivBytes+positionLen(pos)), pos)
	iv, plain := out[:sivBytes], out[sivBytes:]
	s.cursors.siv(iv, list, plain)
	cipher.NewCTR(s.cursors.enc, iv).XORKeyStream(plain, plain)
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
	list = s.cursorList(list)
	plain, ok := s.cursors.open(list, raw)
	if !ok && s.cursors.legacy != nil {
		plain, ok = s.cursors.legacy.open(list, raw)
	}
	if !ok {
		return nil, bad
	}
	pos, ok := decodePosition(plain)
	if !ok {
		return nil, bad
	}
	return pos, nil
}

// open returns the position raw, a decoded cursor of list, holds when k
// sealed it.
func (k cursorKeys) open(list string, raw []byte) ([]byte, bool) {
	iv, sealed := raw[:sivBytes], raw[sivBytes:]
	plain := make([]byte, len(sealed))
	cipher.NewCTR(k.enc, iv).XORKeyStream(plain, sealed)
	var want [sivBytes]byte
	k.siv(want[:], list, plain)
	return plain, hmac.Equal(iv, want[:])
}

// encodePosition appends to b pos as its attributes in name order, each
// name and value followed by a NUL byte: keys and names never hold one.
func encodePosition(b []byte, pos map[string]string) []byte {
	var buf [4]string // a position is a key of at most four attributes
	names := buf[:0]
	for k := range pos {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		b = append(append(append(append(b, k...), 0), pos[k]...), 0)
	}
	return b
}

// positionLen returns the length of pos as encodePosition writes it.
func positionLen(pos map[string]string) int {
	n := 0
	for k, v := range pos {
		n += len(k) + len(v) + 2
	}
	return n
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

// eventsList names the event log's cursors: a cursor of a list of posts
// is not one of the log's, nor the reverse.
const eventsList = "events"

// EventCursor returns the opaque cursor of the event log's position pos,
// sealed as list cursors are: the same on every server of the cursor key.
func (s *Store) EventCursor(pos int64) string {
	return s.encodeCursor(eventsList, map[string]string{"p": strconv.FormatInt(pos, 10)})
}

// EventPosition returns the position of the event log that cursor, made
// by EventCursor, names. Anything else, a cursor altered or sealed with
// another key included, is a ValidationError on "after".
func (s *Store) EventPosition(cursor string) (int64, error) {
	bad := &ValidationError{Field: "after", Reason: "is not the cursor of an event"}
	if cursor == "" {
		return 0, bad
	}
	at, err := s.decodeCursor(eventsList, cursor)
	if err != nil {
		return 0, bad
	}
	pos, err := strconv.ParseInt(at["p"], 10, 64)
	if err != nil || pos < 0 || len(at) != 1 {
		return 0, bad
	}
	return pos, nil
}
