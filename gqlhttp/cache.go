package gqlhttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
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
// GET URL is short and stable, which is what a CDN keys on.

// cacheState is where the response hook tells the HTTP layer whether the
// operation it answered may be cached publicly; NoStore marks it private
// first.
type cacheState struct {
	public  bool
	private atomic.Bool // set by resolvers, which run at once
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

// withCacheHeaders sets the caching headers described above on every
// answer of next. maxAge zero or less makes every answer no-store.
func withCacheHeaders(maxAge time.Duration, next http.Handler) http.Handler {
	public := "public, max-age=" + strconv.Itoa(int(maxAge.Seconds()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || len(r.Header.Values("Authorization")) > 0 || maxAge <= 0 {
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r)
			return
		}
		st := &cacheState{}
		buf := &bufferedResponse{header: w.Header()}
		next.ServeHTTP(buf, r.WithContext(context.WithValue(r.Context(), cacheStateKey{}, st)))

		if buf.status == 0 {
			buf.status = http.StatusOK
		}
		h := w.Header()
		h.Add("Vary", "Authorization")
		if !st.public || buf.status != http.StatusOK {
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(buf.status)
			w.Write(buf.body.Bytes())
			return
		}
		sum := sha256.Sum256(buf.body.Bytes())
		etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
		h.Set("Cache-Control", public)
		h.Set("ETag", etag)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			h.Del("Content-Type")
			h.Del("Content-Length")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Length", strconv.Itoa(buf.body.Len()))
		w.WriteHeader(http.StatusOK)
		w.Write(buf.body.Bytes())
	})
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
