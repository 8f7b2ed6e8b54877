package gqlhttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// HTTP caching. Public pages are the same for every anonymous reader, so a
// CDN may keep them: a GET request without an Authorization header whose
// query operation answered without errors, and that no resolver marked
// private (NoStore), gets "Cache-Control: public, max-age=N" and an ETag
// (a hash of the body), and a matching If-None-Match gets 304 Not
// Modified with no body. Everything
// else (POST, mutations, signed-in readers, errors) gets
// "Cache-Control: no-store", so no cache ever keeps a write's answer or one
// person's view. GET covers automatic persisted queries too: a hash-only
// GET URL is short and stable, which is what a CDN keys on. A public
// answer also carries the tags its resolvers named (Tag) as
// Surrogate-Key and Cache-Tag, so a CDN purges it by tag, and
// Cache-Control may add s-maxage and stale-while-revalidate. Only a
// tagged answer is public: one that showed something no tag names
// (Untagged) is "private, max-age=N", kept by the browser alone, since
// no purge would reach a CDN's copy.
//
// With an AnswerCache, the answers to anonymous requests (GET or POST,
// without Authorization or a bypassing header) that are public, as above,
// and tagged are kept under the key of the operation that ran
// (answerkey.go) and sent again without running it (X-Cache: HIT); a
// POST's answer stays no-store for HTTP caches. The cache also remembers
// the exact request (exactKey) each answer was computed or found for: the
// same request again, byte for byte, is answered before it is decoded or
// admitted to the executor, since every step from its bytes to its key
// gives the same result again.

// cacheState is where the response hook tells the HTTP layer whether the
// operation it answered may be cached publicly; NoStore marks it private
// first. With an answer cache, answerLookup leaves in it the key of the
// operation that ran, or the answer kept under it, which
// answersFromMemory sends.
type cacheState struct {
	public  bool
	private atomic.Bool // set by resolvers, which run at once

	answers *AnswerCache // nil: the request is not offered to one
	scope   string       // what the handler's keys start with (Options.AnswerScope)
	key     string       // the key of the query operation that ran
	kept    *answer      // the answer the cache holds for the operation
	hit     *answer      // the answer to send in its place
}

// NoStore makes the answer of the request ctx belongs to uncacheable,
// whatever else it is: a resolver calls it when its answer is for its
// caller alone, though anonymous (the blog's post shown by a preview
// token).
func NoStore(ctx context.Context) {
	if st, ok := ctx.Value(cacheStateKey{}).(*cacheState); ok {
		st.private.Store(true)
	}
}

type cacheStateKey struct{}

// markCacheable is the response hook: it marks the request's answer public
// when it is a query's answer without errors.
func markCacheable(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	st, ok := ctx.Value(cacheStateKey{}).(*cacheState)
	if !ok || resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	op := graphql.GetOperationContext(ctx).Operation
	st.public = len(resp.Errors) == 0 && op != nil && op.Operation == ast.Query && !st.private.Load()
	return resp
}

// caching is what withCacheHeaders needs: the lifetimes of
// Cache-Control, the answer cache (nil: none) and the request headers
// that bypass it.
type caching struct {
	maxAge, sMaxAge, staleWhileRevalidate time.Duration
	answers                               *AnswerCache
	scope                                 string
	bypass                                []string
	section                               func(string) string
}

// cacheControl returns the Cache-Control of an answer HTTP caches may
// keep: public when shared caches may too, private otherwise.
func (c caching) cacheControl(shared bool) string {
	v := "private, max-age=" + strconv.Itoa(int(c.maxAge.Seconds()))
	if shared {
		v = "public, max-age=" + strconv.Itoa(int(c.maxAge.Seconds()))
	}
	if shared && c.sMaxAge > 0 {
		v += ", s-maxage=" + strconv.Itoa(int(c.sMaxAge.Seconds()))
	}
	if c.staleWhileRevalidate > 0 {
		v += ", stale-while-revalidate=" + strconv.Itoa(int(c.staleWhileRevalidate.Seconds()))
	}
	return v
}

// Headers of cached answers.
const (
	// AnswerCacheHeader says whether the answer cache answered (HIT),
	// computed and offered it (MISS), or was not asked (BYPASS: a request
	// with credentials or a bypassing header).
	AnswerCacheHeader = "X-Cache"
	// SurrogateKeyHeader and CacheTagHeader carry a public answer's tags,
	// for Fastly and Varnish (space-separated) and Cloudflare
	// (comma-separated), so a CDN purges by the tags the change feed's
	// events name.
	SurrogateKeyHeader = "Surrogate-Key"
	CacheTagHeader     = "Cache-Tag"
)

// withCacheHeaders serves the answer cache and sets the caching headers
// described above on every answer of next. maxAge zero or less makes
// every answer no-store; the answer cache works whatever it is.
func withCacheHeaders(c caching, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bypass := len(r.Header.Values("Authorization")) > 0
		for _, h := range c.bypass {
			bypass = bypass || len(r.Header.Values(h)) > 0
		}
		get := r.Method == http.MethodGet
		httpCacheable := get && !bypass && c.maxAge > 0
		useAnswers := c.answers != nil && !bypass && (get || r.Method == http.MethodPost)
		if !httpCacheable && !useAnswers {
			if c.answers != nil {
				w.Header().Set(AnswerCacheHeader, "BYPASS")
			}
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		if get {
			h.Add("Vary", "Authorization")
		}

		var exact string
		if useAnswers {
			if exact = exactKey(c.scope, r); exact != "" {
				if a, contentType, ok := c.answers.getExact(exact); ok {
					if contentType != "" {
						h.Set("Content-Type", contentType)
					}
					h.Set(AnswerCacheHeader, "HIT")
					writeAnswer(w, r, a.body, a.etag, a.headerTags, c.cacheControlOf(httpCacheable, a.shared))
					return
				}
			}
		}

		st := &cacheState{}
		ctx := context.WithValue(r.Context(), cacheStateKey{}, st)
		tags := &answerTags{}
		ctx = context.WithValue(ctx, answerTagsKey{}, tags)
		var begun uint64
		if useAnswers {
			h.Set(AnswerCacheHeader, "MISS")
			st.answers, st.scope = c.answers, c.scope
			begun = c.answers.begin()
		}
		buf := &bufferedResponse{header: w.Header()}
		next.ServeHTTP(buf, r.WithContext(ctx))

		if buf.status == 0 {
			buf.status = http.StatusOK
		}
		if a := st.hit; a != nil && buf.status == http.StatusOK {
			c.answers.addExact(exact, a.key, h.Get("Content-Type"))
			h.Set(AnswerCacheHeader, "HIT")
			writeAnswer(w, r, a.body, a.etag, a.headerTags, c.cacheControlOf(httpCacheable, a.shared))
			return
		}
		if !st.public || buf.status != http.StatusOK {
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(buf.status)
			w.Write(buf.body.Bytes())
			return
		}
		body := buf.body.Bytes()
		etag := etagOf(body)
		all, public, tagged := tags.collected()
		headerTags, shared := FitTags(public, MaxTagHeaderBytes, c.section)
		if shared = shared && tagged; !shared {
			headerTags = nil
		}
		if st.key != "" && tagged && c.answers.add(&answer{
			key: st.key, body: slices.Clone(body), etag: etag,
			tags: all, headerTags: headerTags, shared: shared,
		}, begun) {
			c.answers.addExact(exact, st.key, h.Get("Content-Type"))
		}
		writeAnswer(w, r, body, etag, headerTags, c.cacheControlOf(httpCacheable, shared))
	})
}

// cacheControlOf returns the Cache-Control of a public answer: no-store
// when HTTP caches may not keep it, else public when shared caches may
// (its tags purge them), private when not.
func (c caching) cacheControlOf(httpCacheable, shared bool) string {
	if !httpCacheable {
		return "no-store"
	}
	return c.cacheControl(shared)
}

// writeAnswer writes a public answer with cacheControl: with its ETag
// and tag headers when HTTP caches may keep it (a 304 when If-None-Match
// names it).
func writeAnswer(w http.ResponseWriter, r *http.Request, body []byte, etag string, tags []string, cacheControl string) {
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	if cacheControl == "no-store" {
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		return
	}
	h.Set("ETag", etag)
	if len(tags) > 0 {
		h.Set(SurrogateKeyHeader, strings.Join(tags, " "))
		h.Set(CacheTagHeader, strings.Join(tags, ","))
	}
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		h.Del("Content-Type")
		h.Del("Content-Length")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// etagOf returns the ETag of an answer's body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// MaxTagHeaderBytes bounds the Surrogate-Key and Cache-Tag headers: CDNs
// refuse or cut longer ones (Fastly takes 16 KB of keys, Cloudflare 16 KB
// of tags in all).
const MaxTagHeaderBytes = 8 << 10

// FitTags returns tags, sorted, when they take at most max bytes one
// space apart; else, kind after kind, the most numerous first, the tags
// of a kind replaced by its section tag (section: a tag every change
// naming one of them names too, so a purge by it reaches the answer),
// until they fit. It returns false when they do not fit even then, or
// section is nil.
func FitTags(tags []string, max int, section func(string) string) ([]string, bool) {
	tags = slices.Sorted(slices.Values(tags))
	for headerLen(tags) > max {
		if section == nil {
			return nil, false
		}
		count := map[string]int{}
		for _, t := range tags {
			if s := section(t); s != t {
				count[s]++
			}
		}
		best := ""
		for s, n := range count {
			if n > count[best] || (n == count[best] && s < best) {
				best = s
			}
		}
		if best == "" {
			return nil, false
		}
		out := []string{best}
		for _, t := range tags {
			if t != best && section(t) != best {
				out = append(out, t)
			}
		}
		slices.Sort(out)
		tags = out
	}
	return tags, true
}

func headerLen(tags []string) int {
	n := len(tags) - 1
	for _, t := range tags {
		n += len(t)
	}
	return n
}

// etagMatches reports whether an If-None-Match header names etag; the
// comparison is weak, as RFC 9110 asks for If-None-Match.
func etagMatches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// bufferedResponse holds an answer until its caching headers are known.
// Headers go to the real writer's map; the status and body wait.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// WriteHeader keeps the first status, as http.ResponseWriter does.
func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

// maxExactBody bounds the body of a request the answer cache remembers
// exactly: a page's query and variables, not a large document.
const maxExactBody = 8 << 10

// exactKey returns the request r as the answer cache remembers it, byte
// for byte: scope, method, the headers the transport reads (the media
// types of the body and of the answer), the URL's query and a POST's
// body, which it reads into memory and leaves in r in its place (a GET's
// transport reads no body). It returns "" for a request it does not
// remember: a POST whose body is of unknown length or larger than
// maxExactBody, or could not be read (the transport then reads the same
// error).
func exactKey(scope string, r *http.Request) string {
	var body []byte
	if r.Method == http.MethodPost {
		if r.ContentLength <= 0 || r.ContentLength > maxExactBody || r.Body == nil {
			return ""
		}
		b, err := io.ReadAll(r.Body)
		r.Body = readBody{bytes.NewReader(b), err}
		if err != nil {
			return ""
		}
		body = b
	}
	var k strings.Builder
	k.Grow(len(scope) + len(r.Method) + len(r.URL.RawQuery) + len(body) + 128)
	for _, part := range [][]string{{scope, r.Method}, r.Header.Values("Content-Type"), r.Header.Values("Accept")} {
		for _, v := range part {
			k.WriteString(v)
			k.WriteByte('\n')
		}
		k.WriteByte(0)
	}
	k.WriteString(r.URL.RawQuery)
	k.WriteByte(0)
	k.Write(body)
	return k.String()
}

// readBody is a request body read into memory: its bytes, then the error
// reading it stopped at, if any.
type readBody struct {
	*bytes.Reader
	err error
}

func (b readBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (readBody) Close() error { return nil }
