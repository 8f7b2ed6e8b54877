package graph

import (
	"context"
	"errors"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Translations of static pages: Page.translations and the admins'
// linkPageTranslation and unlinkPageTranslation (docs/i18n.md).

// pageTranslationsOf returns the translations of the page p: its group
// through the translations loader, then its pages through the pages
// loader (one BatchGetItem for every page of an answer). A page of a
// locale's list lacks its group and is read whole first, through the
// pages loader too. Drafts are left out for those who may not see them.
func (r *Resolver) pageTranslationsOf(ctx context.Context, p *storage.SitePage) ([]*model.PageTranslation, error) {
	out := []*model.PageTranslation{}
	group := p.TranslationGroup
	if p.LocaleCopy {
		full, err := loadersFor(ctx).sitePages.Load(ctx, p.ID)()
		if errors.Is(err, storage.ErrNotFound) {
			return out, nil // deleted since the list was read
		}
		if err != nil {
			return nil, err
		}
		group = full.TranslationGroup
	}
	if group == "" {
		return out, nil
	}
	members, err := loadersFor(ctx).translations.Load(ctx, group)()
	if errors.Is(err, storage.ErrNotFound) {
		return out, nil // unlinked since the page was read
	}
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.PostID
	}
	pages, errs := loadersFor(ctx).sitePages.LoadMany(ctx, ids)()
	for i, m := range members {
		page, err := tagged(ctx, pageTag)(r.seenPage(ctx)(pages[i], errOf(errs, i)))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			// A draft the reader may not see, or a page deleted since.
		case err != nil:
			return nil, err
		default:
			out = append(out, &model.PageTranslation{Locale: m.Locale, Page: page})
		}
	}
	return out, nil
}

// errOf returns errs[i], or nil when errs is shorter (LoadMany returns
// no errors when none failed).
func errOf(errs []error, i int) error {
	if i < len(errs) {
		return errs[i]
	}
	return nil
}

// linkPageTranslation links the pages of in, for admins.
func (r *Resolver) linkPageTranslation(ctx context.Context, in model.LinkPageTranslationInput) (*model.PageTranslationPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	a, err := decodeIDOf("pageId", in.PageID, kindPage)
	if err != nil {
		return nil, err
	}
	b, err := decodeIDOf("translationId", in.TranslationID, kindPage)
	if err != nil {
		return nil, err
	}
	p, err := r.store.LinkPageTranslation(ctx, a, b)
	if err != nil {
		return nil, err
	}
	return &model.PageTranslationPayload{Page: p}, nil
}

// unlinkPageTranslation takes the page of in out of its group, for
// admins.
func (r *Resolver) unlinkPageTranslation(ctx context.Context, in model.UnlinkPageTranslationInput) (*model.PageTranslationPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeIDOf("pageId", in.PageID, kindPage)
	if err != nil {
		return nil, err
	}
	p, err := r.store.UnlinkPageTranslation(ctx, id)
	if err != nil {
		return nil, err
	}
	return &model.PageTranslationPayload{Page: p}, nil
}
