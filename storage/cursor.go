package storage

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Cursors are opaque to clients: base64url of the list they belong to, the
// position in it (the key attributes of the last item returned) and a
// checksum. A cursor of another list, or one that was altered, is rejected
// with a ValidationError on field "after".

type cursorBody struct {
	List string            `json:"l"`
	Pos  map[string]string `json:"p"`
	Sum  string            `json:"s,omitempty"`
}

func cursorSum(list string, pos map[string]string) string {
	raw, _ := json.Marshal(cursorBody{List: list, Pos: pos})
	return checksum(raw)
}

// checksum returns the checksum of a cursor body marshalled without Sum.
func checksum(raw []byte) string {
	sum := sha256.Sum256(append([]byte("blog-cursor-v1\n"), raw...))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// encodeCursor marshals the body once, for every item of every page: the
// checksum comes last and needs no escaping, so appending it to the body
// without it gives the bytes json.Marshal writes with Sum set.
func encodeCursor(list string, pos map[string]string) string {
	raw, _ := json.Marshal(cursorBody{List: list, Pos: pos})
	sum := checksum(raw)
	raw = append(raw[:len(raw)-1], `,"s":"`...)
	raw = append(append(raw, sum...), `"}`...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeCursor returns the position a cursor of list holds, or nil for an
// empty cursor.
func decodeCursor(list, cursor string) (map[string]string, error) {
	if cursor == "" {
		return nil, nil
	}
	bad := errBadCursor()
	if len(cursor) > 1024 {
		return nil, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, bad
	}
	var c cursorBody
	if err := json.Unmarshal(raw, &c); err != nil || c.List != list || len(c.Pos) == 0 {
		return nil, bad
	}
	if c.Sum != cursorSum(c.List, c.Pos) {
		return nil, bad
	}
	return c.Pos, nil
}

// errBadCursor is the error for a cursor that does not belong to the list
// it was given to.
func errBadCursor() error {
	return &ValidationError{Field: "after", Reason: "is not a cursor of this list"}
}

// validatePage checks a page's size, and that its cursor goes with its
// direction: After with a forward page (first), Before with a backward one
// (last).
func validatePage(p Page) error {
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
