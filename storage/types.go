package storage

import (
	"time"
)

// The domain types the Store returns and takes besides inputs (inputs.go):
// plain values with no DynamoDB in them. Items as stored, and their
// conversions to these, are in items.go.

// PostStatus is the stored state of a post. A published post whose
// PublishedAt lies in the future is scheduled: see Post.StatusAt.
type PostStatus string

// Post states as stored.
const (
	StatusDraft     PostStatus = "DRAFT"
	StatusPublished PostStatus = "PUBLISHED"
	StatusScheduled PostStatus = "SCHEDULED"
)

// CategoryRef is the part of a category a post carries with it.
type CategoryRef struct {
	Slug string
	Name string
}

// Image is a picture shown with a post.
type Image struct {
	URL    string
	Alt    string // empty when the picture has no text alternative
	Width  int    // in pixels; 0 when unknown
	Height int    // in pixels; 0 when unknown
	// Media is the library's item the picture is; nil for a picture at an
	// external URL. A post's cover keeps its id, format, size and
	// dominant colour, not its placeholder.
	Media *Media
}

// SEO is what search engines and link previews show of a post when it
// differs from the post's own title, excerpt and cover image. Empty fields
// are unset.
type SEO struct {
	Title        string
	Description  string
	CanonicalURL string
	OGImage      string
	// NoIndex asks search engines not to index the page (robots
	// noindex).
	NoIndex bool
}

// Heading is one entry of a post's table of contents.
type Heading struct {
	Level  int    // 1 to 6
	Text   string // the heading as plain text
	Anchor string // the id of the heading in BodyHTML
}

// Post is a blog post. A post read from a list comes from a denormalized
// copy that has no body, rendered body, table of contents or SEO fields;
// Summary is true then and those are empty.
type Post struct {
	ID      string
	Slug    string
	Title   string
	Excerpt string // as written, or derived from the body when none was
	Body    string
	// BodyHTML and TOC are derived from Body when it is written. They are
	// left out of idempotency records and derived again on a replay.
	BodyHTML       string    `json:"-"`
	TOC            []Heading `json:"-"`
	WordCount      int
	ReadingMinutes int
	CoverImage     *Image // nil when the post has none
	SEO            SEO
	Status         PostStatus // StatusDraft or StatusPublished
	AuthorID       string
	AuthorName     string
	AuthorSlug     string // empty in items written before authors had slugs
	Categories     []CategoryRef
	CreatedAt      time.Time
	UpdatedAt      time.Time
	PublishedAt    time.Time // zero for drafts
	Version        int64
	CommentCount   int64 // comments that are not deleted, replies included
	ThreadCount    int64 // top-level comments, tombstones included
	Summary        bool
	// BodyUnread says that Body, BodyHTML and TOC were not read (the
	// post's body item, GetPostWithoutBody): GetPosts reads them.
	BodyUnread bool
	// CoAuthors are the post's authors after its primary one (AuthorID),
	// in order; empty for a post of one author.
	CoAuthors []AuthorRef
	// Tags are the post's tags, in the order given.
	Tags []TagRef
	// Featured puts a published post on the featured list; Series is the
	// slug of the series it is in (empty: none), which summaries lack.
	Featured bool
	Series   string
	// Revisions counts the revisions the post has kept, the last
	// MaxRevisions of which are kept; summaries lack it.
	Revisions int64
	// Locale is the post's BCP 47 locale, canonical; empty for a post
	// written without one while the site had no locale, which reads as
	// the site's default. TranslationGroup is the group of translations
	// the post is in (empty: none); summaries lack it.
	Locale           string
	TranslationGroup string
	// Visibility says who may read the body: everyone, or members.
	Visibility Visibility
	// NoNewsletter says the post was published (or scheduled) choosing
	// not to send it to the newsletter's members.
	NoNewsletter bool
}

// StatusAt returns the status a reader sees at now: a published post with a
// future PublishedAt is StatusScheduled.
func (p *Post) StatusAt(now time.Time) PostStatus {
	if p.Status == StatusPublished && p.PublishedAt.After(now) {
		return StatusScheduled
	}
	return p.Status
}

// VisibleAt reports whether the public may read the post at now.
func (p *Post) VisibleAt(now time.Time) bool {
	return p.StatusAt(now) == StatusPublished
}

// Author writes posts and comments.
type Author struct {
	ID        string
	Slug      string // empty for an author written before authors had slugs
	Name      string
	Bio       string
	AvatarURL string
	// Avatar is the avatar from the media library, nil when AvatarURL is
	// external or empty.
	Avatar    *Image
	CreatedAt time.Time
	UpdatedAt time.Time
	PostCount int64 // published posts whose time has come
	// ScheduledCount is the author's published posts whose time has not
	// come yet, which only they and admins see.
	ScheduledCount int64
	Version        int64
	// Archive counts the author's posts whose time has come by month,
	// newest first.
	Archive []ArchiveMonth
	// The author's profile: their website, where they are, their
	// accounts elsewhere (empty when not given).
	Website  string
	Location string
	Social   []SocialAccount
}

// Category groups posts. Its slug is its id.
type Category struct {
	Slug        string
	Name        string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	PostCount   int64 // published posts whose time has come
	Version     int64
	// Archive counts the category's posts whose time has come by month,
	// newest first.
	Archive []ArchiveMonth
}

// ArchiveMonth is the number of posts published in one month, in UTC.
type ArchiveMonth struct {
	Year      int
	Month     time.Month
	PostCount int64
}

// Start returns the first instant of the month.
func (m ArchiveMonth) Start() time.Time { return time.Date(m.Year, m.Month, 1, 0, 0, 0, 0, time.UTC) }

// End returns the first instant of the next month.
func (m ArchiveMonth) End() time.Time { return m.Start().AddDate(0, 1, 0) }

// Stats are blog-wide counts kept in the same transactions that change them.
type Stats struct {
	PostCount     int64 // published posts whose time has come
	AuthorCount   int64
	CategoryCount int64
	PageCount     int64 // published static pages
	// Archive counts the posts whose time has come by month, newest first.
	Archive []ArchiveMonth
}

// CommentStatus is where a comment stands in moderation.
type CommentStatus string

// Comment states. Only published comments are in lists and counts.
const (
	CommentPublished CommentStatus = "PUBLISHED"
	CommentPending   CommentStatus = "PENDING"
	CommentRejected  CommentStatus = "REJECTED"
)

// Comment is a comment on a post, or a reply to a top-level comment,
// written by an author (AuthorID) or a reader (ReaderID), never both. A
// deleted comment that has replies stays as a tombstone: Deleted is true
// and Body is empty.
type Comment struct {
	ID        string
	PostID    string
	ParentID  string // empty for a top-level comment
	AuthorID  string // the author who wrote it, or empty
	ReaderID  string // the reader who wrote it, or empty
	Body      string
	CreatedAt time.Time
	EditedAt  time.Time // zero when the text never changed
	Status    CommentStatus
	Deleted   bool
	// ReplyCount is the number of published replies.
	ReplyCount int64
	// Replies are the first published replies, oldest first: all of them
	// up to MaxReplyPage. ReplyPage pages through the rest.
	Replies []*Comment
	// repliesKnown is false for a top-level comment with replies written
	// before comments carried them: ReplyPage reads its replies then.
	repliesKnown bool
}

// Writer returns who wrote the comment.
func (c *Comment) Writer() Writer { return Writer{AuthorID: c.AuthorID, ReaderID: c.ReaderID} }

// CommentKey names a comment.
type CommentKey struct {
	PostID    string
	CommentID string
}

// Writer names who wrote a comment: an author or a reader. Reader ids are
// token subjects, a namespace apart from author ids.
type Writer struct {
	AuthorID string
	ReaderID string
}

// Reader is a signed-in person who is not an author, as their comments
// show them. Name and AvatarURL come from their token's claims.
type Reader struct {
	ID        string
	Name      string
	AvatarURL string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Commenter is who wrote a comment: Author or Reader is set.
type Commenter struct {
	Author *Author
	Reader *Reader
}

// PageArgs asks for one page of a list, as a Relay connection's arguments do:
// the first Limit items after the opaque cursor After (empty: from the
// start), or with Backward the last Limit items before the cursor Before
// (empty: up to the end). After goes with a forward page and Before with
// a backward one; the other is an invalid input.
type PageArgs struct {
	Limit    int
	After    string
	Before   string
	Backward bool
}

// Result is one page of a list, in the list's order whichever way it was
// read. Cursors[i] is the opaque cursor of Items[i]; passing it as
// PageArgs.After continues after that item, as PageArgs.Before before it. HasNext
// tells whether items follow the page, HasPrev whether items precede it:
// what the page's direction read ahead, and for the other side whether
// the page started from a cursor.
type Result[T any] struct {
	Items   []T
	Cursors []string
	HasNext bool
	HasPrev bool
}

// Period bounds a list of posts by publication time: From (inclusive)
// and To (exclusive), each unbounded when zero. Months of ArchiveMonth are
// periods from Start to End.
type Period struct {
	From time.Time
	To   time.Time
}

// Migration is what Migrate did.
type Migration struct {
	// From is the table's layout version before, To after.
	From, To int
	// Authors got slugs; Posts were written in the current layout with
	// their copies and counted by month; Comments got versions, or their
	// first replies to carry; Counters (authors, categories, STATS) lost
	// the "-" entry of their scheduled map or an empty string attribute.
	Authors, Posts, Comments, Counters int
	// Scheduled posts, written before posts had a go-live marker, got
	// theirs and their schedule item.
	Scheduled int
	// Split posts got their body item and count item, and left the
	// feed's four old partitions for FEED (layout 4).
	Split int
	// Moved items went under the prefix of the publication the table's
	// blog became (layout 5).
	Moved int
	// Unrendered are the ids of posts whose body renders to more HTML than
	// a post may hold (MaxHTMLBytes): they were migrated without it, and
	// show it once their body is edited.
	Unrendered []string
}

// AuthorRef is the part of an author a post carries with it: enough for
// a byline that links to the author's page.
type AuthorRef struct {
	ID   string
	Name string
	Slug string
}

// TagRef is the part of a tag a post carries with it.
type TagRef struct {
	Slug string
	Name string
}

// SocialAccount is one of the blog's accounts elsewhere.
type SocialAccount struct {
	Network string // as shown: "Mastodon", "GitHub"
	URL     string
}
