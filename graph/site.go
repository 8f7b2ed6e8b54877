package graph

import (
	"context"
	"fmt"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage"
)

// Site settings and author profiles, and the small consistencies of
// categories and archives.

// SiteDefaults are what the site settings show where they were never
// set: the server's configuration (-site-title, -site-description,
// -site-url and the path patterns).
type SiteDefaults struct {
	Title, Description, URL string
	// Paths are the frontend's path patterns; zero means
	// frontend.DefaultPaths.
	Paths frontend.Paths
}

func (d SiteDefaults) paths() frontend.Paths {
	if d.Paths == (frontend.Paths{}) {
		return frontend.DefaultPaths
	}
	return d.Paths
}

// site answers Query.site: no request while the server holds the settings.
func (r *Resolver) site(ctx context.Context) (*storage.Site, error) {
	gqlhttp.Tag(ctx, frontend.TagSite)
	return r.store.Site(ctx)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (r *Resolver) siteTitle(s *storage.Site) string { return or(s.Title, r.siteDefaults.Title) }
func (r *Resolver) siteDescription(s *storage.Site) string {
	return or(s.Description, r.siteDefaults.Description)
}
func (r *Resolver) siteURL(s *storage.Site) *string { return nonEmpty(or(s.URL, r.siteDefaults.URL)) }
func (r *Resolver) sitePostPath(s *storage.Site) string {
	return or(s.PostPath, r.siteDefaults.paths().Post)
}
func (r *Resolver) sitePagePath() *string { return nonEmpty(r.siteDefaults.paths().Page) }

// menuItemPath returns the frontend's path of a menu item from the
// server's patterns, the URL of a URL link, or nil.
func (r *Resolver) menuItemPath(m *storage.MenuItem) *string {
	p := r.siteDefaults.paths()
	switch m.Kind {
	case storage.LinkPage:
		return nonEmpty(p.PagePath(m.Slug))
	case storage.LinkCategory:
		return nonEmpty(p.CategoryPath(m.Slug))
	case storage.LinkURL:
		return nonEmpty(m.URL)
	}
	return nil
}

func socialOf(in []*model.SocialAccountInput) *[]storage.SocialAccount {
	if in == nil {
		return nil
	}
	out := make([]storage.SocialAccount, 0, len(in))
	for _, a := range in {
		out = append(out, storage.SocialAccount{Network: a.Network, URL: a.URL})
	}
	return &out
}

// updateSite answers Mutation.updateSite: admins only.
func (r *Resolver) updateSite(ctx context.Context, in model.UpdateSiteInput) (*model.UpdateSitePayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	patch := storage.SitePatch{
		ExpectedVersion: int64(in.ExpectedVersion),
		Title:           in.Title, Description: in.Description, LogoURL: in.LogoURL, IconURL: in.IconURL,
		Locale: in.Locale, Timezone: in.Timezone, URL: in.URL, PostPath: in.PostPath,
		SlugTransliteration: (*string)(in.SlugTransliteration),
		Social:              socialOf(in.SocialLinks),
		Locales:             localesOf(in.Locales),
		IdempotencyKey:      idempotencyKey(ctx, in.IdempotencyKey),
	}
	if in.ExpectedVersion < 0 {
		patch.ExpectedVersion = storage.NoVersion
	}
	var err error
	if patch.LogoMedia, err = r.libraryPicture(ctx, "logoMediaId", in.LogoMediaID, "logoUrl", in.LogoURL); err != nil {
		return nil, err
	}
	if patch.IconMedia, err = r.libraryPicture(ctx, "iconMediaId", in.IconMediaID, "iconUrl", in.IconURL); err != nil {
		return nil, err
	}
	if in.Menus != nil {
		menus := menusOf(in.Menus)
		patch.Menus = &menus
	}
	patch.Localized = localizedOf(in.Localized)
	s, err := r.store.UpdateSite(ctx, patch)
	if err != nil {
		return nil, err
	}
	return &model.UpdateSitePayload{Site: s}, nil
}

// category answers Query.category: by slug or by global id.
func (r *Resolver) category(ctx context.Context, slug, id *string) (*storage.Category, error) {
	if err := exactlyOne(slug, id); err != nil {
		return nil, &storage.ValidationError{Field: "slug", Reason: "give exactly one of slug and id"}
	}
	var s string
	if slug != nil {
		var err error
		if s, err = findable(*slug); err != nil {
			return nil, err
		}
	}
	if id != nil {
		var err error
		if s, err = decodeIDOf("id", *id, kindCategory); err != nil {
			return nil, err
		}
	}
	r.categoryPostsAhead(ctx, s)
	tag := tagged(ctx, func(c *storage.Category) string { return frontend.TagCategory(c.Slug) })
	if c, ok, err := r.categoryWithPage(ctx, s); ok {
		return tag(c, err)
	}
	return tag(r.store.GetCategory(ctx, s))
}

// categoryOf returns the slug updateCategory names: its slug or its
// global id, exactly one.
func categoryOf(in model.UpdateCategoryInput) (string, error) {
	if exactlyOne(in.Slug, in.ID) != nil {
		return "", &storage.ValidationError{Field: "id", Reason: "give exactly one of id and slug"}
	}
	if in.ID != nil {
		return decodeIDOf("id", *in.ID, kindCategory)
	}
	return *in.Slug, nil
}

// archiveAuthor returns the author whose archive Query.archive counts: by
// global id or by slug (current or earlier).
func (r *Resolver) archiveAuthor(ctx context.Context, id, slug *string) (*storage.Author, error) {
	if id != nil {
		authorID, err := decodeIDOf("author", *id, kindAuthor)
		if err != nil {
			return nil, err
		}
		return tagged(ctx, authorTag)(r.store.GetAuthor(ctx, authorID))
	}
	s := slugs.Canonical(*slug) // as findable: MÜLLER looks up müller
	a, err := bySlug(ctx, s)(r.store.GetAuthorBySlug(ctx, s))
	if err != nil {
		return nil, fmt.Errorf("archive of author %q: %w", *slug, err)
	}
	return a, nil
}

// draftCount counts the author's drafts when totalCount is selected.
func (r *Resolver) draftCount(authorID string) model.Counter {
	return func(ctx context.Context) (int, error) {
		n, err := r.store.CountDrafts(ctx, authorID)
		return int(n), err
	}
}

// pendingCount counts the moderation queue of authorID ("" for the
// admins' queue of the whole blog) when totalCount is selected.
func (r *Resolver) pendingCount(authorID string) model.Counter {
	return func(ctx context.Context) (int, error) {
		n, err := r.store.CountPending(ctx, authorID)
		return int(n), err
	}
}

// postBySlug returns the post slug leads to as the actor of ctx sees it:
// its holder, or when the holder is a draft the actor cannot see that
// took the slug from another post's redirect, that post (whose slug is
// its current one, so the frontend redirects as for any old slug). Two
// requests either way: the slug's reservation, then the post (or both
// posts in one BatchGetItem). Hidden or missing, it is ErrNotFound. When
// the reservation says the post is public, its comments are read with it
// (commentsAhead).
func (r *Resolver) postBySlug(ctx context.Context, slug string) (*storage.Post, error) {
	slug, err := findable(slug)
	if err != nil {
		return nil, err
	}
	ref, err := r.store.PostSlugOf(ctx, slug)
	if err != nil {
		return nil, err
	}
	// Another post's write may take the slug over: every post's events
	// name the feed.
	gqlhttp.Tag(ctx, frontend.TagFeed)
	if ref.Prev == "" {
		if !ref.PublicAt.IsZero() && !ref.PublicAt.After(r.store.Now()) {
			r.commentsAhead(ctx, ref.ID)
		}
		return r.primedPost(ctx, nil)(r.visible(ctx)(r.getPost(ctx, ref.ID)))
	}
	posts, errs := r.store.GetPosts(ctx, []string{ref.ID, ref.Prev})
	if errs[0] == nil && r.sees(ctx, posts[0]) {
		return r.primedPost(ctx, nil)(posts[0], nil)
	}
	return r.primedPost(ctx, nil)(r.visible(ctx)(posts[1], errs[1]))
}
