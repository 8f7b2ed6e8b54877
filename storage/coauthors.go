package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Co-authors: a post has an ordered list of authors, the first its
// primary one (authorId, authorName, authorSlug, authorVer, as before
// posts had co-authors), the others in coAuthors with the nameVer of each
// in coAuthorVer. A post without the attributes has its primary author
// alone, so posts written before co-authors need no migration. Every
// author of a published post has its own author→post copy in their
// partition, and counts the post (postCount, months, scheduled entries),
// in the post's transactions; doc.go has the layout.

// MaxAuthors is how many authors a post may have, its primary one
// included.
const MaxAuthors = 10

// ErrNotPostAuthor means the author a post write is made for (its input's
// Actor) is not one of the post's authors as the write reads it, or, for
// a change of its co-authors, not its primary author. The write reads the
// post and is conditional on its version, so a co-author removed a moment
// before cannot write.
var ErrNotPostAuthor = errors.New("not an author of the post")

// mayWrite returns ErrNotPostAuthor unless actor (empty: an admin, or
// no check) is one of the authors of p, or its primary author with
// primaryOnly.
func mayWrite(p *postItem, actor string, primaryOnly bool) error {
	switch {
	case actor == "", actor == p.AuthorID:
		return nil
	case primaryOnly:
		return fmt.Errorf("post %q: only its primary author changes its co-authors: %w", p.ID, ErrNotPostAuthor)
	case slices.Contains(p.coAuthorIDs(), actor):
		return nil
	}
	return fmt.Errorf("post %q: %w", p.ID, ErrNotPostAuthor)
}

// AuthorIDs returns the ids of the post's authors, its primary one first.
func (p *Post) AuthorIDs() []string {
	ids := []string{p.AuthorID}
	for _, a := range p.CoAuthors {
		ids = append(ids, a.ID)
	}
	return ids
}

// Authors returns the post's authors as it carries them, its primary one
// first.
func (p *Post) Authors() []AuthorRef {
	return append([]AuthorRef{{ID: p.AuthorID, Name: p.AuthorName, Slug: p.AuthorSlug}}, p.CoAuthors...)
}

// coAuthorIDs returns the ids of the post's co-authors, in order.
func (it *postItem) coAuthorIDs() []string {
	ids := make([]string, len(it.CoAuthors))
	for i, a := range it.CoAuthors {
		ids[i] = a.ID
	}
	return ids
}

// setCoAuthors gives the post the co-authors ids (names to be copied by
// setNames).
func (it *postItem) setCoAuthors(ids []string) {
	it.CoAuthors = nil
	for _, id := range ids {
		it.CoAuthors = append(it.CoAuthors, authorRef{ID: id})
	}
}

// setCoAuthorNames copies the names of the post's co-authors from r into
// p, or returns a *ValidationError naming one that does not exist.
func (r *names) setCoAuthorNames(p *postItem) error {
	p.CoAuthorVer = nil
	if len(p.CoAuthors) == 0 {
		p.CoAuthors = nil
		return nil
	}
	given := p.CoAuthors
	p.CoAuthors = make([]authorRef, len(given))
	p.CoAuthorVer = make(map[string]int64, len(given))
	for i, ref := range given {
		a := r.coAuthors[ref.ID]
		if a == nil {
			return invalid("coAuthors", "no author has the id %q", ref.ID)
		}
		p.CoAuthors[i] = authorRef{ID: a.ID, Name: a.Name, Slug: a.Slug}
		p.CoAuthorVer[a.ID] = a.NameVer
	}
	return nil
}

// validateCoAuthors checks the co-authors of a post whose primary author
// is primary (empty: not known here) and returns them without repeats.
func validateCoAuthors(primary string, ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		if err := validateID("coAuthors", id); err != nil {
			return nil, err
		}
		if id == primary {
			return nil, invalid("coAuthors", "holds the post's own author %q", id)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) > MaxAuthors-1 {
		return nil, invalid("coAuthors", "must be at most %d: a post has at most %d authors", MaxAuthors-1, MaxAuthors)
	}
	return out, nil
}

// HasAuthor reports whether id is one of the post's authors.
func (p *Post) HasAuthor(id string) bool { return slices.Contains(p.AuthorIDs(), id) }

// counterKeys returns the keys of the items that count the post: its
// authors, its categories, its tags and STATS, in that order.
func (it *postItem) counterKeys(ks keys.Space) []key {
	ks2 := mapKeys(it.authorIDs(), ks.Author)
	ks2 = append(ks2, mapKeys(it.catSlugs(), ks.Category)...)
	ks2 = append(ks2, mapKeys(it.tagSlugs(), ks.Tag)...)
	return append(ks2, ks.Stats())
}

// validatePatchAuthorsTags checks the co-authors and tags a patch sets
// and returns them, nil for those it leaves as they are.
func validatePatchAuthorsTags(in *PostPatch, latin bool) (coAuthors []string, tags []catRef, err error) {
	if in.CoAuthors != nil {
		if coAuthors, err = validateCoAuthors("", *in.CoAuthors); err != nil {
			return nil, nil, err
		}
		if coAuthors == nil {
			coAuthors = []string{}
		}
	}
	if in.Tags != nil {
		if tags, err = validateTags(*in.Tags, latin); err != nil {
			return nil, nil, err
		}
	}
	return coAuthors, tags, nil
}

// patchAuthorsTags is validatePatchAuthorsTags with the site's way of
// making slugs.
func (s *Store) patchAuthorsTags(ctx context.Context, in *PostPatch) ([]string, []catRef, error) {
	var latin bool
	if in.Tags != nil {
		var err error
		if latin, err = s.latinSlugs(ctx, *in.Tags...); err != nil {
			return nil, nil, err
		}
	}
	return validatePatchAuthorsTags(in, latin)
}

// tagSlugsOf returns the slugs of tags.
func tagSlugsOf(tags []catRef) []string {
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.Slug
	}
	return out
}

// maxTxActions is how many actions DynamoDB takes in one
// TransactWriteItems.
const maxTxActions = 100

// fitsOneTransaction returns a *ValidationError when the post write t,
// with its idempotency record rec, would pass DynamoDB's 100 actions: a
// change of many categories, tags and co-authors at once (doc.go, Writes,
// has the figures). Nothing is written then.
func fitsOneTransaction(t *dynamo.Txn, rec *idem) error {
	n := t.Len()
	if rec != nil {
		n++
	}
	if n > maxTxActions {
		return invalid("input", "changes too many categories, tags and co-authors at once (%d writes, at most %d in one transaction): change them in separate updates", n, maxTxActions)
	}
	return nil
}

// sameCoAuthorsAndTags reports whether a and b carry the same co-authors
// and tags with the same names and versions.
func sameCoAuthorsAndTags(a, b *postItem) bool {
	return slices.Equal(a.CoAuthors, b.CoAuthors) && maps.Equal(a.CoAuthorVer, b.CoAuthorVer) &&
		slices.Equal(a.Tags, b.Tags) && maps.Equal(a.TagVer, b.TagVer)
}

// refreshCoAuthorsAndTags adds to a rename's update of a post and its
// copies the co-authors' and tags' names of fresh, and to its condition
// that none of their versions goes back.
func refreshCoAuthorsAndTags(fresh *postItem, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (expression.UpdateBuilder, expression.ConditionBuilder) {
	if len(fresh.CoAuthors) > 0 {
		upd = upd.Set(expression.Name("coAuthors"), expression.Value(fresh.CoAuthors)).
			Set(expression.Name("coAuthorVer"), expression.Value(fresh.CoAuthorVer))
		for _, a := range fresh.CoAuthors {
			ver := expression.Name("coAuthorVer." + a.ID)
			cond = cond.And(ver.AttributeNotExists().Or(ver.LessThanEqual(expression.Value(fresh.CoAuthorVer[a.ID]))))
		}
	}
	if len(fresh.Tags) > 0 {
		upd = upd.Set(expression.Name("tags"), expression.Value(fresh.Tags)).
			Set(expression.Name("tagVer"), expression.Value(fresh.TagVer))
		for _, t := range fresh.Tags {
			ver := expression.Name("tagVer." + t.Slug)
			cond = cond.And(ver.AttributeNotExists().Or(ver.LessThanEqual(expression.Value(fresh.TagVer[t.Slug]))))
		}
	}
	return upd, cond
}

// movePost writes the post id again as it is, which moves it from a tag
// merged into another to that one (setNames follows the merge), with its
// copies and counts. A post deleted meanwhile is done.
func (s *Store) movePost(ctx context.Context, id string) error {
	_, err := s.changePost(ctx, postChange{op: "mergeTags", id: id, full: true}, func(*postItem) error { return nil })
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// checkCoAuthorsAndTags reports, for Check, a post's co-author or tag that
// does not exist, a name or version a published post carries that is not
// the current one, a co-author listed twice or who is the primary one, a
// tag merged into another that a published post still has, and tag items
// with wrong keys.
func checkCoAuthorsAndTags(p *postItem, authors map[string]*authorItem, tags map[string]*tagItem, badf func(string, ...any)) {
	if len(p.CoAuthors) > MaxAuthors-1 || len(p.Tags) > MaxTags {
		badf("post %s has %d co-authors and %d tags", p.ID, len(p.CoAuthors), len(p.Tags))
	}
	seen := map[string]bool{p.AuthorID: true}
	for _, ref := range p.CoAuthors {
		a := authors[ref.ID]
		switch {
		case seen[ref.ID]:
			badf("post %s lists author %s twice", p.ID, ref.ID)
		case a == nil:
			badf("post %s has unknown co-author %s", p.ID, ref.ID)
		case p.published() && (ref.Name != a.Name || ref.Slug != a.Slug || p.CoAuthorVer[ref.ID] != a.NameVer):
			badf("post %s carries co-author %q/%s (v%d), author has %q/%s (v%d)", p.ID, ref.Name, ref.Slug, p.CoAuthorVer[ref.ID], a.Name, a.Slug, a.NameVer)
		}
		seen[ref.ID] = true
	}
	for _, ref := range p.Tags {
		t := tags[ref.Slug]
		switch {
		case t == nil:
			badf("post %s has unknown tag %s", p.ID, ref.Slug)
		case p.published() && t.MergedInto != "":
			badf("post %s keeps tag %s, merged into %s", p.ID, ref.Slug, t.MergedInto)
		case p.published() && (ref.Name != t.Name || p.TagVer[ref.Slug] != t.NameVer):
			badf("post %s carries tag name %q (v%d), tag %s has %q (v%d)", p.ID, ref.Name, p.TagVer[ref.Slug], ref.Slug, t.Name, t.NameVer)
		}
	}
}
