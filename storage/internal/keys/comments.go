package keys

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// CommentID is a parsed comment id. A comment id carries its creation time
// so that its key can be built from the id alone: "<unixMilli>-<random>" for
// a top-level comment and "<parentId>.<unixMilli>-<random>" for a reply.
type CommentID struct {
	Created time.Time
	Random  string
	// Parent is the top-level comment a reply answers; nil for a
	// top-level comment.
	Parent *CommentID
}

func (c CommentID) own() string {
	return fmt.Sprintf("%013d-%s", c.Created.UnixMilli(), c.Random)
}

// String returns the comment id c is parsed from.
func (c CommentID) String() string {
	if c.Parent != nil {
		return c.Parent.own() + "." + c.own()
	}
	return c.own()
}

func (c CommentID) sortPart() string { return Time(c.Created) + "#" + c.own() }

// ErrNotCommentID means a string is not a comment id.
var ErrNotCommentID = errors.New("not a comment id")

// ParseCommentID parses the comment id s, or fails with ErrNotCommentID.
func ParseCommentID(s string) (CommentID, error) {
	parentPart, ownPart, isReply := strings.Cut(s, ".")
	if !isReply {
		return parseOwnCommentID(s)
	}
	parent, err := parseOwnCommentID(parentPart)
	if err != nil {
		return CommentID{}, err
	}
	c, err := parseOwnCommentID(ownPart)
	if err != nil {
		return CommentID{}, err
	}
	c.Parent = &parent
	return c, nil
}

func parseOwnCommentID(s string) (CommentID, error) {
	var ms int64
	var random string
	millis, random, ok := strings.Cut(s, "-")
	if !ok || len(millis) != 13 || random == "" || len(random) > 32 || !isLowerHex(random) {
		return CommentID{}, ErrNotCommentID
	}
	for _, r := range millis {
		if r < '0' || r > '9' {
			return CommentID{}, ErrNotCommentID
		}
		ms = ms*10 + int64(r-'0')
	}
	return CommentID{Created: time.UnixMilli(ms).UTC(), Random: random}, nil
}

func isLowerHex(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// Comment is where a comment lives. A top-level comment sorts by its own
// time under COMMENT#; a reply sorts under THREAD#<parent>, so all replies
// of a page of top-level comments are one contiguous key range.
func (s Space) Comment(postID string, c CommentID) dynamo.Key {
	if c.Parent == nil {
		return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixComment + c.sortPart()}
	}
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixThread + c.Parent.sortPart() + "#" + c.sortPart()}
}

// CommentKeys returns the keys of the items a write of comment c reads
// together: where it is published and where it is held, and its parent's
// when it is a reply.
func (s Space) CommentKeys(postID string, c CommentID) []dynamo.Key {
	keys := []dynamo.Key{s.Comment(postID, c), s.Held(postID, c)}
	if c.Parent != nil {
		keys = append(keys, s.Comment(postID, *c.Parent))
	}
	return keys
}

// Held is where a comment lives while it is held (pending or rejected):
// beside the post's comments but outside their COMMENT# and THREAD#
// ranges, so no public list reads it.
func (s Space) Held(postID string, c CommentID) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixHeld + Time(c.Created) + "#" + c.String()}
}

// ThreadPrefix is the common prefix of every reply to a top-level comment.
func ThreadPrefix(parent CommentID) string {
	return PrefixThread + parent.sortPart() + "#"
}

// QueueSort orders a pending comment in the moderation queues by the time
// it was written.
func QueueSort(postID string, c CommentID) string {
	return Time(c.Created) + "#" + postID + "#" + c.String()
}

// QueueEntry is the copy of a pending comment in the admins' queue.
func (s Space) QueueEntry(postID string, c CommentID) dynamo.Key {
	return dynamo.Key{PK: s.prefix + QueuePartition, SK: QueueSort(postID, c)}
}

// QueueEntryOfHeld returns the admins' queue entry of the held comment of
// postID whose sort key is sk, or false when sk is not one.
func (s Space) QueueEntryOfHeld(postID, sk string) (dynamo.Key, bool) {
	_, id, ok := strings.Cut(strings.TrimPrefix(sk, PrefixHeld), "#")
	if !ok || !strings.HasPrefix(sk, PrefixHeld) {
		return dynamo.Key{}, false
	}
	c, err := ParseCommentID(id)
	if err != nil {
		return dynamo.Key{}, false
	}
	return s.QueueEntry(postID, c), true
}

// AuthorQueue is the GSI1 partition of the pending comments on an
// author's posts.
func (s Space) AuthorQueue(authorID string) string { return s.prefix + PrefixQueue + authorID }
