// Package frontend holds what the API knows of the blog's frontend: the
// URL patterns of its pages (Paths), which events, feeds and sitemaps
// link to, and the cache tags that answers carry and events purge. It
// imports nothing of the blog, so the store, the GraphQL layer, the
// change feed and the syndication all use it.
package frontend

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Cache tags: a response cache tags each response with what it shows, and
// an event's CacheTags name the responses to purge.

// TagFeed tags the whole-blog feed and the home page.
const TagFeed = "feed"

// TagPost tags responses that show the post id (its page, any list
// showing its summary).
func TagPost(id string) string { return tagPostPrefix + id }

// TagAuthor tags responses that show the author id: their page, and
// every post and summary that shows their name.
func TagAuthor(id string) string { return "author:" + id }

// TagCategory tags responses that show the category slug: its page, and
// every post and summary that shows its name.
func TagCategory(slug string) string { return "category:" + Escape(slug) }

// TagTag tags responses that show the tag slug: its page, and every post
// and summary that shows its name.
func TagTag(slug string) string { return "tag:" + Escape(slug) }

// TagArchive tags the archive of the month of t ("archive:2006-01").
func TagArchive(t time.Time) string { return "archive:" + t.UTC().Format("2006-01") }

// TagPage tags responses that show the page id (its page, the list of
// pages).
func TagPage(id string) string { return "page:" + id }

// TagSite tags responses that show the site's settings.
const TagSite = "site"

// TagComments tags responses that show the comments of the post id.
func TagComments(postID string) string { return "comments:" + postID }

// TagCounts tags responses that show the comment count of the post id as
// its summaries in lists hold it: those counts follow the comments a
// moment later (comment counts on copies), and their own event names this
// tag when they do.
func TagCounts(postID string) string { return tagCountsPrefix + postID }

const (
	tagPostPrefix   = "post:"
	tagCountsPrefix = "counts:"
)

// PostTags returns TagPost and TagCounts of each of the posts ids, in
// turn, cut from one string: a list's posts make one allocation for them
// instead of two each.
func PostTags(ids []string) []string {
	n := 0
	for _, id := range ids {
		n += len(tagPostPrefix) + len(tagCountsPrefix) + 2*len(id)
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		b.WriteString(tagPostPrefix)
		b.WriteString(id)
		b.WriteString(tagCountsPrefix)
		b.WriteString(id)
	}
	s := b.String()
	tags := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		post, counts := len(tagPostPrefix)+len(id), len(tagCountsPrefix)+len(id)
		tags = append(tags, s[:post], s[post:post+counts])
		s = s[post+counts:]
	}
	return tags
}

// TagSearch tags the answers of the search index (searches, related
// posts): every event that changes what the index holds (a post's, an
// author's or a category's) names it.
const TagSearch = "search"

// SeriesPath is the frontend path of a series' page, which the change
// feed's events name.
const SeriesPath = "/series/{slug}"

// TagSeries tags responses that show the series slug.
func TagSeries(slug string) string { return "series:" + Escape(slug) }

// TagFeatured tags the featured posts' list.
const TagFeatured = "featured"

// Section tags name a whole kind of thing: every event that names a tag
// of a kind (post:<id>, author:<id>…) names its kind's section tag too.
// A list of all of a kind (all authors, all categories…) is tagged with
// its section, so that a new member's event purges it, and an answer
// whose tags are too many for a header sends its sections instead
// (SectionTag).
const (
	TagAuthors    = "authors"
	TagCategories = "categories"
	TagTags       = "tags"
	TagPages      = "pages"
	TagAllSeries  = "series"
	// TagAllComments and TagAllCounts are the sections of comments:<id>
	// and counts:<id>.
	TagAllComments = "comments"
	TagAllCounts   = "counts"
)

// sections maps the prefix of each kind's tags to its section tag. A
// post's and a month's tags are in the feed's section: every event that
// names them names the feed.
var sections = map[string]string{
	"post:": TagFeed, "archive:": TagFeed, "author:": TagAuthors, "category:": TagCategories,
	"tag:": TagTags, "page:": TagPages, "series:": TagAllSeries,
	"comments:": TagAllComments, "counts:": TagAllCounts,
}

// EverySection lists the section tags, and the tags of no kind, each its
// own section: every event names the section of each tag it names, so
// every event that names a tag names one of these, and an answer tagged
// with all of them is purged by each such event. The live cursor's
// answer is: each event moves the event log it shows.
var EverySection = []string{
	TagFeed, TagSite, TagFeatured, TagSearch,
	TagAuthors, TagCategories, TagTags, TagPages, TagAllSeries, TagAllComments, TagAllCounts,
}

// SectionTag returns the section tag of tag: the tag every event naming
// tag names too, which purges whatever showed it. A tag of no kind (feed,
// site, featured, search, a section) is its own section.
func SectionTag(tag string) string {
	if i := strings.IndexByte(tag, ':'); i >= 0 {
		if s, ok := sections[tag[:i+1]]; ok {
			return s
		}
	}
	return tag
}

// WithSections returns tags followed by the section tags they lack.
func WithSections(tags []string) []string {
	out := tags
	for _, t := range tags {
		if s := SectionTag(t); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Paths are the frontend's URL patterns, in which "{slug}", "{yyyy}",
// "{mm}" and "{dd}" stand for a slug and the year, two-digit month and
// day (UTC) of a post's publication or of an archive's month. An empty
// pattern leaves those pages out of events (and feeds and sitemaps, which
// link with the same patterns).
type Paths struct {
	Home     string // the home page, showing the feed
	Post     string // a post's page, by slug, and optionally its date
	Author   string // an author's page, by slug
	Category string // a category's page, by slug
	Month    string // the archive of a month
	Page     string // a static page, by slug (pages.go)
	Tag      string // a tag's page, by slug
}

// DefaultPaths are the routes of the project's TypeScript pages
// (clients/typescript/src/pages.ts).
var DefaultPaths = Paths{
	Home:     "/",
	Post:     "/posts/{slug}",
	Author:   "/authors/{slug}",
	Category: "/categories/{slug}",
	Month:    "/archive/{yyyy}/{mm}",
	Page:     "/{slug}",
	Tag:      "/tags/{slug}",
}

// BySlug returns pattern with slug in it, percent-encoded (Escape), or ""
// when either is empty.
func (p Paths) BySlug(pattern, slug string) string {
	if pattern == "" || slug == "" {
		return ""
	}
	return strings.ReplaceAll(pattern, "{slug}", Escape(slug))
}

// Escape returns slug as a URL's path segment or a cache tag holds it:
// percent-encoded UTF-8 past ASCII ("日本語" is "%E6%97%A5%E6%9C%AC%E8%AA%9E"),
// so paths, links in feeds and sitemaps, and the tags of the Cache-Tag
// header are ASCII. A slug of a-z, 0-9 and hyphens is itself.
func Escape(slug string) string { return url.PathEscape(slug) }

// PostPath returns the page of the post with slug published at t: Post
// with its slug and t's date in it. It returns "" when Post is empty, or
// names a date and the post has none (a draft).
func (p Paths) PostPath(slug string, t time.Time) string {
	path := p.BySlug(p.Post, slug)
	if !strings.Contains(path, "{") {
		return path
	}
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	return strings.NewReplacer("{yyyy}", t.Format("2006"), "{mm}", t.Format("01"), "{dd}", t.Format("02")).Replace(path)
}

// AuthorPath returns the page of the author with slug, or "" when Author
// is empty.
func (p Paths) AuthorPath(slug string) string { return p.BySlug(p.Author, slug) }

// CategoryPath returns the page of the category slug, or "" when
// Category is empty.
func (p Paths) CategoryPath(slug string) string { return p.BySlug(p.Category, slug) }

// PagePath returns the path of the static page with slug, or "" when
// Page is empty.
func (p Paths) PagePath(slug string) string { return p.BySlug(p.Page, slug) }

// TagPath returns the frontend's path of the tag slug's page, or "" when
// the frontend has none.
func (p Paths) TagPath(slug string) string { return p.BySlug(p.Tag, slug) }

// MonthPath returns the archive page of the month of t, or "" when Month
// is empty.
func (p Paths) MonthPath(t time.Time) string {
	if p.Month == "" || t.IsZero() {
		return ""
	}
	t = t.UTC()
	return strings.NewReplacer("{yyyy}", t.Format("2006"), "{mm}", t.Format("01")).Replace(p.Month)
}

// Check returns an error naming the first pattern of p that links
// nowhere: each is empty or starts with "/"; Post, Author and Category
// hold "{slug}", Month "{yyyy}" and "{mm}"; only Post may hold "{dd}",
// and no other "{" is allowed.
func (p Paths) Check() error {
	for _, c := range []struct {
		name, pattern string
		need, may     []string
	}{
		{"home", p.Home, nil, nil},
		{"post", p.Post, []string{"{slug}"}, []string{"{yyyy}", "{mm}", "{dd}"}},
		{"author", p.Author, []string{"{slug}"}, nil},
		{"category", p.Category, []string{"{slug}"}, nil},
		{"archive", p.Month, []string{"{yyyy}", "{mm}"}, nil},
		{"page", p.Page, []string{"{slug}"}, nil},
		{"tag", p.Tag, []string{"{slug}"}, nil},
	} {
		if c.pattern == "" {
			continue
		}
		if !strings.HasPrefix(c.pattern, "/") || strings.ContainsAny(c.pattern, "?# \t\n") {
			return fmt.Errorf("%s path %q: must start with / and have no query, fragment or space", c.name, c.pattern)
		}
		rest := c.pattern
		for _, w := range c.need {
			if !strings.Contains(rest, w) {
				return fmt.Errorf("%s path %q: must hold %s", c.name, c.pattern, strings.Join(c.need, " and "))
			}
			rest = strings.ReplaceAll(rest, w, "")
		}
		for _, w := range c.may {
			rest = strings.ReplaceAll(rest, w, "")
		}
		if strings.ContainsAny(rest, "{}") {
			return fmt.Errorf("%s path %q: holds a placeholder other than %s", c.name, c.pattern, strings.Join(append(c.need, c.may...), ", "))
		}
	}
	return nil
}
