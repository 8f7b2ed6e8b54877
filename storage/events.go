package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/keys"
)

// The change feed's translation: one stream record of the table in, the
// domain events it means out. It reads only the items that are the truth
// (a post's item, a comment's item, an author's, a category's), never
// copies, counters, slug reservations, idempotency or rate items, and it
// is a pure function of the record, so the same code runs in the server's
// dispatcher and in an AWS Lambda on the stream. doc.go (Change feed)
// lists the events and the cache tags.

// EventType names what happened, as webhooks send it.
type EventType string

// The events of the change feed. See doc.go (Change feed) for when each
// is emitted.
const (
	EventPostPublished   EventType = "post.published"
	EventPostEdited      EventType = "post.published.edited"
	EventPostUnpublished EventType = "post.unpublished"
	EventPostScheduled   EventType = "post.scheduled"
	EventPostRescheduled EventType = "post.rescheduled"
	EventPostUnscheduled EventType = "post.unscheduled"
	EventPostDeleted     EventType = "post.deleted"
	// EventPostCountsUpdated: a published post's comment counts changed
	// on its post item, the feed's entry, which the counts worker updates
	// after its copies (countsync.go).
	EventPostCountsUpdated EventType = "post.counts.updated"
	EventAuthorUpdated     EventType = "author.updated"
	EventCategoryUpdated   EventType = "category.updated"
	EventTagUpdated        EventType = "tag.updated"
	EventCommentAdded      EventType = "comment.added"
	EventCommentEdited     EventType = "comment.edited"
	EventCommentPending    EventType = "comment.pending"
	EventCommentApproved   EventType = "comment.approved"
	EventCommentRejected   EventType = "comment.rejected"
	EventCommentDeleted    EventType = "comment.deleted"
	// Pages and the site's settings (pages.go, site.go).
	EventPagePublished   EventType = "page.published"
	EventPageEdited      EventType = "page.published.edited"
	EventPageUnpublished EventType = "page.unpublished"
	EventPageDeleted     EventType = "page.deleted"
	EventSiteUpdated     EventType = "site.updated"
	// EventPostPagesUpdated: a list's page index changed (numbered.go),
	// which the pages worker rebuilds after the list's post events.
	EventPostPagesUpdated EventType = "post.pages.updated"
	// EventPublicationUpdated: a publication's directory item written,
	// which changes what its hosts resolve to (publicationevents.go).
	EventPublicationUpdated EventType = "publication.updated"
)

const (
	eventIDPrefix             = "evt_"
	eventIDHexLen             = 32
	streamViewNewAndOldImages = "NEW_AND_OLD_IMAGES"
)

// Event is a domain event of the change feed, as the event log keeps it
// and webhooks send it (its JSON form).
type Event struct {
	// ID is stable: derived from the stream record and the type, so
	// reading the same record again yields the same id, and consumers
	// act on each id once.
	ID   string    `json:"id"`
	Type EventType `json:"type"`
	// Publication is the id of the publication whose item the write
	// changed: a consumer acts on the event in that publication's
	// space (Store.Publication).
	Publication string `json:"publication,omitempty"`
	// Time is when the write happened: the record's approximate creation
	// time, which DynamoDB rounds down to the second.
	Time time.Time `json:"time"`
	Data EventData `json:"data"`
}

// LoggedEvent is an event at its place in the change feed's event log,
// which every server reads.
type LoggedEvent struct {
	// Position orders the log: dense and increasing from 1, the same on
	// every server, so a reader resumes after the last position it read.
	Position int64 `json:"position"`
	Event
}

// EventData is what a consumer needs to act on an event. Fields that do
// not apply to an event are empty and left out of the JSON.
type EventData struct {
	// PostID is the post the event is about, or the post of a comment.
	PostID string `json:"postId,omitempty"`
	// Slug is the current slug of the post, author or category the event
	// is about (a deleted post's last one).
	Slug string `json:"slug,omitempty"`
	// PreviousSlugs are the post's or author's earlier slugs that still
	// redirect to it, newest first, with the one this write replaced first
	// when the write changed it.
	PreviousSlugs []string `json:"previousSlugs,omitempty"`
	// Categories are the slugs of the post's categories after the write
	// (before it for a deleted post); PreviousCategories those it left.
	Categories         []string `json:"categories,omitempty"`
	PreviousCategories []string `json:"previousCategories,omitempty"`
	// AuthorID is the post's author, or the author the event is about; for
	// a comment, the author who wrote it (empty for a reader's comment).
	AuthorID string `json:"authorId,omitempty"`
	// PublishedAt is when the post is or was to be published;
	// PreviousPublishedAt the time a reschedule or re-dating replaced.
	PublishedAt         time.Time `json:"publishedAt,omitzero"`
	PreviousPublishedAt time.Time `json:"previousPublishedAt,omitzero"`
	// CommentID, ParentID and ReaderID describe a comment: its id, the
	// comment it replies to, and the reader who wrote it.
	CommentID string `json:"commentId,omitempty"`
	ParentID  string `json:"parentId,omitempty"`
	ReaderID  string `json:"readerId,omitempty"`
	// PageID is the page the event is about.
	PageID string `json:"pageId,omitempty"`
	// Paths are the frontend's pages of what changed, before and after
	// the write (an old slug's page too), built from Paths: a post's own
	// page, the home page, its author's and categories' pages and its
	// month's archive; an author's or a category's own page. Other pages
	// that show it (a post page showing an author's new name) are
	// reached by CacheTags.
	Paths []string `json:"paths,omitempty"`
	// CacheTags are the tags of every cached response that shows what
	// changed (TagPost and the other Tag functions): purging them is
	// enough.
	CacheTags []string `json:"cacheTags,omitempty"`
	// CoAuthors are the ids of the post's authors after its primary one
	// (AuthorID) after the write, PreviousCoAuthors those it left; Tags
	// the slugs of its tags (or of the tag the event is about),
	// PreviousTags those it left (for tag.updated, the tag merged into
	// Tags).
	CoAuthors         []string `json:"coAuthors,omitempty"`
	PreviousCoAuthors []string `json:"previousCoAuthors,omitempty"`
	Tags              []string `json:"tags,omitempty"`
	PreviousTags      []string `json:"previousTags,omitempty"`
	// Locale is the post's own locale (empty when it has none stored),
	// PreviousLocale the one a write replaced.
	Locale         string `json:"locale,omitempty"`
	PreviousLocale string `json:"previousLocale,omitempty"`
	// Hosts are a publication's hosts after the write (none for a removed
	// one), PreviousHosts those it left (publication.updated).
	Hosts         []string `json:"hosts,omitempty"`
	PreviousHosts []string `json:"previousHosts,omitempty"`
	// PublicationID, AccountID, Role and PreviousRole describe a change
	// of a publication's staff (staffevents.go): the publication, the
	// account, and its role after and before the write (empty for an
	// account added or removed).
	PublicationID string `json:"publicationId,omitempty"`
	AccountID     string `json:"accountId,omitempty"`
	Role          string `json:"role,omitempty"`
	PreviousRole  string `json:"previousRole,omitempty"`
}

// EventsOf returns the events the stream record rec means, with
// frontend.DefaultPaths: none for most records. It fails when rec is not
// a record of the table with NEW_AND_OLD_IMAGES or an item cannot be
// decoded.
func EventsOf(rec streamtypes.Record) ([]Event, error) { return EventsWith(frontend.DefaultPaths, rec) }

// EventsWith returns the events the stream record rec means, with paths
// built from p: none for most records. It fails when rec is not a record
// of the table with NEW_AND_OLD_IMAGES or an item cannot be decoded.
func EventsWith(p frontend.Paths, rec streamtypes.Record) ([]Event, error) {
	return eventPaths{p}.eventsOf(rec)
}

// eventPaths are the paths the events of a translation name.
type eventPaths struct{ frontend.Paths }

func (p eventPaths) eventsOf(rec streamtypes.Record) ([]Event, error) {
	r, err := readRecord(rec)
	if err != nil {
		return nil, err
	}
	var events []Event
	add := func(t EventType, d EventData) {
		d.CacheTags = frontend.WithSections(d.CacheTags)
		events = append(events, Event{ID: r.eventID(t), Type: t, Publication: r.pub, Time: r.at, Data: d})
	}
	switch r.kind {
	case typePost:
		err = p.postEvents(r, add)
	case typeAuthor:
		err = p.authorEvents(r, add)
	case typeCategory:
		err = p.categoryEvents(r, add)
	case typeTag:
		err = p.tagEvents(r, add)
	case typeComment:
		err = commentEvents(r, add)
	case typePage:
		err = p.pageEvents(r, add)
	case typeSite:
		err = siteEvents(r, add)
	case typeSeries:
		err = p.seriesEvents(r, add)
	case typePageIndex:
		err = pageIndexEvents(r, add)
	case typePublication:
		err = publicationEvents(r, add)
	case typeStaff:
		err = staffEvents(r, add)
	}
	if err != nil {
		return nil, fmt.Errorf("stream record %s: %w", r.id, err)
	}
	return events, nil
}

// record is a stream record read: the item's kind (its type, and only for
// the items that are the truth), its images and when it was written.
type record struct {
	id, seq string
	kind    string
	sk      string
	// pub is the publication of the record's item ("" for a global one).
	pub      string
	old, new map[string]types.AttributeValue
	at       time.Time
}

func (r *record) eventID(t EventType) string {
	sum := sha256.Sum256([]byte(r.id + "\x00" + r.seq + "\x00" + string(t)))
	return eventIDPrefix + hex.EncodeToString(sum[:])[:eventIDHexLen]
}

// decode decodes the old and new images into old and cur, leaving each
// nil when the image is absent, without the attributes unread (which the
// translation never reads).
func decode[T any](r *record, unread ...string) (old, cur *T, err error) {
	if r.old != nil {
		old = new(T)
		if err := attributevalue.UnmarshalMap(without(r.old, unread), old); err != nil {
			return nil, nil, fmt.Errorf("old image: %w", err)
		}
	}
	if r.new != nil {
		cur = new(T)
		if err := attributevalue.UnmarshalMap(without(r.new, unread), cur); err != nil {
			return nil, nil, fmt.Errorf("new image: %w", err)
		}
	}
	return old, cur, nil
}

// without returns img less the attributes names.
func without(img map[string]types.AttributeValue, names []string) map[string]types.AttributeValue {
	if len(names) == 0 {
		return img
	}
	out := maps.Clone(img)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// postUnread are the attributes of a post item the translation does not
// read and decodes without: DynamoDB Local's stream images give an empty
// map (a post's catVer without categories) another attribute's value,
// which would fail the whole record.
var postUnread = []string{"catVer", "coAuthorVer", "tagVer"}

func readRecord(rec streamtypes.Record) (*record, error) {
	d := rec.Dynamodb
	if d == nil || rec.EventID == nil || d.SequenceNumber == nil || d.ApproximateCreationDateTime == nil {
		return nil, errors.New("stream record without its event id, sequence number or time")
	}
	r := &record{id: *rec.EventID, seq: *d.SequenceNumber, at: d.ApproximateCreationDateTime.UTC()}
	if d.StreamViewType != "" && d.StreamViewType != streamViewNewAndOldImages {
		return nil, fmt.Errorf("stream record %s: view type %s, not %s", r.id, d.StreamViewType, streamViewNewAndOldImages)
	}
	// An absent image converts to an empty map, so len tells.
	var err error
	switch rec.EventName {
	case streamtypes.OperationTypeInsert:
		r.new, err = attributevalue.FromDynamoDBStreamsMap(d.NewImage)
		if err == nil && len(r.new) == 0 {
			err = errors.New("INSERT without its new image")
		}
	case streamtypes.OperationTypeModify:
		r.new, err = attributevalue.FromDynamoDBStreamsMap(d.NewImage)
		if err == nil {
			r.old, err = attributevalue.FromDynamoDBStreamsMap(d.OldImage)
		}
		if err == nil && (len(r.new) == 0 || len(r.old) == 0) {
			err = errors.New("MODIFY without both images")
		}
	case streamtypes.OperationTypeRemove:
		r.old, err = attributevalue.FromDynamoDBStreamsMap(d.OldImage)
		if err == nil && len(r.old) == 0 {
			if len(d.Keys) > 0 {
				// A delete that lost a race with another delete of the
				// same item (two servers removing a deleted post's
				// comments and revisions): DynamoDB writes no record of
				// it, DynamoDB Local one with the keys alone. The item
				// was already gone, and the delete that removed it has
				// the record with its image, and its events.
				return r, nil
			}
			err = errors.New("REMOVE without its old image or keys")
		}
	default:
		err = fmt.Errorf("unknown event name %q", rec.EventName)
	}
	if err != nil {
		return nil, fmt.Errorf("stream record %s: %w", r.id, err)
	}
	img := r.new
	if img == nil {
		img = r.old
	}
	var k struct {
		PK   string `dynamodbav:"PK"`
		SK   string `dynamodbav:"SK"`
		Type string `dynamodbav:"type"`
	}
	if err := attributevalue.UnmarshalMap(img, &k); err != nil {
		return nil, fmt.Errorf("stream record %s: %w", r.id, err)
	}
	r.sk = k.SK
	if id, ok := directoryItem(k.PK, k.SK, k.Type); ok {
		r.kind, r.pub = typePublication, id
		return r, nil
	}
	// Only the items of a publication that are the truth have a kind;
	// every copy, counter and record has another type or key, and a
	// global item but the directory's no publication, and means no event. A key is read in
	// its publication's space: the event carries the publication.
	pub, ok := keys.Of(k.PK)
	if !ok {
		return r, nil
	}
	r.pub = pub
	ks := keys.MustIn(pub)
	k.PK, _ = ks.Local(k.PK)
	switch {
	case k.Type == typePost && strings.HasPrefix(k.PK, keys.PrefixPost) && k.PK == k.SK,
		k.Type == typeAuthor && strings.HasPrefix(k.PK, keys.PrefixAuthor) && k.PK == k.SK,
		k.Type == typeCategory && strings.HasPrefix(k.PK, keys.PrefixCategory) && k.PK == k.SK,
		k.Type == typePage && strings.HasPrefix(k.PK, keys.PrefixPage) && k.PK == k.SK,
		k.Type == typeSite && k.PK == keys.SitePartition && k.SK == keys.SitePartition,
		k.Type == typeTag && strings.HasPrefix(k.PK, keys.PrefixTag) && k.PK == k.SK,
		k.Type == typeSeries && strings.HasPrefix(k.PK, keys.PrefixSeries) && k.PK == k.SK,
		k.Type == typePageIndex && strings.HasPrefix(k.PK, prefixPageIndex),
		k.Type == typeStaff && keys.IsStaff(k.PK, k.SK):
		r.kind = k.Type
	case k.Type == typeComment && strings.HasPrefix(k.PK, keys.PrefixPost) &&
		(strings.HasPrefix(k.SK, keys.PrefixComment) || strings.HasPrefix(k.SK, keys.PrefixThread) || strings.HasPrefix(k.SK, keys.PrefixHeld)):
		r.kind = k.Type
	}
	return r, nil
}

// Post states as the change feed sees them at the time of a write.
const (
	postNone      = ""
	postDraft     = "draft"
	postScheduled = "scheduled"
	postPublished = "published"
)

// postState is the post's state as the change feed sees it: a published
// post with the go-live marker is scheduled, whatever the clock says, so
// the go-live write that removes the marker is its publication
// (schedule.go).
func postState(it *postItem) string {
	switch {
	case it == nil:
		return postNone
	case !it.published():
		return postDraft
	case it.GoLiveAt != "":
		return postScheduled
	}
	return postPublished
}

// shown is what readers see of a post: a change of any of it is an edit.
// Counts, versions, the names copied from the author and categories (a
// rename is author.updated or category.updated, whose tags cover the
// post, announced again once the names have reached every post) and what
// is derived from the body are left out.
type shown struct {
	Slug, Title, Excerpt, Body, AuthorID, PublishedAt string
	Cats                                              []string
	Cover                                             *imageItem
	SEO                                               *seoItem
	CoAuthors, Tags                                   []string
	// Featured and Series: whether the post is featured, which series
	// it is in (featured.go, series.go).
	Featured bool
	Series   string
	// Locale and TransVer: the post's locale, and the changes of its
	// group of translations, which every member's transVer counts
	// (translations.go).
	Locale   string
	TransVer int64
}

func (it *postItem) shown() shown {
	return shown{
		Slug: it.Slug, Title: it.Title, Excerpt: it.Excerpt, Body: it.bodySum(),
		AuthorID: it.AuthorID, PublishedAt: it.PublishedAt,
		Cats: it.catSlugs(), Cover: it.Cover, SEO: it.SEO,
		CoAuthors: it.coAuthorIDs(), Tags: it.tagSlugs(),
		Featured: it.Featured, Series: it.Series,
		Locale: it.Locale, TransVer: it.TransVer,
	}
}

// rerendered reports whether a write rendered the post's unchanged body
// again with another renderer (rerender.go) into other HTML: readers see
// a new page, so it is an edit. (A body rendered for the first time, by a
// layout migration, is not.)
func rerendered(old, cur *postItem) bool {
	return old.RenderVersion != cur.RenderVersion && old.htmlSum() != "" && old.htmlSum() != cur.htmlSum()
}

func (p eventPaths) postEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[postItem](r, postUnread...)
	if err != nil {
		return err
	}
	was, is := postState(old), postState(cur)
	var kinds []EventType
	switch {
	case was == postPublished && is == postScheduled && old.Version == cur.Version:
		// Migrate marking a post that an earlier version scheduled: no
		// write of a post adds the marker without a new version.
	case is == postPublished && was == postPublished:
		if !reflect.DeepEqual(old.shown(), cur.shown()) || rerendered(old, cur) {
			kinds = []EventType{EventPostEdited}
		}
	case is == postPublished:
		kinds = []EventType{EventPostPublished}
	case is == postScheduled && was == postScheduled:
		if old.PublishedAt != cur.PublishedAt {
			kinds = []EventType{EventPostRescheduled}
		}
	case is == postScheduled && was == postPublished:
		kinds = []EventType{EventPostUnpublished, EventPostScheduled}
	case is == postScheduled:
		kinds = []EventType{EventPostScheduled}
	case is == postDraft && was == postPublished:
		kinds = []EventType{EventPostUnpublished}
	case is == postDraft && was == postScheduled:
		kinds = []EventType{EventPostUnscheduled}
	case is == postNone && (was == postPublished || was == postScheduled):
		kinds = []EventType{EventPostDeleted}
	}
	for _, t := range kinds {
		add(t, p.postData(old, cur))
	}
	if was == postPublished && is == postPublished &&
		(old.CommentCount != cur.CommentCount || old.ThreadCount != cur.ThreadCount) {
		add(EventPostCountsUpdated, p.countsData(cur))
	}
	return nil
}

// countsData describes a change of the published post cur's comment
// counts: the pages that list its summary, and the tag of the answers
// that show its count as summaries hold it (TagCounts), not the post's
// other tags, since nothing else of it changed.
func (p eventPaths) countsData(cur *postItem) EventData {
	d := EventData{
		PostID: cur.ID, Slug: cur.Slug, AuthorID: cur.AuthorID, Categories: cur.catSlugs(),
		CoAuthors: cur.coAuthorIDs(), Tags: cur.tagSlugs(), PublishedAt: cur.publishedAt(),
		CacheTags: []string{frontend.TagCounts(cur.ID)},
	}
	d.Paths = append(d.Paths, p.Home)
	for _, s := range append([]string{cur.AuthorSlug}, coAuthorSlugs(cur)...) {
		d.Paths = append(d.Paths, p.BySlug(p.Author, s))
	}
	for _, c := range d.Categories {
		d.Paths = append(d.Paths, p.BySlug(p.Category, c))
	}
	for _, t := range d.Tags {
		d.Paths = append(d.Paths, p.BySlug(p.Tag, t))
	}
	d.Paths = distinct(append(d.Paths, p.MonthPath(d.PublishedAt)))
	return d
}

// coAuthorSlugs returns the slugs of the post's co-authors, in order.
func coAuthorSlugs(it *postItem) []string {
	out := make([]string, len(it.CoAuthors))
	for i, a := range it.CoAuthors {
		out[i] = a.Slug
	}
	return out
}

// postData describes the post written from old to cur (either nil): the
// pages and tags of both, so a consumer purges where it was and where it
// is.
func (p eventPaths) postData(old, cur *postItem) EventData {
	now := cur
	if now == nil {
		now = old
	}
	d := EventData{
		PostID: now.ID, Slug: now.Slug, AuthorID: now.AuthorID,
		Categories: now.catSlugs(), PublishedAt: now.publishedAt(), Locale: now.Locale,
	}
	var slugs, authorSlugs, cats []string
	var months []time.Time
	if old != nil && old != now {
		if old.Slug != now.Slug {
			d.PreviousSlugs = append(d.PreviousSlugs, old.Slug)
		}
		for _, c := range old.catSlugs() {
			if !slices.Contains(d.Categories, c) {
				d.PreviousCategories = append(d.PreviousCategories, c)
			}
		}
		if old.PublishedAt != now.PublishedAt {
			d.PreviousPublishedAt = old.publishedAt()
		}
		if old.Locale != now.Locale {
			d.PreviousLocale = old.Locale
		}
		slugs, authorSlugs, months = append(slugs, old.Slug), append(authorSlugs, old.AuthorSlug), append(months, old.publishedAt())
		cats = append(cats, old.catSlugs()...)
	}
	for _, s := range now.Slugs {
		if s != now.Slug && !slices.Contains(d.PreviousSlugs, s) {
			d.PreviousSlugs = append(d.PreviousSlugs, s)
		}
	}
	slugs, authorSlugs, months = append(slugs, now.Slug), append(authorSlugs, now.AuthorSlug), append(months, now.publishedAt())
	cats = append(cats, now.catSlugs()...)

	d.Paths = append(d.Paths, p.Home)
	d.CacheTags = append(d.CacheTags, frontend.TagPost(now.ID), frontend.TagAuthor(now.AuthorID), frontend.TagFeed, frontend.TagSearch)
	for i, s := range slugs {
		// Each slug at the date it had: a post path may hold its date.
		d.Paths = append(d.Paths, p.PostPath(s, months[i]))
	}
	for _, s := range authorSlugs {
		d.Paths = append(d.Paths, p.BySlug(p.Author, s))
	}
	for _, c := range cats {
		d.Paths = append(d.Paths, p.BySlug(p.Category, c))
		d.CacheTags = append(d.CacheTags, frontend.TagCategory(c))
	}
	for _, m := range months {
		d.Paths = append(d.Paths, p.MonthPath(m))
		if !m.IsZero() {
			d.CacheTags = append(d.CacheTags, frontend.TagArchive(m))
		}
	}
	p.coAuthorsAndTagsData(&d, old, now)
	p.seriesPostData(&d, old, now)
	d.Paths, d.CacheTags = distinct(d.Paths), distinct(d.CacheTags)
	return d
}

// distinct returns list without empty strings and repeats, in order.
func distinct(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// authorShown is what readers see of an author.
type authorShown struct{ Name, Slug, Bio, AvatarURL, Website, Location string }

func (p eventPaths) authorEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[authorItem](r)
	if err != nil {
		return err
	}
	// A rename is announced twice: by its own write, and once its names
	// have reached every post (markRenamed), so that what was read in
	// between is dropped too.
	if old != nil && cur != nil && slices.Equal(old.Social, cur.Social) && old.RenamedVer == cur.RenamedVer &&
		(authorShown{old.Name, old.Slug, old.Bio, old.AvatarURL, old.Website, old.Location} ==
			authorShown{cur.Name, cur.Slug, cur.Bio, cur.AvatarURL, cur.Website, cur.Location}) {
		return nil
	}
	now := cur
	if now == nil {
		now = old
	}
	d := EventData{AuthorID: now.ID, Slug: now.Slug, CacheTags: []string{frontend.TagAuthor(now.ID), frontend.TagSearch}}
	if old != nil && old.Slug != now.Slug {
		d.PreviousSlugs = append(d.PreviousSlugs, old.Slug)
		d.Paths = append(d.Paths, p.BySlug(p.Author, old.Slug))
	}
	for _, s := range now.Slugs {
		if s != now.Slug && !slices.Contains(d.PreviousSlugs, s) {
			d.PreviousSlugs = append(d.PreviousSlugs, s)
		}
	}
	if old != nil && cur != nil && old.RenamedVer != cur.RenamedVer {
		// The pages of the slugs that redirect (at most MaxRedirects)
		// were as likely read before the posts were rewritten.
		for _, s := range d.PreviousSlugs {
			d.Paths = append(d.Paths, p.BySlug(p.Author, s))
		}
	}
	d.Paths = distinct(append(d.Paths, p.BySlug(p.Author, now.Slug)))
	add(EventAuthorUpdated, d)
	return nil
}

func (p eventPaths) categoryEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[categoryItem](r)
	if err != nil {
		return err
	}
	if old != nil && cur != nil && old.Name == cur.Name && old.Description == cur.Description && old.RenamedVer == cur.RenamedVer {
		return nil
	}
	now := cur
	if now == nil {
		now = old
	}
	add(EventCategoryUpdated, EventData{
		Slug: now.Slug, Categories: []string{now.Slug},
		Paths:     distinct([]string{p.BySlug(p.Category, now.Slug)}),
		CacheTags: []string{frontend.TagCategory(now.Slug), frontend.TagSearch},
	})
	return nil
}

// commentEvents translates a write of a comment item: published under
// COMMENT# or THREAD#, or held under HELD#.
func commentEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[commentItem](r)
	if err != nil {
		return err
	}
	now := cur
	if now == nil {
		now = old
	}
	d := EventData{
		PostID: now.PostID, CommentID: now.ID, ParentID: now.ParentID,
		AuthorID: now.AuthorID, ReaderID: now.ReaderID,
	}
	public := d
	public.CacheTags = []string{frontend.TagComments(now.PostID)}
	held := strings.HasPrefix(r.sk, keys.PrefixHeld)
	switch {
	case held && old == nil && cur.status() == CommentPending:
		add(EventCommentPending, d)
	case held && old != nil && cur != nil && old.status() == CommentPending && cur.status() == CommentRejected:
		add(EventCommentRejected, d)
	case held:
		// Removing a held item is an approval (whose published item's
		// INSERT is comment.approved), a deletion, or the end of a
		// rejected comment's TTL: the record alone cannot tell which.
	case old == nil && cur.ApprovedAt != "":
		add(EventCommentApproved, public)
	case old == nil:
		add(EventCommentAdded, public)
	case cur == nil, cur.Deleted && !old.Deleted:
		add(EventCommentDeleted, public)
	case !cur.Deleted && cur.Body != old.Body:
		add(EventCommentEdited, public)
	}
	return nil
}
