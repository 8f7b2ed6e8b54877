// Package syndication serves the blog to feed readers and crawlers: RSS
// 2.0, Atom 1.0 and JSON Feed 1.1 feeds of the whole blog, of each
// category, author, tag and series, and a sitemap index with its pages.
//
// Everything it shows is public: published posts whose time has come,
// read with the store's public lists, never drafts or scheduled posts.
// Links are absolute, made of the site's public URL and the frontend's
// path patterns (frontend.Paths, the same patterns the change feed's
// events carry), so a feed's links and an event's paths agree. Answers
// are cacheable like the GraphQL GETs (Cache-Control, an ETag and 304
// for If-None-Match, s-maxage and stale-while-revalidate as configured)
// and carry the cache tags of what they show in the Surrogate-Key and
// Cache-Tag headers, the tags the change feed's events name for purging.
//
// The DynamoDB requests of each answer are fixed by its kind, not by its
// size (docs/feeds.md lists them): a feed reads its list in one page (the
// whole blog's feed a Query a shard), its owner (a category, an author,
// a tag) and, for full content, one BatchGetItem of the posts' bodies; a
// series' feed its series and then its posts, bodies included.
package syndication

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/storage"
)

// Content says what a feed's items carry.
type Content string

// What a feed's items carry: the post's whole rendered HTML (and its
// excerpt as the summary), or its excerpt only.
const (
	ContentFull    Content = "full"
	ContentExcerpt Content = "excerpt"
)

// Limits of the number of items a feed shows (?limit).
const (
	DefaultLimit = 20
	MaxLimit     = storage.MaxPageSize
)

// MaxSitemapURLs is the most URLs a sitemap page may list, as
// sitemaps.org defines it (and the most sitemaps an index may list).
const MaxSitemapURLs = 50000

// Options configure a Handler.
type Options struct {
	// SiteURL is the public URL of the blog's frontend (scheme, host and
	// an optional path prefix, no query), which every link starts with.
	// Empty: every answer is 503, saying what to set.
	SiteURL string
	// Title and Description describe the whole blog in its feeds; the
	// feeds of a category or an author add its name.
	Title       string
	Description string
	// Paths are the frontend's URL patterns of posts, authors, categories
	// and archive months; Post must be set.
	Paths frontend.Paths
	// Content is what items carry; empty means ContentFull.
	Content Content
	// CacheMaxAge is how long caches may keep an answer; 0 or less: no-store.
	CacheMaxAge time.Duration
	// CacheSMaxAge and CacheStaleWhileRevalidate, when positive, add
	// s-maxage and stale-while-revalidate to Cache-Control, as they do to
	// the GraphQL endpoint's public answers (gqlhttp.Options).
	CacheSMaxAge              time.Duration
	CacheStaleWhileRevalidate time.Duration
	// Timeout bounds each request's DynamoDB reads; 0: 10 s.
	Timeout time.Duration
	// Logger logs what fails; nil: slog's default.
	Logger *slog.Logger
	// SitemapPageSize is the most URLs a sitemap page lists: 0 means
	// MaxSitemapURLs. Tests set a small one to see pages split.
	SitemapPageSize int
	// Budget, when set, is the memory budget of the requests in flight
	// that every answer reserves from and charges (package inflight),
	// shared with the GraphQL endpoint: a request it has no room for is
	// answered 503 with Retry-After. Nil: no bound.
	Budget *inflight.Budget
}

// Reservations of the memory budget: what an answer holds, reserved
// before it is read. A feed's items and a sitemap's URLs are small but for
// the posts' rendered HTML, which a feed with full content reserves
// once it knows the posts' lengths (finish).
const (
	feedItemBytes   = 2 << 10
	sitemapURLBytes = 256
	// wordBytes is what one word of a post takes in a feed with full
	// content: its Markdown and HTML as read, and the HTML escaped in
	// the answer.
	wordBytes = 32
)

// Handler serves the feeds and the sitemap. Register mounts it.
type Handler struct {
	store *storage.Store
	opts  Options
	site  string // SiteURL without a trailing slash; "" when unset
	log   *slog.Logger
	// locales are the site's locales, the default first (localefeeds.go).
	locales []string
}

// New returns the handler of store's feeds and sitemap. It fails when
// SiteURL is set but is not an absolute http or https URL without query
// or fragment, or when the path patterns are invalid.
func New(store *storage.Store, opts Options) (*Handler, error) {
	h := &Handler{store: store, opts: opts, log: opts.Logger}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.opts.Content == "" {
		h.opts.Content = ContentFull
	}
	if h.opts.Content != ContentFull && h.opts.Content != ContentExcerpt {
		return nil, fmt.Errorf("feed content %q: must be %s or %s", opts.Content, ContentFull, ContentExcerpt)
	}
	if h.opts.Timeout <= 0 {
		h.opts.Timeout = 10 * time.Second
	}
	if h.opts.SitemapPageSize <= 0 || h.opts.SitemapPageSize > MaxSitemapURLs {
		h.opts.SitemapPageSize = MaxSitemapURLs
	}
	if opts.Paths.Post == "" {
		return nil, errors.New("post path: must be set")
	}
	if err := opts.Paths.Check(); err != nil {
		return nil, err
	}
	if opts.SiteURL != "" {
		site, err := CheckSiteURL(opts.SiteURL)
		if err != nil {
			return nil, err
		}
		h.site = site
	}
	return h, nil
}

// CheckSiteURL returns s without a trailing slash when it is an
// absolute http or https URL with a host and no user, query or fragment,
// else an error that says what is wrong.
func CheckSiteURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return "", fmt.Errorf("site URL %q: must be an absolute http or https URL without credentials, query or fragment, e.g. https://blog.example.com", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Register mounts the feeds and the sitemap on mux, for GET (and HEAD).
func (h *Handler) Register(mux *http.ServeMux) {
	feedBytes := int64(MaxLimit * feedItemBytes)
	for _, f := range formats {
		mux.Handle("GET /"+f.file, h.serve(feedBytes, h.blogFeed(f)))
		mux.Handle("GET /categories/{slug}/"+f.file, h.serve(feedBytes, h.categoryFeed(f)))
		mux.Handle("GET /authors/{slug}/"+f.file, h.serve(feedBytes, h.authorFeed(f)))
		mux.Handle("GET /tags/{slug}/"+f.file, h.serve(feedBytes, h.tagFeed(f)))
		mux.Handle("GET /series/{slug}/"+f.file, h.serve(feedBytes, h.seriesFeed(f)))
	}
	mux.Handle("GET /sitemap.xml", h.serve(int64(h.opts.SitemapPageSize*sitemapURLBytes), h.sitemap))
}

// answer is a response that may be cached: its body, media type and the
// cache tags of what it shows.
type answer struct {
	contentType string
	body        []byte
	tags        []string
	// language is the answer's Content-Language, when it has one; byHeader
	// says it was chosen from the request's Accept-Language (Vary).
	language string
	byHeader bool
}

// httpError is an answer that is not cached: a status and a message for
// the client, in plain text.
type httpError struct {
	status   int
	message  string
	location string // for a redirect
}

func (e *httpError) Error() string { return e.message }

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

func notFound(what string) error {
	return &httpError{status: http.StatusNotFound, message: what + " not found"}
}

// serve answers a request with what read returns: cacheable with an ETag
// and Cache-Tag when it succeeds, a plain-text error with no-store when
// it fails. The request first reserves reserve bytes of the memory
// budget, and holds what it charges until it ends.
func (h *Handler) serve(reserve int64, read func(ctx context.Context, r *http.Request) (*answer, error)) http.Handler {
	public, private := h.cacheControl(true), h.cacheControl(false)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
		defer cancel()
		ctx, m := inflight.Start(ctx, h.opts.Budget, 0)
		defer m.Done()
		if err := inflight.Reserve(ctx, reserve); err != nil {
			h.fail(w, r, err)
			return
		}
		v, err := h.withSite(ctx)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if v.site == "" {
			h.fail(w, r, &httpError{status: http.StatusServiceUnavailable,
				message: "feeds and sitemaps need the site's public URL: set it with updateSite, or start the server with -site-url (SITE_URL)"})
			return
		}
		a, err := read(context.WithValue(ctx, viewKey{}, v), r)
		if err == nil {
			err = inflight.Load(ctx, len(a.body))
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		a.tags = append(a.tags, frontend.TagSite)
		sum := sha256.Sum256(a.body)
		etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
		hd := w.Header()
		// The tags of a long list (a sitemap's posts) give way to their
		// sections, as in the GraphQL answers' headers.
		tags, ok := gqlhttp.FitTags(distinct(a.tags), gqlhttp.MaxTagHeaderBytes, frontend.SectionTag)
		switch {
		case h.opts.CacheMaxAge <= 0:
			hd.Set("Cache-Control", "no-store")
		case !ok:
			hd.Set("Cache-Control", private)
		default:
			hd.Set("Cache-Control", public)
			if len(tags) > 0 {
				hd.Set(gqlhttp.SurrogateKeyHeader, strings.Join(tags, " "))
				hd.Set(gqlhttp.CacheTagHeader, strings.Join(tags, ","))
			}
		}
		hd.Set("ETag", etag)
		if a.byHeader {
			hd.Add("Vary", "Accept-Language")
		}
		if a.language != "" {
			hd.Set("Content-Language", a.language)
		}
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		hd.Set("Content-Type", a.contentType)
		hd.Set("Content-Length", strconv.Itoa(len(a.body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(a.body)
		}
	})
}

// cacheControl returns the Cache-Control of an answer that shared
// caches may keep (its tags purge them), or of one only a browser may:
// the GraphQL endpoint's for a public answer.
func (h *Handler) cacheControl(shared bool) string {
	seconds := func(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) }
	v := "private, max-age=" + seconds(h.opts.CacheMaxAge)
	if shared {
		v = "public, max-age=" + seconds(h.opts.CacheMaxAge)
		if h.opts.CacheSMaxAge > 0 {
			v += ", s-maxage=" + seconds(h.opts.CacheSMaxAge)
		}
	}
	if h.opts.CacheStaleWhileRevalidate > 0 {
		v += ", stale-while-revalidate=" + seconds(h.opts.CacheStaleWhileRevalidate)
	}
	return v
}

// viewKey keys the Handler a request is answered with: h with the site
// settings over its options (withSite).
type viewKey struct{}

// withSite returns h with the site settings stored in the table over its
// options: the site's URL, title, description and post path where they
// are set. The store holds the settings in memory, so this costs no
// request but the first after a start or a change (storage.Store.Site).
func (h *Handler) withSite(ctx context.Context) (*Handler, error) {
	s, err := h.store.Site(ctx)
	if err != nil {
		return nil, err
	}
	v := *h
	v.locales = s.Locales
	if s.Title != "" {
		v.opts.Title = s.Title
	}
	if s.Description != "" {
		v.opts.Description = s.Description
	}
	if s.PostPath != "" {
		v.opts.Paths.Post = s.PostPath
	}
	if s.URL != "" {
		if site, err := CheckSiteURL(s.URL); err == nil {
			v.site = site
		}
	}
	return &v, nil
}

// view returns the Handler serve chose for the request of ctx, or h.
func (h *Handler) view(ctx context.Context) *Handler {
	if v, ok := ctx.Value(viewKey{}).(*Handler); ok {
		return v
	}
	return h
}

// fail answers err: its own status and message for an *httpError, 404
// for what does not exist, 503 when DynamoDB is unavailable or too slow,
// else 500 with no detail (the log has it).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
	case errors.Is(err, inflight.ErrBusy):
		he = &httpError{status: http.StatusServiceUnavailable, message: err.Error()}
	case errors.Is(err, storage.ErrNotFound):
		he = &httpError{status: http.StatusNotFound, message: "not found"}
	case errors.Is(err, storage.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		h.log.WarnContext(r.Context(), "feed unavailable", "path", r.URL.Path, "err", err)
		he = &httpError{status: http.StatusServiceUnavailable, message: "the blog is unavailable, try again later"}
	case r.Context().Err() != nil:
		return // the client went away
	default:
		h.log.ErrorContext(r.Context(), "feed failed", "path", r.URL.Path, "err", err)
		he = &httpError{status: http.StatusInternalServerError, message: "internal error"}
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	if he.status == http.StatusServiceUnavailable {
		hd.Set("Retry-After", "5")
	}
	if he.location != "" {
		hd.Set("Location", he.location)
	}
	w.WriteHeader(he.status)
	io.WriteString(w, he.message+"\n")
}

// etagMatches reports whether an If-None-Match header names etag, weakly
// as RFC 9110 compares for If-None-Match.
func etagMatches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// query returns the request's query parameters named in allowed, after
// checking that each is given at most once, else a 400 error that names
// it. Any other parameter is left out, not refused: links carry what
// campaigns and frameworks add (utm_source, Next.js's _rsc), and a feed
// or a sitemap answers them as it answers the link without it. The
// server's limit on a request's header bounds the query string.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	all, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("the query string does not parse: %v", err)
	}
	q := url.Values{}
	for _, name := range allowed {
		vs, ok := all[name]
		if !ok {
			continue
		}
		if len(vs) > 1 {
			return nil, badRequest("query parameter %q given %d times: give it once", name, len(vs))
		}
		q[name] = vs
	}
	return q, nil
}

// number returns the query parameter name as a whole number from lo to
// hi, def when it is absent, or a 400 error that says what it must be.
func number(q url.Values, name string, def, lo, hi int) (int, error) {
	if !q.Has(name) {
		return def, nil
	}
	s := q.Get(name)
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi || strconv.Itoa(n) != s {
		return 0, badRequest("%s=%q: must be a whole number from %d to %d", name, s, lo, hi)
	}
	return n, nil
}

// link returns the absolute URL of the site's path, or "" for "" (a
// page the frontend does not have).
func (h *Handler) link(path string) string {
	if path == "" {
		return ""
	}
	return h.site + path
}

// distinct returns list without empty strings and repeats, in order.
func distinct(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
