package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// The heads of the frontend's pages (Post.head, Author.head…): title,
// description, canonical URL, robots, Open Graph and Twitter tags and
// JSON-LD, built from what the object holds and the site settings, which
// the server holds: a head costs no request of its own. Its URLs come
// from the site's URL and the frontend's path patterns, so that a head is
// the site's: when sites become publications, each publication's.

// Bounds of a head's text, for its size cost (sizecost.go). A character
// of text takes up to 6 bytes in JSON-LD ("<" is written \u003c), and a
// URL (ASCII) one a character: the site's URL and a path.
const (
	maxHeadURLBytes = storage.MaxURLLength + 200
	// maxHeadTextBytes bounds a title or a description: a bio, the
	// longest of them.
	maxHeadTextBytes = 4 * storage.MaxBioLength
	// headTextRunes bounds the text of a head's JSON-LD: a bio and the
	// site's description, the titles and names of its nodes, and a post's
	// authors and tags; headURLs its URLs: the page's, its breadcrumb's,
	// the site's, a post's authors', an author's website and accounts.
	headTextRunes = storage.MaxBioLength + storage.MaxDescriptionLength + 10*storage.MaxTitleLength +
		storage.MaxAuthors*storage.MaxNameLength + 10*storage.MaxTagNameLength
	headURLs           = 20 + storage.MaxAuthors + storage.MaxSocialAccounts
	maxHeadJSONLDBytes = 6*headTextRunes + headURLs*maxHeadURLBytes + 4000
)

// headSite is what every head takes from the site settings.
type headSite struct {
	name, description string
	// base is the site's URL without a trailing slash; empty when the
	// site has none, and URLs are paths alone.
	base    string
	locale  string // BCP 47, or empty
	logo    string // the logo's URL, or empty
	twitter string // the site's @handle on X, or empty
	paths   frontend.Paths
}

// headSite returns the site as heads show it, and tags the answer with the
// site's tag: a head changes with the settings.
func (r *Resolver) headSite(ctx context.Context) (*headSite, error) {
	s, err := r.site(ctx)
	if err != nil {
		return nil, err
	}
	paths := r.siteDefaults.paths()
	paths.Post = r.sitePostPath(s)
	return &headSite{
		name: r.siteTitle(s), description: r.siteDescription(s),
		base: strings.TrimSuffix(deref(r.siteURL(s)), "/"), locale: s.Locale, logo: s.LogoURL,
		twitter: twitterHandle(s.Social), paths: paths,
	}, nil
}

// url returns the frontend's URL of path, or "" when path is "".
func (h *headSite) url(path string) string {
	if path == "" {
		return ""
	}
	return h.base + path
}

func (h *headSite) home() string {
	if h.paths.Home == "" {
		return h.url("/")
	}
	return h.url(h.paths.Home)
}

// twitterHandle returns "@name" for an account on X (x.com/name or
// twitter.com/name) among social, or "".
func twitterHandle(social []storage.SocialAccount) string {
	for _, a := range social {
		u, err := url.Parse(a.URL)
		if err != nil {
			continue
		}
		host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
		name := strings.Trim(u.Path, "/")
		if (host == "x.com" || host == "twitter.com") && name != "" && !strings.Contains(name, "/") {
			return "@" + name
		}
	}
	return ""
}

// head is what a page's head is built from.
type head struct {
	title, description string
	url                string // the frontend's URL of the page, or ""
	canonical          string // the SEO canonical URL, when set
	noindex            bool
	ogType             string // article, website or profile
	image              *storage.Image
	// ownImage is true when image is the page's own, not the site's logo:
	// only then is the Twitter card a large picture.
	ownImage bool
	extra    []*model.MetaTag // og:type's own tags (article:…)
	crumbs   []crumb          // the breadcrumb after the home page
	main     ld               // the page's own JSON-LD node, or nil
}

// crumb is one step of a breadcrumb.
type crumb struct{ name, url string }

// build returns the head of h on the site s.
func (s *headSite) build(h head) *model.Head {
	out := &model.Head{Title: h.title, Description: h.description, Robots: "index, follow, max-image-preview:large"}
	if h.noindex {
		out.Robots = "noindex, follow"
	}
	out.CanonicalURL = nonEmpty(h.canonical)
	if out.CanonicalURL == nil {
		out.CanonicalURL = nonEmpty(h.url)
	}
	var m metas
	m.property("og:site_name", s.name)
	m.property("og:locale", strings.ReplaceAll(s.locale, "-", "_"))
	m.property("og:title", h.title)
	m.property("og:description", h.description)
	m.property("og:type", h.ogType)
	m.property("og:url", deref(out.CanonicalURL))
	if h.image != nil {
		m.property("og:image", h.image.URL)
		m.property("og:image:width", pixels(h.image.Width))
		m.property("og:image:height", pixels(h.image.Height))
		m.property("og:image:alt", h.image.Alt)
	}
	m = append(m, h.extra...)
	card := "summary"
	if h.image != nil && h.ownImage {
		card = "summary_large_image"
	}
	m.name("twitter:card", card)
	m.name("twitter:site", s.twitter)
	m.name("twitter:title", h.title)
	m.name("twitter:description", h.description)
	if h.image != nil {
		m.name("twitter:image", h.image.URL)
		m.name("twitter:image:alt", h.image.Alt)
	}
	out.Meta = m

	website := s.website()
	graph := []ld{}
	if h.main != nil {
		h.main.put("url", h.url)
		h.main.put("isPartOf", ld{"@id": website["@id"]})
		h.main.put("inLanguage", s.locale)
		graph = append(graph, h.main)
	}
	if len(h.crumbs) > 0 {
		graph = append(graph, s.breadcrumb(h.crumbs))
	}
	graph = append(graph, website)
	out.JSONLd = jsonLD(ld{"@context": "https://schema.org", "@graph": graph})
	return out
}

// website returns the site's WebSite node, with the SearchAction of the
// frontend's search page.
func (s *headSite) website() ld {
	home := s.home()
	n := ld{"@type": "WebSite", "@id": home + "#website", "url": home, "name": s.name}
	n.put("description", s.description)
	n.put("inLanguage", s.locale)
	n.put("publisher", s.publisher())
	n["potentialAction"] = ld{
		"@type":       "SearchAction",
		"target":      ld{"@type": "EntryPoint", "urlTemplate": s.url(frontend.SearchPath) + "?" + frontend.SearchParam + "={search_term_string}"},
		"query-input": "required name=search_term_string",
	}
	return n
}

// publisher returns the site as an Organization, with its logo.
func (s *headSite) publisher() ld {
	n := ld{"@type": "Organization", "name": s.name, "url": s.home()}
	if s.logo != "" {
		n["logo"] = ld{"@type": "ImageObject", "url": s.logo}
	}
	return n
}

// breadcrumb returns a BreadcrumbList from the home page through crumbs.
func (s *headSite) breadcrumb(crumbs []crumb) ld {
	items := []ld{{"@type": "ListItem", "position": 1, "name": s.name, "item": s.home()}}
	for i, c := range crumbs {
		item := ld{"@type": "ListItem", "position": i + 2, "name": c.name}
		item.put("item", c.url)
		items = append(items, item)
	}
	return ld{"@type": "BreadcrumbList", "itemListElement": items}
}

// ld is a JSON-LD node.
type ld map[string]any

// put sets k to v unless v is empty ("", a nil node or an empty list).
func (n ld) put(k string, v any) {
	switch v := v.(type) {
	case string:
		if v == "" {
			return
		}
	case ld:
		if v == nil {
			return
		}
	case []ld:
		if len(v) == 0 {
			return
		}
	case []string:
		if len(v) == 0 {
			return
		}
	}
	n[k] = v
}

// jsonLD returns v as JSON to insert in a <script> element as it is:
// encoding/json writes <, >, &, U+2028 and U+2029 as \u escapes, so the
// text can never close the element or start a comment.
func jsonLD(v ld) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings, numbers and nodes go in: this cannot fail.
		panic(fmt.Errorf("json-ld: %w", err))
	}
	return string(b)
}

// imageLD returns img as an ImageObject with its size when known, or nil.
func imageLD(img *storage.Image) ld {
	if img == nil {
		return nil
	}
	n := ld{"@type": "ImageObject", "url": img.URL}
	if img.Width > 0 && img.Height > 0 {
		n["width"], n["height"] = img.Width, img.Height
	}
	return n
}

// metas are a head's meta tags; empty contents are left out.
type metas []*model.MetaTag

func (m *metas) property(key, content string) { m.add("property", key, content) }
func (m *metas) name(key, content string)     { m.add("name", key, content) }
func (m *metas) add(attr, key, content string) {
	if content != "" {
		*m = append(*m, &model.MetaTag{Attribute: attr, Key: key, Content: content})
	}
}

// pixels returns a size in pixels as a tag shows it, or "" when unknown.
func pixels(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// isoTime returns t in RFC 3339 (UTC), or "" for the zero time.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// postHead answers Post.head: an article, with its authors as Persons
// and a breadcrumb through its first category. It reads the post again
// whole when it came from a list, as seo does.
func (r *Resolver) postHead(ctx context.Context, obj *storage.Post) (*model.Head, error) {
	p, err := fullPost(ctx, obj)
	if err != nil {
		return nil, err
	}
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	seo := seoOf(p)
	h := head{
		title: seo.Title, description: seo.Description, canonical: p.SEO.CanonicalURL,
		url: s.url(s.paths.PostPath(p.Slug, p.PublishedAt)), ogType: "article",
		// A post readers may not see (a draft, a scheduled post, a
		// preview) is never indexed. A members-only post is: its
		// locked page is public, and its article says
		// isAccessibleForFree false, as search engines ask of content
		// behind a sign-in.
		noindex: p.SEO.NoIndex || !p.VisibleAt(r.store.Now()),
	}
	switch {
	case p.SEO.OGImage != "":
		h.image, h.ownImage = &storage.Image{URL: p.SEO.OGImage}, true
	case p.CoverImage != nil:
		h.image, h.ownImage = p.CoverImage, true
	case s.logo != "":
		h.image = &storage.Image{URL: s.logo}
	}

	var m metas
	m.property("article:published_time", isoTime(p.PublishedAt))
	m.property("article:modified_time", isoTime(p.UpdatedAt))
	authors := append([]storage.AuthorRef{{ID: p.AuthorID, Name: p.AuthorName, Slug: p.AuthorSlug}}, p.CoAuthors...)
	var people []ld
	tags := []string{frontend.TagPost(p.ID)}
	for _, a := range authors {
		u := s.url(s.paths.AuthorPath(a.Slug))
		m.property("article:author", u)
		person := ld{"@type": "Person", "name": a.Name}
		person.put("url", u)
		people = append(people, person)
		tags = append(tags, frontend.TagAuthor(a.ID))
	}
	if len(p.Categories) > 0 {
		c := p.Categories[0]
		m.property("article:section", c.Name)
		h.crumbs = append(h.crumbs, crumb{c.Name, s.url(s.paths.CategoryPath(c.Slug))})
	}
	var keywords []string
	for _, c := range p.Categories {
		tags = append(tags, frontend.TagCategory(c.Slug))
	}
	for _, t := range p.Tags {
		m.property("article:tag", t.Name)
		keywords = append(keywords, t.Name)
		tags = append(tags, frontend.TagTag(t.Slug))
	}
	gqlhttp.Tag(ctx, tags...)
	h.extra = m
	h.crumbs = append(h.crumbs, crumb{p.Title, h.url})

	article := ld{"@type": "BlogPosting", "headline": p.Title, "author": people, "publisher": s.publisher()}
	article.put("@id", withFragment(h.url, "article"))
	article.put("description", seo.Description)
	article.put("mainEntityOfPage", h.url)
	article.put("image", imageLD(h.image))
	article.put("datePublished", isoTime(p.PublishedAt))
	article.put("dateModified", isoTime(p.UpdatedAt))
	if len(p.Categories) > 0 {
		article.put("articleSection", p.Categories[0].Name)
	}
	article.put("keywords", keywords)
	if p.WordCount > 0 {
		article["wordCount"] = p.WordCount
	}
	if p.Visibility == storage.VisibilityMembers {
		article["isAccessibleForFree"] = false
	}
	h.main = article
	return s.build(h), nil
}

// pageHead answers Page.head: a web page with a breadcrumb.
func (r *Resolver) pageHead(ctx context.Context, p *storage.SitePage) (*model.Head, error) {
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	seo := pageSEO(p)
	h := head{
		title: seo.Title, description: seo.Description, canonical: p.SEO.CanonicalURL,
		url: s.url(s.paths.PagePath(p.Slug)), ogType: "website",
		noindex: p.SEO.NoIndex || p.Status != storage.StatusPublished,
	}
	if p.SEO.OGImage != "" {
		h.image, h.ownImage = &storage.Image{URL: p.SEO.OGImage}, true
	}
	h.crumbs = []crumb{{p.Title, h.url}}
	h.main = ld{"@type": "WebPage", "name": seo.Title}
	h.main.put("description", seo.Description)
	h.main.put("datePublished", isoTime(p.PublishedAt))
	h.main.put("dateModified", isoTime(p.UpdatedAt))
	return s.build(h), nil
}

// authorHead answers Author.head: a profile page about the author as a
// Person.
func (r *Resolver) authorHead(ctx context.Context, a *storage.Author) (*model.Head, error) {
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	h := head{title: a.Name, description: a.Bio, url: s.url(s.paths.AuthorPath(a.Slug)), ogType: "profile"}
	if a.AvatarURL != "" {
		h.image = &storage.Image{URL: a.AvatarURL}
	}
	h.crumbs = []crumb{{a.Name, h.url}}
	person := ld{"@type": "Person", "name": a.Name}
	person.put("@id", withFragment(h.url, "person"))
	person.put("url", h.url)
	person.put("description", a.Bio)
	person.put("image", a.AvatarURL)
	var sameAs []string
	if a.Website != "" {
		sameAs = append(sameAs, a.Website)
	}
	for _, acc := range a.Social {
		sameAs = append(sameAs, acc.URL)
	}
	person.put("sameAs", sameAs)
	h.main = ld{"@type": "ProfilePage", "name": a.Name, "mainEntity": person}
	gqlhttp.Tag(ctx, frontend.TagAuthor(a.ID))
	return s.build(h), nil
}

// collectionHead returns the head of a page listing posts: a category's,
// a tag's or a series'.
func (s *headSite) collectionHead(name, description, url string, img *storage.Image) *model.Head {
	h := head{title: name, description: description, url: url, ogType: "website", image: img, ownImage: img != nil}
	h.crumbs = []crumb{{name, url}}
	h.main = ld{"@type": "CollectionPage", "name": name}
	h.main.put("description", description)
	return s.build(h)
}

// categoryHead answers Category.head.
func (r *Resolver) categoryHead(ctx context.Context, c *storage.Category) (*model.Head, error) {
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagCategory(c.Slug))
	return s.collectionHead(c.Name, c.Description, s.url(s.paths.CategoryPath(c.Slug)), nil), nil
}

// tagHead answers Tag.head.
func (r *Resolver) tagHead(ctx context.Context, t *storage.Tag) (*model.Head, error) {
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagTag(t.Slug))
	return s.collectionHead(t.Name, "", s.url(s.paths.TagPath(t.Slug)), nil), nil
}

// seriesHead answers Series.head.
func (r *Resolver) seriesHead(ctx context.Context, sr *storage.Series) (*model.Head, error) {
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagSeries(sr.Slug))
	return s.collectionHead(sr.Title, sr.Description, s.url(s.paths.BySlug(frontend.SeriesPath, sr.Slug)), sr.CoverImage), nil
}

// siteHead answers Site.head: the home page's, whose JSON-LD is the
// WebSite alone.
func (r *Resolver) siteHead(ctx context.Context) (*model.Head, error) {
	s, err := r.headSite(ctx)
	if err != nil {
		return nil, err
	}
	h := head{title: s.name, description: s.description, url: s.home(), ogType: "website"}
	if s.logo != "" {
		h.image = &storage.Image{URL: s.logo}
	}
	return s.build(h), nil
}

// withFragment returns u#fragment, or "" when u is "".
func withFragment(u, fragment string) string {
	if u == "" {
		return ""
	}
	return u + "#" + fragment
}
