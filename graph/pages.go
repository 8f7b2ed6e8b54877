package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Static pages: admins write them, everyone reads the published ones.

// seenPage returns a filter for a page read and its error: it passes the
// page when it is published or the actor of ctx is an admin, else returns
// ErrNotFound, as for a page that does not exist.
func (r *Resolver) seenPage(ctx context.Context) func(*storage.SitePage, error) (*storage.SitePage, error) {
	return func(p *storage.SitePage, err error) (*storage.SitePage, error) {
		if err != nil {
			return nil, err
		}
		if p.Status != storage.StatusPublished && !auth.ActorFrom(ctx).IsAdmin() {
			return nil, fmt.Errorf("page %q: %w", p.ID, storage.ErrNotFound)
		}
		return p, nil
	}
}

// page answers Query.page.
func (r *Resolver) page(ctx context.Context, id, slug *string) (*storage.SitePage, error) {
	switch {
	case exactlyOne(id, slug) != nil:
		return nil, &storage.ValidationError{Field: "id", Reason: "give exactly one of id and slug"}
	case id != nil:
		pageID, err := decodeIDOf("id", *id, kindPage)
		if err != nil {
			return nil, err
		}
		return tagged(ctx, pageTag)(r.seenPage(ctx)(r.store.GetPage(ctx, pageID)))
	}
	s, err := findable(*slug)
	if err != nil {
		return nil, err
	}
	return tagged(ctx, pageTag)(r.seenPage(ctx)(r.store.GetPageBySlug(ctx, s)))
}

// pages answers Query.pages: the drafts for admins only, a locale's
// pages from its own list (storage.LocalePages).
func (r *Resolver) pages(ctx context.Context, first *int, after *string, last *int, before *string, drafts *bool, locale *string) (*model.SitePageConnection, error) {
	if deref(drafts) {
		if err := admin(ctx); err != nil {
			return nil, err
		}
	}
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	var res *storage.Result[*storage.SitePage]
	switch {
	case locale != nil && deref(drafts):
		return nil, &storage.ValidationError{Field: "locale", Reason: "cannot go with drafts: only published pages are listed by locale"}
	case locale != nil:
		res, err = r.store.LocalePages(ctx, *locale, p)
	default:
		res, err = r.store.Pages(ctx, p, deref(drafts))
	}
	if err != nil {
		return nil, err
	}
	if locale != nil && len(res.Items) > 0 && graphql.AnyFieldRequested(ctx, "edges.node.translations", "nodes.translations") {
		// A locale's copies lack their translation groups: the pages are
		// read whole in one batch read, not one by one into the loader's
		// window, which a busy machine can close between two of them.
		ids := make([]string, len(res.Items))
		for i, pg := range res.Items {
			ids[i] = pg.ID
		}
		l := loadersFor(ctx)
		prime(ctx, "sitePages", l.sitePages, r.store.GetSitePages, ids)
	}
	return &model.SitePageConnection{
		PageInfo: pageInfo(res),
		Edges: edges(res, func(c string, n *storage.SitePage) *model.SitePageEdge {
			return &model.SitePageEdge{Cursor: c, Node: n}
		}),
	}, nil
}

// pageSEO returns what search engines see of p: its SEO fields, each
// unset one standing in for by the page's title or the beginning of its
// body.
func pageSEO(p *storage.SitePage) *model.Seo {
	seo := &model.Seo{Title: p.SEO.Title, Description: p.SEO.Description, CanonicalURL: nonEmpty(p.SEO.CanonicalURL), OgImage: nonEmpty(p.SEO.OGImage), Noindex: p.SEO.NoIndex}
	if seo.Title == "" {
		seo.Title = p.Title
	}
	if seo.Description == "" {
		seo.Description = p.Excerpt
	}
	return seo
}

// pageParentID returns the global id of p's parent, or nil.
func pageParentID(p *storage.SitePage) *string {
	if p.ParentID == "" {
		return nil
	}
	return new(pageGID(p.ParentID))
}

// parentOf decodes a parent's global id: "" (top level) stays "".
func parentOf(gid *string) (*string, error) {
	if gid == nil || *gid == "" {
		return gid, nil
	}
	id, err := decodeIDOf("parentId", *gid, kindPage)
	return &id, err
}

func pageSEOPatch(in *model.PageSeoInput) *storage.SEOPatch {
	if in == nil {
		return nil
	}
	return &storage.SEOPatch{Title: in.Title, Description: in.Description, CanonicalURL: in.CanonicalURL, OGImage: in.OgImage, NoIndex: in.Noindex}
}

// createPage answers Mutation.createPage.
func (r *Resolver) createPage(ctx context.Context, in model.CreatePageInput) (*model.CreatePagePayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	parent, err := parentOf(in.ParentID)
	if err != nil {
		return nil, err
	}
	var seo storage.SEO
	if p := pageSEOPatch(in.Seo); p != nil {
		seo = storage.SEO{Title: deref(p.Title), Description: deref(p.Description), CanonicalURL: deref(p.CanonicalURL), OGImage: deref(p.OGImage), NoIndex: deref(p.NoIndex)}
	}
	p, err := r.store.CreatePage(ctx, storage.NewPage{
		Title: in.Title, Slug: in.Slug, Body: deref(in.Body), SEO: seo, Order: deref(in.Order), ParentID: deref(parent),
		IdempotencyKey: idempotencyKey(ctx, in.IdempotencyKey), Locale: deref(in.Locale),
	})
	if err != nil {
		return nil, err
	}
	return &model.CreatePagePayload{Page: p}, nil
}

// updatePage answers Mutation.updatePage.
func (r *Resolver) updatePage(ctx context.Context, in model.UpdatePageInput) (*model.UpdatePagePayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	id, err := decodeIDOf("id", in.ID, kindPage)
	if err != nil {
		return nil, err
	}
	parent, err := parentOf(in.ParentID)
	if err != nil {
		return nil, err
	}
	p, err := r.store.UpdatePage(ctx, storage.PagePatch{
		ID: id, ExpectedVersion: int64(in.ExpectedVersion),
		Title: in.Title, Slug: in.Slug, Body: in.Body, SEO: pageSEOPatch(in.Seo), Order: in.Order, ParentID: parent,
		IdempotencyKey: idempotencyKey(ctx, in.IdempotencyKey), Locale: in.Locale,
	})
	if err != nil {
		return nil, err
	}
	return &model.UpdatePagePayload{Page: p}, nil
}

// pageRef checks that an admin writes and returns the storage reference
// of a page write.
func pageRef(ctx context.Context, gid string, expected *int, key *string) (storage.PageRef, error) {
	if err := admin(ctx); err != nil {
		return storage.PageRef{}, err
	}
	id, err := decodeIDOf("id", gid, kindPage)
	return storage.PageRef{ID: id, ExpectedVersion: expectedVersionOf(expected), IdempotencyKey: idempotencyKey(ctx, key)}, err
}

// publishPage answers Mutation.publishPage.
func (r *Resolver) publishPage(ctx context.Context, in model.PublishPageInput) (*model.PublishPagePayload, error) {
	ref, err := pageRef(ctx, in.ID, in.ExpectedVersion, in.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	p, err := r.store.PublishPage(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &model.PublishPagePayload{Page: p}, nil
}

// unpublishPage answers Mutation.unpublishPage.
func (r *Resolver) unpublishPage(ctx context.Context, in model.UnpublishPageInput) (*model.UnpublishPagePayload, error) {
	ref, err := pageRef(ctx, in.ID, in.ExpectedVersion, in.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	p, err := r.store.UnpublishPage(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &model.UnpublishPagePayload{Page: p}, nil
}

// deletePage answers Mutation.deletePage.
func (r *Resolver) deletePage(ctx context.Context, in model.DeletePageInput) (*model.DeletePagePayload, error) {
	ref, err := pageRef(ctx, in.ID, in.ExpectedVersion, in.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	p, err := r.store.DeletePage(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &model.DeletePagePayload{DeletedID: pageGID(p.ID)}, nil
}
