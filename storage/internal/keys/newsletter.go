package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The newsletter's sendings: one item per post sent to the members, in
// the publication's space (storage/newsletter.go).

const prefixNewsletter = "NEWSLETTER#"

// NewsletterSend returns the key of the sending of the post postID to the
// members: its checkpoint, and the mark that it was sent.
func (s Space) NewsletterSend(postID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + prefixNewsletter + postID, SK: prefixNewsletter + postID}
}
