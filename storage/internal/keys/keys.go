package keys

import (
	"fmt"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The key attributes of the table and of its index GSI1.
const (
	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	IndexGSI1  = "GSI1"
)

// TimeLayout is the form of a time inside a key: fixed-width UTC, so
// string order is time order. Items store their times in it too.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time returns t as keys hold it (TimeLayout).
func Time(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime returns the time s holds in TimeLayout, or the zero time when
// s is empty or not one.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// The prefixes of the blog's keys.
const (
	PrefixAuthor      = "AUTHOR#"
	PrefixPost        = "POST#"
	PrefixCategory    = "CAT#"
	PrefixComment     = "COMMENT#"
	PrefixThread      = "THREAD#"
	PrefixSlug        = "SLUG#"
	PrefixDraft       = "DRAFT#"
	PrefixFeed        = "FEED#"
	PrefixIdempotency = "IDEMPOTENCY#"
	PrefixSecret      = "SECRET#"
	PrefixReader      = "READER#"
	PrefixHeld        = "HELD#"
	PrefixRate        = "RATE#"
	PrefixQueue       = "MODQ#"
	PrefixPersisted   = "PERSISTED#"
	// PrefixAuthorSlug is the namespace of authors' slugs: an author and
	// a post may have the same slug, as their URLs differ.
	PrefixAuthorSlug = "AUTHORSLUG#"
	PrefixSeries     = "SERIES#"
	PrefixRevision   = "REV#"
	PrefixPage       = "PAGE#"
	PrefixTag        = "TAG#"
)

// The fixed partitions of the blog's items and lists.
const (
	// FeedPartition is the GSI1 partition of the whole blog's feed: one,
	// as a blog publishes far below a partition's write limit.
	FeedPartition       = "FEED"
	AuthorsPartition    = "AUTHORS"
	CategoriesPartition = "CATEGORIES"
	StatsPartition      = "STATS"
	QueuePartition      = "MODQ"
	RendererPartition   = "RENDERER"
	FeaturedPartition   = "FEATURED"
	SeriesPartition     = "SERIES"
	PagesPartition      = "PAGES"
	PageDraftsPartition = "PAGEDRAFTS"
	SitePartition       = "SITE"
	TagsPartition       = "TAGS"

	// FeaturedSK is the sort key of a post's featured-list copy.
	FeaturedSK = "FEATURED"
)

// FeedPartitions are the GSI1 partitions of the publication's feed: one
// (FEED), whose reads are one Query.
func (s Space) FeedPartitions() []string { return []string{s.Partition(FeedPartition)} }

// AttrMonthPrefix starts the names of the attributes that count posts by
// month (MonthAttr).
const AttrMonthPrefix = "month#"

// MonthAttr is the attribute of an author, a category or STATS that counts
// its posts published in the month of publishedAt (a key time): one
// top-level attribute per month, which ADD creates when it is missing.
func MonthAttr(publishedAt string) string { return AttrMonthPrefix + publishedAt[:len("2006-01")] }

// Author is an author's item.
func (s Space) Author(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixAuthor + id, SK: PrefixAuthor + id}
}

// AuthorListSort orders an author in the AUTHORS list by creation time.
func AuthorListSort(createdAt time.Time, id string) string {
	return PrefixAuthor + Time(createdAt) + "#" + id
}

// AuthorSlug is the reservation of an author's slug.
func (s Space) AuthorSlug(slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixAuthorSlug + slug, SK: PrefixAuthorSlug + slug}
}

// Post is a post's item.
func (s Space) Post(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + id, SK: PrefixPost + id}
}

// The suffixes of the sort keys of a post's body and count items.
const (
	bodySuffix  = "#TEXT"
	countSuffix = "#COUNT"
)

// PostBody is the body item of a post.
func (s Space) PostBody(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + id, SK: PrefixPost + id + bodySuffix}
}

// PostCount is the count item of a post.
func (s Space) PostCount(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + id, SK: PrefixPost + id + countSuffix}
}

// PostParts are the keys of the post items a whole read takes, in key
// order: the post, its count item and its body item.
func (s Space) PostParts(id string) []dynamo.Key {
	return []dynamo.Key{s.Post(id), s.PostCount(id), s.PostBody(id)}
}

// PostRead are the keys of the post items a read takes: with body,
// PostParts; without, the post item and its count item alone, for a read
// that leaves the body alone (the body item of a long post is most of
// what the three cost).
func (s Space) PostRead(id string, body bool) []dynamo.Key {
	if body {
		return s.PostParts(id)
	}
	return []dynamo.Key{s.Post(id), s.PostCount(id)}
}

// PostSort orders a post by publish time inside author, category and
// feed partitions: "POST#<publishedAt>#<postId>".
func PostSort(publishedAt time.Time, id string) string {
	return PrefixPost + Time(publishedAt) + "#" + id
}

// AuthorCopy is the author→post copy of a published post.
func (s Space) AuthorCopy(authorID string, publishedAt time.Time, postID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixAuthor + authorID, SK: PostSort(publishedAt, postID)}
}

// CategoryCopy is the post-in-category copy of a published post.
func (s Space) CategoryCopy(postID, slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixCategory + slug}
}

// TagCopy is the post-in-tag copy of a published post.
func (s Space) TagCopy(postID, slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixTag + slug}
}

// FeaturedCopy is the featured-list copy of a published featured post.
func (s Space) FeaturedCopy(postID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: FeaturedSK}
}

// DraftPartition is the GSI1 partition of an author's drafts.
func (s Space) DraftPartition(authorID string) string { return s.prefix + PrefixDraft + authorID }

// DraftSort orders a draft in its author's drafts by creation time.
func DraftSort(createdAt time.Time, postID string) string {
	return PrefixDraft + Time(createdAt) + "#" + postID
}

// Revision is the revision n of a post: fixed width, so the newest sorts
// last.
func (s Space) Revision(postID string, n int64) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: fmt.Sprintf("%s%010d", PrefixRevision, n)}
}

// Category is a category's item.
func (s Space) Category(slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixCategory + slug, SK: PrefixCategory + slug}
}

// CategoryPartition is the GSI1 partition of a category's posts.
func (s Space) CategoryPartition(slug string) string { return s.prefix + PrefixCategory + slug }

// Tag is a tag's item.
func (s Space) Tag(slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixTag + slug, SK: PrefixTag + slug}
}

// TagPartition is the GSI1 partition of a tag's posts.
func (s Space) TagPartition(slug string) string { return s.prefix + PrefixTag + slug }

// Series is a series' item.
func (s Space) Series(slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixSeries + slug, SK: PrefixSeries + slug}
}

// Slug is the reservation of a post's or a page's slug.
func (s Space) Slug(slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixSlug + slug, SK: PrefixSlug + slug}
}

// Page is a static page's item.
func (s Space) Page(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPage + id, SK: PrefixPage + id}
}

// PageSort orders pages in GSI1 by order (five digits), then id
// (creation time: ids are UUIDv7).
func PageSort(order int, id string) string { return fmt.Sprintf("%s%05d#%s", PrefixPage, order, id) }

// Site is the site settings' item.
func (s Space) Site() dynamo.Key { return dynamo.Key{PK: s.prefix + SitePartition, SK: SitePartition} }

// Stats is the item of the blog-wide counts.
func (s Space) Stats() dynamo.Key {
	return dynamo.Key{PK: s.prefix + StatsPartition, SK: StatsPartition}
}

// Renderer is the renderer item: the version of the renderer the posts'
// HTML was made with.
func (s Space) Renderer() dynamo.Key {
	return dynamo.Key{PK: s.prefix + RendererPartition, SK: RendererPartition}
}

// Secret is a server key's item.
func Secret(name string) dynamo.Key {
	return dynamo.Key{PK: PrefixSecret + name, SK: PrefixSecret + name}
}

// Reader is where a reader's display name and picture are kept. Reader
// ids are token subjects, a namespace apart from author ids.
func Reader(id string) dynamo.Key {
	return dynamo.Key{PK: PrefixReader + id, SK: PrefixReader + id}
}

// Rate is where a reader's latest comments are counted.
func (s Space) Rate(readerID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixRate + PrefixReader + readerID, SK: PrefixRate + PrefixReader + readerID}
}

// Persisted is where the automatic persisted query of a SHA-256 hash (64
// hexadecimal digits) is kept.
func Persisted(hash string) dynamo.Key {
	return dynamo.Key{PK: PrefixPersisted + hash, SK: PrefixPersisted + hash}
}

// Idempotency is the record of the idempotency key k of the operation op.
func (s Space) Idempotency(op, k string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixIdempotency + op + "#" + k, SK: PrefixIdempotency + op + "#" + k}
}
