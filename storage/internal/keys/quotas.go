package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// postUsage names the counter of a publication's posts, which its posts
// quota bounds.
const postUsage = "POSTUSAGE"

// PostUsage returns the key of the counter of the publication's posts
// (drafts, scheduled and published alike), which also keeps the
// publication's own bound on them when a platform admin set one.
func (s Space) PostUsage() dynamo.Key {
	return dynamo.Key{PK: s.prefix + postUsage, SK: postUsage}
}
