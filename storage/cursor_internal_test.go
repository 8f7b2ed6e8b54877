package storage

import (
	"maps"
	"testing"
)

// TestCursorsOfTheHMACDerivedKeysAreStillAccepted: a cursor sealed before
// the keys were derived by HKDF (with an HMAC of each label) still opens,
// for its list only; new cursors are sealed with the HKDF-derived keys.
func TestCursorsOfTheHMACDerivedKeysAreStillAccepted(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := &Store{cursors: newCursorKeys(key)}
	before := &Store{cursors: *s.cursors.legacy}
	pos := map[string]string{"PK": "CAT#go", "SK": "CAT#go", "GSI1SK": "POST#2026-03-01T12:00:00.000Z#p1"}
	old := before.encodeCursor("category", pos)
	got, err := s.decodeCursor("category", old)
	if err != nil || !maps.Equal(got, pos) {
		t.Errorf("a cursor of the HMAC-derived keys: %v, %v", got, err)
	}
	if _, err := s.decodeCursor("author", old); err == nil {
		t.Error("a cursor of the HMAC-derived keys opened for another list")
	}
	cur := s.encodeCursor("category", pos)
	if cur == old {
		t.Error("a new cursor is sealed with the HMAC-derived keys")
	}
	if _, err := before.decodeCursor("category", cur); err == nil {
		t.Error("a new cursor opened with the HMAC-derived keys")
	}
}
