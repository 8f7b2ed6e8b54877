package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Posts: the operations on a post. Each is one changePost: read the post
// (with what the change needs), apply the change, and write the post and
// everything that copies or counts it in one transaction (postcopies.go,
// counters.go), read again and retried when something changed between.

// errStaleNames means an author or category was renamed after the names a
// post write carries were read; the write reads them again.
var errStaleNames = errors.New("author or category renamed during write")

// CreatePost creates a draft. Its author and categories must exist and its
// slug must be free (ErrSlugTaken); bad input is a *ValidationError.
func (s *Store) CreatePost(ctx context.Context, in NewPost) (*Post, error) {
	if err := s.slugFromTitle(ctx, &in); err != nil {
		return nil, err
	}
	cats, err := validateNewPost(&in)
	var coAuthors []string
	var tags []catRef
	if err == nil {
		coAuthors, err = validateCoAuthors(in.AuthorID, in.CoAuthors)
	}
	if err == nil {
		tags, err = s.tagNames(ctx, in.Tags)
	}
	if err == nil {
		err = s.checkLinkHosts(postLinks(in.CoverImage, &in.SEO)...)
	}
	if err == nil {
		in.Locale, err = postLocale(in.Locale)
	}
	if err != nil {
		return nil, err
	}
	derived := postItem{Body: in.Body}
	if err := s.deriveBody(ctx, &derived, true); err != nil {
		return nil, err
	}
	defer s.noteRendered(ctx)
	return idempotent(ctx, s, "createPost", in.IdempotencyKey, in, func(id *idem) (*Post, error) {
		postID := newID()
		return dynamo.RetryWrite(ctx, func() (*Post, error) {
			_, r, err := s.readNames(ctx, postRead{}, in.AuthorID, cats, in.Slug, moreNames{coAuthors, tagSlugsOf(tags)})
			if err != nil {
				return nil, err
			}
			if err := s.claim(ctx, postSlugs(s.ks), postID, taker{author: in.AuthorID, admin: in.Admin}, r.slug); err != nil {
				return nil, err
			}
			now := keys.Time(s.Now())
			after := &postItem{
				ID: postID, Slug: in.Slug, Slugs: []string{in.Slug}, Title: in.Title, Excerpt: in.Excerpt, Body: in.Body,
				Status: string(StatusDraft), AuthorID: in.AuthorID,
				CreatedAt: now, UpdatedAt: now, Version: 1, Locale: in.Locale,
			}
			after.setVisibility(in.Visibility)
			after.setDerived(&derived)
			after.setCover(in.CoverImage)
			after.setSEO(in.SEO)
			after.setCoAuthors(coAuthors)
			after.Tags = tags
			if err := r.setNames(after, cats); err != nil {
				return nil, err
			}
			out, err := s.writePost(ctx, id, nil, after, r)
			if errors.Is(err, errStaleNames) {
				// A rename, or a write that changed the counters' entries,
				// came between the read and the write: read them again.
				return nil, dynamo.ErrRetry
			}
			return out, err
		})
	})
}

func (s *Store) checkPatchLinks(in *PostPatch) error {
	var seo SEO
	if in.SEO != nil {
		seo = SEO{CanonicalURL: deref(in.SEO.CanonicalURL), OGImage: deref(in.SEO.OGImage)}
	}
	return s.checkLinkHosts(postLinks(in.CoverImage, &seo)...)
}

// postLinks returns the links of a post's cover and SEO fields, named as
// validation names them.
func postLinks(cover *Image, seo *SEO) [][2]string {
	links := [][2]string{{"seo.canonicalUrl", seo.CanonicalURL}, {"seo.ogImage", seo.OGImage}}
	// A library image's URL is the server's own.
	if cover != nil && cover.Media == nil {
		links = append([][2]string{{"coverImage.url", cover.URL}}, links...)
	}
	return links
}

// slugFromTitle gives in the slug made from its title when it has none, in
// the script the site's SlugTransliteration asks for.
func (s *Store) slugFromTitle(ctx context.Context, in *NewPost) error {
	if in.Slug != "" || validateLine("title", in.Title, MaxTitleLength) != nil {
		return nil // validateNewPost tells what is wrong
	}
	latin, err := s.latinSlugs(ctx, in.Title)
	if err != nil {
		return err
	}
	if in.Slug = slugs.Make(in.Title, latin); in.Slug == "" {
		return invalid("slug", "must be given: the title has no letter or digit to make one of")
	}
	return nil
}

func validateNewPost(in *NewPost) ([]string, error) {
	cats, err := validateCategories(in.Categories)
	if err != nil {
		return nil, err
	}
	return cats, firstErr(
		validateVisibility(in.Visibility),
		validateID("authorId", in.AuthorID),
		validateLine("title", in.Title, MaxTitleLength),
		validateSlug("slug", in.Slug),
		validateText("excerpt", in.Excerpt, false, MaxExcerptLength),
		validateBody("body", in.Body, MaxBodyBytes),
		validateImage("coverImage", in.CoverImage),
		validateSEO(in.SEO),
	)
}

// UpdatePost edits a post if its version still equals ExpectedVersion
// (else a *ConflictError). Changing the slug keeps the old one as a
// redirect; taking a slug that another post keeps as its redirect takes
// it from that post (one more read), one another post holds now is
// ErrSlugTaken.
func (s *Store) UpdatePost(ctx context.Context, in PostPatch) (*Post, error) {
	cats, derived, err := s.preparePatch(ctx, &in)
	if err != nil {
		return nil, err
	}
	coAuthors, tags, err := s.patchAuthorsTags(ctx, &in)
	if err != nil {
		return nil, err
	}
	if in.ExpectedVersion < 1 {
		// A version no post has: the write fails with a ConflictError
		// that tells the current one.
		in.ExpectedVersion = NoVersion
	}
	if derived != nil {
		defer s.noteRendered(ctx)
	}
	return s.changePost(ctx, postChange{
		op: "updatePost", id: in.ID, expected: in.ExpectedVersion, key: in.IdempotencyKey, input: in,
		body: in.Body != nil, newCats: cats, slug: deref(in.Slug), admin: in.Admin,
		more: moreNames{coAuthors, tagSlugsOf(tags)}, actor: in.Actor, primaryOnly: in.CoAuthors != nil,
		also: s.keepRevision(in.EditorID),
	}, func(p *postItem) error {
		orig := *p
		defer countRevision(&orig, p)
		if in.CoAuthors != nil {
			if slices.Contains(coAuthors, p.AuthorID) {
				return invalid("coAuthors", "holds the post's own author %q", p.AuthorID)
			}
			p.setCoAuthors(coAuthors)
		}
		if in.Tags != nil {
			p.Tags = tags
		}
		if in.Locale != nil && *in.Locale != p.Locale {
			if p.TransGroup != "" {
				return invalid("locale", "cannot change while the post is linked to translations: unlink it first")
			}
			p.Locale = *in.Locale
		}
		setOpt(&p.Title, in.Title)
		setOpt(&p.Slug, in.Slug)
		setOpt(&p.Excerpt, in.Excerpt)
		if in.Visibility != nil {
			p.setVisibility(*in.Visibility)
		}
		if derived != nil {
			p.Body = derived.Body
			p.setDerived(derived)
		}
		switch {
		case in.RemoveCoverImage:
			p.Cover = nil
		case in.CoverImage != nil:
			p.setCover(in.CoverImage)
		}
		if in.SEO != nil {
			p.patchSEO(in.SEO)
		}
		if in.Categories != nil {
			p.Cats = make([]catRef, len(cats))
			for i, c := range cats {
				p.Cats[i].Slug = c
			}
		}
		return nil
	})
}

// ValidatePostPatch returns the *ValidationError UpdatePost refuses in
// with (its fields, and the hosts of its links, which the Store's settings
// allow or not), or nil, so that a caller can check the input before reads of its
// own; or ctx's error when ctx ends while it renders a new body. It keeps
// what it rendered in in for UpdatePost of the same body, which does not
// render it again.
func (s *Store) ValidatePostPatch(ctx context.Context, in *PostPatch) error {
	_, _, err := s.preparePatch(ctx, in)
	return err
}

// preparePatch validates in and returns its categories' slugs (when it
// sets them) and what its new body derives (when it has one).
func (s *Store) preparePatch(ctx context.Context, in *PostPatch) (cats []string, derived *postItem, err error) {
	seo := SEO{}
	if in.SEO != nil {
		seo = SEO{Title: deref(in.SEO.Title), Description: deref(in.SEO.Description),
			CanonicalURL: deref(in.SEO.CanonicalURL), OGImage: deref(in.SEO.OGImage)}
	}
	err = firstErr(
		validateID("id", in.ID),
		validateOpt(in.Title, func(v string) error { return validateLine("title", v, MaxTitleLength) }),
		validateOpt(in.Slug, func(v string) error { return validateSlug("slug", v) }),
		validateOpt(in.Excerpt, func(v string) error { return validateText("excerpt", v, false, MaxExcerptLength) }),
		validateOpt(in.Body, func(v string) error { return validateBody("body", v, MaxBodyBytes) }),
		validateImage("coverImage", in.CoverImage),
		validateSEO(seo),
		validateVisibilityOpt(in.Visibility),
	)
	if err == nil && in.CoverImage != nil && in.RemoveCoverImage {
		err = invalid("coverImage", "cannot be set and removed at once")
	}
	if err == nil && in.Categories != nil {
		cats, err = validateCategories(*in.Categories)
	}
	if err == nil {
		_, _, err = s.patchAuthorsTags(ctx, in)
	}
	if err == nil {
		err = s.checkPatchLinks(in)
	}
	if err == nil && in.Locale != nil {
		var v string
		v, err = postLocale(*in.Locale)
		in.Locale = &v
	}
	if err != nil || in.Body == nil {
		return cats, nil, err
	}
	if in.rendered != nil && in.rendered.Body == *in.Body {
		return cats, in.rendered, nil
	}
	derived = &postItem{Body: *in.Body}
	if err := s.deriveBody(ctx, derived, true); err != nil {
		return nil, nil, err
	}
	in.rendered = derived
	return cats, derived, nil
}

// Publish publishes a post now, or at in.At: a future time schedules it, a
// past one backdates it. Publishing a published post moves its date.
func (s *Store) Publish(ctx context.Context, in PublishPost) (*Post, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	scheduling := in.At.After(s.Now())
	return s.changePost(ctx, postChange{
		op: "publishPost", id: in.ID, expected: in.ExpectedVersion, key: in.IdempotencyKey, input: in,
		full: scheduling, actor: in.Actor,
	}, func(p *postItem) error {
		at := in.At
		if at.IsZero() {
			at = s.Now()
		}
		p.Status, p.PublishedAt = string(StatusPublished), keys.Time(at)
		if in.SendNewsletter != nil {
			p.NoNewsletter = !*in.SendNewsletter
		}
		return nil
	})
}

// Unpublish turns a published or scheduled post back into a draft.
func (s *Store) Unpublish(ctx context.Context, in PostRef) (*Post, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	return s.changePost(ctx, postChange{
		op: "unpublishPost", id: in.ID, expected: in.ExpectedVersion, key: in.IdempotencyKey, input: in, actor: in.Actor,
	}, func(p *postItem) error {
		if !p.published() {
			return invalid("id", "post is not published")
		}
		p.Status, p.PublishedAt = string(StatusDraft), ""
		return nil
	})
}

// DeletePost deletes a post, its copies, its slug and the slugs it kept as
// redirects (they lead nowhere now, like the post's own) and its
// comments, and returns it as it was.
func (s *Store) DeletePost(ctx context.Context, in PostRef) (*Post, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	p, err := s.changePost(ctx, postChange{
		op: "deletePost", id: in.ID, expected: in.ExpectedVersion, key: in.IdempotencyKey, input: in, actor: in.Actor,
		// The body says which library images the post stops using.
		body: true,
		also: func(ctx context.Context, t *dynamo.Txn, before, after *postItem) error {
			return errors.Join(s.leaveSeries(ctx, t, before, after), s.leaveTranslations(ctx, t, before, after))
		},
	}, nil)
	if err != nil {
		return nil, err
	}
	// Comments can outnumber a transaction's 100 actions; they go after the
	// post, which no reader can reach any more. They go even when the
	// client has gone away meanwhile, as the post has. When they cannot
	// all go, the error matches ErrBusy or ErrUnavailable, and the same
	// call sent again with its idempotency key (which replays the
	// deletion) removes the rest.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := s.deleteComments(cctx, in.ID); err != nil {
		return nil, fmt.Errorf("delete comments of post %q: %w", in.ID, err)
	}
	return p, nil
}

// postChange says what changePost writes, and what it reads first.
type postChange struct {
	// op names the operation and key is the caller's idempotency key
	// (optional): the write is recorded under both, with input, the
	// request a repeat must match.
	op, key string
	input   any
	// id is the post's; expected is the version the caller expects it
	// to have, 0 for any.
	id       string
	expected int64
	// body says the change may set the body: the post is read with its
	// body item. Without it the post is read without (its body item is
	// most of what a long post's read costs) and the write leaves the
	// body item alone; the post it returns is BodyUnread, unless the
	// caller asked for the body with AnswerWithBody.
	body bool
	// newCats are the category slugs the change gives the post, and slug
	// the slug it may give it (empty: none): both are read with the post.
	// admin says whether an admin writes, who may take another author's
	// redirect.
	newCats []string
	slug    string
	admin   bool
	// more are the co-authors and tags the change gives the post, read
	// with it.
	more moreNames
	// actor, when set, must be one of the post's authors as read, its
	// primary one with primaryOnly (mayWrite).
	actor       string
	primaryOnly bool
	// full reads the post's author, categories and STATS too (one more
	// request); a write that schedules the post needs them and turns
	// full on itself.
	full bool
	// also, when set, adds actions to the write's transaction for the
	// post as read and as it is about to be written (after nil: deleted):
	// a revision, the post's series. It runs at every attempt, so what it
	// reads is as fresh as the post.
	also func(ctx context.Context, t *dynamo.Txn, before, after *postItem) error
}

// answerBodyKey is the context key of AnswerWithBody.
type answerBodyKey struct{}

// AnswerWithBody returns ctx asking the post writes made with it to return
// the post with its body, its HTML and its table of contents, read with
// the post in the write's own read (one request either way), for a caller
// that shows them. Without it a write that leaves the body alone (all but
// CreatePost, an UpdatePost that sets the body and RestorePostRevision)
// reads the post without its body item, as GetPostWithoutBody does, and
// returns it BodyUnread: a long post's body is most of what its read
// costs.
func AnswerWithBody(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerBodyKey{}, true)
}

// answersBody reports whether ctx comes from AnswerWithBody.
func answersBody(ctx context.Context) bool {
	v, _ := ctx.Value(answerBodyKey{}).(bool)
	return v
}

// changePost reads the post of c, applies change (nil deletes it) and
// writes the post with all its copies and counters in one transaction,
// retrying when comments, renames or concurrent conflicts got in between.
// It returns the post as written (as it was, for a deletion), a
// *ConflictError when its version is not c.expected, or the error of the
// read, of change or of the write.
func (s *Store) changePost(ctx context.Context, c postChange, change func(*postItem) error) (*Post, error) {
	full := c.full
	body := c.body || answersBody(ctx)
	return idempotent(ctx, s, c.op, c.key, c.input, func(rec *idem) (*Post, error) {
		return dynamo.RetryWrite(ctx, func() (*Post, error) {
			before, r, err := s.readPost(ctx, c.id, c.newCats, c.slug, full, body, c.more)
			if err != nil {
				return nil, err
			}
			if err := mayWrite(before, c.actor, c.primaryOnly); err != nil {
				return nil, err
			}
			if c.expected != 0 && before.Version != c.expected {
				return nil, &ConflictError{CurrentVersion: before.Version}
			}
			var after *postItem
			if change != nil {
				p := *before
				p.Cats = slices.Clone(before.Cats)
				p.CatVer = nil
				p.CoAuthors, p.Tags = slices.Clone(before.CoAuthors), slices.Clone(before.Tags)
				if err := change(&p); err != nil {
					return nil, err
				}
				if p.bodyUnread && (p.Body != "" || p.HTML != "") {
					return nil, fmt.Errorf("%s of post %q: sets a body it did not read", c.op, c.id)
				}
				if p.HTML == "" && p.Body != "" {
					// Written in layout 1, before bodies were rendered:
					// every write of this layout renders it, as Migrate
					// does, which leaves a body that renders to too much
					// HTML without any.
					if err := s.deriveBody(ctx, &p, false); err != nil && !errors.Is(err, ErrInvalidInput) {
						return nil, err
					}
				}
				p.Version++
				p.UpdatedAt = keys.Time(s.Now())
				p.Slugs = holderSlugs(before.Slugs, before.Slug)
				if p.Slug != before.Slug {
					if err := s.claim(ctx, postSlugs(s.ks), c.id, taker{author: before.AuthorID, admin: c.admin}, r.slug); err != nil {
						return nil, err
					}
					p.Slugs, _ = slugHistory(before.Slugs, before.Slug, p.Slug)
				}
				slugs := p.catSlugs()
				r.keep(before)
				if err := r.setNames(&p, slugs); err != nil {
					return nil, err
				}
				after = &p
			}
			if !full && addsEntries(s.ks, before, after, s.nowKey()) {
				// The counters' items are read whenever an entry is added,
				// so that entries whose time has passed are removed.
				full = true
				return nil, dynamo.ErrRetry
			}
			var also func(*dynamo.Txn) error
			if c.also != nil {
				also = func(t *dynamo.Txn) error { return c.also(ctx, t, before, after) }
			}
			out, err := s.writePost(ctx, rec, before, after, r, also)
			if errors.Is(err, errStaleNames) {
				full = true
				return nil, dynamo.ErrRetry
			}
			if after == nil && err == nil {
				out = before.post()
			}
			return out, err
		})
	})
}

// readPost reads a post with the new categories it is about to get and
// the reservation of the slug it may take (when not empty) in one request;
// with body, its body item too, else not (s.ks.PostRead). With full it also
// reads the post's author and current categories, to refresh names a
// rename changed; the author id is only known from the post, so that
// takes a second request.
func (s *Store) readPost(ctx context.Context, id string, newCats []string, slug string, full, body bool, more moreNames) (*postItem, *names, error) {
	if !full {
		if len(newCats) == 0 && slug == "" && len(more.coAuthors) == 0 && len(more.tags) == 0 {
			p, err := s.readPostItems(ctx, id, true, body)
			if err != nil {
				return nil, nil, err
			}
			return p, newNames(), nil
		}
		return s.readNames(ctx, postRead{id, body}, "", newCats, slug, more)
	}
	p, err := s.readPostItems(ctx, id, true, body)
	if err != nil {
		return nil, nil, err
	}
	all := moreNames{
		coAuthors: append(slices.Clone(more.coAuthors), p.coAuthorIDs()...),
		tags:      append(slices.Clone(more.tags), p.tagSlugs()...),
	}
	_, r, err := s.readNames(ctx, postRead{}, p.AuthorID, append(slices.Clone(newCats), p.catSlugs()...), slug, all)
	return p, r, err
}

// writePost writes the change from before (nil: create) to after (nil:
// delete) in one TransactWriteItems: the post, its slug reservation, its
// author and category copies, and the post counts of its author, its
// categories and the blog, and the publication's posts' counter for a
// create or a delete (a *QuotaError past the quota), each guarded by a
// condition. r holds the names copied and the counters' items as read,
// if they were.
func (s *Store) writePost(ctx context.Context, rec *idem, before, after *postItem, r *names, also ...func(*dynamo.Txn) error) (*Post, error) {
	t := s.db.NewTxn()
	if err := postActions(s.ks, t, before, after, r, s.nowKey()); err != nil {
		return nil, err
	}
	if err := s.mediaUsageActions(t, before, after); err != nil {
		return nil, err
	}
	if err := s.countPost(t, before, after); err != nil {
		return nil, err
	}
	for _, add := range also {
		if add == nil {
			continue
		}
		if err := add(t); err != nil {
			return nil, err
		}
	}
	if err := fitsOneTransaction(t, rec); err != nil {
		return nil, err
	}
	var result *Post
	if after != nil {
		p := after.withPostKeys(s.ks)
		// The post as written, body and all, or without its body when
		// the write did not read it (it did not change).
		p.hasBody = !p.bodyUnread
		result = p.post()
	} else {
		result = before.post()
	}
	recorded := result
	if before != nil && after != nil && !bodyChanged(before, after) && !result.BodyUnread {
		// The body did not change: the record leaves it out, as big as
		// it may be, and a repeat answers the post BodyUnread, whose body
		// is read when asked (it is the same unless a later write
		// changed it).
		r := *result
		r.Body, r.BodyHTML, r.TOC, r.BodyUnread = "", "", nil, true
		recorded = &r
	}
	if err := s.record(t, rec, recorded); err != nil {
		return nil, err
	}
	err := s.execCounted(ctx, t, (before == nil) != (after == nil))
	if errors.Is(err, errPostCounter) {
		err = s.postCounterRefused(ctx, before == nil)
	}
	if err != nil {
		return nil, err
	}
	return result, nil
}

// setDerived copies what derive derived from the body of d.
func (it *postItem) setDerived(d *postItem) {
	it.HTML, it.TOC, it.Words, it.Minutes, it.AutoExcerpt = d.HTML, d.TOC, d.Words, d.Minutes, d.AutoExcerpt
	it.RenderVersion = d.RenderVersion
}

func (it *postItem) setCover(img *Image) {
	it.Cover = nil
	if img != nil {
		it.Cover = &imageItem{URL: img.URL, Alt: img.Alt, Width: img.Width, Height: img.Height}
		if m := img.Media; m != nil {
			it.Cover.Media = &imageMediaItem{ID: m.ID, Format: m.Format, Width: m.Width, Height: m.Height, Frames: m.Frames, DominantColor: m.DominantColor}
		}
	}
}

// setSEO sets the SEO fields; none set leaves no attribute at all.
func (it *postItem) setSEO(seo SEO) {
	it.SEO = nil
	if seo != (SEO{}) {
		v := seoItem(seo)
		it.SEO = &v
	}
}

func (it *postItem) patchSEO(p *SEOPatch) {
	var seo SEO
	if it.SEO != nil {
		seo = SEO(*it.SEO)
	}
	setOpt(&seo.Title, p.Title)
	setOpt(&seo.Description, p.Description)
	setOpt(&seo.CanonicalURL, p.CanonicalURL)
	setOpt(&seo.OGImage, p.OGImage)
	setOpt(&seo.NoIndex, p.NoIndex)
	it.setSEO(seo)
}

// holderSlugs returns the slugs of a post or an author as read, with the
// current one alone for an item written before slugs had a history.
func holderSlugs(slugs []string, current string) []string {
	if len(slugs) == 0 && current != "" {
		return []string{current}
	}
	return slugs
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func validateOpt(v *string, check func(string) error) error {
	if v == nil {
		return nil
	}
	return check(*v)
}

func setOpt[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
