// Package httpguard holds what the server's HTTP endpoints check before
// they answer, and the headers every answer carries: the Host names a
// request may be addressed to, the origins whose pages may call the API
// (CORS, WebSocket handshakes, development tokens) and the security
// headers.
package httpguard

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
)

// Which names a request may be addressed to, and which pages may send a
// development token.
//
// A server on loopback is reachable by every page the machine's browser
// opens: a page of attacker.example whose name the attacker's DNS then
// points at 127.0.0.1 (DNS rebinding) is, to the browser, on its own
// origin, and may read the playground (which holds the development admin's
// token) and send that token back. Such a request carries the attacker's
// name in its Host header. So on a loopback listener, and on any listener
// that accepts development tokens, a request whose Host is not a name of
// this machine (LoopbackHosts, at any port: a port forward changes the
// port, not the name) nor one of -allowed-hosts gets 421 Misdirected
// Request (Hosts). The metrics and profile listeners apply the same
// rule when they are on loopback.
//
// And wherever development tokens are accepted, a request that carries a
// token from a page of another origin is refused (DevTokenOrigins): any
// request, reads included, since the admin's token also reads drafts. A
// page of this server (the playground) and the origins of -cors-origins,
// which the operator trusts by naming them, may send one.

// LoopbackHosts are the names of this machine that no DNS answer can
// change. Names under localhost (b.localhost) are too: browsers resolve
// them to the loopback without asking DNS (RFC 6761), so Hosts admits
// them, and a development server reaches its publications at them.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// hostName returns the name of a Host header (host or host:port) in lower
// case, without its port and an IPv6 address's brackets.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
}

// HostList is the value of -allowed-hosts: host names without ports,
// separated by commas.
type HostList []string

func (l *HostList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Set replaces the list with the names of s. It returns an error for a
// name with a scheme, a port or a path, or that is neither a DNS name nor
// an IP address.
func (l *HostList) Set(s string) error {
	var names []string
	for raw := range strings.SplitSeq(s, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(raw, "["), "]"))
		if _, _, err := net.SplitHostPort(raw); err == nil || (net.ParseIP(name) == nil && !isDNSName(name)) {
			return fmt.Errorf("%q: want a host name or IP address without a scheme, port or path, e.g. blog.example.com", raw)
		}
		names = append(names, name)
	}
	*l = names
	return nil
}

// isDNSName reports whether s is made of the letters, digits, hyphens and
// dots of a DNS name.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Hosts answers 421 Misdirected Request to a request whose Host names
// neither this machine (LoopbackHosts, or a name under localhost) nor
// one of allowed; next gets the
// others. The answer of /graphql is a GraphQL error with the code
// BAD_REQUEST, the others plain text.
func Hosts(allowed []string, next http.Handler) http.Handler {
	names := map[string]bool{}
	for _, n := range append(append([]string(nil), LoopbackHosts...), allowed...) {
		names[n] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name := hostName(r.Host); !names[name] && !strings.HasSuffix(name, ".localhost") {
			refuse(w, r, http.StatusMisdirectedRequest, gqlhttp.CodeBadRequest,
				fmt.Sprintf("this server does not answer for the host %q: use", r.Host)+
					" localhost, 127.0.0.1 or [::1], or add the name to -allowed-hosts (ALLOWED_HOSTS)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// DevTokenOrigins refuses, with 403 and the code FORBIDDEN, a request
// that carries an Authorization header and comes from a page of another
// origin than the server's own (the Host it was sent to), unless
// trusted allows that origin. A request without an Origin header is from a
// page of another origin when its Sec-Fetch-Site says so; one without
// either is not from a browser's page.
func DevTokenOrigins(trusted *CORS, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization")) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		origin := r.Header.Get("Origin")
		var ok bool
		if origin != "" {
			ok = sameOrigin(origin, r.Host) || trusted.Allows(origin)
		} else {
			site := r.Header.Get("Sec-Fetch-Site")
			ok = site == "" || site == "same-origin" || site == "none"
		}
		if !ok {
			from := origin
			if from == "" {
				from = "a page of another site"
			}
			refuse(w, r, http.StatusForbidden, graph.CodeForbidden,
				"development tokens are accepted from this server's own pages only, not from "+from+
					"; to use one from a frontend's origin, add it to -cors-origins (CORS_ORIGINS)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin (an Origin header) is a page of the
// host host (a Host header) reached over http or https.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && strings.EqualFold(u.Host, host)
}

// refuse answers a request the server will not serve: on /graphql with a
// GraphQL error with code, as the endpoint's other refusals, elsewhere
// with plain text. No cache keeps the answer.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	if r.URL.Path != "/graphql" {
		plain(w, status, message)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	gqlhttp.WriteError(w, status, message, code)
}

// plain answers with a plain text message that no cache keeps.
func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, body+"\n")
}

// IsLoopback reports whether addr is a loopback address, where only this
// machine can connect.
func IsLoopback(addr net.Addr) bool {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
