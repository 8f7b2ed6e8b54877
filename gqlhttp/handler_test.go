package gqlhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// TestHandlerAnswersOverHTTP serves a schema with no store behind it and
// checks what a client sees of the layers New puts around it: the
// statuses and errors of requests no transport takes, the request id, the
// caching headers, and the hooks Options gives the schema's own code.
func TestHandlerAnswersOverHTTP(t *testing.T) {
	var wrapped, responded int
	h := New(newTestSchema(), Options{
		ComplexityLimit: testComplexityLimit,
		CacheMaxAge:     time.Minute,
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				wrapped++
				next.ServeHTTP(w, r)
			})
		},
		AroundResponses: []graphql.ResponseMiddleware{func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
			responded++
			return next(ctx)
		}},
	})
	get := "/graphql?query=" + url.QueryEscape("{ hello }")
	tests := []struct {
		name        string
		method      string
		target      string
		contentType string
		body        string
		header      map[string]string
		status      int
		code        string // extensions.code of the one error, or ""
		cache       string // Cache-Control
		reached     bool   // whether the request reached Wrap and the executor
	}{
		{name: "a GET query is public", method: http.MethodGet, target: get, status: http.StatusOK, cache: "public, max-age=60", reached: true},
		{name: "a matching ETag is not modified", method: http.MethodGet, target: get, header: map[string]string{"If-None-Match": "*"},
			status: http.StatusNotModified, cache: "public, max-age=60", reached: true},
		{name: "a signed-in GET is not stored", method: http.MethodGet, target: get, header: map[string]string{"Authorization": "Bearer x"},
			status: http.StatusOK, cache: "no-store", reached: true},
		{name: "a POST is not stored", method: http.MethodPost, target: "/graphql", contentType: "application/json", body: `{"query":"{ hello }"}`,
			status: http.StatusOK, cache: "no-store", reached: true},
		{name: "another method is 405", method: http.MethodPut, target: "/graphql", status: http.StatusMethodNotAllowed, code: CodeBadRequest},
		{name: "a POST of another media type is 415", method: http.MethodPost, target: "/graphql", contentType: "text/plain", body: "{ hello }",
			status: http.StatusUnsupportedMediaType, code: CodeBadRequest},
		{name: "a body past the limit is 413", method: http.MethodPost, target: "/graphql", contentType: "application/json",
			body:   `{"query":"{ hello }","variables":{"x":"` + strings.Repeat("x", MaxBodyBytes) + `"}}`,
			status: http.StatusRequestEntityTooLarge, code: CodeBadRequest},
		{name: "a long query is refused before it is parsed", method: http.MethodPost, target: "/graphql", contentType: "application/json",
			body:   `{"query":"{ hello }` + strings.Repeat(" ", DefaultMaxQueryBytes) + `"}`,
			status: http.StatusOK, code: CodeQuerySizeLimit, cache: "no-store", reached: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrapped, responded = 0, 0
			req := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if rec.Header().Get(RequestIDHeader) == "" {
				t.Error("no request id")
			}
			if got := rec.Header().Get("Cache-Control"); tt.cache != "" && got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			if (wrapped == 1) != tt.reached {
				t.Errorf("Wrap ran %d times; want it reached: %v", wrapped, tt.reached)
			}
			if tt.status == http.StatusNotModified {
				return
			}
			var body struct {
				Data   map[string]any `json:"data"`
				Errors []struct {
					Extensions map[string]any `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("the body is not JSON: %v: %s", err, rec.Body)
			}
			switch {
			case tt.code == "" && (body.Data["hello"] != "world" || len(body.Errors) > 0 || responded != 1):
				t.Errorf("got %s with %d responses, want the data once", rec.Body, responded)
			case tt.code != "" && (len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != tt.code):
				t.Errorf("got %s, want one %s error", rec.Body, tt.code)
			}
		})
	}
}
