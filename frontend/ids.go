package frontend

import "encoding/base64"

// Global ids are the ids GraphQL answers carry (`Post.id`…): base64url,
// without padding, of "<Type>:<key>", where the key is a post's, an
// author's or a page's id, a category's slug, or "<postId>:<commentId>"
// for a comment. Cache tags and the change feed's events name the keys
// (post:<id>); webhook deliveries carry both, and GraphQL's id arguments
// take either, so a frontend uses whichever it holds. The encoding stays
// as it is for the ids already handed out.

// The types a global id names.
const (
	TypePost     = "Post"
	TypeAuthor   = "Author"
	TypeCategory = "Category"
	TypeComment  = "Comment"
	TypePage     = "Page"
)

// GlobalIDEncoding is the encoding of global ids: only the spelling it
// makes of a key is that key's id.
var GlobalIDEncoding = base64.RawURLEncoding.Strict()

// GlobalID returns the global id of the object of type typ with key: one
// allocation, the string, for a key of up to 100 bytes (every object of a
// page has an id).
func GlobalID(typ, key string) string {
	var raw [128]byte
	var enc [172]byte // base64 of 128 bytes
	src := append(append(append(raw[:0], typ...), ':'), key...)
	return string(GlobalIDEncoding.AppendEncode(enc[:0], src))
}

// PostGlobalID returns the global id of the post id.
func PostGlobalID(id string) string { return GlobalID(TypePost, id) }

// AuthorGlobalID returns the global id of the author id.
func AuthorGlobalID(id string) string { return GlobalID(TypeAuthor, id) }

// PageGlobalID returns the global id of the page id.
func PageGlobalID(id string) string { return GlobalID(TypePage, id) }

// CommentGlobalID returns the global id of the comment id on the post
// postID.
func CommentGlobalID(postID, id string) string { return GlobalID(TypeComment, postID+":"+id) }
