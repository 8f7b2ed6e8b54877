package graph

import (
	"context"
	"errors"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// localesOf returns the locales of an UpdateSiteInput: nil leaves them.
func localesOf(in []string) *[]string {
	if in == nil {
		return nil
	}
	return &in
}

// translationsOf returns the translations of the post p: its group read
// through the translations loader, then each post through the posts
// loader. A summary (a post of a list) lacks its group and is read
// whole first, through the posts loader too.
func (r *Resolver) translationsOf(ctx context.Context, p *storage.Post) ([]*model.Translation, error) {
	group := p.TranslationGroup
	if p.Summary {
		full, err := loadersFor(ctx).posts.Load(ctx, p.ID)()
		if err != nil {
			return nil, err
		}
		group = full.TranslationGroup
	}
	if group == "" {
		return []*model.Translation{}, nil
	}
	members, err := loadersFor(ctx).translations.Load(ctx, group)()
	if errors.Is(err, storage.ErrNotFound) {
		return []*model.Translation{}, nil // unlinked since the post was read
	}
	if err != nil {
		return nil, err
	}
	// The group's posts in one read at once (loadNow).
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.PostID
	}
	posts, errs := loadNow(ctx, "posts", loadersFor(ctx).posts, chargedPosts(r.store.GetPosts), ids)
	out := make([]*model.Translation, 0, len(members))
	for i, m := range members {
		post, err := r.visible(ctx)(posts[i], errs[i])
		switch {
		case errors.Is(err, storage.ErrNotFound):
			// A draft the reader may not see, or a post deleted since.
		case err != nil:
			return nil, err
		default:
			out = append(out, &model.Translation{Locale: m.Locale, Post: post})
		}
	}
	return out, nil
}

// postLocale returns the locale of p: its own, else the site's default,
// else nil.
func (r *Resolver) postLocale(ctx context.Context, p *storage.Post) (*string, error) {
	return r.localeOr(ctx, p.Locale)
}

// localeOr returns locale, else the site's default locale, else nil.
func (r *Resolver) localeOr(ctx context.Context, locale string) (*string, error) {
	if locale != "" {
		return &locale, nil
	}
	site, err := r.store.Site(ctx)
	if err != nil {
		return nil, err
	}
	return nonEmpty(site.DefaultLocale()), nil
}

// linkTranslation links the posts of in, for an author of both or an
// admin.
func (r *Resolver) linkTranslation(ctx context.Context, in model.LinkTranslationInput) (*model.TranslationPayload, error) {
	a, err := r.ownPost(ctx, in.PostID, nil)
	if err != nil {
		return nil, err
	}
	b, err := r.ownPost(ctx, in.TranslationID, nil)
	if err != nil {
		return nil, err
	}
	p, err := r.store.LinkTranslation(ctx, a, b)
	if err != nil {
		return nil, err
	}
	return &model.TranslationPayload{Post: p}, nil
}

// unlinkTranslation takes the post of in out of its group.
func (r *Resolver) unlinkTranslation(ctx context.Context, in model.UnlinkTranslationInput) (*model.TranslationPayload, error) {
	id, err := r.ownPost(ctx, in.PostID, nil)
	if err != nil {
		return nil, err
	}
	p, err := r.store.UnlinkTranslation(ctx, id)
	if err != nil {
		return nil, err
	}
	return &model.TranslationPayload{Post: p}, nil
}

// localePostsComplexity is the complexity of a list of posts that takes
// a locale (Query.posts, Author.posts, Category.posts, Tag.posts), which
// does not change it.
func localePostsComplexity(child int, first *int, after *string, last *int, before *string, from, to *time.Time, _ *string) int {
	return postsComplexity(child, first, after, last, before, from, to)
}

// localeList answers a list of posts filtered by locale (the blog's, a
// category's, a tag's or an author's): a page of the list's own
// partition in the locale, tagged with tag. Its totalCount is counted
// when asked (no count is kept per locale).
func (r *Resolver) localeList(ctx context.Context, tag string, l storage.LocaleList, p storage.PageArgs, per storage.Period) (*model.PostConnection, error) {
	res, err := r.store.LocaleListPosts(ctx, l, p, per)
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, tag) // primePosts tags the posts
	r.primePosts(ctx, nil, "edges.node", res.Items)
	r.primeFullPosts(ctx, res.Items)
	return postConnection(res, func(ctx context.Context) (int, error) {
		n, err := r.store.CountLocaleListPosts(ctx, l, per)
		return int(n), err
	}), nil
}

// localePosts is Query.posts(locale:): a page of the locale's own list.
func (r *Resolver) localePosts(ctx context.Context, locale string, p storage.PageArgs, per storage.Period) (*model.PostConnection, error) {
	return r.localeList(ctx, frontend.TagFeed, storage.LocaleList{Locale: locale}, p, per)
}
