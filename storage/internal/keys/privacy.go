package keys

import (
	"strings"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// A reader's trail: one small item in the reader's global partition
// (READER#<id>) for each thing the reader left in a publication (a
// comment, a reaction, a membership), written in the transaction that
// leaves it, so that exporting or deleting the reader's data is a Query
// of one partition and never a scan (storage/privacy.go).

// PrefixTrail starts the sort key of every entry of a reader's trail.
const PrefixTrail = "TRAIL#"

// The kinds of a trail's entries.
const (
	TrailComment  = "COMMENT"
	TrailReaction = "REACT"
	TrailMember   = "MEMBER"
)

// Trail returns the key of the trail entry of kind in the publication of
// s for the reader readerID; ref names the thing ("<postId>#<commentId>"
// of a comment, "<postId>#<subject>" of a reaction, empty for a
// membership).
func (s Space) Trail(readerID, kind, ref string) dynamo.Key {
	sk := PrefixTrail + s.id + "#" + kind
	if ref != "" {
		sk += "#" + ref
	}
	return dynamo.Key{PK: PrefixReader + readerID, SK: sk}
}

// ParseTrail returns the publication id, the kind and the reference of a
// trail entry's sort key, or false when sk is not one.
func ParseTrail(sk string) (pubID, kind, ref string, ok bool) {
	rest, ok := strings.CutPrefix(sk, PrefixTrail)
	if !ok {
		return "", "", "", false
	}
	pubID, rest, ok = strings.Cut(rest, "#")
	if !ok || pubID == "" {
		return "", "", "", false
	}
	kind, ref, _ = strings.Cut(rest, "#")
	return pubID, kind, ref, kind != ""
}

// TrailsMark is where the sweep that writes the trail entries of what
// readers left before the trail existed is (storage/trails.go).
func (s Space) TrailsMark() dynamo.Key {
	return dynamo.Key{PK: s.prefix + "MIGRATION#TRAILS", SK: "MIGRATION#TRAILS"}
}

// PrefixRole starts the sort key of a reader's trail entry of a staff
// role (ROLE#<publication>): kept apart from the TRAIL# entries, so the
// deletion of an account reads its roles, which it must check before it
// changes anything, in one Query of its own.
const PrefixRole = "ROLE#"

// Role returns the key of the trail entry of the staff role of the
// account accountID in the publication of s.
func (s Space) Role(accountID string) dynamo.Key {
	return dynamo.Key{PK: PrefixReader + accountID, SK: PrefixRole + s.id}
}

// StaffTrailsMark marks the publication's staff roles as having their
// trail entries (storage/stafftrails.go).
func (s Space) StaffTrailsMark() dynamo.Key {
	return dynamo.Key{PK: s.prefix + "MIGRATION#STAFFTRAILS", SK: "MIGRATION#STAFFTRAILS"}
}
