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
// in the XHTML namespace, declared on the urlset. The groups of a page's
// posts are read at once (one BatchGetItem for every 100 groups), then
// their posts (one BatchGetItem for every 100, bodies included, as
// GetPosts reads them); a page without translations reads nothing more.

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
	var groups []string
	for _, p := range posts {
		if p.TranslationGroup != "" && !slices.Contains(groups, p.TranslationGroup) {
			groups = append(groups, p.TranslationGroup)
		}
	}
	if len(groups) == 0 {
		return nil, nil
	}
	members := map[string][]storage.Translation{}
	var ids []string
	for chunk := range slices.Chunk(groups, 100) {
		found, errs := h.store.GetTranslations(ctx, chunk)
		for i, g := range chunk {
			if err := errs[i]; err != nil && !isNotFound(err) {
				return nil, fmt.Errorf("translations: %w", err)
			}
			members[g] = found[i]
			for _, m := range found[i] {
				ids = append(ids, m.PostID)
			}
		}
	}
	byID := map[string]*storage.Post{}
	for chunk := range slices.Chunk(ids, 100) {
		found, errs := h.store.GetPosts(ctx, chunk)
		for i, p := range found {
			switch err := errs[i]; {
			case err != nil && !isNotFound(err):
				return nil, fmt.Errorf("translated posts: %w", err)
			case err == nil && p.VisibleAt(h.store.Now()):
				byID[p.ID] = p
			}
		}
	}
	var tags []string
	for i, p := range posts {
		var links []xhtmlLink
		for _, m := range members[p.TranslationGroup] {
			if t := byID[m.PostID]; t != nil {
				links = append(links, xhtmlLink{Rel: "alternate", Hreflang: m.Locale, Href: h.link(h.opts.Paths.PostPath(t.Slug, t.PublishedAt))})
				tags = append(tags, frontend.TagPost(t.ID))
			}
		}
		if len(links) > 1 { // itself and at least one other
			urls[i].Alternates = links
		}
	}
	return tags, nil
}

// isNotFound reports whether err is storage.ErrNotFound: a group or a
// post gone since its list was read.
func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
