package storage

import (
	"context"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Translations of static pages: groups of kind kindPages, linked,
// unlinked and checked by the code that does it for posts
// (translations.go). Every write of a page item is guarded by its
// transVer as well as its version (writePage), so an edit read before a
// link cannot put the page back without its group.

// pageTranslations is the transKind of static pages.
func (s *Store) pageTranslations() transKind {
	return transKind{name: kindPages, key: keys.Space.Page, read: func(ctx context.Context, id string) (*transMember, error) {
		var p pageItem
		if err := s.db.Get(ctx, s.ks.Page(id), true, &p); err != nil {
			return nil, err
		}
		return &transMember{ID: p.ID, Locale: p.Locale, Group: p.TransGroup, Ver: p.TransVer, item: &p}, nil
	}, joined: pageJoined}
}

// LinkPageTranslation links the pages pageID and translationID as
// translations of one another, as LinkTranslation links posts: the same
// rules, the same errors (ErrNotFound for a page missing), nothing
// changed on an error.
func (s *Store) LinkPageTranslation(ctx context.Context, pageID, translationID string) (*SitePage, error) {
	a, err := s.link(ctx, s.pageTranslations(), "pageId", pageID, translationID)
	if err != nil {
		return nil, err
	}
	p := a.item.(*pageItem)
	p.TransGroup, p.Locale = a.Group, a.Locale
	return p.page(), nil
}

// UnlinkPageTranslation takes the page pageID out of its group of
// translations (nothing for a page in none); a group left with one page
// is deleted. A missing page is ErrNotFound.
func (s *Store) UnlinkPageTranslation(ctx context.Context, pageID string) (*SitePage, error) {
	a, err := s.unlink(ctx, s.pageTranslations(), "pageId", pageID)
	if err != nil {
		return nil, err
	}
	p := a.item.(*pageItem)
	p.TransGroup = ""
	return p.page(), nil
}

// leavePageTranslations adds to a page's deletion the write that takes
// it out of its group of translations; nothing for a page in none.
func (s *Store) leavePageTranslations(ctx context.Context, t *dynamo.Txn, before *pageItem) error {
	if before.TransGroup == "" {
		return nil
	}
	g, err := s.readGroup(ctx, before.TransGroup)
	if err != nil || g == nil {
		return err
	}
	return leaveGroup(s.ks, t, g, before.ID)
}

// GetSitePages returns the pages with ids in their order: one
// BatchGetItem (at most 100 ids). A page that is gone has ErrNotFound at
// its index.
func (s *Store) GetSitePages(ctx context.Context, ids []string) ([]*SitePage, []error) {
	return dynamo.BatchDecode(ctx, s.db, mapKeys(ids, s.ks.Page), (*pageItem).page)
}
