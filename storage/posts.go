package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
)

// errStaleNames means an author or category was renamed after the names a
// post write carries were read; the write reads them again.
var errStaleNames = errors.New("author or category renamed during write")

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// CreatePost creates a draft. Its author and categories must exist and its
// slug must be free (ErrSlugTaken); bad input is a *ValidationError.
func (s *Store) CreatePost(ctx context.Context, in NewPost) (*Post, error) {
	cats, err := validateNewPost(&in)
	if err == nil {
		err = s.checkLinkHosts(postLinks(in.CoverImage, &in.SEO)...)
	}
	if err != nil {
		return nil, err
	}
	derived := postItem{Body: in.Body}
	if err := derived.derive(ctx, s.render); err != nil {
		return nil, err
	}
	return idempotent(ctx, s, "createPost", in.IdempotencyKey, in, func(id *idem) (*Post, error) {
		postID := newID()
		return retryWrite(ctx, func() (*Post, error) {
			_, r, err := s.readNames(ctx, "", in.AuthorID, cats, in.Slug)
			if err != nil {
				return nil, err
			}
			if err := s.claim(ctx, postSlugs, postID, taker{author: in.AuthorID, admin: in.Admin}, r.slug); err != nil {
				return nil, err
			}
			now := keyTime(s.Now())
			after := &postItem{
				ID: postID, Slug: in.Slug, Slugs: []string{in.Slug}, Title: in.Title, Excerpt: in.Excerpt, Body: in.Body,
				Status: string(StatusDraft), AuthorID: in.AuthorID,
				CreatedAt: now, UpdatedAt: now, Version: 1,
			}
			after.setDerived(&derived)
			after.setCover(in.CoverImage)
			after.setSEO(in.SEO)
			if err := r.setNames(after, cats); err != nil {
				return nil, err
			}
			out, err := s.writePost(ctx, id, nil, after, r)
			if errors.Is(err, errStaleNames) {
				// A rename, or a write that changed the counters' entries,
				// came between the read and the write: read them again.
				return nil, errRetry
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
	if cover != nil {
		links = append([][2]string{{"coverImage.url", cover.URL}}, links...)
	}
	return links
}

func validateNewPost(in *NewPost) ([]string, error) {
	cats, err := validateCategories(in.Categories)
	if err != nil {
		return nil, err
	}
	return cats, firstErr(
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
	if in.ExpectedVersion < 1 {
		// A version no post has: the write fails with a ConflictError
		// that tells the current one.
		in.ExpectedVersion = NoVersion
	}
	return s.changePost(ctx, "updatePost", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, cats, taking{deref(in.Slug), in.Admin}, false, func(p *postItem) error {
		setOpt(&p.Title, in.Title)
		setOpt(&p.Slug, in.Slug)
		setOpt(&p.Excerpt, in.Excerpt)
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
	)
	if err == nil && in.CoverImage != nil && in.RemoveCoverImage {
		err = invalid("coverImage", "cannot be set and removed at once")
	}
	if err == nil && in.Categories != nil {
		cats, err = validateCategories(*in.Categories)
	}
	if err == nil {
		err = s.checkPatchLinks(in)
	}
	if err != nil || in.Body == nil {
		return cats, nil, err
	}
	if in.rendered != nil && in.rendered.Body == *in.Body {
		return cats, in.rendered, nil
	}
	derived = &postItem{Body: *in.Body}
	if err := derived.derive(ctx, s.render); err != nil {
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
	return s.changePost(ctx, "publishPost", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, nil, taking{}, scheduling, func(p *postItem) error {
		at := in.At
		if at.IsZero() {
			at = s.Now()
		}
		p.Status, p.PublishedAt = string(StatusPublished), keyTime(at)
		return nil
	})
}

// Unpublish turns a published or scheduled post back into a draft.
func (s *Store) Unpublish(ctx context.Context, in PostRef) (*Post, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	return s.changePost(ctx, "unpublishPost", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, nil, taking{}, false, func(p *postItem) error {
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
	p, err := s.changePost(ctx, "deletePost", in.ID, in.ExpectedVersion, in.IdempotencyKey, in, nil, taking{}, false, nil)
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

// cleanupTimeout bounds the removal of a deleted post's comments.
const cleanupTimeout = time.Minute

// changePost reads a post, applies change (nil deletes it) and writes the
// post with all its copies and counters in one transaction, retrying when
// comments, renames or concurrent conflicts got in between. New category
// slugs in newCats, and the reservation of slug.slug when it is not empty
// (the slug the change may give the post), are read with the post. With full,
// the post's author, categories and STATS are read too (one more
// request); a write that schedules the post needs them and turns full on
// itself.
func (s *Store) changePost(ctx context.Context, op, id string, expected int64, k string, input any, newCats []string, slug taking, full bool, change func(*postItem) error) (*Post, error) {
	return idempotent(ctx, s, op, k, input, func(rec *idem) (*Post, error) {
		return retryWrite(ctx, func() (*Post, error) {
			before, r, err := s.readPost(ctx, id, newCats, slug.slug, full)
			if err != nil {
				return nil, err
			}
			if expected != 0 && before.Version != expected {
				return nil, &ConflictError{CurrentVersion: before.Version}
			}
			var after *postItem
			if change != nil {
				p := *before
				p.Cats = slices.Clone(before.Cats)
				p.CatVer = nil
				if err := change(&p); err != nil {
					return nil, err
				}
				if p.HTML == "" && p.Body != "" {
					// Written in layout 1, before bodies were rendered:
					// every write of this layout renders it, as Migrate
					// does, which leaves a body that renders to too much
					// HTML without any.
					if err := p.derive(ctx, s.render); err != nil && !errors.Is(err, ErrInvalidInput) {
						return nil, err
					}
				}
				p.Version++
				p.UpdatedAt = keyTime(s.Now())
				p.Slugs = holderSlugs(before.Slugs, before.Slug)
				if p.Slug != before.Slug {
					if err := s.claim(ctx, postSlugs, id, taker{author: before.AuthorID, admin: slug.admin}, r.slug); err != nil {
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
			if !full && addsEntries(before, after, s.nowKey()) {
				// The counters' items are read whenever an entry is added,
				// so that entries whose time has passed are removed.
				full = true
				return nil, errRetry
			}
			out, err := s.writePost(ctx, rec, before, after, r)
			if errors.Is(err, errStaleNames) {
				full = true
				return nil, errRetry
			}
			if after == nil && err == nil {
				out = before.post()
			}
			return out, err
		})
	})
}

// taking is the slug a post write may give the post (empty: none), and
// whether an admin writes, who may take another author's redirect.
type taking struct {
	slug  string
	admin bool
}

// names holds the author and categories a post write copies names from,
// and, when they were read, STATS: the items that count the post; and the
// reservation of the slug the post takes, as read (nil: free).
type names struct {
	author *authorItem
	cats   map[string]*categoryItem
	stats  *statsItem
	slug   *reservation
}

// schedules returns the scheduled-post entries of the counters r read, by
// key. Items made up from a post's copied names (keep) have none.
func (r *names) schedules() map[key]schedule {
	out := map[key]schedule{}
	if r.author != nil {
		out[authorKey(r.author.ID)] = r.author.Scheduled
	}
	for slug, c := range r.cats {
		out[categoryKey(slug)] = c.Scheduled
	}
	if r.stats != nil {
		out[statsItemKey()] = r.stats.Scheduled
	}
	return out
}

// keep lets names the post already carries stand when they were not read.
func (r *names) keep(p *postItem) {
	if r.author == nil {
		r.author = &authorItem{ID: p.AuthorID, Name: p.AuthorName, Slug: p.AuthorSlug, NameVer: p.AuthorVer}
	}
	for _, c := range p.Cats {
		if r.cats[c.Slug] == nil {
			r.cats[c.Slug] = &categoryItem{Slug: c.Slug, Name: c.Name, NameVer: p.CatVer[c.Slug]}
		}
	}
}

// setNames copies the author's and the categories' names into p, for the
// categories slugs in that order.
func (r *names) setNames(p *postItem, slugs []string) error {
	if r.author == nil {
		return invalid("authorId", "no author has this id")
	}
	p.AuthorName, p.AuthorSlug, p.AuthorVer = r.author.Name, r.author.Slug, r.author.NameVer
	p.Cats = make([]catRef, len(slugs))
	p.CatVer = make(map[string]int64, len(slugs))
	for i, slug := range slugs {
		c := r.cats[slug]
		if c == nil {
			return invalid("categories", "no category has the slug %q", slug)
		}
		p.Cats[i] = catRef{Slug: slug, Name: c.Name}
		p.CatVer[slug] = c.NameVer
	}
	return nil
}

// readNames reads an author, categories and STATS in one BatchGetItem,
// with the post postID when it is not empty (ErrNotFound when it is
// missing), and the reservation of the post slug slug when it is not
// empty.
func (s *Store) readNames(ctx context.Context, postID, authorID string, slugs []string, slug string) (*postItem, *names, error) {
	var keys []key
	if postID != "" {
		keys = append(keys, postKey(postID))
	}
	if authorID != "" {
		keys = append(keys, authorKey(authorID))
	}
	if slug != "" {
		keys = append(keys, slugKey(slug))
	}
	keys = append(keys, mapKeys(slugs, categoryKey)...)
	keys = append(keys, statsItemKey())
	found, err := s.batchGet(ctx, keys, true)
	if err != nil {
		return nil, nil, err
	}
	var p *postItem
	if postID != "" {
		it, ok := found[postKey(postID)]
		if !ok {
			return nil, nil, fmt.Errorf("post %q: %w", postID, ErrNotFound)
		}
		p = &postItem{}
		if err := attributevalue.UnmarshalMap(it, p); err != nil {
			return nil, nil, fmt.Errorf("decode post: %w", err)
		}
	}
	r := &names{cats: map[string]*categoryItem{}}
	if slug != "" {
		if r.slug, err = postSlugs.decodeReservation(found, slug); err != nil {
			return nil, nil, err
		}
	}
	if it, ok := found[authorKey(authorID)]; ok && authorID != "" {
		r.author = &authorItem{}
		if err := attributevalue.UnmarshalMap(it, r.author); err != nil {
			return nil, nil, fmt.Errorf("decode author: %w", err)
		}
	}
	for _, slug := range slugs {
		if it, ok := found[categoryKey(slug)]; ok {
			c := &categoryItem{}
			if err := attributevalue.UnmarshalMap(it, c); err != nil {
				return nil, nil, fmt.Errorf("decode category: %w", err)
			}
			r.cats[slug] = c
		}
	}
	if it, ok := found[statsItemKey()]; ok {
		r.stats = &statsItem{}
		if err := attributevalue.UnmarshalMap(it, r.stats); err != nil {
			return nil, nil, fmt.Errorf("decode stats: %w", err)
		}
	}
	return p, r, nil
}

// readPost reads a post with the new categories it is about to get and
// the reservation of the slug it may take (when not empty) in one request.
// With full it also reads the post's author and current categories, to
// refresh names a rename changed; the author id is only known from the
// post, so that takes a second request.
func (s *Store) readPost(ctx context.Context, id string, newCats []string, slug string, full bool) (*postItem, *names, error) {
	if !full {
		if len(newCats) == 0 && slug == "" {
			var p postItem
			if err := s.getItem(ctx, postKey(id), true, &p); err != nil {
				return nil, nil, fmt.Errorf("post %q: %w", id, err)
			}
			return &p, &names{cats: map[string]*categoryItem{}}, nil
		}
		return s.readNames(ctx, id, "", newCats, slug)
	}
	var p postItem
	if err := s.getItem(ctx, postKey(id), true, &p); err != nil {
		return nil, nil, fmt.Errorf("post %q: %w", id, err)
	}
	_, r, err := s.readNames(ctx, "", p.AuthorID, append(slices.Clone(newCats), p.catSlugs()...), slug)
	return &p, r, err
}

// writePost writes the change from before (nil: create) to after (nil:
// delete) in one TransactWriteItems: the post, its slug reservation, its
// author and category copies, and the post counts of its author, its
// categories and the blog, each guarded by a condition. r holds the names
// copied and the counters' items as read, if they were.
func (s *Store) writePost(ctx context.Context, rec *idem, before, after *postItem, r *names) (*Post, error) {
	t := s.newTxn()
	if err := postActions(t, before, after, r, s.nowKey()); err != nil {
		return nil, err
	}
	var result *Post
	if after != nil {
		p := after.withPostKeys()
		result = p.post()
	} else {
		result = before.post()
	}
	if err := s.record(t, rec, result); err != nil {
		return nil, err
	}
	if err := s.exec(ctx, t); err != nil {
		return nil, err
	}
	return result, nil
}

func postActions(t *txn, before, after *postItem, r *names, now string) error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	id := ""
	switch {
	case before == nil:
		id = after.ID
		add(t.put(after.withPostKeys(), ptr(condNotExists()), ErrAlreadyExists))
	case after == nil:
		id = before.ID
		add(t.delete(postKey(id), ptr(unchanged(before)), errRetry))
	default:
		id = before.ID
		add(t.put(after.withPostKeys(), ptr(unchanged(before)), errRetry))
	}

	// Slug reservations: the current one and the redirects.
	var from, to []string
	if before != nil {
		from = holderSlugs(before.Slugs, before.Slug)
	}
	if after != nil {
		to = after.Slugs
	}
	add(postSlugs.moveSlug(t, id, from, to, r.slug))

	// Copies: put every copy of the new state, delete those of the old
	// state that the new one does not have.
	keep := map[key]bool{}
	if after.published() {
		ac := after.authorCopy()
		keep[key{ac.PK, ac.SK}] = true
		add(t.put(ac, nil, nil))
		for _, c := range after.Cats {
			cc := after.categoryCopy(c.Slug)
			keep[key{cc.PK, cc.SK}] = true
			add(t.put(cc, nil, nil))
		}
	}
	if before != nil {
		for _, k := range before.copyKeys() {
			if !keep[k] {
				add(t.delete(k, nil, nil))
			}
		}
	}

	// Counters, their scheduled-post entries, and the guard that the names
	// copied are still current.
	for _, c := range counterChanges(before, after, r, now) {
		add(c.action(t, id, now))
	}
	return errors.Join(errs...)
}

// counterChange is what a post write does to one item that counts posts:
// its author, one of its categories, or STATS.
type counterChange struct {
	key    key
	stats  bool
	delta  int64
	months map[string]int64             // what to add to month attributes, by name
	guard  *expression.ConditionBuilder // the names copied are current
	had    string                       // publishedAt of the post's entry before, if it was scheduled
	want   string                       // publishedAt of the post's entry after, if it is scheduled
	read   schedule                     // the item's entries as read, if it was
}

// counterChanges returns the changes a write from before to after makes to
// the counters of both. A post counts in each while published; an entry
// records it there while its publishedAt is after now.
func counterChanges(before, after *postItem, r *names, now string) []*counterChange {
	read := r.schedules()
	var out []*counterChange
	byKey := map[key]*counterChange{}
	// counters returns the changes to p's author, categories and STATS.
	counters := func(p *postItem) []*counterChange {
		keys := append([]key{authorKey(p.AuthorID)}, mapKeys(p.catSlugs(), categoryKey)...)
		keys = append(keys, statsItemKey())
		cs := make([]*counterChange, len(keys))
		for i, k := range keys {
			if byKey[k] == nil {
				byKey[k] = &counterChange{key: k, stats: k == statsItemKey(), read: read[k], months: map[string]int64{}}
				out = append(out, byKey[k])
			}
			cs[i] = byKey[k]
		}
		return cs
	}
	if after != nil {
		cs := counters(after)
		cs[0].guard = ptr(nameVer(after.AuthorVer))
		for i, c := range after.Cats {
			cs[i+1].guard = ptr(nameVer(after.CatVer[c.Slug]))
		}
	}
	if before.published() {
		for _, c := range counters(before) {
			c.delta--
			if before.countedByMonth() {
				c.months[monthAttr(before.PublishedAt)]--
			}
			if before.PublishedAt > now {
				c.had = before.PublishedAt
			}
		}
	}
	if after.published() {
		for _, c := range counters(after) {
			c.delta++
			c.months[monthAttr(after.PublishedAt)]++
			if after.PublishedAt > now {
				c.want = after.PublishedAt
			}
		}
	}
	return out
}

// countedByMonth reports whether the counters count the post p in its
// month: every write of this layout gives a post its slugs and counts it,
// so a post without slugs was last written in layout 1, before months
// were counted, and is counted when Migrate writes it again.
func (it *postItem) countedByMonth() bool { return len(it.Slugs) > 0 }

// addsEntries reports whether the write from before to after records the
// post as scheduled in a counter that does not have it so yet.
func addsEntries(before, after *postItem, now string) bool {
	for _, c := range counterChanges(before, after, &names{}, now) {
		if c.want != "" && c.want != c.had {
			return true
		}
	}
	return false
}

// action returns the transaction's action for c, for the post id: one
// update of the counter (a TransactWriteItems takes one action per item),
// a check of the names' guard alone, or nothing. Entries of other posts
// whose time has passed, in an item that was read, are removed on the way,
// each on the condition that it is still as read.
func (c *counterChange) action(t *txn, id, now string) error {
	var upd expression.UpdateBuilder
	changed := false
	cond := c.guard
	and := func(b expression.ConditionBuilder) {
		if cond == nil {
			cond = &b
		} else {
			cond = ptr(cond.And(b))
		}
	}
	if c.delta != 0 {
		upd, changed = upd.Add(expression.Name("postCount"), expression.Value(c.delta)), true
	}
	for _, m := range slices.Sorted(maps.Keys(c.months)) {
		if d := c.months[m]; d != 0 {
			upd, changed = upd.Add(expression.Name(m), expression.Value(d)), true
		}
	}
	switch {
	case c.want != "" && c.want != c.had && c.read == nil:
		// The first entry makes the map; a write that adds one has read
		// the item, so nil means it has none.
		upd = upd.Set(expression.Name(attrScheduled), expression.Value(map[string]string{id: c.want}))
		and(expression.Name(attrScheduled).AttributeNotExists())
		changed = true
	case c.want != "" && c.want != c.had:
		upd, changed = upd.Set(scheduledPath(id), expression.Value(c.want)), true
	case c.want == "" && c.had != "":
		upd, changed = upd.Remove(scheduledPath(id)), true
	}
	for _, other := range slices.Sorted(maps.Keys(c.read)) {
		if at := c.read[other]; other != id && at <= now {
			upd, changed = upd.Remove(scheduledPath(other)), true
			and(scheduledPath(other).Equal(expression.Value(at)))
		}
	}
	switch {
	case changed && c.stats:
		// STATS is made by the first write that counts something.
		return t.update(c.key, upd.Set(expression.Name("type"), expression.Value(typeStats)), cond, errStaleNames)
	case changed:
		and(condExists())
		return t.update(c.key, upd, cond, errStaleNames)
	case cond != nil:
		return t.check(c.key, *cond, errStaleNames)
	}
	return nil
}

// unchanged is the condition that the post is still as it was read:
// same version, and same counts, which the new state copies. Comments
// change the counts without the version, and commentCount can come back
// to where it was while threadCount does not, so both are compared; a
// post that takes this one's redirect changes its slugs (see slugs.go).
func unchanged(p *postItem) expression.ConditionBuilder {
	threads := expression.Name("threadCount").Equal(expression.Value(p.ThreadCount))
	if p.ThreadCount == 0 {
		threads = expression.Name("threadCount").AttributeNotExists().Or(threads)
	}
	return condVersion(p.Version).
		And(expression.Name("commentCount").Equal(expression.Value(p.CommentCount))).
		And(threads).
		And(expression.Name("authorVer").Equal(expression.Value(p.AuthorVer))).
		And(sameSlugs(p.Slugs))
}

func nameVer(v int64) expression.ConditionBuilder {
	return expression.Name("nameVer").Equal(expression.Value(v))
}

// setDerived copies what derive derived from the body of d.
func (it *postItem) setDerived(d *postItem) {
	it.HTML, it.TOC, it.Words, it.Minutes, it.AutoExcerpt = d.HTML, d.TOC, d.Words, d.Minutes, d.AutoExcerpt
}

func (it *postItem) setCover(img *Image) {
	it.Cover = nil
	if img != nil {
		it.Cover = &imageItem{URL: img.URL, Alt: img.Alt, Width: img.Width, Height: img.Height}
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

func setOpt(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// deleteComments removes every comment and reply of a deleted post,
// published or held, and the admins' queue entries of the pending ones,
// 25 at a time, retrying unprocessed items.
func (s *Store) deleteComments(ctx context.Context, postID string) error {
	for _, prefix := range []string{prefixComment, prefixThread, prefixHeld} {
		expr, err := buildExpr(expression.NewBuilder().
			WithKeyCondition(expression.Key(attrPK).Equal(expression.Value(prefixPost + postID)).
				And(expression.Key(attrSK).BeginsWith(prefix))).
			WithProjection(expression.NamesList(expression.Name(attrPK), expression.Name(attrSK))))
		if err != nil {
			return err
		}
		pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    expr.KeyCondition(),
			ProjectionExpression:      expr.Projection(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
			ConsistentRead:            aws.Bool(true),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return err
			}
			items := page.Items
			if prefix == prefixHeld {
				items = withQueueEntries(postID, items)
			}
			for chunk := range slices.Chunk(items, 25) {
				if err := s.batchDelete(ctx, chunk); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// withQueueEntries returns the keys of held comments of postID with the
// keys of their entries in the admins' queue, which only pending ones
// have; deleting a key that holds nothing is harmless.
func withQueueEntries(postID string, held []item) []item {
	out := slices.Clone(held)
	for _, it := range held {
		if k, ok := queueKeyOfHeld(postID, itemKey(it).SK); ok {
			out = append(out, mustKey(k))
		}
	}
	return out
}

func (s *Store) batchDelete(ctx context.Context, keys []item) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	for attempt := 1; len(reqs) > 0; attempt++ {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.table: reqs},
		})
		var conflict *types.TransactionConflictException
		switch {
		case errors.As(err, &conflict):
			// A transaction on one of the comments is under way (one that
			// read the post before it went, and will fail): all again.
		case err != nil:
			return fmt.Errorf("batch delete: %w", err)
		default:
			reqs = out.UnprocessedItems[s.table]
		}
		if len(reqs) > 0 {
			if attempt == maxBatchAttempts {
				return ErrBusy
			}
			if err := sleep(ctx, attempt); err != nil {
				return err
			}
		}
	}
	return nil
}
