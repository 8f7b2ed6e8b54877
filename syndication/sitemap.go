package syndication

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"
)

// The sitemap (https://www.sitemaps.org/protocol.html): /sitemap.xml is
// an index of pages, each at most SitemapPageSize URLs (50,000 at most):
//
//	/sitemap.xml?section=pages[&page=N]                 the home page and the archive's months
//	/sitemap.xml?section=static[&page=N]                the published static pages (pages.go)
//	/sitemap.xml?section=categories[&page=N]            the categories' pages
//	/sitemap.xml?section=authors[&page=N]               the authors' pages
//	/sitemap.xml?section=tags[&page=N]                  the pages of the tags with posts
//	/sitemap.xml?section=series[&page=N]                the pages of the series with posts
//	/sitemap.xml?section=posts&month=YYYY-MM[&page=N]   the posts published that month (UTC)
//
// Every page is at the site's root, as the protocol asks of the URLs a
// sitemap may list, and a month's page keeps its URL as the blog grows,
// so crawlers and caches keep what they know of past months. The index
// is made from the blog-wide counts (one GetItem), which count no tags
// nor series: it names the first page of each when the list has a first
// item (a Query of one item each, at once); a page reads its list
// in pages of 100 (a Query each, the posts' four at once), from its
// start to its end, so page N of a list reads N times a page's size.

// Both elements are in the namespace of sitemaps and sitemap indexes,
// http://www.sitemaps.org/schemas/sitemap/0.9.

type sitemapIndex struct {
	XMLName  xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []sitemapRef `xml:"sitemap"`
}

type sitemapRef struct {
	Loc string `xml:"loc"`
}

type urlSet struct {
	XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	// XHTML declares the prefix of the alternates (hreflang.go) when
	// there are any.
	XHTML string       `xml:"xmlns:xhtml,attr,omitempty"`
	URLs  []sitemapURL `xml:"url"`
}

type sitemapURL struct {
	Loc        string      `xml:"loc"`
	LastMod    string      `xml:"lastmod,omitempty"`
	Alternates []xhtmlLink `xml:"xhtml:link"`
}

const sitemapType = "application/xml; charset=utf-8"

// listPage is how many items a sitemap reads with each request.
const listPage = storage.MaxPageSize

// sitemap serves the index, or the page its query names.
func (h *Handler) sitemap(ctx context.Context, r *http.Request) (*answer, error) {
	h = h.view(ctx)
	q, err := query(r, "section", "month", "page")
	if err != nil {
		return nil, err
	}
	section := q.Get("section")
	if section == "" {
		if len(q) > 0 {
			return nil, badRequest("month and page go with section: the index (/sitemap.xml) takes no parameters")
		}
		return h.sitemapIndex(ctx)
	}
	pageNo, err := number(q, "page", 1, 1, MaxSitemapURLs)
	if err != nil {
		return nil, err
	}
	if q.Has("month") && section != "posts" {
		return nil, badRequest("month goes with section=posts only")
	}
	size := h.opts.SitemapPageSize
	skip := (pageNo - 1) * size
	var urls []sitemapURL
	var tags []string
	switch section {
	case "pages":
		urls, tags, err = h.sitemapPages(ctx)
		urls = window(urls, skip, size)
	case "categories":
		if h.opts.Paths.Category == "" {
			return nil, notFound("sitemap of categories (no category path is configured)")
		}
		urls, tags, err = readWindow(ctx, skip, size, h.store.Categories, func(c *storage.Category) (sitemapURL, string) {
			return sitemapURL{Loc: h.link(h.opts.Paths.CategoryPath(c.Slug)), LastMod: lastmod(c.UpdatedAt)}, frontend.TagCategory(c.Slug)
		})
		tags = append(tags, frontend.TagCategories) // a new category's event names it
	case "static":
		if h.opts.Paths.Page == "" {
			return nil, notFound("sitemap of static pages (no page path is configured)")
		}
		published := func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.SitePage], error) {
			return h.store.Pages(ctx, p, false)
		}
		var shown []*storage.SitePage
		urls, tags, err = readWindow(ctx, skip, size, published, func(pg *storage.SitePage) (sitemapURL, string) {
			shown = append(shown, pg)
			return sitemapURL{Loc: h.link(h.opts.Paths.PagePath(pg.Slug)), LastMod: lastmod(pg.UpdatedAt)}, frontend.TagPage(pg.ID)
		})
		tags = append(tags, frontend.TagPages)
		if err == nil {
			var more []string
			more, err = h.pageAlternates(ctx, shown, urls)
			tags = append(tags, more...)
		}
	case "authors":
		if h.opts.Paths.Author == "" {
			return nil, notFound("sitemap of authors (no author path is configured)")
		}
		urls, tags, err = readWindow(ctx, skip, size, h.store.Authors, func(a *storage.Author) (sitemapURL, string) {
			return sitemapURL{Loc: h.link(h.opts.Paths.AuthorPath(a.Slug)), LastMod: lastmod(a.UpdatedAt)}, frontend.TagAuthor(a.ID)
		})
		tags = append(tags, frontend.TagAuthors)
	case "tags":
		if h.opts.Paths.Tag == "" {
			return nil, notFound("sitemap of tags (no tag path is configured)")
		}
		urls, tags, err = readWindow(ctx, skip, size, h.store.Tags, func(tg *storage.Tag) (sitemapURL, string) {
			if tg.PostCount == 0 {
				return sitemapURL{}, "" // a page with nothing on it
			}
			return sitemapURL{Loc: h.link(h.opts.Paths.TagPath(tg.Slug)), LastMod: lastmod(tg.UpdatedAt)}, frontend.TagTag(tg.Slug)
		})
		tags = append(tags, frontend.TagTags)
	case "series":
		urls, tags, err = readWindow(ctx, skip, size, h.store.AllSeries, func(se *storage.Series) (sitemapURL, string) {
			if len(se.Posts) == 0 {
				return sitemapURL{}, ""
			}
			return sitemapURL{Loc: h.link(h.opts.Paths.BySlug(frontend.SeriesPath, se.Slug))}, frontend.TagSeries(se.Slug)
		})
		tags = append(tags, frontend.TagAllSeries)
	case "posts":
		month, perr := time.Parse("2006-01", q.Get("month"))
		if perr != nil || q.Get("month") != month.Format("2006-01") {
			return nil, badRequest("month=%q: section=posts needs a month as YYYY-MM, e.g. 2026-02", q.Get("month"))
		}
		per := storage.Period{From: month, To: month.AddDate(0, 1, 0)}
		latest := func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error) {
			return h.store.LatestPosts(ctx, p, per)
		}
		var shown []*storage.Post
		urls, tags, err = readWindow(ctx, skip, size, latest, func(p *storage.Post) (sitemapURL, string) {
			shown = append(shown, p)
			mod := p.UpdatedAt
			if mod.Before(p.PublishedAt) {
				mod = p.PublishedAt
			}
			return sitemapURL{Loc: h.link(h.opts.Paths.PostPath(p.Slug, p.PublishedAt)), LastMod: lastmod(mod)}, frontend.TagPost(p.ID)
		})
		tags = append(tags, frontend.TagArchive(month))
		if err == nil {
			var more []string
			more, err = h.alternates(ctx, shown, urls)
			tags = append(tags, more...)
		}
		if err == nil && len(urls) == 0 {
			return nil, notFound(fmt.Sprintf("sitemap of %s, page %d (no posts there)", month.Format("2006-01"), pageNo))
		}
	default:
		return nil, badRequest("section=%q: must be pages, static, categories, authors, tags, series or posts", section)
	}
	if err != nil {
		return nil, err
	}
	if len(urls) == 0 && pageNo > 1 {
		return nil, notFound(fmt.Sprintf("sitemap of %s, page %d", section, pageNo))
	}
	set := urlSet{URLs: urls}
	for _, u := range urls {
		if len(u.Alternates) > 0 {
			set.XHTML = xhtmlNamespace
			break
		}
	}
	body, err := marshalXML(set)
	if err != nil {
		return nil, err
	}
	return &answer{contentType: sitemapType, body: body, tags: tags}, nil
}

// sitemapIndex lists the sitemap's pages, from the blog-wide counts and,
// for tags and series, which no count is kept of, the first of each list
// (a Query of one item each, at the same time as the counts' GetItem).
func (h *Handler) sitemapIndex(ctx context.Context) (*answer, error) {
	var st *storage.Stats
	var anyTag, anySeries bool
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		st, err = h.store.Stats(gctx)
		return err
	})
	if h.opts.Paths.Tag != "" {
		g.Go(func() error {
			res, err := h.store.Tags(gctx, storage.PageArgs{Limit: 1})
			anyTag = err == nil && len(res.Items) > 0
			return err
		})
	}
	g.Go(func() error {
		res, err := h.store.AllSeries(gctx, storage.PageArgs{Limit: 1})
		anySeries = err == nil && len(res.Items) > 0
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("sitemap index: %w", err)
	}
	size := int64(h.opts.SitemapPageSize)
	pages := func(n int64) int { return int((n + size - 1) / size) }
	var refs []sitemapRef
	add := func(params string, n int) {
		for i := 1; i <= n; i++ {
			loc := h.site + "/sitemap.xml?" + params
			if i > 1 {
				loc += "&page=" + strconv.Itoa(i)
			}
			refs = append(refs, sitemapRef{Loc: loc})
		}
	}
	months := int64(0)
	if h.opts.Paths.Month != "" {
		months = int64(len(st.Archive))
	}
	add("section=pages", max(1, pages(1+months)))
	if h.opts.Paths.Page != "" {
		add("section=static", pages(st.PageCount))
	}
	if h.opts.Paths.Category != "" {
		add("section=categories", pages(st.CategoryCount))
	}
	if h.opts.Paths.Author != "" {
		add("section=authors", pages(st.AuthorCount))
	}
	// The first page of tags and of series: no count says how many
	// more (docs/feeds.md).
	if anyTag {
		add("section=tags", 1)
	}
	if anySeries {
		add("section=series", 1)
	}
	for _, m := range st.Archive {
		if m.PostCount > 0 {
			add("section=posts&month="+url.QueryEscape(m.Start().Format("2006-01")), pages(m.PostCount))
		}
	}
	if len(refs) > MaxSitemapURLs {
		refs = refs[:MaxSitemapURLs]
	}
	body, err := marshalXML(sitemapIndex{Sitemaps: refs})
	if err != nil {
		return nil, err
	}
	// The number of pages of each section follows the counts of posts,
	// categories, authors and pages, and the first tag and series.
	return &answer{contentType: sitemapType, body: body, tags: []string{frontend.TagFeed, frontend.TagCategories, frontend.TagAuthors, frontend.TagPages,
		frontend.TagTags, frontend.TagAllSeries}}, nil
}

// sitemapPages returns the home page and the archive's months, newest
// first (the blog-wide counts: one GetItem).
func (h *Handler) sitemapPages(ctx context.Context) ([]sitemapURL, []string, error) {
	st, err := h.store.Stats(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("stats: %w", err)
	}
	home := h.link(h.opts.Paths.Home)
	if home == "" {
		home = h.site + "/"
	}
	urls := []sitemapURL{{Loc: home}}
	tags := []string{frontend.TagFeed}
	if h.opts.Paths.Month != "" {
		for _, m := range st.Archive {
			urls = append(urls, sitemapURL{Loc: h.link(h.opts.Paths.MonthPath(m.Start()))})
			tags = append(tags, frontend.TagArchive(m.Start()))
		}
	}
	return urls, tags, nil
}

// readWindow reads the items skip to skip+size of a list, a page of
// listPage items a request, and returns their URLs and cache tags.
func readWindow[T any](ctx context.Context, skip, size int, list func(context.Context, storage.PageArgs) (*storage.Result[T], error),
	conv func(T) (sitemapURL, string)) ([]sitemapURL, []string, error) {
	var urls []sitemapURL
	var tags []string
	p := storage.PageArgs{Limit: listPage}
	for seen := 0; seen < skip+size; {
		res, err := list(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range res.Items {
			if seen >= skip && seen < skip+size {
				u, tag := conv(it)
				if u.Loc != "" {
					urls = append(urls, u)
					tags = append(tags, tag)
				}
			}
			seen++
		}
		if !res.HasNext || len(res.Items) == 0 {
			break
		}
		p.After = res.Cursors[len(res.Cursors)-1]
		p.Limit = min(listPage, skip+size-seen)
	}
	return urls, tags, nil
}

// window returns list[skip:skip+size], clipped to list.
func window[T any](list []T, skip, size int) []T {
	if skip >= len(list) {
		return nil
	}
	return list[skip:min(len(list), skip+size)]
}

// lastmod returns t as a sitemap's lastmod (W3C Datetime), or "" for zero.
func lastmod(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
