package syndication

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"
)

// Alternates in other languages (https://developers.google.com/search/docs/specialty/international/localized-versions#sitemap):
// a post linked to translations lists, in a month's sitemap, every post
// of its group (itself included) as
//
//	<xhtml:link rel="alternate" hreflang="de-DE" href="..."/>
//
// in the XHTML namespace, declared on the urlset; a static page linked to
// translations lists its group's published pages the same way. The
// groups of a sitemap page's posts (or pages) are read at once (one BatchGetItem for every 100 groups), then
// their posts (one BatchGetItem for every 100, bodies included, as
// GetPosts reads them) or pages; a sitemap page without translations
// reads nothing more.

const xhtmlNamespace = "http://www.w3.org/1999/xhtml"

// xhtmlLink is one alternate of a sitemap URL.
type xhtmlLink struct {
	Rel      string `xml:"rel,attr"`
	Hreflang string `xml:"hreflang,attr"`
	Href     string `xml:"href,attr"`
}

// alternates gives each of urls, the URLs of posts, the alternates of
// its post's translations that the public can see, and returns the
// cache tags of the posts it read.
func (h *Handler) alternates(ctx context.Context, posts []*storage.Post, urls []sitemapURL) ([]string, error) {
	groupOf := make([]string, len(posts))
	for i, p := range posts {
		groupOf[i] = p.TranslationGroup
	}
	return linkTranslations(ctx, h, urls, groupOf, "posts", h.store.GetPosts, func(p *storage.Post) (string, string, bool) {
		return h.link(h.opts.Paths.PostPath(p.Slug, p.PublishedAt)), frontend.TagPost(p.ID), p.VisibleAt(h.store.Now())
	})
}

// pageAlternates gives each of urls, the URLs of static pages, the
// alternates of its page's translations that are published, and returns
// the cache tags of the pages it read.
func (h *Handler) pageAlternates(ctx context.Context, pages []*storage.SitePage, urls []sitemapURL) ([]string, error) {
	groupOf := make([]string, len(pages))
	for i, p := range pages {
		groupOf[i] = p.TranslationGroup
	}
	return linkTranslations(ctx, h, urls, groupOf, "pages", h.store.GetSitePages, func(p *storage.SitePage) (string, string, bool) {
		return h.link(h.opts.Paths.PagePath(p.Slug)), frontend.TagPage(p.ID), p.Status == storage.StatusPublished
	})
}

// linkTranslations gives urls[i] the alternates of the group groupOf[i]:
// it reads the groups, then their members with get, 100 a BatchGetItem,
// and links those that show says are public (with their URL and cache
// tag). It returns the cache tags of the members it links.
func linkTranslations[T any](ctx context.Context, h *Handler, urls []sitemapURL, groupOf []string, what string,
	get func(context.Context, []string) ([]T, []error), show func(T) (href, tag string, public bool)) ([]string, error) {
	members, ids, err := h.readGroups(ctx, groupOf)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	links := map[string]string{}
	var tags []string
	for chunk := range slices.Chunk(ids, 100) {
		found, errs := get(ctx, chunk)
		for i, v := range found {
			if err := errs[i]; err != nil {
				if !isNotFound(err) {
					return nil, fmt.Errorf("translated %s: %w", what, err)
				}
				continue
			}
			if href, tag, public := show(v); public {
				links[chunk[i]] = href
				tags = append(tags, tag)
			}
		}
	}
	setAlternates(urls, groupOf, members, links)
	return tags, nil
}

// readGroups reads the groups of translations named in groupOf (""
// for none), 100 a BatchGetItem, and returns their members by group and
// the ids of all their members.
func (h *Handler) readGroups(ctx context.Context, groupOf []string) (map[string][]storage.Translation, []string, error) {
	var groups []string
	for _, g := range groupOf {
		if g != "" && !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	members := map[string][]storage.Translation{}
	var ids []string
	for chunk := range slices.Chunk(groups, 100) {
		found, errs := h.store.GetTranslations(ctx, chunk)
		for i, g := range chunk {
			if err := errs[i]; err != nil && !isNotFound(err) {
				return nil, nil, fmt.Errorf("translations: %w", err)
			}
			members[g] = found[i]
			for _, m := range found[i] {
				ids = append(ids, m.PostID)
			}
		}
	}
	return members, ids, nil
}

// setAlternates gives urls[i] the links of the members of its group
// groupOf[i] that links holds, when it has another besides itself.
func setAlternates(urls []sitemapURL, groupOf []string, members map[string][]storage.Translation, links map[string]string) {
	for i, g := range groupOf {
		var alts []xhtmlLink
		for _, m := range members[g] {
			if href, ok := links[m.PostID]; ok {
				alts = append(alts, xhtmlLink{Rel: "alternate", Hreflang: m.Locale, Href: href})
			}
		}
		if len(alts) > 1 { // itself and at least one other
			urls[i].Alternates = alts
		}
	}
}

// isNotFound reports whether err is storage.ErrNotFound: a group or a
// post gone since its list was read.
func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
