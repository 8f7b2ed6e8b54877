package httpguard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
)

// Cross-origin requests (CORS). A frontend on another origin (a comment
// form, client-side search) may call /graphql from the browser when its
// origin is one of -cors-origins: exact origins, scheme://host[:port],
// none by default. The playground needs none: it is served by this server
// and queries it from its own origin.
//
// There is no wildcard: an origin that is not listed gets no CORS header
// at all, and the browser keeps the answer from its page. Nor are
// credentials allowed (Access-Control-Allow-Credentials): the API reads no
// cookie, and a token travels in the Authorization header, which a page
// sets itself and the preflight allows.
//
// An allowed origin's preflight (OPTIONS with Access-Control-Request-Method)
// is answered 204 here, with the methods and headers the endpoint takes,
// for corsMaxAge; every other answer to it has Access-Control-Allow-Origin
// and exposes the response headers a client reads. Every answer of the
// endpoint varies by Origin, so that a cache never gives one origin's
// answer to another (or to a request without one): an ETag stays right,
// since the body is the same for every origin and the headers come with
// the 304 too. Requests that are not preflights, OPTIONS without an
// Origin included, reach the endpoint as before.

// corsMaxAge is how long a browser may keep a preflight's answer.
const corsMaxAge = 600

// CORS response headers: what the endpoint takes and what a page may read.
var (
	corsAllowMethods  = "GET, POST, OPTIONS"
	corsAllowHeaders  = strings.Join([]string{"Accept", "Authorization", "Content-Type", gqlhttp.RequestIDHeader, graph.CostHeader}, ", ")
	corsExposeHeaders = strings.Join([]string{"ETag", gqlhttp.RequestIDHeader, "WWW-Authenticate"}, ", ")
)

// CORS is the set of origins allowed to call the endpoint from a
// browser. The nil policy allows none.
type CORS struct {
	origins map[string]bool
}

// Allows reports whether a request with the Origin header origin may read
// the answer.
func (p *CORS) Allows(origin string) bool {
	return p != nil && p.origins[origin]
}

// OriginList is the value of -cors-origins: origins separated by commas.
type OriginList []string

func (l *OriginList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set replaces the list with the origins of s, each as a browser sends it
// in Origin: lower case, without the scheme's default port. It returns an
// error for * and anything that is not an http or https origin.
func (l *OriginList) Set(s string) error {
	var origins []string
	for raw := range strings.SplitSeq(s, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		o, err := parseOrigin(raw)
		if err != nil {
			return err
		}
		origins = append(origins, o)
	}
	*l = origins
	return nil
}

// parseOrigin returns the origin s names as a browser writes it, or an
// error saying what is wrong with s.
func parseOrigin(s string) (string, error) {
	if s == "*" {
		return "", fmt.Errorf("%q: list the origins that may call the API; there is no wildcard", s)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(u.Host, "*") {
		return "", fmt.Errorf("%q: want an origin, scheme://host[:port] with http or https and nothing after it, e.g. https://blog.example.com", s)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%q: port %s out of range", s, port)
		}
	}
	if port == "" || (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		return u.Scheme + "://" + host, nil
	}
	return u.Scheme + "://" + host + ":" + port, nil
}

// NewCORS returns the policy allowing origins, nil for none.
func NewCORS(origins []string) *CORS {
	if len(origins) == 0 {
		return nil
	}
	p := &CORS{origins: make(map[string]bool, len(origins))}
	for _, o := range origins {
		p.origins[o] = true
	}
	return p
}

// WithCORS answers the preflights of p's origins and adds the CORS headers
// to next's answers to them, as described above. With no origins it
// returns next unchanged.
func WithCORS(p *CORS, next http.Handler) http.Handler {
	if p == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if !p.Allows(origin) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		next.ServeHTTP(w, r)
	})
}

// WebSocketOrigins returns the origin check of WebSocket handshakes,
// which CORS does not cover (a browser opens a WebSocket to any origin):
// pages of the server's own host (the playground) and of -cors-origins.
func WebSocketOrigins(cors *CORS) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" || cors.Allows(origin) {
			return true
		}
		u, err := url.Parse(origin)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
	}
}
