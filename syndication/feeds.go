package syndication

import (
	"context"
	"errors"
	"fmt"
	"html"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/storage"
)

// feed is what every format shows of a list of posts, with absolute
// links; each format encodes it (formats.go).
type feed struct {
	ID          string // a URI no other feed has, the same whatever the owner's slug
	Title       string
	Description string
	HomeURL     string // the page the feed follows (the blog's home, a category's, an author's)
	SelfURL     string // the feed itself, in its format
	Updated     time.Time
	Author      *person // the author of an author's feed
	Items       []item
}

type person struct {
	Name string
	URL  string
}

// item is one post of a feed.
type item struct {
	ID         string // urn:uuid: of the post's id: stable when its slug changes
	URL        string
	Title      string
	Summary    string // the excerpt, plain text
	HTML       string // the rendered body; empty with ContentExcerpt
	Published  time.Time
	Updated    time.Time
	Author     person
	Categories []storage.CategoryRef
	Image      *image
}

// image is a post's cover; Type is "" when its URL does not tell it.
type image struct {
	URL, Type, Alt string
}

// format is one of the feed formats, at its file name.
type format struct {
	file        string
	contentType string
	encode      func(h *Handler, f *feed) ([]byte, error)
}

var formats = []format{
	{"feed.xml", "application/rss+xml; charset=utf-8", encodeRSS},
	{"atom.xml", "application/atom+xml; charset=utf-8", encodeAtom},
	{"feed.json", "application/feed+json; charset=utf-8", encodeJSON},
}

// page reads the limit of the request's query: the number of posts to show.
func page(r *http.Request) (storage.PageArgs, error) {
	q, err := query(r, "limit")
	if err != nil {
		return storage.PageArgs{}, err
	}
	n, err := number(q, "limit", DefaultLimit, 1, MaxLimit)
	return storage.PageArgs{Limit: n}, err
}

// blogFeed serves the whole blog's feed in f: the newest posts, read from
// the feed's shards with their bodies (one Query a shard).
func (h *Handler) blogFeed(f format) func(context.Context, *http.Request) (*answer, error) {
	return func(ctx context.Context, r *http.Request) (*answer, error) {
		h := h.view(ctx)
		p, locale, err := localePage(r)
		if err != nil {
			return nil, err
		}
		byHeader := false
		if locale == "" && !r.URL.Query().Has("locale") {
			locale, byHeader = h.acceptedLocale(r)
		}
		res, err := h.latest(ctx, p, locale)
		if err != nil {
			return nil, err
		}
		fd := &feed{
			ID:          h.uuidURN("feed"),
			Title:       h.opts.Title,
			Description: h.opts.Description,
			HomeURL:     h.link(h.opts.Paths.Home),
			SelfURL:     h.link("/" + f.file),
		}
		if locale != "" {
			fd.ID = h.uuidURN("feed:" + locale)
			fd.SelfURL = h.link("/" + f.file + "?locale=" + url.QueryEscape(locale))
		}
		if fd.HomeURL == "" {
			fd.HomeURL = h.site + "/"
		}
		if fd.Description == "" {
			fd.Description = "The latest posts of " + fd.Title
		}
		a, err := h.finish(ctx, f, fd, res.Items, []string{frontend.TagFeed})
		if a != nil {
			a.language, a.byHeader = locale, byHeader
		}
		return a, err
	}
}

// categoryFeed serves a category's feed in f: the category and its newest
// posts, read at once (one GetItem and one Query).
func (h *Handler) categoryFeed(f format) func(context.Context, *http.Request) (*answer, error) {
	return func(ctx context.Context, r *http.Request) (*answer, error) {
		h := h.view(ctx)
		p, err := page(r)
		if err != nil {
			return nil, err
		}
		slug, err := feedSlug(r, "categories", f)
		if err != nil {
			return nil, err
		}
		var cat *storage.Category
		var res *storage.Result[*storage.Post]
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			cat, err = h.store.GetCategory(gctx, slug)
			return err
		})
		g.Go(func() (err error) {
			res, err = h.store.CategoryPosts(gctx, slug, p, storage.Period{})
			return err
		})
		if err := g.Wait(); err != nil {
			if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidInput) {
				return nil, notFound("category " + slug)
			}
			return nil, fmt.Errorf("category %q: %w", slug, err)
		}
		fd := &feed{
			ID:          h.uuidURN("category:" + cat.Slug),
			Title:       h.opts.Title + ": " + cat.Name,
			Description: cat.Description,
			HomeURL:     h.link(h.opts.Paths.CategoryPath(cat.Slug)),
			SelfURL:     h.link("/categories/" + frontend.Escape(cat.Slug) + "/" + f.file),
			Updated:     cat.UpdatedAt,
		}
		if fd.Description == "" {
			fd.Description = "Posts in " + cat.Name
		}
		if fd.HomeURL == "" {
			fd.HomeURL = h.site + "/"
		}
		return h.finish(ctx, f, fd, res.Items, []string{frontend.TagCategory(cat.Slug)})
	}
}

// authorFeed serves an author's feed in f: the author's slug read, then
// the author and their newest posts at once. An old slug of theirs
// redirects to the feed at their current one.
func (h *Handler) authorFeed(f format) func(context.Context, *http.Request) (*answer, error) {
	return func(ctx context.Context, r *http.Request) (*answer, error) {
		h := h.view(ctx)
		p, err := page(r)
		if err != nil {
			return nil, err
		}
		slug, err := feedSlug(r, "authors", f)
		if err != nil {
			return nil, err
		}
		id, err := h.store.AuthorIDBySlug(ctx, slug)
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidInput) {
			return nil, notFound("author " + slug)
		}
		if err != nil {
			return nil, fmt.Errorf("author %q: %w", slug, err)
		}
		var a *storage.Author
		var res *storage.Result[*storage.Post]
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			a, err = h.store.GetAuthor(gctx, id)
			return err
		})
		g.Go(func() (err error) {
			res, err = h.store.AuthorPosts(gctx, id, p, storage.Period{}, false)
			return err
		})
		if err := g.Wait(); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, notFound("author " + slug)
			}
			return nil, fmt.Errorf("author %q: %w", slug, err)
		}
		if a.Slug != "" && a.Slug != slug {
			return nil, moved(r, "/authors/"+frontend.Escape(a.Slug)+"/"+f.file)
		}
		fd := &feed{
			ID:          h.uuidURN("author:" + a.ID),
			Title:       h.opts.Title + ": " + a.Name,
			Description: a.Bio,
			HomeURL:     h.link(h.opts.Paths.AuthorPath(a.Slug)),
			SelfURL:     h.link("/authors/" + frontend.Escape(slug) + "/" + f.file),
			Updated:     a.UpdatedAt,
			Author:      &person{Name: a.Name, URL: h.link(h.opts.Paths.AuthorPath(a.Slug))},
		}
		if fd.Description == "" {
			fd.Description = "Posts by " + a.Name
		}
		if fd.HomeURL == "" {
			fd.HomeURL = h.site + "/"
		}
		return h.finish(ctx, f, fd, res.Items, []string{frontend.TagAuthor(a.ID)})
	}
}

// finish fills fd's items from posts, reading their bodies first (one
// BatchGetItem) when items carry full content and posts are summaries,
// and encodes it in f with the cache tags of what it shows.
func (h *Handler) finish(ctx context.Context, f format, fd *feed, posts []*storage.Post, tags []string) (*answer, error) {
	if h.opts.Content == ContentFull && len(posts) > 0 && posts[0].Summary {
		ids := make([]string, len(posts))
		words := 0
		for i, p := range posts {
			ids[i] = p.ID
			words += p.WordCount
		}
		if err := inflight.Reserve(ctx, int64(words)*wordBytes); err != nil {
			return nil, err
		}
		full, errs := h.store.GetPosts(ctx, ids)
		loaded := 0
		for _, p := range full {
			if p != nil {
				loaded += len(p.Body) + len(p.BodyHTML)
			}
		}
		if err := inflight.Load(ctx, loaded); err != nil {
			return nil, err
		}
		kept := posts[:0]
		for i, p := range full {
			switch {
			case errors.Is(errs[i], storage.ErrNotFound):
				// Deleted since the list was read.
			case errs[i] != nil:
				return nil, fmt.Errorf("post bodies: %w", errs[i])
			case p.VisibleAt(h.store.Now()):
				kept = append(kept, p)
			}
		}
		posts = kept
	}
	for _, p := range posts {
		it := h.item(p)
		fd.Items = append(fd.Items, it)
		if it.Updated.After(fd.Updated) {
			fd.Updated = it.Updated
		}
		tags = append(tags, frontend.TagPost(p.ID), frontend.TagAuthor(p.AuthorID))
		for _, c := range p.Categories {
			tags = append(tags, frontend.TagCategory(c.Slug))
		}
	}
	if fd.Updated.IsZero() {
		fd.Updated = time.Unix(0, 0)
	}
	body, err := f.encode(h, fd)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", f.file, err)
	}
	return &answer{contentType: f.contentType, body: body, tags: tags}, nil
}

// item returns what a feed shows of the post p.
func (h *Handler) item(p *storage.Post) item {
	it := item{
		ID:         h.postID(p.ID),
		URL:        h.link(h.opts.Paths.PostPath(p.Slug, p.PublishedAt)),
		Title:      p.Title,
		Summary:    p.Excerpt,
		Published:  p.PublishedAt.UTC(),
		Updated:    p.UpdatedAt.UTC(),
		Author:     person{Name: p.AuthorName, URL: h.link(h.opts.Paths.AuthorPath(p.AuthorSlug))},
		Categories: p.Categories,
	}
	if it.Updated.Before(it.Published) {
		// A post scheduled in advance was last written before it went live.
		it.Updated = it.Published
	}
	if h.opts.Content == ContentFull && p.Visibility != storage.VisibilityMembers {
		// A members-only post's item carries its excerpt alone: a feed
		// is public.
		it.HTML = p.BodyHTML
	}
	if c := p.CoverImage; c != nil {
		it.Image = &image{URL: c.URL, Type: imageType(c.URL), Alt: c.Alt}
	}
	return it
}

// imageType returns the media type an image URL's file extension names,
// or "" when it names no image type.
func imageType(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".png":
		return "image/png"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".avif":
		return "image/avif"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(u.Path)); strings.HasPrefix(t, "image/") {
		return t
	}
	return ""
}

// postID returns the stable id of a post in feeds: its id as a
// urn:uuid: (post ids are UUIDs), or a name-based UUID of it otherwise.
func (h *Handler) postID(id string) string {
	if u, err := uuid.Parse(id); err == nil && len(id) == 36 {
		return "urn:uuid:" + u.String()
	}
	return h.uuidURN("post:" + id)
}

// uuidURN returns a urn:uuid: of name within the site: the same for the
// same site URL and name, and unlike any other site's.
func (h *Handler) uuidURN(name string) string {
	return "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte(h.site+"#"+name)).String()
}

// excerptHTML returns the plain-text excerpt as HTML.
func excerptHTML(s string) string { return html.EscapeString(s) }
