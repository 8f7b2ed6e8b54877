package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// A post is written with its copies: the names it copies from its author
// and categories (guarded by their nameVer, so a rename is never lost),
// the copies of itself in its author's and categories' partitions, its
// slug reservations and its counters, all in one transaction. doc.go
// lists the items; check.go verifies they agree.

// names holds the author and categories a post write copies names from,
// and, when they were read, STATS: the items that count the post; and the
// reservation of the slug the post takes, as read (nil: free).
type names struct {
	author *authorItem
	cats   map[string]*categoryItem
	stats  *statsItem
	slug   *reservation
	// coAuthors and tags are the post's co-authors and tags (and the tags
	// those were merged into), by id and slug (coauthors.go, tags.go).
	coAuthors map[string]*authorItem
	tags      map[string]*tagItem
}

// moreNames are the co-authors and tags a post write reads besides its
// author and categories.
type moreNames struct {
	coAuthors, tags []string
}

// newNames returns names with nothing read.
func newNames() *names {
	return &names{cats: map[string]*categoryItem{}, coAuthors: map[string]*authorItem{}, tags: map[string]*tagItem{}}
}

// schedules returns the scheduled-post entries of the counters r read, by
// key. Items made up from a post's copied names (keep) have none.
func (r *names) schedules(ks keys.Space) map[key]schedule {
	out := map[key]schedule{}
	if r.author != nil {
		out[ks.Author(r.author.ID)] = r.author.Scheduled
	}
	for slug, c := range r.cats {
		out[ks.Category(slug)] = c.Scheduled
	}
	if r.stats != nil {
		out[ks.Stats()] = r.stats.Scheduled
	}
	for id, a := range r.coAuthors {
		out[ks.Author(id)] = a.Scheduled
	}
	for slug, t := range r.tags {
		if t != nil {
			out[ks.Tag(slug)] = t.Scheduled
		}
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
	if r.coAuthors == nil {
		r.coAuthors = map[string]*authorItem{}
	}
	if r.tags == nil {
		r.tags = map[string]*tagItem{}
	}
	for _, a := range p.CoAuthors {
		if r.coAuthors[a.ID] == nil {
			r.coAuthors[a.ID] = &authorItem{ID: a.ID, Name: a.Name, Slug: a.Slug, NameVer: p.CoAuthorVer[a.ID]}
		}
	}
	for _, t := range p.Tags {
		if r.tags[t.Slug] == nil {
			r.tags[t.Slug] = &tagItem{Slug: t.Slug, Name: t.Name, NameVer: p.TagVer[t.Slug]}
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
	// A post without categories has no catVer: DynamoDB Local writes an
	// empty map into a stream image without its type, which the SDK
	// cannot read back.
	p.CatVer = nil
	if len(slugs) > 0 {
		p.CatVer = make(map[string]int64, len(slugs))
	}
	for i, slug := range slugs {
		c := r.cats[slug]
		if c == nil {
			return invalid("categories", "no category has the slug %q", slug)
		}
		p.Cats[i] = catRef{Slug: slug, Name: c.Name}
		p.CatVer[slug] = c.NameVer
	}
	if r.coAuthors == nil {
		r.coAuthors = map[string]*authorItem{}
	}
	if r.tags == nil {
		r.tags = map[string]*tagItem{}
	}
	if err := r.setCoAuthorNames(p); err != nil {
		return err
	}
	return r.setTagNames(p)
}

// postRead names the post a read takes with others (none when id is
// empty), and whether with its body item (s.ks.PostRead).
type postRead struct {
	id   string
	body bool
}

// readNames reads an author, categories and STATS in one BatchGetItem,
// with the post post.id when it is not empty (ErrNotFound when it is
// missing), the reservation of the post slug slug when it is not empty,
// and the co-authors and tags of more (and, one more request a hop, the
// tags those were merged into).
func (s *Store) readNames(ctx context.Context, post postRead, authorID string, slugs []string, slug string, more moreNames) (*postItem, *names, error) {
	var ks []key
	if post.id != "" {
		ks = append(ks, s.ks.PostRead(post.id, post.body)...)
	}
	if authorID != "" {
		ks = append(ks, s.ks.Author(authorID))
	}
	if slug != "" {
		ks = append(ks, s.ks.Slug(slug))
	}
	ks = append(ks, mapKeys(slugs, s.ks.Category)...)
	for _, id := range more.coAuthors {
		if id != authorID && !slices.Contains(ks, s.ks.Author(id)) {
			ks = append(ks, s.ks.Author(id))
		}
	}
	for _, t := range more.tags {
		if !slices.Contains(ks, s.ks.Tag(t)) {
			ks = append(ks, s.ks.Tag(t))
		}
	}
	ks = append(ks, s.ks.Stats())
	found, err := s.db.BatchGet(ctx, ks, true)
	if err != nil {
		return nil, nil, err
	}
	var p *postItem
	if post.id != "" {
		if p, err = decodePost(s.ks, found, post.id); err != nil {
			return nil, nil, err
		}
		if !post.body {
			p.leftBody()
		}
	}
	r := newNames()
	for _, id := range more.coAuthors {
		if it, ok := found[s.ks.Author(id)]; ok {
			a := &authorItem{}
			if err := attributevalue.UnmarshalMap(it, a); err != nil {
				return nil, nil, fmt.Errorf("decode author: %w", err)
			}
			r.coAuthors[id] = a
		}
	}
	for _, t := range more.tags {
		if it, ok := found[s.ks.Tag(t)]; ok {
			if r.tags[t], err = decodeTag(it); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := s.readMergeTargets(ctx, r); err != nil {
		return nil, nil, err
	}
	if slug != "" {
		if r.slug, err = postSlugs(s.ks).decodeReservation(found, slug); err != nil {
			return nil, nil, err
		}
	}
	if it, ok := found[s.ks.Author(authorID)]; ok && authorID != "" {
		r.author = &authorItem{}
		if err := attributevalue.UnmarshalMap(it, r.author); err != nil {
			return nil, nil, fmt.Errorf("decode author: %w", err)
		}
	}
	for _, slug := range slugs {
		if it, ok := found[s.ks.Category(slug)]; ok {
			c := &categoryItem{}
			if err := attributevalue.UnmarshalMap(it, c); err != nil {
				return nil, nil, fmt.Errorf("decode category: %w", err)
			}
			r.cats[slug] = c
		}
	}
	if it, ok := found[s.ks.Stats()]; ok {
		r.stats = &statsItem{}
		if err := attributevalue.UnmarshalMap(it, r.stats); err != nil {
			return nil, nil, fmt.Errorf("decode stats: %w", err)
		}
	}
	return p, r, nil
}

func postActions(ks keys.Space, t *dynamo.Txn, before, after *postItem, r *names, now string) error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	// The go-live marker first (it is part of the post item put below),
	// and the schedule items it moves.
	add(scheduleActions(ks, t, before, after, now))
	add(popularActions(ks, t, before, after, now))
	id := ""
	switch {
	case before == nil:
		id = after.ID
		add(t.Put(after.stored(ks), ptr(dynamo.CondNotExists()), ErrAlreadyExists))
	case after == nil:
		id = before.ID
		add(t.Delete(ks.Post(id), ptr(unchanged(before)), dynamo.ErrRetry))
	default:
		id = before.ID
		add(t.Put(after.stored(ks), ptr(unchanged(before)), dynamo.ErrRetry))
	}
	// The body item when the body changes, the count item when what a
	// comment checks does (postparts.go).
	add(partActions(ks, t, before, after))

	// Slug reservations: the current one and the redirects.
	var from, to []string
	if before != nil {
		from = holderSlugs(before.Slugs, before.Slug)
	}
	if after != nil {
		to = after.Slugs
	}
	if r.slug != nil && after != nil {
		r.slug.ByDraft = !after.published()
	}
	add(postSlugsAt(ks, after.publicAt()).moveSlug(t, id, from, to, r.slug))
	add(publicAtAction(ks, t, id, before, after, from, to))

	// Copies: put every copy of the new state, delete those of the old
	// state that the new one does not have.
	keep := map[key]bool{}
	if after.published() {
		for _, authorID := range after.authorIDs() {
			ac := after.authorCopyOf(ks, authorID)
			keep[key{PK: ac.PK, SK: ac.SK}] = true
			add(t.Put(ac, nil, nil))
		}
		for _, c := range after.Cats {
			cc := after.categoryCopy(ks, c.Slug)
			keep[key{PK: cc.PK, SK: cc.SK}] = true
			add(t.Put(cc, nil, nil))
		}
		for _, tg := range after.Tags {
			tc := after.tagCopy(ks, tg.Slug)
			keep[key{PK: tc.PK, SK: tc.SK}] = true
			add(t.Put(tc, nil, nil))
		}
		if after.Featured {
			fc := after.featuredCopy(ks)
			keep[key{PK: fc.PK, SK: fc.SK}] = true
			add(t.Put(fc, nil, nil))
		}
		if after.Locale != "" {
			lc := after.localeCopy(ks)
			keep[key{PK: lc.PK, SK: lc.SK}] = true
			add(t.Put(lc, nil, nil))
		}
		for _, lc := range after.localeListCopies(ks) {
			keep[key{PK: lc.PK, SK: lc.SK}] = true
			add(t.Put(lc, nil, nil))
		}
	}
	if before != nil {
		for _, k := range before.copyKeys(ks) {
			if !keep[k] {
				add(t.Delete(k, nil, nil))
			}
		}
	}

	// Counters, their scheduled-post entries, and the guard that the names
	// copied are still current.
	for _, c := range counterChanges(ks, before, after, r, now) {
		add(c.action(ks, t, id, now))
	}
	return errors.Join(errs...)
}

// unchanged is the condition that the post is still as it was read:
// same version, and same counts, which the new state copies. Comments
// change the counts without the version, and commentCount can come back
// to where it was while threadCount does not, so both are compared; a
// post that takes this one's redirect changes its slugs (see slugs.go);
// going live removes the go-live marker without a new version, and the
// new state must not put it back (schedule.go).
func unchanged(p *postItem) expression.ConditionBuilder {
	threads := expression.Name("threadCount").Equal(expression.Value(p.ThreadCount))
	if p.ThreadCount == 0 {
		threads = expression.Name("threadCount").AttributeNotExists().Or(threads)
	}
	return condVersion(p.Version).
		And(expression.Name("commentCount").Equal(expression.Value(p.CommentCount))).
		And(threads).
		And(expression.Name("authorVer").Equal(expression.Value(p.AuthorVer))).
		And(sameSlugs(p.Slugs)).
		And(condMarker(p.GoLiveAt)).
		And(condTransVer(p.TransVer))
}

func nameVer(v int64) expression.ConditionBuilder {
	return expression.Name("nameVer").Equal(expression.Value(v))
}
