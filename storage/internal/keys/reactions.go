package keys

import (
	"strings"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Reactions: a subject (a post, or one of its comments) has one count
// item, and each reader who reacted to it one item holding the kinds they
// chose, both in the post's partition, so a reaction is one transaction
// of two small items.

// The prefixes of reactions' sort keys, and the subject part of a post's.
const (
	PrefixReaction  = "REACT#"
	prefixReactions = "REACTIONS#"
	subjectPost     = "POST"
)

// ReactionSubject is the part of a reaction's keys that names its subject:
// "POST" for the post itself, else the comment's id.
func ReactionSubject(commentID string) string {
	if commentID == "" {
		return subjectPost
	}
	return commentID
}

// Reactions is the item that counts the reactions to a subject of the
// post postID, by kind.
func (s Space) Reactions(postID, subject string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: prefixReactions + subject}
}

// Reaction is the item that holds the kinds the reader readerID chose for
// a subject of the post postID.
func (s Space) Reaction(postID, subject, readerID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixReaction + subject + "#" + readerID}
}

// ParseReaction returns the subject and the reader id of a reaction
// item's sort key, or false when sk is not one.
func ParseReaction(sk string) (subject, readerID string, ok bool) {
	rest, ok := strings.CutPrefix(sk, PrefixReaction)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "#")
}
