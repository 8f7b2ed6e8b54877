package syndication

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage"
)

// tagFeed serves a tag's feed in f: the tag and its newest posts, read at
// once (one GetItem and one Query; one more GetItem for a merged tag). A
// tag merged into another redirects to the other's feed.
func (h *Handler) tagFeed(f format) func(context.Context, *http.Request) (*answer, error) {
	return func(ctx context.Context, r *http.Request) (*answer, error) {
		h := h.view(ctx)
		p, err := page(r)
		if err != nil {
			return nil, err
		}
		slug, err := feedSlug(r, "tags", f)
		if err != nil {
			return nil, err
		}
		if !storage.ValidSlug(slug) {
			return nil, notFound("tag " + slug)
		}
		var tag *storage.Tag
		var res *storage.Result[*storage.Post]
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			tag, err = h.store.GetTag(gctx, slug)
			return err
		})
		g.Go(func() (err error) {
			res, err = h.store.TagPosts(gctx, slug, p, storage.Period{})
			return err
		})
		if err := g.Wait(); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, notFound("tag " + slug)
			}
			return nil, fmt.Errorf("tag %q: %w", slug, err)
		}
		if tag.Slug != slug {
			return nil, moved(r, "/tags/"+frontend.Escape(tag.Slug)+"/"+f.file)
		}
		fd := &feed{
			ID:          h.uuidURN("tag:" + tag.Slug),
			Title:       h.opts.Title + ": " + tag.Name,
			Description: "Posts tagged " + tag.Name,
			HomeURL:     h.link(h.opts.Paths.TagPath(tag.Slug)),
			SelfURL:     h.link("/tags/" + frontend.Escape(tag.Slug) + "/" + f.file),
			Updated:     tag.UpdatedAt,
		}
		if fd.HomeURL == "" {
			fd.HomeURL = h.site + "/"
		}
		return h.finish(ctx, f, fd, res.Items, []string{frontend.TagTag(tag.Slug)})
	}
}

// seriesFeed serves a series' feed in f: the series (one GetItem), then
// its last posts in one BatchGetItem (a few more when some are hidden),
// the last part first.
func (h *Handler) seriesFeed(f format) func(context.Context, *http.Request) (*answer, error) {
	return func(ctx context.Context, r *http.Request) (*answer, error) {
		h := h.view(ctx)
		p, err := page(r)
		if err != nil {
			return nil, err
		}
		slug, err := feedSlug(r, "series", f)
		if err != nil {
			return nil, err
		}
		if !storage.ValidSlug(slug) {
			return nil, notFound("series " + slug)
		}
		se, err := h.store.GetSeries(ctx, slug)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, notFound("series " + slug)
		}
		if err != nil {
			return nil, fmt.Errorf("series %q: %w", slug, err)
		}
		now := h.store.Now()
		p.Backward = true
		res, err := h.store.SeriesPosts(ctx, se, p, func(p *storage.Post) bool { return p.VisibleAt(now) })
		if err != nil {
			return nil, fmt.Errorf("series %q: %w", slug, err)
		}
		posts := slices.Clone(res.Items)
		slices.Reverse(posts)
		fd := &feed{
			ID:          h.uuidURN("series:" + se.Slug),
			Title:       h.opts.Title + ": " + se.Title,
			Description: se.Description,
			HomeURL:     h.link(h.opts.Paths.BySlug(frontend.SeriesPath, se.Slug)),
			SelfURL:     h.link("/series/" + frontend.Escape(se.Slug) + "/" + f.file),
		}
		if fd.Description == "" {
			fd.Description = "The parts of " + se.Title
		}
		return h.finish(ctx, f, fd, posts, []string{frontend.TagSeries(se.Slug)})
	}
}

// moved returns the redirect to path, with the request's query.
func moved(r *http.Request, path string) error {
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	return &httpError{status: http.StatusMovedPermanently, message: "moved to " + path, location: path}
}

// feedSlug returns the slug in the path of a feed under dir ("tags") in
// f, or, when the segment is a decomposed or upper-case form of a slug,
// the redirect to the feed at its canonical form (slugs.Canonical), given
// before any read.
func feedSlug(r *http.Request, dir string, f format) (string, error) {
	slug := r.PathValue("slug")
	if c := slugs.Canonical(slug); c != slug && storage.ValidSlug(c) {
		return "", moved(r, "/"+dir+"/"+frontend.Escape(c)+"/"+f.file)
	}
	return slug, nil
}
