package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Pages: the blog's static pages (About, Contact, Imprint). A page is one
// item, PAGE#<id>, with its Markdown body rendered when it is written, as
// a post's is (postItem.derive: the same function, the same options, so a
// renderer change covers both). Its slug is reserved in the posts'
// namespace (SLUG#<slug>, naming pageId instead of postId), so a page and
// a post never hold the same slug and a frontend may serve both from one
// path segment. A page is in no count, feed, archive or category: its
// writes are one transaction of the page, its slug reservations and, for
// a published page with a locale, its copy in its locale's list
// (pagelocales.go). Published pages are listed from GSI1 partition PAGES,
// drafts from PAGEDRAFTS, a locale's from LOCALE#<locale>#PAGES, all by
// their order then id: one Query each.

// Bounds of a page's navigation fields.
const (
	// MaxPageOrder is the largest order a page may have (0 is the first).
	MaxPageOrder = 99_999
)

// SitePage is a static page of the blog (Page is a page of a list).
type SitePage struct {
	ID    string
	Slug  string
	Title string
	Body  string
	// BodyHTML and TOC are derived from Body when it is written. They are
	// left out of idempotency records and derived again on a replay.
	BodyHTML  string    `json:"-"`
	TOC       []Heading `json:"-"`
	WordCount int
	// Excerpt is the beginning of the body's first paragraphs, derived
	// as a post's excerpt is: what SEO's description falls back to.
	Excerpt string `json:"-"`
	SEO     SEO
	Status  PostStatus // StatusDraft or StatusPublished
	// Order places the page in lists (ascending), ParentID names the page
	// it is listed under in a navigation menu (empty: top level).
	Order       int
	ParentID    string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	PublishedAt time.Time // zero for drafts
	Version     int64
	// Locale is the page's BCP 47 locale, canonical; empty: the site's
	// default, whichever it is when the page is read.
	Locale string
	// TranslationGroup is the group of translations the page is in
	// (pagetranslations.go), empty for none.
	TranslationGroup string
	// LocaleCopy is true for a page read from its copy in its locale's
	// list (LocalePages), which lacks TranslationGroup: read the page
	// for it.
	LocaleCopy bool `json:"-"`
}

// NewPage is the input of CreatePage. The page starts as a draft.
type NewPage struct {
	Slug, Title, Body string
	SEO               SEO
	Order             int
	ParentID          string
	IdempotencyKey    string
	// Locale is the page's BCP 47 locale (empty: the site's default).
	Locale string
}

// PagePatch is the input of UpdatePage: nil fields are left unchanged. An
// empty ParentID makes the page top level.
type PagePatch struct {
	ID              string
	ExpectedVersion int64
	Title, Slug     *string
	Body            *string
	SEO             *SEOPatch
	Order           *int
	ParentID        *string
	IdempotencyKey  string
	// Locale, when not nil, gives the page another locale (empty: the
	// site's default).
	Locale *string
}

// PageRef names a page to publish, unpublish or delete; ExpectedVersion,
// when not zero, must equal the stored version.
type PageRef struct {
	ID              string
	ExpectedVersion int64
	IdempotencyKey  string
}

const (
	typePage = "page"
	// absentPageID is a page id no page has: new ids are UUIDs.
	absentPageID  = "-"
	attrPageOwner = "pageId"
)

// pageItem is a page as stored.
type pageItem struct {
	PK          string     `dynamodbav:"PK"`
	SK          string     `dynamodbav:"SK"`
	GSI1PK      string     `dynamodbav:"GSI1PK"`
	GSI1SK      string     `dynamodbav:"GSI1SK"`
	Type        string     `dynamodbav:"type"`
	ID          string     `dynamodbav:"id"`
	Slug        string     `dynamodbav:"slug"`
	Slugs       []string   `dynamodbav:"slugs"`
	Title       string     `dynamodbav:"title"`
	Body        string     `dynamodbav:"body,omitempty"`
	HTML        string     `dynamodbav:"bodyHtml,omitempty"`
	TOC         []tocEntry `dynamodbav:"toc,omitempty"`
	Words       int        `dynamodbav:"words,omitempty"`
	AutoExcerpt string     `dynamodbav:"autoExcerpt,omitempty"`
	// RenderVersion names the renderer that derived the body's HTML, TOC,
	// words and excerpt (rerender.go), as a post's does.
	RenderVersion string   `dynamodbav:"renderVersion,omitempty"`
	SEO           *seoItem `dynamodbav:"seo,omitempty"`
	Status        string   `dynamodbav:"status"`
	Order         int      `dynamodbav:"order"`
	ParentID      string   `dynamodbav:"parentId,omitempty"`
	CreatedAt     string   `dynamodbav:"createdAt"`
	UpdatedAt     string   `dynamodbav:"updatedAt"`
	PublishedAt   string   `dynamodbav:"publishedAt,omitempty"`
	Version       int64    `dynamodbav:"version"`
	Locale        string   `dynamodbav:"locale,omitempty"`
	// TransGroup and TransVer: the page's group of translations and the
	// changes of its membership, as a post's (translations.go).
	TransGroup string `dynamodbav:"transGroup,omitempty"`
	TransVer   int64  `dynamodbav:"transVer,omitempty"`
}

func (it *pageItem) page() *SitePage {
	p := &SitePage{
		ID: it.ID, Slug: it.Slug, Title: it.Title, Body: it.Body, BodyHTML: it.HTML, WordCount: it.Words, Excerpt: it.AutoExcerpt,
		Status: PostStatus(it.Status), Order: it.Order, ParentID: it.ParentID,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
		PublishedAt: keys.ParseTime(it.PublishedAt), Version: it.Version, Locale: it.Locale,
		TranslationGroup: it.TransGroup,
	}
	if it.SEO != nil {
		p.SEO = SEO(*it.SEO)
	}
	for _, h := range it.TOC {
		p.TOC = append(p.TOC, Heading(h))
	}
	return p
}

// withKeys sets the page's keys from its id, status and order.
func (it *pageItem) withKeys(ks keys.Space) *pageItem {
	k := ks.Page(it.ID)
	it.PK, it.SK, it.Type = k.PK, k.SK, typePage
	it.GSI1PK = ks.Partition(keys.PageDraftsPartition)
	if it.Status == string(StatusPublished) {
		it.GSI1PK = ks.Partition(keys.PagesPartition)
	}
	it.GSI1SK = keys.PageSort(it.Order, it.ID)
	return it
}

// setBody sets the body and what derive derives from it: a page renders
// exactly as a post does.
func (it *pageItem) setBody(ctx context.Context, opts markdown.Options, body string) error {
	d := postItem{Body: body}
	if err := d.derive(ctx, opts); err != nil {
		return err
	}
	it.Body, it.HTML, it.TOC, it.Words, it.AutoExcerpt = body, d.HTML, d.TOC, d.Words, d.AutoExcerpt
	it.RenderVersion = d.RenderVersion
	return nil
}

// restore derives again what an idempotency record leaves out of a page;
// it fails only when ctx ends first.
func (p *SitePage) restore(ctx context.Context, s *Store) error {
	if p.Body == "" {
		return nil
	}
	var it pageItem
	switch err := s.setPageBody(ctx, &it, p.Body, false); {
	case err == nil:
		p.BodyHTML, p.TOC, p.Excerpt = it.HTML, it.page().TOC, it.AutoExcerpt
	case !errors.Is(err, ErrInvalidInput):
		return err
	}
	return nil
}

// pageSlugs is the page side of the posts' slug namespace: the same
// SLUG#<slug> reservations, naming pageId. Pages are written by admins,
// who may take any page's redirect; a post's slug, current or old, is
// never a page's to take, nor a page's a post's (decodeReservation); in
// the publication ks.
func pageSlugs(ks keys.Space) slugSpace {
	return slugSpace{
		key:      ks.Slug,
		owner:    attrPageOwner,
		holder:   ks.Page,
		authorOf: func(*slugHolder) string { return "" },
		item: func(slug, owner string, redirect bool) any {
			k := ks.Slug(slug)
			return slugItem{PK: k.PK, SK: k.SK, Type: typeSlug, PageID: owner, Redirect: redirect}
		},
	}
}

func validatePageFields(order int, parentID string) error {
	if order < 0 || order > MaxPageOrder {
		return invalid("order", "must be 0 to %d", MaxPageOrder)
	}
	if parentID != "" {
		return validateID("parentId", parentID)
	}
	return nil
}

// CreatePage creates a draft page. Its slug must be free in the posts'
// namespace (ErrSlugTaken when a post or a page holds it, current or as a
// redirect of a post); a parent must be a page without a parent of its
// own; bad input is a *ValidationError. One TransactWriteItems after one
// GetItem of the slug.
func (s *Store) CreatePage(ctx context.Context, in NewPage) (*SitePage, error) {
	err := firstErr(
		validateLine("title", in.Title, MaxTitleLength),
		validateSlug("slug", in.Slug),
		validateBody("body", in.Body, MaxBodyBytes),
		validateSEO(in.SEO),
		validatePageFields(in.Order, in.ParentID),
	)
	if err == nil {
		in.Locale, err = postLocale(in.Locale)
	}
	if err == nil {
		err = s.checkLinkHosts([2]string{"seo.canonicalUrl", in.SEO.CanonicalURL}, [2]string{"seo.ogImage", in.SEO.OGImage})
	}
	if err != nil {
		return nil, err
	}
	var body pageItem
	if err := s.setPageBody(ctx, &body, in.Body, true); err != nil {
		return nil, err
	}
	defer s.noteRendered(ctx)
	return idempotent(ctx, s, "createPage", in.IdempotencyKey, in, func(rec *idem) (*SitePage, error) {
		id := newID()
		return dynamo.RetryWrite(ctx, func() (*SitePage, error) {
			res, err := s.readReservation(ctx, pageSlugs(s.ks), in.Slug)
			if err != nil {
				return nil, err
			}
			if err := s.claim(ctx, pageSlugs(s.ks), id, taker{admin: true}, res); err != nil {
				return nil, err
			}
			now := keys.Time(s.Now())
			after := body
			after.ID, after.Slug, after.Slugs, after.Title = id, in.Slug, []string{in.Slug}, in.Title
			after.Status, after.Order, after.ParentID = string(StatusDraft), in.Order, in.ParentID
			after.CreatedAt, after.UpdatedAt, after.Version, after.Locale = now, now, 1, in.Locale
			if in.SEO != (SEO{}) {
				after.SEO = ptr(seoItem(in.SEO))
			}
			return s.writePage(ctx, rec, nil, after.withKeys(s.ks), res)
		})
	})
}

// readReservation reads the reservation of slug in sp, with
// ConsistentRead: nil when it is free.
func (s *Store) readReservation(ctx context.Context, sp slugSpace, slug string) (*reservation, error) {
	found, err := s.db.BatchGet(ctx, []key{sp.key(slug)}, true)
	if err != nil {
		return nil, fmt.Errorf("slug %q: %w", slug, err)
	}
	return sp.decodeReservation(found, slug)
}

// UpdatePage edits a page if its version still equals ExpectedVersion
// (else a *ConflictError). A new slug keeps the old one as a redirect, as
// a post's does.
func (s *Store) UpdatePage(ctx context.Context, in PagePatch) (*SitePage, error) {
	seo := SEO{}
	if in.SEO != nil {
		seo = SEO{Title: deref(in.SEO.Title), Description: deref(in.SEO.Description),
			CanonicalURL: deref(in.SEO.CanonicalURL), OGImage: deref(in.SEO.OGImage)}
	}
	err := firstErr(
		validateID("id", in.ID),
		validateOpt(in.Title, func(v string) error { return validateLine("title", v, MaxTitleLength) }),
		validateOpt(in.Slug, func(v string) error { return validateSlug("slug", v) }),
		validateOpt(in.Body, func(v string) error { return validateBody("body", v, MaxBodyBytes) }),
		validateSEO(seo),
		validatePageFields(deref(in.Order), deref(in.ParentID)),
	)
	if err == nil && in.ParentID != nil && *in.ParentID == in.ID {
		err = invalid("parentId", "a page cannot be its own parent")
	}
	if err == nil && in.Locale != nil {
		var l string
		l, err = postLocale(*in.Locale)
		in.Locale = &l
	}
	if err == nil {
		err = s.checkLinkHosts([2]string{"seo.canonicalUrl", seo.CanonicalURL}, [2]string{"seo.ogImage", seo.OGImage})
	}
	if err != nil {
		return nil, err
	}
	var body *pageItem
	if in.Body != nil {
		body = &pageItem{}
		if err := s.setPageBody(ctx, body, *in.Body, true); err != nil {
			return nil, err
		}
		defer s.noteRendered(ctx)
	}
	if in.ExpectedVersion < 1 {
		in.ExpectedVersion = NoVersion
	}
	return s.changePage(ctx, "updatePage", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, deref(in.Slug), func(p *pageItem) error {
		setOpt(&p.Title, in.Title)
		setOpt(&p.Slug, in.Slug)
		setOpt(&p.ParentID, in.ParentID)
		if in.Locale != nil && *in.Locale != p.Locale {
			if p.TransGroup != "" {
				return invalid("locale", "cannot change while the page is linked to translations: unlink it first")
			}
			p.Locale = *in.Locale
		}
		if in.Order != nil {
			p.Order = *in.Order
		}
		if body != nil {
			p.Body, p.HTML, p.TOC, p.Words, p.AutoExcerpt = body.Body, body.HTML, body.TOC, body.Words, body.AutoExcerpt
			p.RenderVersion = body.RenderVersion
		}
		if in.SEO != nil {
			var cur SEO
			if p.SEO != nil {
				cur = SEO(*p.SEO)
			}
			setOpt(&cur.Title, in.SEO.Title)
			setOpt(&cur.Description, in.SEO.Description)
			setOpt(&cur.CanonicalURL, in.SEO.CanonicalURL)
			setOpt(&cur.OGImage, in.SEO.OGImage)
			setOpt(&cur.NoIndex, in.SEO.NoIndex)
			p.SEO = nil
			if cur != (SEO{}) {
				p.SEO = ptr(seoItem(cur))
			}
		}
		return nil
	})
}

// PublishPage publishes a page now; a published page keeps its date.
func (s *Store) PublishPage(ctx context.Context, in PageRef) (*SitePage, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	return s.changePage(ctx, "publishPage", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, "", func(p *pageItem) error {
		if p.Status != string(StatusPublished) {
			p.Status, p.PublishedAt = string(StatusPublished), keys.Time(s.Now())
		}
		return nil
	})
}

// UnpublishPage turns a published page back into a draft.
func (s *Store) UnpublishPage(ctx context.Context, in PageRef) (*SitePage, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	return s.changePage(ctx, "unpublishPage", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, "", func(p *pageItem) error {
		if p.Status != string(StatusPublished) {
			return invalid("id", "page is not published")
		}
		p.Status, p.PublishedAt = string(StatusDraft), ""
		return nil
	})
}

// DeletePage deletes a page with its slug and redirects, and returns it
// as it was. Pages listed under it become top level (their parentId names
// no page, which readers take as none).
func (s *Store) DeletePage(ctx context.Context, in PageRef) (*SitePage, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	return s.changePage(ctx, "deletePage", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, "", nil)
}

// changePage reads the page id (and the reservation of slug, when not
// empty, in the same BatchGetItem), applies change (nil deletes it) and
// writes it in one transaction. It returns the page as written (as it
// was, for a deletion), a *ConflictError when its version is not
// expected (0: any), or the error of the read, of change or of the write.
func (s *Store) changePage(ctx context.Context, op, id string, expected int64, idemKey string, input any, slug string, change func(*pageItem) error) (*SitePage, error) {
	return idempotent(ctx, s, op, idemKey, input, func(rec *idem) (*SitePage, error) {
		return dynamo.RetryWrite(ctx, func() (*SitePage, error) {
			ks := []key{s.ks.Page(id)}
			if slug != "" {
				ks = append(ks, s.ks.Slug(slug))
			}
			found, err := s.db.BatchGet(ctx, ks, true)
			if err != nil {
				return nil, fmt.Errorf("page %q: %w", id, err)
			}
			var before pageItem
			if err := dynamo.DecodeFound(found, s.ks.Page(id), &before); err != nil {
				return nil, fmt.Errorf("page %q: %w", id, err)
			}
			if expected != 0 && before.Version != expected {
				return nil, &ConflictError{CurrentVersion: before.Version}
			}
			if change == nil {
				return s.writePage(ctx, rec, &before, nil, nil)
			}
			after := before
			if err := change(&after); err != nil {
				return nil, err
			}
			after.Version++
			after.UpdatedAt = keys.Time(s.Now())
			var res *reservation
			if after.Slug != before.Slug {
				if res, err = pageSlugs(s.ks).decodeReservation(found, after.Slug); err != nil {
					return nil, err
				}
				if err := s.claim(ctx, pageSlugs(s.ks), id, taker{admin: true}, res); err != nil {
					return nil, err
				}
				after.Slugs, _ = slugHistory(before.Slugs, before.Slug, after.Slug)
			}
			return s.writePage(ctx, rec, &before, after.withKeys(s.ks), res)
		})
	})
}

// writePage writes the change from before (nil: create) to after (nil:
// delete) in one TransactWriteItems: the page, conditional on its version
// and its membership of translations as read (a deletion leaves its
// group), its copy in its locale's list (writeLocalePageCopy), its slug
// reservations (moveSlug), and its parent's check (it exists and has no
// parent: so no write makes a cycle).
func (s *Store) writePage(ctx context.Context, rec *idem, before, after *pageItem, res *reservation) (*SitePage, error) {
	t := s.db.NewTxn()
	var errs []error
	var beforeSlugs, afterSlugs []string
	if before != nil {
		beforeSlugs = holderSlugs(before.Slugs, before.Slug)
	}
	switch {
	case after == nil:
		errs = append(errs, t.Delete(s.ks.Page(before.ID), ptr(condVersion(before.Version).And(condTransVer(before.TransVer))), dynamo.ErrRetry),
			s.leavePageTranslations(ctx, t, before))
	case before == nil:
		afterSlugs = after.Slugs
		errs = append(errs, t.Put(after, ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
	default:
		afterSlugs = after.Slugs
		errs = append(errs, t.Put(after, ptr(condVersion(before.Version).And(condTransVer(before.TransVer))), dynamo.ErrRetry))
	}
	id := ""
	if after != nil {
		id = after.ID
		if after.ParentID != "" && (before == nil || before.ParentID != after.ParentID) {
			cond := dynamo.CondExists().And(expression.AttributeNotExists(expression.Name("parentId")))
			errs = append(errs, t.Check(s.ks.Page(after.ParentID), cond,
				invalid("parentId", "must be a page without a parent of its own")))
		}
	} else {
		id = before.ID
	}
	published := func(it *pageItem) int64 { return b2i(it != nil && it.Status == string(StatusPublished)) }
	if delta := published(after) - published(before); delta != 0 {
		errs = append(errs, countStats(s.ks, t, "pageCount", delta))
	}
	errs = append(errs, writeLocalePageCopy(s.ks, t, before, after))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := pageSlugs(s.ks).moveSlug(t, id, beforeSlugs, afterSlugs, res); err != nil {
		return nil, err
	}
	result := before
	if after != nil {
		result = after
	}
	out := result.page()
	if err := s.record(t, rec, out); err != nil {
		return nil, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return nil, err
	}
	return out, nil
}

// GetPage returns the page with id, ErrNotFound when there is none: one
// GetItem.
func (s *Store) GetPage(ctx context.Context, id string) (*SitePage, error) {
	if err := validateID("id", id); err != nil {
		return nil, err
	}
	var it pageItem
	if err := s.db.Get(ctx, s.ks.Page(id), false, &it); err != nil {
		return nil, fmt.Errorf("page %q: %w", id, err)
	}
	return it.page(), nil
}

// GetPageBySlug returns the page that holds slug, current or as a
// redirect, ErrNotFound when none does: two GetItems, whether a page, a
// post or nothing holds the slug (a free slug reads PAGE#-).
func (s *Store) GetPageBySlug(ctx context.Context, slug string) (*SitePage, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	var sl slugItem
	err := s.db.Get(ctx, s.ks.Slug(slug), false, &sl)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("slug %q: %w", slug, err)
	}
	id := sl.PageID
	if id == "" {
		id = absentPageID
	}
	var it pageItem
	if err := s.db.Get(ctx, s.ks.Page(id), false, &it); err != nil {
		return nil, fmt.Errorf("page by slug %q: %w", slug, err)
	}
	return it.page(), nil
}

// ReadPage returns the page with id read with ConsistentRead, as a write
// reads it.
func (s *Store) ReadPage(ctx context.Context, id string) (*SitePage, error) {
	var it pageItem
	if err := s.db.Get(ctx, s.ks.Page(id), true, &it); err != nil {
		return nil, fmt.Errorf("page %q: %w", id, err)
	}
	return it.page(), nil
}

// Pages returns the published pages, or with drafts the draft pages, by
// order then creation: one Query of GSI1 a page.
func (s *Store) Pages(ctx context.Context, p PageArgs, drafts bool) (*Result[*SitePage], error) {
	part, list := s.ks.Partition(keys.PagesPartition), "pages"
	if drafts {
		part, list = s.ks.Partition(keys.PageDraftsPartition), "page-drafts"
	}
	return queryPage(ctx, s, listQuery{
		list: list, index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(part)),
	}, p, (*pageItem).page)
}

// checkPage returns what is wrong with a page item on its own: its keys
// disagree with its id, status and order, or its publication time with
// its status.
func checkPage(ks keys.Space, pg *pageItem) []string {
	var bad []string
	want := *pg
	want.withKeys(ks)
	if want.PK != pg.PK || want.SK != pg.SK || want.GSI1PK != pg.GSI1PK || want.GSI1SK != pg.GSI1SK {
		bad = append(bad, fmt.Sprintf("page %s has keys %s/%s %s/%s, want %s/%s %s/%s", pg.ID,
			pg.PK, pg.SK, pg.GSI1PK, pg.GSI1SK, want.PK, want.SK, want.GSI1PK, want.GSI1SK))
	}
	if (pg.Status == string(StatusPublished)) != (pg.PublishedAt != "") {
		bad = append(bad, fmt.Sprintf("page %s is %s with publishedAt %q", pg.ID, pg.Status, pg.PublishedAt))
	}
	if pg.ParentID == pg.ID {
		bad = append(bad, fmt.Sprintf("page %s is its own parent", pg.ID))
	}
	return bad
}

// pageShown is what readers see of a page.
type pageShown struct {
	Slug, Title, HTML, ParentID string
	SEO                         seoItem
	Order                       int
	// TransVer changes with the page's translations, which it shows.
	TransVer int64
	// Locale moves the page between the lists by locale.
	Locale string
}

func (it *pageItem) shown() pageShown {
	sh := pageShown{Slug: it.Slug, Title: it.Title, HTML: it.HTML, ParentID: it.ParentID, Order: it.Order, TransVer: it.TransVer, Locale: it.Locale}
	if it.SEO != nil {
		sh.SEO = *it.SEO
	}
	return sh
}

// pageEvents translates a write of a page item. Drafts are nobody's
// business: a draft's creation, edits and deletion mean nothing.
//
//	page.published         draft or new → published
//	page.published.edited  published → published, a change readers see (slug, title,
//	                       body, SEO, order, parent, locale, translations, or the HTML of a
//	                       body rendered again by another renderer: shown holds the
//	                       HTML, not the renderVersion)
//	page.unpublished       published → draft
//	page.deleted           published → removed
func (p eventPaths) pageEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[pageItem](r)
	if err != nil {
		return err
	}
	was := old != nil && old.Status == string(StatusPublished)
	is := cur != nil && cur.Status == string(StatusPublished)
	var t EventType
	switch {
	case !was && is:
		t = EventPagePublished
	case was && is && old.shown() != cur.shown():
		t = EventPageEdited
	case was && cur != nil && !is:
		t = EventPageUnpublished
	case was && cur == nil:
		t = EventPageDeleted
	default:
		return nil
	}
	now := cur
	if now == nil {
		now = old
	}
	d := EventData{PageID: now.ID, Slug: now.Slug, CacheTags: []string{frontend.TagPage(now.ID)}}
	if old != nil && old.Slug != now.Slug {
		d.PreviousSlugs = append(d.PreviousSlugs, old.Slug)
		d.Paths = append(d.Paths, p.PagePath(old.Slug))
	}
	for _, s := range now.Slugs {
		if s != now.Slug && !slices.Contains(d.PreviousSlugs, s) {
			d.PreviousSlugs = append(d.PreviousSlugs, s)
		}
	}
	d.Paths = distinct(append(d.Paths, p.PagePath(now.Slug)))
	add(t, d)
	return nil
}
