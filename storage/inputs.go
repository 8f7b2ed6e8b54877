package storage

import "time"

// Every write takes one input struct. IdempotencyKey is optional: when set,
// it is recorded with the write's result in the write's own transaction,
// so a retried call with the same key and the same input has one effect and
// returns the same result, while the same key with different input fails
// with ErrIdempotencyMismatch.

// NoVersion is a version no item has. A write whose ExpectedVersion is
// NoVersion fails with a *ConflictError that tells the current version;
// an ExpectedVersion of zero expects none (the write is unconditional).
const NoVersion int64 = -1

// NewAuthor is the input of CreateAuthor. ID is optional; a new one is made
// when it is empty. Slug is optional too: when empty, one is made from the
// name ("Ada Lovelace": "ada-lovelace", or "ada-lovelace-2" when that is
// taken).
type NewAuthor struct {
	ID             string
	Slug           string
	Name           string
	Bio            string
	AvatarURL      string
	Website        string
	Location       string
	Social         []SocialAccount
	IdempotencyKey string
}

// AuthorPatch is the input of UpdateAuthor. Nil fields are left unchanged.
// ExpectedVersion, when not zero, must equal the stored version.
type AuthorPatch struct {
	ID              string
	ExpectedVersion int64
	Slug            *string // the old slug stays as a redirect
	Name            *string
	Bio             *string
	AvatarURL       *string
	// AvatarMedia, when not nil, is the avatar from the media library
	// (AvatarURL must be nil then).
	AvatarMedia    *Image
	Website        *string
	Location       *string
	Social         *[]SocialAccount
	IdempotencyKey string
	// Admin is set for an admin's write: only it may take a slug another
	// author keeps as a redirect.
	Admin bool `json:"-"`
}

// NewCategory is the input of CreateCategory.
type NewCategory struct {
	Slug           string
	Name           string
	Description    string
	IdempotencyKey string
}

// CategoryPatch is the input of UpdateCategory. Nil fields are left
// unchanged. ExpectedVersion, when not zero, must equal the stored version.
type CategoryPatch struct {
	Slug            string
	ExpectedVersion int64
	Name            *string
	Description     *string
	IdempotencyKey  string
}

// NewPost is the input of CreatePost; the post starts as a draft. An
// empty Excerpt is derived from the body.
type NewPost struct {
	AuthorID       string
	Title          string
	Slug           string
	Excerpt        string
	Body           string
	Categories     []string // category slugs, at most MaxCategories
	CoverImage     *Image
	SEO            SEO
	IdempotencyKey string
	// Admin is set for an admin's write: it may take a slug that a post
	// of another author keeps as a redirect, which a post of the same
	// author alone may otherwise.
	Admin bool `json:"-"`
	// CoAuthors are the ids of the post's authors after AuthorID, in
	// order: at most MaxAuthors-1.
	CoAuthors []string
	// Tags are the names of the post's tags, at most MaxTags; a tag that
	// does not exist yet is made.
	Tags []string
	// Locale is the post's BCP 47 locale; empty: the site's default.
	Locale string
	// Visibility says who reads the body; empty is VisibilityPublic.
	Visibility Visibility
}

// PostPatch is the input of UpdatePost. Nil fields are left unchanged.
// ExpectedVersion must equal the stored version. A new slug keeps the old
// one as a redirect.
type PostPatch struct {
	ID              string
	ExpectedVersion int64
	Title           *string
	Slug            *string
	Excerpt         *string // empty: derived from the body
	Body            *string
	Categories      *[]string
	CoverImage      *Image
	// RemoveCoverImage removes the cover image; it cannot go with
	// CoverImage.
	RemoveCoverImage bool
	SEO              *SEOPatch
	IdempotencyKey   string
	// Admin is set for an admin's write, as in NewPost.
	Admin bool `json:"-"`
	// CoAuthors, when not nil, replaces the post's co-authors (its authors
	// after its primary one); Tags, when not nil, its tags, by name.
	CoAuthors *[]string
	Tags      *[]string
	// Locale, when not nil, gives the post another locale; empty: the
	// site's default. A post linked to translations keeps its locale.
	Locale     *string
	Visibility *Visibility
	// Actor, when set, is the author who writes, who must be one of the
	// post's authors, and its primary one to change CoAuthors
	// (ErrNotPostAuthor); empty for an admin.
	Actor string `json:"-"`
	// EditorID is who edits: the revision the edit keeps names them.
	EditorID string `json:"-"`

	// rendered is what Validate derived from Body, for UpdatePost.
	rendered *postItem
}

// SEOPatch changes a post's SEO fields. Nil fields are left unchanged;
// an empty one is unset, so the post's own field stands for it.
type SEOPatch struct {
	Title        *string
	Description  *string
	CanonicalURL *string
	OGImage      *string
	NoIndex      *bool
}

// PublishPost is the input of Publish. A zero At publishes now; a future At
// schedules the post. ExpectedVersion, when not zero, must equal the stored
// version.
type PublishPost struct {
	ID              string
	ExpectedVersion int64
	At              time.Time
	IdempotencyKey  string
	// SendNewsletter, when set, records whether the newsletter sends the
	// post when it goes live; nil keeps what the post has (sending, for
	// a post never published with false).
	SendNewsletter *bool
	// Actor, when set, is the author who writes, as in PostRef.
	Actor string `json:"-"`
}

// PostRef names a post for Unpublish and DeletePost. ExpectedVersion, when
// not zero, must equal the stored version.
type PostRef struct {
	ID              string
	ExpectedVersion int64
	IdempotencyKey  string
	// Actor, when set, is the author who writes, who must be one of the
	// post's authors (ErrNotPostAuthor); empty for an admin.
	Actor string `json:"-"`
}

// NewComment is the input of AddComment. ParentID, when set, names the
// top-level comment this one replies to. An author writes it when AuthorID
// names one; otherwise Reader does, and Rules apply.
type NewComment struct {
	PostID   string
	ParentID string
	AuthorID string
	Reader   *ReaderProfile
	Rules    ReaderRules
	Body     string
	// IdempotencyKey covers PostID, ParentID, Body and who writes; a
	// reader's changed profile or the rules do not make a retry another
	// request.
	IdempotencyKey string
}

// ReaderProfile is a reader as their token's claims show them. Name is
// kept as plain text of one line (names.go); an empty or invalid Name or
// AvatarURL, or a Name with nothing left, leaves what is stored (a new
// reader gets DefaultReaderName and no picture); a valid one replaces it.
type ReaderProfile struct {
	ID        string
	Name      string
	AvatarURL string
}

// ReaderRules are what applies to a comment that a reader adds.
type ReaderRules struct {
	// Hold keeps the comment PENDING until the post's author or an admin
	// approves it.
	Hold bool
	// PerMinute is the most comments the reader may add in any 60
	// seconds (ErrRateLimited beyond); zero means no limit.
	PerMinute int
	// Unchecked skips the rate limit and the duplicate check, for admins
	// whose subject is no author.
	Unchecked bool
	// HoldEdits makes the reader's edit of their published comment hold
	// it again, PENDING, until it is approved (UpdateComment).
	HoldEdits bool
}

// CommentEdit is the input of UpdateComment. Reader, when set, is the
// profile the editor's token gives; when they are the reader who wrote
// the comment, it is refreshed like AddComment does, and Rules.HoldEdits
// holds their edited comment again.
type CommentEdit struct {
	PostID         string
	CommentID      string
	Body           string
	Reader         *ReaderProfile
	Rules          ReaderRules
	IdempotencyKey string
}

// CommentRef names a comment for DeleteComment, ApproveComment and
// RejectComment.
type CommentRef struct {
	PostID         string
	CommentID      string
	IdempotencyKey string
	// OverturnRejection lets ApproveComment publish a rejected comment.
	OverturnRejection bool `json:",omitempty"`
}
