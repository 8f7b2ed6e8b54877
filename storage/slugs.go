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

// Slugs and their history. A post and an author each hold their current
// slug and up to MaxRedirects earlier ones, newest first, in the list
// "slugs" of their item (the current one first, so the list is never
// empty); each slug has a reservation item naming its holder, marked
// "redirect" for an earlier one. A reading by slug finds the holder either
// way and shows its current slug, so a frontend can redirect.
//
// A free slug may be taken; a current slug may not (ErrSlugTaken). One
// another holder keeps only as a redirect may be taken by a post of the
// same author, or by an admin's write (taker.admin); by anyone else it is
// ErrSlugTaken too, so that old links never turn to another author's
// content. An author's redirect is another author's, so only an admin
// takes it. Taking another's redirect
// also takes it out of that holder's list, in the same transaction, on
// the condition that the list is as read. The list only changes so, or by
// the holder's own writes, which check their version: a holder's writes
// compare the list too, so none puts back a slug taken meanwhile.

// slugSpace is one namespace of slugs: posts' or authors'.
type slugSpace struct {
	key    func(slug string) key
	owner  string // the reservation's attribute that names the holder
	holder func(id string) key
	item   func(slug, owner string, redirect bool) any
	// authorOf returns the author of a holder as read.
	authorOf func(h *slugHolder) string
}

// slugHolder is what claim reads of a slug's holder.
type slugHolder struct {
	ID       string   `dynamodbav:"id"`
	AuthorID string   `dynamodbav:"authorId"`
	Slugs    []string `dynamodbav:"slugs"`
}

// taker is who takes a slug: the author of the post, or the author,
// that takes it, and whether an admin writes.
type taker struct {
	author string
	admin  bool
}

// postSlugs is the posts' slugs in the publication ks.
func postSlugs(ks keys.Space) slugSpace { return postSlugsAt(ks, "") }

// postSlugsAt is postSlugs for writing the slugs of a post whose current
// slug's reservation records publicAt (slugItem.PublicAt; "" for none).
func postSlugsAt(ks keys.Space, publicAt string) slugSpace {
	return slugSpace{
		key:      ks.Slug,
		owner:    "postId",
		holder:   ks.Post,
		authorOf: func(h *slugHolder) string { return h.AuthorID },
		item: func(slug, owner string, redirect bool) any {
			k := ks.Slug(slug)
			it := slugItem{PK: k.PK, SK: k.SK, Type: typeSlug, PostID: owner, Redirect: redirect}
			if !redirect {
				it.PublicAt = publicAt
			}
			return it
		},
	}
}

// publicAtAction adds to t, for a post whose current slug stays the same
// (moveSlug writes nothing then), the update of that slug's reservation
// when the publishedAt it records (slugItem.PublicAt) changes.
func publicAtAction(ks keys.Space, t *dynamo.Txn, id string, before, after *postItem, from, to []string) error {
	if before == nil || after == nil || len(from) == 0 || len(to) == 0 || from[0] != to[0] {
		return nil
	}
	at := after.publicAt()
	if at == before.publicAt() {
		return nil
	}
	update := expression.Remove(expression.Name("publicAt"))
	if at != "" {
		update = expression.Set(expression.Name("publicAt"), expression.Value(at))
	}
	mine := expression.Name("postId").Equal(expression.Value(id))
	return t.Update(ks.Slug(to[0]), update, &mine, dynamo.ErrRetry)
}

// authorSlugs is the authors' slugs in the publication ks.
func authorSlugs(ks keys.Space) slugSpace {
	return slugSpace{
		key:      ks.AuthorSlug,
		owner:    "authorId",
		holder:   ks.Author,
		authorOf: func(h *slugHolder) string { return h.ID },
		item: func(slug, owner string, redirect bool) any {
			k := ks.AuthorSlug(slug)
			return authorSlugItem{PK: k.PK, SK: k.SK, Type: typeAuthorSlug, AuthorID: owner, Redirect: redirect}
		},
	}
}

// foreignHolder stands for the holder of a reservation of another kind in
// the same namespace: no id is empty, so it is never the taker's.
const foreignHolder = ""

// reservation is a slug's reservation as read.
type reservation struct {
	Owner    string
	Redirect bool
	// OwnerSlugs are the slugs of Owner as read, when Redirect is set and
	// Owner is another holder: the list to take the slug out of.
	OwnerSlugs []string
	// ByDraft is set when a draft takes the slug: a redirect it takes
	// from another post keeps leading readers to that post until the
	// draft is public (slugItem.PrevPostID).
	ByDraft bool
}

// decodeReservation returns the reservation of slug in found, or nil.
func (sp slugSpace) decodeReservation(found map[key]item, slug string) (*reservation, error) {
	it, ok := found[sp.key(slug)]
	if !ok {
		return nil, nil
	}
	var raw map[string]any
	if err := attributevalue.UnmarshalMap(it, &raw); err != nil {
		return nil, fmt.Errorf("decode slug %q: %w", slug, err)
	}
	owner, _ := raw[sp.owner].(string)
	redirect, _ := raw["redirect"].(bool)
	if owner == "" {
		// The slug is held by the other kind of holder of the namespace
		// (a page's reservation read for a post, or a post's for a page):
		// taken, current or not, so old links never turn to the other.
		return &reservation{Owner: foreignHolder}, nil
	}
	return &reservation{Owner: owner, Redirect: redirect}, nil
}

// claim decides whether the holder id, written by by, may take slug,
// reserved as res (nil: free). A current slug of another is
// ErrSlugTaken. For another's redirect it reads that holder, with
// ConsistentRead: one more request, only then; a redirect of another
// author's holder is ErrSlugTaken but for an admin's write (a holder's
// author never changes, so the transaction need not check it). A holder
// gone meanwhile makes the write start again.
func (s *Store) claim(ctx context.Context, sp slugSpace, id string, by taker, res *reservation) error {
	switch {
	case res == nil || res.Owner == id:
		return nil
	case !res.Redirect:
		return ErrSlugTaken
	}
	var holder slugHolder
	err := s.db.Get(ctx, sp.holder(res.Owner), true, &holder)
	if errors.Is(err, ErrNotFound) {
		return dynamo.ErrRetry
	}
	if err != nil {
		return fmt.Errorf("holder of slug: %w", err)
	}
	if !by.admin && sp.authorOf(&holder) != by.author {
		return ErrSlugTaken
	}
	res.OwnerSlugs = holder.Slugs
	return nil
}

// slugHistory returns the slugs a holder has once its slug, with the
// slugs before (current first; only the current one for an item written
// before slugs had a history), changes to slug: slug first, then the
// earlier ones, newest first, at most MaxRedirects of them. dropped are
// those pushed out.
func slugHistory(before []string, current, slug string) (after, dropped []string) {
	if len(before) == 0 && current != "" {
		before = []string{current}
	}
	after = []string{slug}
	for _, s := range before {
		if s != slug {
			after = append(after, s)
		}
	}
	if len(after) > 1+MaxRedirects {
		after, dropped = after[:1+MaxRedirects], after[1+MaxRedirects:]
	}
	return after, dropped
}

// sameSlugs is the condition that a holder's slugs are as read.
func sameSlugs(slugs []string) expression.ConditionBuilder {
	if len(slugs) == 0 {
		return expression.AttributeNotExists(expression.Name("slugs"))
	}
	return expression.Name("slugs").Equal(expression.Value(slugs))
}

// moveSlug adds to t what moving the holder id from the slugs before
// (current first; nil for a new holder) to those after writes: the new
// current slug's reservation (res as read, claimed), the old current one
// turned into a redirect, the reservations of redirects pushed out
// deleted, and another holder's list without the slug it gave up. A nil
// after releases every slug of before.
func (sp slugSpace) moveSlug(t *dynamo.Txn, id string, before, after []string, res *reservation) error {
	mine := expression.Name(sp.owner).Equal(expression.Value(id))
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	if len(after) == 0 {
		for _, s := range before {
			add(t.Delete(sp.key(s), &mine, dynamo.ErrRetry))
		}
		return errors.Join(errs...)
	}
	slug := after[0]
	if len(before) > 0 && before[0] == slug {
		return nil
	}
	switch {
	case res == nil:
		add(t.Put(sp.item(slug, id, false), ptr(dynamo.CondNotExists()), ErrSlugTaken))
	case res.Owner == id:
		add(t.Put(sp.item(slug, id, false), &mine, dynamo.ErrRetry))
	default:
		theirs := expression.Name(sp.owner).Equal(expression.Value(res.Owner)).
			And(expression.Name("redirect").Equal(expression.Value(true)))
		it := sp.item(slug, id, false)
		if si, ok := it.(slugItem); ok && res.ByDraft && si.PostID != "" {
			si.PrevPostID = res.Owner
			it = si
		}
		add(t.Put(it, &theirs, dynamo.ErrRetry))
		rest := slices.DeleteFunc(slices.Clone(res.OwnerSlugs), func(s string) bool { return s == slug })
		if len(rest) > 0 && len(rest) < len(res.OwnerSlugs) {
			add(t.Update(sp.holder(res.Owner), expression.Set(expression.Name("slugs"), expression.Value(rest)),
				ptr(dynamo.CondExists().And(sameSlugs(res.OwnerSlugs))), dynamo.ErrRetry))
		}
	}
	if len(before) > 0 {
		add(t.Put(sp.item(before[0], id, true), &mine, dynamo.ErrRetry))
	}
	for _, s := range before {
		if !slices.Contains(after, s) {
			add(t.Delete(sp.key(s), ptr(mine.And(expression.Name("redirect").Equal(expression.Value(true)))), dynamo.ErrRetry))
		}
	}
	return errors.Join(errs...)
}
