package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/keys"
)

// Item shapes as stored. Times are stored as fixed-width UTC strings
// (keys.TimeLayout), the same form the sort keys use.

const (
	typeAuthor       = "author"
	typeCategory     = "category"
	typePost         = "post"
	typeAuthorPost   = "authorPost"
	typeCategoryPost = "categoryPost"
	typeComment      = "comment"
	typeSlug         = "slug"
	typeAuthorSlug   = "authorSlug"
	typeStats        = "stats"
	typeIdempotency  = "idempotency"
	typePersisted    = "persistedQuery"
	typeSecret       = "secret"
	typeReader       = "reader"
	typeRate         = "rate"
	typeQueued       = "queuedComment"
	typeLayout       = "layout"
	// typePublication is a publication's directory item (global).
	typePublication  = "publication"
	typeSchedule     = "schedule"
	typeRenderer     = "renderer"
	typeWebhook      = "webhook"
	typeWebhookCount = "webhookCount"
	typeOutbox       = "outbox"
	typeDelivery     = "delivery"
	// Featured posts, series and revisions (featured.go, series.go,
	// revisions.go).
	typeFeaturedPost = "featuredPost"
	typeSeries       = "series"
	typeRevision     = "revision"
	// A post's body and count items (postparts.go).
	typePostBody  = "postBody"
	typePostCount = "postCount"
)

type authorItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	Name      string `dynamodbav:"name"`
	Bio       string `dynamodbav:"bio,omitempty"`
	AvatarURL string `dynamodbav:"avatarUrl,omitempty"`
	// Avatar is the avatar from the media library (mediaowners.go);
	// AvatarURL is then its URL.
	Avatar    *imageItem `dynamodbav:"avatar,omitempty"`
	CreatedAt string     `dynamodbav:"createdAt"`
	UpdatedAt string     `dynamodbav:"updatedAt"`
	PostCount int64      `dynamodbav:"postCount"`
	Version   int64      `dynamodbav:"version"`
	// NameVer counts renames and slug changes; post items and copies carry
	// the NameVer of the name and slug they hold. RenamedVer is the
	// NameVer that has reached every post (markRenamed).
	NameVer    int64 `dynamodbav:"nameVer"`
	RenamedVer int64 `dynamodbav:"renamedVer,omitempty"`
	// Slug is the author's current slug; Slugs is every slug the author
	// holds, the current one first, then its redirects, newest first (see
	// slugHistory).
	Slug  string   `dynamodbav:"slug,omitempty"`
	Slugs []string `dynamodbav:"slugs,omitempty"`
	// The author's profile (site.go's SocialAccount for Social).
	Website   string       `dynamodbav:"website,omitempty"`
	Location  string       `dynamodbav:"location,omitempty"`
	Social    []socialItem `dynamodbav:"social,omitempty"`
	Scheduled schedule     `dynamodbav:"-"`
	Months    months       `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes the item, its scheduled-post
// entries and its counts by month.
func (it *authorItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain authorItem
	var err error
	it.Scheduled, it.Months, err = decodeCounter(av, (*plain)(it))
	return err
}

func newAuthorItem(ks keys.Space, a *Author) authorItem {
	k := ks.Author(a.ID)
	return authorItem{
		PK: k.PK, SK: k.SK,
		GSI1PK: ks.Partition(keys.AuthorsPartition), GSI1SK: keys.AuthorListSort(a.CreatedAt, a.ID),
		Type: typeAuthor, ID: a.ID, Name: a.Name, Bio: a.Bio, AvatarURL: a.AvatarURL,
		CreatedAt: keys.Time(a.CreatedAt), UpdatedAt: keys.Time(a.UpdatedAt),
		PostCount: a.PostCount, Version: a.Version, Slug: a.Slug, Slugs: []string{a.Slug},
		Website: a.Website, Location: a.Location, Social: socialItems(a.Social),
	}
}

// author returns the author as a reader sees it at now.
func (it *authorItem) author(now string) *Author {
	a := &Author{
		ID: it.ID, Slug: it.Slug, Name: it.Name, Bio: it.Bio, AvatarURL: it.AvatarURL,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
		Version: it.Version, Archive: it.Months.archive(it.Scheduled, now),
		Website: it.Website, Location: it.Location,
	}
	for _, s := range it.Social {
		a.Social = append(a.Social, SocialAccount(s))
	}
	if it.Avatar != nil {
		a.Avatar = it.Avatar.image()
	}
	a.PostCount, a.ScheduledCount = it.Scheduled.split(it.PostCount, now)
	return a
}

type categoryItem struct {
	PK          string   `dynamodbav:"PK"`
	SK          string   `dynamodbav:"SK"`
	GSI1PK      string   `dynamodbav:"GSI1PK"`
	GSI1SK      string   `dynamodbav:"GSI1SK"`
	Type        string   `dynamodbav:"type"`
	Slug        string   `dynamodbav:"slug"`
	Name        string   `dynamodbav:"name"`
	Description string   `dynamodbav:"description,omitempty"`
	CreatedAt   string   `dynamodbav:"createdAt"`
	UpdatedAt   string   `dynamodbav:"updatedAt"`
	PostCount   int64    `dynamodbav:"postCount"`
	Version     int64    `dynamodbav:"version"`
	NameVer     int64    `dynamodbav:"nameVer"`
	RenamedVer  int64    `dynamodbav:"renamedVer,omitempty"`
	Scheduled   schedule `dynamodbav:"-"`
	Months      months   `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes the item, its scheduled-post
// entries and its counts by month.
func (it *categoryItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain categoryItem
	var err error
	it.Scheduled, it.Months, err = decodeCounter(av, (*plain)(it))
	return err
}

func newCategoryItem(ks keys.Space, c *Category) categoryItem {
	k := ks.Category(c.Slug)
	return categoryItem{
		PK: k.PK, SK: k.SK,
		GSI1PK: ks.Partition(keys.CategoriesPartition), GSI1SK: k.SK,
		Type: typeCategory, Slug: c.Slug, Name: c.Name, Description: c.Description,
		CreatedAt: keys.Time(c.CreatedAt), UpdatedAt: keys.Time(c.UpdatedAt),
		PostCount: c.PostCount, Version: c.Version,
	}
}

// category returns the category as a reader sees it at now.
func (it *categoryItem) category(now string) *Category {
	c := &Category{
		Slug: it.Slug, Name: it.Name, Description: it.Description,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
		Version: it.Version, Archive: it.Months.archive(it.Scheduled, now),
	}
	c.PostCount, _ = it.Scheduled.split(it.PostCount, now)
	return c
}

type catRef struct {
	Slug string `dynamodbav:"slug"`
	Name string `dynamodbav:"name"`
}

// postItem is the post itself and, without the fields only the post item
// has (see summary), each of its denormalized copies. AuthorVer and CatVer
// record the versions of the author and categories whose names the item
// carries, so a rename never overwrites a newer name with an older one.
type postItem struct {
	PK           string           `dynamodbav:"PK"`
	SK           string           `dynamodbav:"SK"`
	GSI1PK       string           `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK       string           `dynamodbav:"GSI1SK,omitempty"`
	Type         string           `dynamodbav:"type"`
	ID           string           `dynamodbav:"id"`
	Slug         string           `dynamodbav:"slug"`
	Title        string           `dynamodbav:"title"`
	Excerpt      string           `dynamodbav:"excerpt,omitempty"`
	Body         string           `dynamodbav:"body,omitempty"`
	Status       string           `dynamodbav:"status"`
	AuthorID     string           `dynamodbav:"authorId"`
	AuthorName   string           `dynamodbav:"authorName"`
	AuthorSlug   string           `dynamodbav:"authorSlug,omitempty"`
	AuthorVer    int64            `dynamodbav:"authorVer"`
	Cats         []catRef         `dynamodbav:"cats,omitempty"`
	CatVer       map[string]int64 `dynamodbav:"catVer,omitempty"`
	CreatedAt    string           `dynamodbav:"createdAt"`
	UpdatedAt    string           `dynamodbav:"updatedAt"`
	PublishedAt  string           `dynamodbav:"publishedAt,omitempty"`
	Version      int64            `dynamodbav:"version"`
	CommentCount int64            `dynamodbav:"commentCount"`
	ThreadCount  int64            `dynamodbav:"threadCount,omitempty"`

	// Derived from Body when it is written (derive); AutoExcerpt is what
	// readers see when Excerpt is empty.
	AutoExcerpt string     `dynamodbav:"autoExcerpt,omitempty"`
	Words       int        `dynamodbav:"words,omitempty"`
	Minutes     int        `dynamodbav:"minutes,omitempty"`
	HTML        string     `dynamodbav:"bodyHtml,omitempty"`
	TOC         []tocEntry `dynamodbav:"toc,omitempty"`
	// RenderVersion names the renderer that derived them
	// (markdown.Options.Version); only the post item has it.
	RenderVersion string `dynamodbav:"renderVersion,omitempty"`

	Cover *imageItem `dynamodbav:"cover,omitempty"`
	SEO   *seoItem   `dynamodbav:"seo,omitempty"`
	// Slugs is every slug the post holds: the current one first, then its
	// redirects, newest first (see slugHistory).
	Slugs []string `dynamodbav:"slugs,omitempty"`
	// GoLiveAt marks a scheduled post: its publishedAt, until the post
	// goes live (schedule.go). Only the post item has it.
	GoLiveAt string `dynamodbav:"goLiveAt,omitempty"`

	// CoAuthors are the post's authors after its primary one (AuthorID),
	// in order, with the names and slugs it copies, and CoAuthorVer the
	// nameVer of each (coauthors.go); absent for a post of one author.
	CoAuthors   []authorRef      `dynamodbav:"coAuthors,omitempty"`
	CoAuthorVer map[string]int64 `dynamodbav:"coAuthorVer,omitempty"`
	// Tags are the post's tags with the names it copies, and TagVer the
	// nameVer of each (tags.go); absent for a post without tags.
	Tags   []catRef         `dynamodbav:"tags,omitempty"`
	TagVer map[string]int64 `dynamodbav:"tagVer,omitempty"`
	// Featured puts the post on the featured list (featured.go): a
	// published featured post has one more copy, FEATURED.
	Featured bool `dynamodbav:"featured,omitempty"`
	// Series is the slug of the series the post is in (series.go); only
	// the post item has it. Revisions counts the revisions the post has
	// kept (revisions.go): the newest is REV#<revisions>.
	Series    string `dynamodbav:"series,omitempty"`
	Revisions int64  `dynamodbav:"revisions,omitempty"`
	// Locale is the post's BCP 47 locale, canonical (locales.go); empty
	// for a post written before posts had one. TransGroup is the group of
	// translations the post is in (translations.go) and TransVer counts
	// the changes of its membership: every write of the post item is
	// conditioned on it, so a link and an edit never overwrite each
	// other. Only the post item has them.
	Locale     string `dynamodbav:"locale,omitempty"`
	TransGroup string `dynamodbav:"transGroup,omitempty"`
	TransVer   int64  `dynamodbav:"transVer,omitempty"`
	// Visibility is MEMBERS for a members-only post, on the post and
	// every copy; absent for a public one (members.go).
	Visibility string `dynamodbav:"visibility,omitempty"`
	// NoNewsletter records a publish that chose not to send the post to
	// the newsletter's members (newsletter.go); only the post item has it.
	NoNewsletter bool `dynamodbav:"noNewsletter,omitempty"`

	// BodySum and HTMLSum are sums of the body and its HTML, which the
	// body item holds (postparts.go): the post item changes with them,
	// so the change feed sees an edit of the body. Only the post item
	// has them.
	BodySum string `dynamodbav:"bodySum,omitempty"`
	HTMLSum string `dynamodbav:"htmlSum,omitempty"`

	// hasBody says the body item was read into Body, HTML and TOC;
	// bodyUnread that it was not read, by a read that leaves the body
	// alone (postparts.go), of a post item that does not hold its body
	// itself; counts is the count item as read (nil when it was not, or
	// is missing).
	hasBody    bool
	bodyUnread bool
	counts     *countItem
}

type imageItem struct {
	URL    string `dynamodbav:"url"`
	Alt    string `dynamodbav:"alt,omitempty"`
	Width  int    `dynamodbav:"width,omitempty"`
	Height int    `dynamodbav:"height,omitempty"`
	// Media is what the picture's srcset and sizes are made of when it is
	// an item of the media library; absent for one at an external URL.
	// The placeholder (up to 2 KB) is left out: the post and each of its
	// copies carry the cover.
	Media *imageMediaItem `dynamodbav:"media,omitempty"`
}

type imageMediaItem struct {
	ID            string `dynamodbav:"id"`
	Format        string `dynamodbav:"format"`
	Width         int    `dynamodbav:"width"`
	Height        int    `dynamodbav:"height"`
	Frames        int    `dynamodbav:"frames,omitempty"`
	DominantColor string `dynamodbav:"dominantColor,omitempty"`
	// Placeholder is kept for an avatar, a logo and an icon, which are
	// not copied; never for a cover.
	Placeholder string `dynamodbav:"placeholder,omitempty"`
}

// image returns the picture it is.
func (it *imageItem) image() *Image {
	img := &Image{URL: it.URL, Alt: it.Alt, Width: it.Width, Height: it.Height}
	if m := it.Media; m != nil {
		img.Media = &Media{ID: m.ID, Format: m.Format, Width: m.Width, Height: m.Height, Frames: m.Frames, DominantColor: m.DominantColor,
			Placeholder: m.Placeholder, Alt: it.Alt}
	}
	return img
}

// seoItem is never empty: a post without SEO fields has none (nil), as
// an empty map is not something every engine keeps.
type seoItem struct {
	Title        string `dynamodbav:"title,omitempty"`
	Description  string `dynamodbav:"description,omitempty"`
	CanonicalURL string `dynamodbav:"canonicalUrl,omitempty"`
	OGImage      string `dynamodbav:"ogImage,omitempty"`
	NoIndex      bool   `dynamodbav:"noindex,omitempty"`
}

type tocEntry struct {
	Level  int    `dynamodbav:"level"`
	Text   string `dynamodbav:"text"`
	Anchor string `dynamodbav:"anchor"`
}

func (it *postItem) post() *Post {
	p := &Post{
		ID: it.ID, Slug: it.Slug, Title: it.Title, Excerpt: it.Excerpt, Body: it.Body,
		BodyHTML: it.HTML, WordCount: it.Words, ReadingMinutes: it.Minutes,
		Status: PostStatus(it.Status), AuthorID: it.AuthorID, AuthorName: it.AuthorName, AuthorSlug: it.AuthorSlug,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
		PublishedAt: keys.ParseTime(it.PublishedAt), Version: it.Version,
		CommentCount: it.CommentCount, ThreadCount: it.ThreadCount,
		// A post item read without its body item is a summary too: the
		// body item holds what only a full post has beside it. One read
		// without it on purpose (bodyUnread) is whole but for the body.
		Summary: it.Type != typePost || !it.hasBody && !it.bodyUnread && it.Body == "", BodyUnread: it.Type == typePost && it.bodyUnread,
		Featured: it.Featured, Series: it.Series, Revisions: it.Revisions,
		Locale: it.Locale, TranslationGroup: it.TransGroup,
		Visibility: VisibilityPublic, NoNewsletter: it.NoNewsletter,
	}
	if it.Visibility != "" {
		p.Visibility = Visibility(it.Visibility)
	}
	if p.Excerpt == "" {
		p.Excerpt = it.AutoExcerpt
	}
	if it.Cover != nil {
		p.CoverImage = it.Cover.image()
	}
	if it.SEO != nil {
		p.SEO = SEO(*it.SEO)
	}
	if len(it.TOC) > 0 {
		p.TOC = make([]Heading, len(it.TOC))
		for i, h := range it.TOC {
			p.TOC[i] = Heading(h)
		}
	}
	p.Categories = make([]CategoryRef, len(it.Cats))
	for i, c := range it.Cats {
		p.Categories[i] = CategoryRef(c)
	}
	if it.counts != nil {
		// The count item's counts are exact; the post item's are those
		// of its summaries.
		p.CommentCount, p.ThreadCount = it.counts.CommentCount, it.counts.ThreadCount
	}
	it.setCoAuthorsAndTags(p)
	return p
}

// derive sets what is derived from the body, rendered with opts: the
// rendered HTML, the table of contents, the word count and reading time,
// and the excerpt shown when none was written. It fails with a
// *ValidationError when the body renders to more HTML than
// markdown.MaxHTMLBytes or passes another of package markdown's limits,
// and with ctx's error when ctx ends first (the rendering stops then).
func (it *postItem) derive(ctx context.Context, opts markdown.Options) error {
	doc, err := markdown.Render(ctx, it.Body, opts)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("render body: %w", err)
	case errors.Is(err, markdown.ErrTooLarge):
		return invalid("body", "%v; shorten it", err)
	case isUnknownImage(err):
		return invalid("body", "%v; upload it first, or link to it by URL", err)
	case err != nil:
		return invalid("body", "%v; simplify it", err)
	}
	it.HTML, it.Words, it.Minutes, it.AutoExcerpt = doc.HTML, doc.Words, doc.ReadingMinutes, doc.Excerpt
	it.RenderVersion = opts.Version()
	it.TOC = nil
	for _, h := range doc.TOC {
		it.TOC = append(it.TOC, tocEntry(h))
	}
	return nil
}

// restore derives again what an idempotency record leaves out of a post;
// it fails only when ctx ends first.
func (p *Post) restore(ctx context.Context, s *Store) error {
	if p.Summary || p.Body == "" {
		return nil
	}
	it := postItem{Body: p.Body}
	switch err := s.deriveBody(ctx, &it, false); {
	case err == nil:
		p.BodyHTML, p.TOC = it.HTML, it.post().TOC
	case !errors.Is(err, ErrInvalidInput):
		return err
	}
	return nil
}

// catSlugs returns the slugs of the post's categories, in order.
func (it *postItem) catSlugs() []string {
	out := make([]string, len(it.Cats))
	for i, c := range it.Cats {
		out[i] = c.Slug
	}
	return out
}

func (it *postItem) published() bool { return it != nil && it.Status == string(StatusPublished) }

func (it *postItem) publishedAt() time.Time { return keys.ParseTime(it.PublishedAt) }

// publicAt is what the post's current slug records of it
// (slugItem.PublicAt): its publishedAt while published, else "".
func (it *postItem) publicAt() string {
	if !it.published() {
		return ""
	}
	return it.PublishedAt
}

// withPostKeys returns the post item with its own key and the GSI1 entry
// that lists it: the feed when published, its author's drafts when not.
func (it postItem) withPostKeys(ks keys.Space) postItem {
	k := ks.Post(it.ID)
	it.PK, it.SK, it.Type = k.PK, k.SK, typePost
	if it.published() {
		it.GSI1PK, it.GSI1SK = ks.Partition(keys.FeedPartition), keys.PostSort(it.publishedAt(), it.ID)
	} else {
		it.GSI1PK, it.GSI1SK = ks.DraftPartition(it.AuthorID), keys.DraftSort(keys.ParseTime(it.CreatedAt), it.ID)
	}
	return it
}

// summary returns the item without what only the post item carries: the
// body, the rendered body and table of contents, the SEO fields, the
// slugs, the thread count and the go-live marker.
func (it postItem) summary() postItem {
	it.Body, it.HTML, it.TOC, it.SEO, it.Slugs, it.ThreadCount, it.GoLiveAt = "", "", nil, nil, nil, 0, ""
	it.RenderVersion, it.BodySum, it.HTMLSum = "", "", ""
	it.Series, it.Revisions, it.NoNewsletter = "", 0, false
	it.TransGroup, it.TransVer = "", 0
	it.hasBody, it.bodyUnread, it.counts = false, false, nil
	return it
}

// authorCopy returns the author→post copy of a published post in its
// primary author's partition.
func (it postItem) authorCopy(ks keys.Space) postItem { return it.authorCopyOf(ks, it.AuthorID) }

// authorCopyOf returns the author→post copy of a published post in the
// partition of its author authorID, the primary one or a co-author; a
// post with a locale has it in GSI1 too, in the author's list of that
// locale (locales.go).
func (it postItem) authorCopyOf(ks keys.Space, authorID string) postItem {
	k := ks.AuthorCopy(authorID, it.publishedAt(), it.ID)
	it = it.summary()
	it.PK, it.SK, it.Type, it.GSI1PK, it.GSI1SK = k.PK, k.SK, typeAuthorPost, "", ""
	if it.Locale != "" {
		it.GSI1PK, it.GSI1SK = ks.LocaleAuthorPartition(it.Locale, authorID), keys.PostSort(it.publishedAt(), it.ID)
	}
	return it
}

// categoryCopy returns the post-in-category copy of a published post.
func (it postItem) categoryCopy(ks keys.Space, slug string) postItem {
	k := ks.CategoryCopy(it.ID, slug)
	it = it.summary()
	it.PK, it.SK, it.Type = k.PK, k.SK, typeCategoryPost
	it.GSI1PK, it.GSI1SK = ks.CategoryPartition(slug), keys.PostSort(it.publishedAt(), it.ID)
	return it
}

// copyKeys returns the keys of every denormalized copy the post has in
// this state: none for a draft.
func (it *postItem) copyKeys(ks keys.Space) []key {
	if !it.published() {
		return nil
	}
	var out []key
	for _, id := range it.authorIDs() {
		out = append(out, ks.AuthorCopy(id, it.publishedAt(), it.ID))
	}
	for _, c := range it.Cats {
		out = append(out, ks.CategoryCopy(it.ID, c.Slug))
	}
	for _, t := range it.Tags {
		out = append(out, ks.TagCopy(it.ID, t.Slug))
	}
	if it.Featured {
		out = append(out, ks.FeaturedCopy(it.ID))
	}
	if it.Locale != "" {
		out = append(out, ks.LocaleCopy(it.ID, it.Locale))
		for _, c := range it.Cats {
			out = append(out, ks.LocaleCategoryCopy(it.ID, c.Slug))
		}
		for _, t := range it.Tags {
			out = append(out, ks.LocaleTagCopy(it.ID, t.Slug))
		}
	}
	return out
}

// readerItem is a reader's display name and picture, as their token's
// claims last gave them.
type readerItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	Name      string `dynamodbav:"name"`
	AvatarURL string `dynamodbav:"avatarUrl,omitempty"`
	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`
}

// rateItem counts a reader's latest comments: Recent holds one entry
// "<createdAt>#<hash>" per comment of the last minute, oldest first, where
// hash identifies the post, parent and text (see commentHash). It expires
// (TTL on expiresAt) a minute after the last comment.
type rateItem struct {
	PK        string   `dynamodbav:"PK"`
	SK        string   `dynamodbav:"SK"`
	Type      string   `dynamodbav:"type"`
	Recent    []string `dynamodbav:"recent"`
	Version   int64    `dynamodbav:"version"`
	ExpiresAt int64    `dynamodbav:"expiresAt"`
}

// slugItem reserves a post's slug: its current one, or with Redirect one
// it held before and still answers to.
type slugItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	PostID string `dynamodbav:"postId,omitempty"`
	// PageID names the holder when it is a page (pages.go): pages and
	// posts share one namespace, and each reservation names one of them.
	PageID   string `dynamodbav:"pageId,omitempty"`
	Redirect bool   `dynamodbav:"redirect,omitempty"`
	// PrevPostID is the post whose redirect a draft took: readers who
	// cannot see the draft are led to it as before (PostSlugOf).
	PrevPostID string `dynamodbav:"prevPostId,omitempty"`
	// PublicAt is, on a post's current slug, its publishedAt while it is
	// published (live or scheduled), written in the transaction that
	// changes either: a reader by slug knows from it that the post is
	// public before reading it (PostSlugOf). Absent otherwise, and on
	// reservations written before it was kept.
	PublicAt string `dynamodbav:"publicAt,omitempty"`
}

// authorSlugItem reserves an author's slug, current or, with Redirect,
// one the author held before.
type authorSlugItem struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Type     string `dynamodbav:"type"`
	AuthorID string `dynamodbav:"authorId"`
	Redirect bool   `dynamodbav:"redirect,omitempty"`
}

type statsItem struct {
	PostCount     int64 `dynamodbav:"postCount"`
	AuthorCount   int64 `dynamodbav:"authorCount"`
	CategoryCount int64 `dynamodbav:"categoryCount"`
	// PageCount counts published static pages (pages.go).
	PageCount int64    `dynamodbav:"pageCount,omitempty"`
	Scheduled schedule `dynamodbav:"-"`
	Months    months   `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes the item, its scheduled-post
// entries and its counts by month.
func (it *statsItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain statsItem
	var err error
	it.Scheduled, it.Months, err = decodeCounter(av, (*plain)(it))
	return err
}

// authorRef is an AuthorRef as stored.
type authorRef struct {
	ID   string `dynamodbav:"id"`
	Name string `dynamodbav:"name"`
	Slug string `dynamodbav:"slug,omitempty"`
}

// authorIDs returns the ids of the post's authors, its primary one first.
func (it *postItem) authorIDs() []string {
	ids := []string{it.AuthorID}
	for _, a := range it.CoAuthors {
		ids = append(ids, a.ID)
	}
	return ids
}

// setCoAuthorsAndTags copies the co-authors and tags of the item into p.
func (it *postItem) setCoAuthorsAndTags(p *Post) {
	for _, a := range it.CoAuthors {
		p.CoAuthors = append(p.CoAuthors, AuthorRef(a))
	}
	for _, t := range it.Tags {
		p.Tags = append(p.Tags, TagRef(t))
	}
}

type socialItem struct {
	Network string `dynamodbav:"network"`
	URL     string `dynamodbav:"url"`
}

func socialItems(accounts []SocialAccount) []socialItem {
	var out []socialItem
	for _, a := range accounts {
		out = append(out, socialItem(a))
	}
	return out
}
