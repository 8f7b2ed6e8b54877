package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// renameConcurrency bounds the posts refreshed at once after a rename.
const renameConcurrency = 4

// slugCandidates is how many slugs made from a name CreateAuthor tries:
// the name's, then with "-2" up to "-<slugCandidates-1>", then with a
// random suffix.
const slugCandidates = 10

// CreateAuthor creates an author; an existing id is ErrAlreadyExists. A
// slug given is taken as UpdatePost takes a post's (ErrSlugTaken when
// another author holds it); without one, the first free one of the
// slugs made from the name is taken ("ada-lovelace", "ada-lovelace-2", …,
// then one with a random suffix). It reads the slugs first (one request).
func (s *Store) CreateAuthor(ctx context.Context, in NewAuthor) (*Author, error) {
	if in.ID == "" {
		in.ID = newID()
	}
	err := firstErr(
		validateID("id", in.ID),
		validateLine("name", in.Name, MaxNameLength),
		validateText("bio", in.Bio, false, MaxBioLength),
		validateURL("avatarUrl", in.AvatarURL),
		validateProfile(&in.Website, &in.Location, &in.Social),
	)
	if err == nil {
		err = s.checkLinkHosts(append(profileLinks(in.Website, in.Social), [2]string{"avatarUrl", in.AvatarURL})...)
	}
	if err == nil && in.Slug != "" {
		err = validateSlug("slug", in.Slug)
	}
	if err != nil {
		return nil, err
	}
	candidates := []string{in.Slug}
	if in.Slug == "" {
		latin, err := s.latinSlugs(ctx, in.Name)
		if err != nil {
			return nil, err
		}
		candidates = slugsFromName(in.Name, latin)
	}
	return idempotent(ctx, s, "createAuthor", in.IdempotencyKey, in, func(rec *idem) (*Author, error) {
		return dynamo.RetryWrite(ctx, func() (*Author, error) {
			found, err := s.db.BatchGet(ctx, mapKeys(candidates, s.ks.AuthorSlug), true)
			if err != nil {
				return nil, err
			}
			slug, res, err := pickSlug(s.ks, found, candidates, in.Slug != "")
			if err == nil {
				// Only admins create authors.
				err = s.claim(ctx, authorSlugs(s.ks), in.ID, taker{author: in.ID, admin: true}, res)
			}
			if err != nil {
				return nil, err
			}
			now := s.Now()
			a := &Author{ID: in.ID, Slug: slug, Name: in.Name, Bio: in.Bio, AvatarURL: in.AvatarURL, CreatedAt: now, UpdatedAt: now, Version: 1,
				Website: in.Website, Location: in.Location, Social: in.Social}
			t := s.db.NewTxn()
			err = firstErr(
				t.Put(newAuthorItem(s.ks, a), ptr(dynamo.CondNotExists()), ErrAlreadyExists),
				authorSlugs(s.ks).moveSlug(t, in.ID, nil, []string{slug}, res),
				countStats(s.ks, t, "authorCount", 1),
			)
			if err != nil {
				return nil, err
			}
			return execRecord(ctx, s, t, rec, a)
		})
	})
}

// slugsFromName returns the slugs CreateAuthor tries for a name.
func slugsFromName(name string, latin bool) []string {
	room := len("-123456")
	base := slugs.Cut(slugs.Make(name, latin), MaxSlugLength-room, MaxSlugBytes-room)
	if slugs.Check(base) != nil {
		base = "" // no letter, or scripts mixed in a word
	}
	if base == "" {
		base = "author"
	}
	out := []string{base}
	for i := 2; i < slugCandidates; i++ {
		out = append(out, fmt.Sprintf("%s-%d", base, i))
	}
	return append(out, base+"-"+randomHex(6))
}

// pickSlug returns the slug to take of candidates, whose reservations are
// in found, and its reservation (nil when free). A slug given is the only
// candidate and may be any; made ones must be free.
func pickSlug(ks keys.Space, found map[key]item, candidates []string, given bool) (string, *reservation, error) {
	for _, c := range candidates {
		res, err := authorSlugs(ks).decodeReservation(found, c)
		if err != nil {
			return "", nil, err
		}
		if given || res == nil {
			return c, res, nil
		}
	}
	return "", nil, fmt.Errorf("slugs %s to %s: %w", candidates[0], candidates[len(candidates)-1], ErrSlugTaken)
}

// GetAuthorBySlug returns the author who holds slug, as its current slug
// or as a redirect (Author.Slug is the current one), or ErrNotFound.
func (s *Store) GetAuthorBySlug(ctx context.Context, slug string) (*Author, error) {
	id, err := s.AuthorIDBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	return s.GetAuthor(ctx, id)
}

// AuthorIDBySlug returns the id of the author who holds slug, as their
// current slug or one they held before, from the slug's reservation: one
// GetItem. It returns ErrNotFound when no author holds it, and a
// *ValidationError for a string that cannot be a slug.
func (s *Store) AuthorIDBySlug(ctx context.Context, slug string) (string, error) {
	if err := validateSlug("slug", slug); err != nil {
		return "", err
	}
	var sl authorSlugItem
	if err := s.db.Get(ctx, s.ks.AuthorSlug(slug), false, &sl); err != nil {
		return "", fmt.Errorf("author slug %q: %w", slug, err)
	}
	return sl.AuthorID, nil
}

// UpdateAuthor edits an author. A new name or slug reaches every post and
// copy that carries it before UpdateAuthor returns. A new slug keeps the
// old one as a redirect and is taken as UpdatePost takes a post's; it is
// read with the author, in the same request.
func (s *Store) UpdateAuthor(ctx context.Context, in AuthorPatch) (*Author, error) {
	err := firstErr(
		validateID("id", in.ID),
		validateOpt(in.Slug, func(v string) error { return validateSlug("slug", v) }),
		validateOpt(in.Name, func(v string) error { return validateLine("name", v, MaxNameLength) }),
		validateOpt(in.Bio, func(v string) error { return validateText("bio", v, false, MaxBioLength) }),
		validateOpt(in.AvatarURL, func(v string) error { return validateURL("avatarUrl", v) }),
		validateProfile(in.Website, in.Location, in.Social),
	)
	if err == nil {
		err = s.checkLinkHosts(append(profileLinks(deref(in.Website), deref(in.Social)), [2]string{"avatarUrl", deref(in.AvatarURL)})...)
	}
	if err != nil {
		return nil, err
	}
	a, err := idempotent(ctx, s, "updateAuthor", in.IdempotencyKey, in, func(rec *idem) (*Author, error) {
		return dynamo.RetryWrite(ctx, func() (*Author, error) {
			it, res, err := s.readAuthor(ctx, in.ID, deref(in.Slug))
			if err != nil {
				return nil, err
			}
			if in.ExpectedVersion != 0 && it.Version != in.ExpectedVersion {
				return nil, &ConflictError{CurrentVersion: it.Version}
			}
			cond := condVersion(it.Version)
			if in.Name != nil && *in.Name != it.Name {
				it.NameVer++
			}
			setOpt(&it.Name, in.Name)
			setOpt(&it.Bio, in.Bio)
			setOpt(&it.AvatarURL, in.AvatarURL)
			avatarWas := it.Avatar.libraryID()
			if in.AvatarURL != nil {
				it.Avatar = nil
			}
			if in.AvatarMedia != nil {
				it.Avatar, it.AvatarURL = libraryImageItem(in.AvatarMedia), in.AvatarMedia.URL
			}
			setOpt(&it.Website, in.Website)
			setOpt(&it.Location, in.Location)
			it.Version++
			it.UpdatedAt = keys.Time(s.Now())
			fields := map[string]string{"name": it.Name, "bio": it.Bio, "avatarUrl": it.AvatarURL,
				"website": it.Website, "location": it.Location}
			t := s.db.NewTxn()
			var slugs []string
			if in.Slug != nil && *in.Slug != it.Slug {
				if err := s.claim(ctx, authorSlugs(s.ks), in.ID, taker{author: in.ID, admin: in.Admin}, res); err != nil {
					return nil, err
				}
				before := holderSlugs(it.Slugs, it.Slug)
				slugs, _ = slugHistory(it.Slugs, it.Slug, *in.Slug)
				if err := authorSlugs(s.ks).moveSlug(t, in.ID, before, slugs, res); err != nil {
					return nil, err
				}
				cond = cond.And(sameSlugs(it.Slugs))
				it.NameVer++
				it.Slug, it.Slugs, fields["slug"] = *in.Slug, slugs, *in.Slug
			}
			upd := profileUpdate(it.Version, it.NameVer, it.UpdatedAt, fields)
			if in.Social != nil {
				it.Social = socialItems(*in.Social)
				if len(it.Social) == 0 {
					upd = upd.Remove(expression.Name("social"))
				} else {
					upd = upd.Set(expression.Name("social"), expression.Value(it.Social))
				}
			}
			if slugs != nil {
				upd = upd.Set(expression.Name("slugs"), expression.Value(slugs))
			}
			switch {
			case in.AvatarMedia != nil:
				upd = upd.Set(expression.Name("avatar"), expression.Value(it.Avatar))
			case in.AvatarURL != nil:
				upd = upd.Remove(expression.Name("avatar"))
			}
			if err := s.pictureUseActions(t, in.ID, map[string]string{"avatar": avatarWas}, map[string]string{"avatar": it.Avatar.libraryID()},
				map[string]string{"avatar": "avatarMediaId"}); err != nil {
				return nil, err
			}
			if err := t.Update(s.ks.Author(in.ID), upd, &cond, dynamo.ErrRetry); err != nil {
				return nil, err
			}
			return execRecord(ctx, s, t, rec, it.author(s.nowKey()))
		})
	})
	if err != nil {
		return nil, err
	}
	if in.Name != nil || in.Slug != nil {
		// Also on a replay: a first call that failed half-way through the
		// renames is finished by its retry.
		if err := s.refreshAll(ctx, s.authorPostIDs, in.ID, s.ks.Author(in.ID)); err != nil {
			return nil, fmt.Errorf("rename author %q: %w", in.ID, err)
		}
	}
	return a, nil
}

// readAuthor reads an author with ConsistentRead, with the reservation of
// the author slug slug when it is not empty in the same request.
func (s *Store) readAuthor(ctx context.Context, id, slug string) (*authorItem, *reservation, error) {
	var it authorItem
	if slug == "" {
		if err := s.db.Get(ctx, s.ks.Author(id), true, &it); err != nil {
			return nil, nil, fmt.Errorf("author %q: %w", id, err)
		}
		return &it, nil, nil
	}
	found, err := s.db.BatchGet(ctx, []key{s.ks.Author(id), s.ks.AuthorSlug(slug)}, true)
	if err != nil {
		return nil, nil, err
	}
	if err := dynamo.DecodeFound(found, s.ks.Author(id), &it); err != nil {
		return nil, nil, fmt.Errorf("author %q: %w", id, err)
	}
	res, err := authorSlugs(s.ks).decodeReservation(found, slug)
	return &it, res, err
}

// profileUpdate sets the fields of an author or a category, with its new
// version, nameVer and updatedAt, and nothing else: its postCount and
// scheduled-post entries change in the transactions of post writes, which
// a write of the whole item read a moment ago would undo. A field set to
// "" is removed, as a whole-item write leaves it out.
func profileUpdate(version, nameVer int64, updatedAt string, fields map[string]string) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("version"), expression.Value(version)).
		Set(expression.Name("nameVer"), expression.Value(nameVer)).
		Set(expression.Name("updatedAt"), expression.Value(updatedAt))
	for name, v := range fields {
		if v == "" {
			upd = upd.Remove(expression.Name(name))
		} else {
			upd = upd.Set(expression.Name(name), expression.Value(v))
		}
	}
	return upd
}

// authorPostIDs lists every post of an author: published and scheduled ones
// from the author's partition, drafts from GSI1.
func (s *Store) authorPostIDs(ctx context.Context, authorID string) ([]string, error) {
	published, err := s.collectIDs(ctx, false, expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Author(authorID).PK)).
		And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixPost)))
	if err != nil {
		return nil, err
	}
	drafts, err := s.collectIDs(ctx, true, expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.DraftPartition(authorID))))
	return append(published, drafts...), err
}

// categoryPostIDs lists the published and scheduled posts of a category.
func (s *Store) categoryPostIDs(ctx context.Context, slug string) ([]string, error) {
	return s.collectIDs(ctx, true, expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.CategoryPartition(slug))))
}

// refreshAll brings the names in every post listed by list(owner) up to
// date, then marks the item of owner, at k, renamed (markRenamed).
func (s *Store) refreshAll(ctx context.Context, list func(context.Context, string) ([]string, error), owner string, k key) error {
	// The nameVer read before the posts: what their refresh is sure to
	// have reached.
	var names struct {
		NameVer int64 `dynamodbav:"nameVer"`
	}
	err := s.db.Get(ctx, k, true, &names)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	ids, err := list(ctx, owner)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(renameConcurrency)
	for _, id := range ids {
		g.Go(func() error { return s.refreshNames(gctx, id) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return s.markRenamed(ctx, k, names.NameVer)
}

// markRenamed records on the author, category or tag item at k that its
// names of nameVer have reached every post (renamedVer), unless a later
// one already has or the item is gone. The change feed makes that write
// the owner's event again (author.updated, category.updated,
// tag.updated): the first, of the rename's own write, came before the
// posts were rewritten, so a server or a CDN may have kept an answer
// read in between, which shows the old names; this one drops it.
func (s *Store) markRenamed(ctx context.Context, k key, nameVer int64) error {
	if nameVer == 0 {
		// Never renamed: its posts hold the names they were written with.
		return nil
	}
	renamed := expression.Name("renamedVer")
	cond := dynamo.CondExists().And(renamed.AttributeNotExists().Or(renamed.LessThan(expression.Value(nameVer))))
	_, err := s.db.UpdateIf(ctx, k, expression.Set(renamed, expression.Value(nameVer)), cond)
	return err
}

// refreshNames writes the current author and category names into a post
// and all its copies in one transaction. The transaction touches only the
// post's own items, not the author or the categories, so renaming a
// category of many posts never holds up the writers of new posts in it
// (their transactions check the category). A name never goes back: the
// post must still be at the version read, and every nameVer it carries at
// most the one written, so a slow rename never overwrites the names of a
// newer one, whose own refresh then finds the post up to date. A post
// deleted meanwhile is done.
func (s *Store) refreshNames(ctx context.Context, postID string) error {
	_, err := dynamo.RetryWrite(ctx, func() (struct{}, error) {
		// The names alone change: the body is left unread.
		p, r, err := s.readPost(ctx, postID, nil, "", true, false, moreNames{})
		if errors.Is(err, ErrNotFound) {
			return struct{}{}, nil
		}
		if err != nil {
			return struct{}{}, err
		}
		fresh := *p
		slugs := p.catSlugs()
		r.keep(p)
		if err := r.setNames(&fresh, slugs); err != nil {
			return struct{}{}, err
		}
		if sameNames(p, &fresh) {
			return struct{}{}, nil
		}
		if !slices.Equal(p.tagSlugs(), fresh.tagSlugs()) {
			// A tag of the post was merged into another: the post moves
			// there, its copies and counts with it (tags.go).
			return struct{}{}, s.movePost(ctx, postID)
		}
		upd := expression.Set(expression.Name("authorName"), expression.Value(fresh.AuthorName)).
			Set(expression.Name("authorVer"), expression.Value(fresh.AuthorVer))
		if fresh.AuthorSlug != "" {
			upd = upd.Set(expression.Name("authorSlug"), expression.Value(fresh.AuthorSlug))
		}
		if len(fresh.Cats) > 0 {
			upd = upd.Set(expression.Name("cats"), expression.Value(fresh.Cats)).
				Set(expression.Name("catVer"), expression.Value(fresh.CatVer))
		}
		cond := condVersion(p.Version).And(expression.Name("authorVer").LessThanEqual(expression.Value(fresh.AuthorVer)))
		for _, c := range fresh.Cats {
			ver := expression.Name("catVer." + c.Slug)
			cond = cond.And(ver.AttributeNotExists().Or(ver.LessThanEqual(expression.Value(fresh.CatVer[c.Slug]))))
		}
		upd, cond = refreshCoAuthorsAndTags(&fresh, upd, cond)
		t := s.db.NewTxn()
		errs := []error{t.Update(s.ks.Post(postID), upd, &cond, dynamo.ErrRetry)}
		for _, k := range p.copyKeys(s.ks) {
			errs = append(errs, t.Update(k, upd, ptr(dynamo.CondExists()), dynamo.ErrRetry))
		}
		if err := errors.Join(errs...); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, s.db.Exec(ctx, t)
	})
	return err
}

func sameNames(a, b *postItem) bool {
	if a.AuthorName != b.AuthorName || a.AuthorSlug != b.AuthorSlug || a.AuthorVer != b.AuthorVer || len(a.Cats) != len(b.Cats) {
		return false
	}
	if !sameCoAuthorsAndTags(a, b) {
		return false
	}
	for i := range a.Cats {
		if a.Cats[i] != b.Cats[i] || a.CatVer[a.Cats[i].Slug] != b.CatVer[b.Cats[i].Slug] {
			return false
		}
	}
	return true
}
