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

// Translations: posts (or static pages) that translate one another form
// a group, one item (keys.TranslationGroup) mapping each member's locale
// to its id, so two members never share a locale; a group holds posts or
// pages, never both (kind). Each member's item names the group
// (transGroup) and counts the changes of its membership (transVer).
// LinkTranslation and UnlinkTranslation write the group item and every
// post item whose membership changes in one TransactWriteItems, guarded
// by the group's version and each changed post's transVer, and every
// other write of a post item is guarded by its transVer (unchanged): so
// concurrent links, unlinks and edits never leave a post naming a group
// that does not name it back. A group of fewer than two posts is
// deleted. The same code links posts and pages (transKind): only how a
// member is read and keyed differs.

const typeTranslations = "translations"

// kindPages is the kind of a group of static pages ("" is posts).
const kindPages = "page"

// translationItem is a group of translations: Members maps each
// member's locale to its post id.
type translationItem struct {
	PK      string            `dynamodbav:"PK"`
	SK      string            `dynamodbav:"SK"`
	Type    string            `dynamodbav:"type"`
	ID      string            `dynamodbav:"id"`
	Members map[string]string `dynamodbav:"members"`
	Version int64             `dynamodbav:"version"`
	// Kind is kindPages for a group of pages, empty for one of posts.
	Kind string `dynamodbav:"kind,omitempty"`
}

// transMember is a post or a page as a link of translations reads it:
// its id, its stored locale, its group and its membership version; item
// is the post or page item it was read from.
type transMember struct {
	ID, Locale, Group string
	Ver               int64
	item              any
}

// transKind is what a link needs to know of what it links: the group's
// kind, the key of a member, and how a member is read (consistently).
type transKind struct {
	name string
	key  func(ks keys.Space, id string) dynamo.Key
	read func(ctx context.Context, id string) (*transMember, error)
	// joined, when set, adds to a link's transaction the writes that
	// follow a member (as read) taking locale as its own, and returns a
	// condition more on its item (nil: none).
	joined func(ks keys.Space, t *dynamo.Txn, p *transMember, locale string) (*expression.ConditionBuilder, error)
}

// postTranslations is the transKind of posts.
func (s *Store) postTranslations() transKind {
	return transKind{key: keys.Space.Post, read: func(ctx context.Context, id string) (*transMember, error) {
		p, err := s.readPostItems(ctx, id, true, false)
		if err != nil {
			return nil, err
		}
		return &transMember{ID: p.ID, Locale: p.Locale, Group: p.TransGroup, Ver: p.TransVer, item: p}, nil
	}, joined: postJoined}
}

// kindOf returns the transKind of the group g's members.
func kindOf(g *translationItem) transKind {
	if g.Kind == kindPages {
		return transKind{name: kindPages, key: keys.Space.Page}
	}
	return transKind{key: keys.Space.Post}
}

// Translation is one member of a group of translations: PostID is the
// id of a post, or of a page in a group of pages.
type Translation struct {
	Locale string
	PostID string
}

// GetTranslations returns the groups with ids, each as its translations
// in locale order, in the order of ids: one BatchGetItem. A group that
// is gone has ErrNotFound at its index.
func (s *Store) GetTranslations(ctx context.Context, ids []string) ([][]Translation, []error) {
	return dynamo.BatchDecode(ctx, s.db, mapKeys(ids, s.ks.TranslationGroup), (*translationItem).translations)
}

func (g *translationItem) translations() []Translation {
	out := make([]Translation, 0, len(g.Members))
	for _, l := range slices.Sorted(maps.Keys(g.Members)) {
		out = append(out, Translation{Locale: l, PostID: g.Members[l]})
	}
	return out
}

// LinkTranslation links the post postID and the post translationID as
// translations of one another: translationID joins postID's group (one
// is made when postID has none), leaving any group it was in. A post
// without a locale takes the site's default. Linking a post to itself,
// to a post of the same locale, or to a group that has a post in
// translationID's locale is a *ValidationError; a post missing (in this
// publication) is ErrNotFound. Nothing changes on an error.
func (s *Store) LinkTranslation(ctx context.Context, postID, translationID string) (*Post, error) {
	a, err := s.link(ctx, s.postTranslations(), "postId", postID, translationID)
	if err != nil {
		return nil, err
	}
	p := a.item.(*postItem)
	p.TransGroup, p.Locale = a.Group, a.Locale
	return p.post(), nil
}

// link puts translationID into the group of id (field names id in
// errors), of the kind k, as LinkTranslation and LinkPageTranslation
// tell, and returns id's member as it is after.
func (s *Store) link(ctx context.Context, k transKind, field, id, translationID string) (*transMember, error) {
	if err := firstErr(validateID(field, id), validateID("translationId", translationID)); err != nil {
		return nil, err
	}
	if id == translationID {
		return nil, invalid("translationId", "is the %s itself: nothing translates itself", field[:len(field)-2])
	}
	def, err := s.defaultLocale(ctx)
	if err != nil {
		return nil, err
	}
	return dynamo.RetryWrite(ctx, func() (*transMember, error) {
		a, err := k.read(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		b, err := k.read(ctx, translationID)
		if err != nil {
			return nil, fmt.Errorf("translation: %w", err)
		}
		la, lb := orDefault(a.Locale, def), orDefault(b.Locale, def)
		if la == "" || lb == "" {
			return nil, invalid(field, "has no locale, and the site has no default locale")
		}
		ga, err := s.readGroup(ctx, a.Group)
		if err != nil {
			return nil, err
		}
		if ga != nil && a.Group == b.Group {
			return a, nil // linked already
		}
		gb, err := s.readGroup(ctx, b.Group)
		if err != nil {
			return nil, err
		}
		t := s.db.NewTxn()
		var errs []error
		next := &translationItem{ID: newID(), Kind: k.name, Members: map[string]string{la: a.ID}}
		if ga != nil {
			next = ga.with(nil)
		}
		if _, ok := next.Members[lb]; ok {
			return nil, invalid("translationId", "is in %s, which the group already has a translation in", lb)
		}
		next.Members[lb] = b.ID
		if !touchesEachOnce(a, b, ga, gb) {
			// Read while another link moved a member between the two
			// groups: the reads disagree, and a transaction may not
			// name one item twice. Read again.
			return nil, fmt.Errorf("link translations of %s: %w", a.ID, dynamo.ErrRetry)
		}
		errs = append(errs, putGroup(s.ks, t, ga, next))
		if ga == nil {
			errs = append(errs, joinGroup(s.ks, t, k, a, next.ID, la))
		} else {
			errs = append(errs, touchMembers(s.ks, t, ga, b.ID))
		}
		errs = append(errs, joinGroup(s.ks, t, k, b, next.ID, lb))
		if gb != nil {
			errs = append(errs, leaveGroup(s.ks, t, gb, b.ID))
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		if t.Len() > maxTxActions {
			return nil, invalid("input", "stores the default locale on a post that had none, whose copies with the link take %d writes, more than the %d of one transaction: set the post's locale with updatePost first, then link it", t.Len(), maxTxActions)
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, err
		}
		a.Group, a.Locale = next.ID, la
		return a, nil
	})
}

// touchesEachOnce reports whether the link of b into a's group, as read
// (ga and gb: a's and b's groups, nil for none), writes each post once:
// b, a or the members of ga, and the members of gb but b.
func touchesEachOnce(a, b *transMember, ga, gb *translationItem) bool {
	seen := map[string]bool{b.ID: true}
	add := func(id string) bool {
		if seen[id] {
			return false
		}
		seen[id] = true
		return true
	}
	if ga == nil && !add(a.ID) {
		return false
	}
	for _, g := range []*translationItem{ga, gb} {
		if g == nil {
			continue
		}
		for _, id := range g.Members {
			if id != b.ID && !add(id) {
				return false
			}
		}
	}
	return true
}

// UnlinkTranslation takes the post postID out of its group of
// translations (nothing for a post in none); a group left with one post
// is deleted. A missing post is ErrNotFound.
func (s *Store) UnlinkTranslation(ctx context.Context, postID string) (*Post, error) {
	a, err := s.unlink(ctx, s.postTranslations(), "postId", postID)
	if err != nil {
		return nil, err
	}
	p := a.item.(*postItem)
	p.TransGroup = ""
	return p.post(), nil
}

// unlink takes id, of the kind k, out of its group (nothing for one in
// none) and returns its member as it is after.
func (s *Store) unlink(ctx context.Context, k transKind, field, id string) (*transMember, error) {
	if err := validateID(field, id); err != nil {
		return nil, err
	}
	return dynamo.RetryWrite(ctx, func() (*transMember, error) {
		a, err := k.read(ctx, id)
		if err != nil {
			return nil, err
		}
		g, err := s.readGroup(ctx, a.Group)
		if err != nil || g == nil {
			return a, err
		}
		t := s.db.NewTxn()
		if err := errors.Join(leaveGroup(s.ks, t, g, a.ID), t.Update(k.key(s.ks, a.ID),
			expression.Remove(expression.Name("transGroup")).Set(expression.Name("transVer"), expression.Value(a.Ver+1)),
			ptr(condTransVer(a.Ver).And(expression.AttributeExists(expression.Name(keys.AttrPK)))), dynamo.ErrRetry)); err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, err
		}
		a.Group = ""
		return a, nil
	})
}

// leaveTranslations adds to a post's deletion the write that takes it out
// of its group of translations; nothing for a post in none.
func (s *Store) leaveTranslations(ctx context.Context, t *dynamo.Txn, before, after *postItem) error {
	if after != nil || before.TransGroup == "" {
		return nil
	}
	g, err := s.readGroup(ctx, before.TransGroup)
	if err != nil || g == nil {
		return err
	}
	return leaveGroup(s.ks, t, g, before.ID)
}

// readGroup reads the group id consistently: nil for "" or a group that
// is gone (a post naming it then is read again: ErrRetry).
func (s *Store) readGroup(ctx context.Context, id string) (*translationItem, error) {
	if id == "" {
		return nil, nil
	}
	var g translationItem
	err := s.db.Get(ctx, s.ks.TranslationGroup(id), true, &g)
	if errors.Is(err, ErrNotFound) {
		return nil, dynamo.ErrRetry
	}
	if err != nil {
		return nil, fmt.Errorf("read translation group: %w", err)
	}
	return &g, nil
}

// with returns a copy of g without the member postID (nil: none).
func (g *translationItem) with(without *string) *translationItem {
	next := *g
	next.Members = map[string]string{}
	for l, id := range g.Members {
		if without == nil || id != *without {
			next.Members[l] = id
		}
	}
	return &next
}

// putGroup puts next, guarded by the version of prev (nil: a new group).
func putGroup(ks keys.Space, t *dynamo.Txn, prev, next *translationItem) error {
	k := ks.TranslationGroup(next.ID)
	next.PK, next.SK, next.Type = k.PK, k.SK, typeTranslations
	if prev == nil {
		next.Version = 1
		return t.Put(next, ptr(dynamo.CondNotExists()), dynamo.ErrRetry)
	}
	next.Version = prev.Version + 1
	return t.Put(next, ptr(condVersion(prev.Version)), dynamo.ErrRetry)
}

// joinGroup makes p (as read), of the kind k, a member of the group id
// in locale, guarded by its transVer and its locale as read.
func joinGroup(ks keys.Space, t *dynamo.Txn, k transKind, p *transMember, id, locale string) error {
	locCond := expression.Name("locale").AttributeNotExists()
	if p.Locale != "" {
		locCond = expression.Name("locale").Equal(expression.Value(p.Locale))
	}
	upd := expression.Set(expression.Name("transGroup"), expression.Value(id)).
		Set(expression.Name("transVer"), expression.Value(p.Ver+1)).
		Set(expression.Name("locale"), expression.Value(locale))
	cond := condTransVer(p.Ver).And(locCond).And(expression.AttributeExists(expression.Name(keys.AttrPK)))
	if k.joined != nil {
		more, err := k.joined(ks, t, p, locale)
		if err != nil {
			return err
		}
		if more != nil {
			cond = cond.And(*more)
		}
	}
	return t.Update(k.key(ks, p.ID), upd, &cond, dynamo.ErrRetry)
}

// leaveGroup takes postID out of the group g (as read): the group is put
// without it, or deleted when one post would be left, whose membership
// is then removed too (guarded by the group's version, which every
// change of membership changes).
func leaveGroup(ks keys.Space, t *dynamo.Txn, g *translationItem, postID string) error {
	next := g.with(&postID)
	if len(next.Members) >= 2 {
		return errors.Join(putGroup(ks, t, g, next), touchMembers(ks, t, next, postID))
	}
	errs := []error{t.Delete(ks.TranslationGroup(g.ID), ptr(condVersion(g.Version)), dynamo.ErrRetry)}
	for _, last := range next.Members {
		cond := expression.Name("transGroup").Equal(expression.Value(g.ID))
		errs = append(errs, t.Update(kindOf(g).key(ks, last),
			expression.Remove(expression.Name("transGroup")).Set(expression.Name("transVer"), expression.Name("transVer").Plus(expression.Value(1))),
			&cond, dynamo.ErrRetry))
	}
	return errors.Join(errs...)
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// touchMembers adds the update of the transVer of every member of g but
// except: their group changes, so they change too, and the change feed
// tells of it (post.edited), which purges what showed their
// translations.
func touchMembers(ks keys.Space, t *dynamo.Txn, g *translationItem, except string) error {
	var errs []error
	for _, l := range slices.Sorted(maps.Keys(g.Members)) {
		id := g.Members[l]
		if id == except {
			continue
		}
		cond := expression.Name("transGroup").Equal(expression.Value(g.ID))
		errs = append(errs, t.Update(kindOf(g).key(ks, id),
			expression.Set(expression.Name("transVer"), expression.Name("transVer").Plus(expression.Value(1))),
			&cond, dynamo.ErrRetry))
	}
	return errors.Join(errs...)
}
