package storage

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/google/uuid"
)

// newID returns a new id of an item the store names itself (an author, a
// post, a page, a webhook): a UUIDv7, so ids sort by creation time.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// randomHex returns n random hexadecimal digits (n even): the random part
// of a comment id, or a suffix that sets a generated slug apart.
func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
