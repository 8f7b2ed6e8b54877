// Package routing finds the publication a request is for by its Host
// header, and hands the request to that publication's handler.
//
// The hosts that serve the default publication (the server's own names
// and the configured ones) are served by the default handler without a
// lookup, as a server of one blog serves every request. Any other host is
// looked up in the publications' directory (Options.Lookup, one GetItem
// of its claim) and held in memory: a host that names a publication for
// HostTTL, one that names none for UnknownTTL, so a warm host costs no
// DynamoDB request and a flood of requests for one unknown host costs one
// request every UnknownTTL. Both bounds are kept by an LRU of MaxHosts
// names. A host no publication claims gets 404 on every route, never
// another publication's site.
//
// What is held follows the change feed (Forget): a write that changes
// what a host resolves to changes its publication's directory item, whose
// event, publication.updated, drops the hosts it names, before and after,
// and the publication's built handler on every server. HostTTL is a
// safety net for a server whose feed lags or has stopped, not how soon a
// change is seen: a host moved, removed or added is served as it now is
// once the event has reached the server, usually within a second or two.
package routing

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/maypok86/otter/v2"
)

// Defaults of Options.
const (
	// DefaultHostTTL bounds how long a server whose change feed has
	// stopped serves a host's old publication: as long as a built
	// handler (DefaultSiteTTL), which a stopped feed keeps as long.
	DefaultHostTTL    = 10 * time.Minute
	DefaultUnknownTTL = 5 * time.Second
	DefaultMaxHosts   = 10000
	DefaultMaxSites   = 64
	DefaultSiteTTL    = 10 * time.Minute
)

// Options configure New.
type Options struct {
	// Default serves the default publication: the requests addressed to
	// DefaultHosts, to an IP address or to no host, and to a host the
	// directory gives to DefaultID.
	Default      http.Handler
	DefaultID    string
	DefaultHosts []string
	// Lookup returns the id of the publication the host (lower case,
	// without a port) is claimed by, "" when none claims it; an error
	// when the directory cannot be read, which is answered with 503 and
	// not kept.
	Lookup func(ctx context.Context, host string) (string, error)
	// Pattern is the platform's host pattern ({slug}.blogs.example): a
	// host it matches is looked up by its slug (LookupSlug, which returns
	// the id of the publication of a slug as Lookup does of a host), then,
	// when no publication has that slug, by its claim, and held as any
	// other host.
	Pattern    Pattern
	LookupSlug func(ctx context.Context, slug string) (string, error)
	// Build returns the handler of the publication id, built once and
	// kept (at most MaxSites of them, each for SiteTTL); an error is
	// answered with 503 and not kept.
	Build func(ctx context.Context, id string) (http.Handler, error)
	// HostTTL and UnknownTTL are how long a host's publication, and a
	// host's lack of one, are held at most (Forget drops them earlier);
	// MaxHosts bounds the hosts held, MaxSites the built handlers. Zero
	// means the Default of each.
	HostTTL, UnknownTTL time.Duration
	MaxHosts, MaxSites  int
	SiteTTL             time.Duration
	// LookupsPerSecond bounds the lookups of hosts not held, and
	// PublicationPerMinute each publication's requests (limits.go);
	// zero means no bound.
	LookupsPerSecond, PublicationPerMinute int
	// Observe, when set, is told of each request of a publication before
	// it is served (limited false) or refused by the publication's rate
	// limit (true); it returns the context to serve the request with and
	// what to call when it ends.
	Observe func(ctx context.Context, id string, limited bool) (context.Context, func())
	// Logger receives the directory's failures; nil means slog.Default().
	Logger *slog.Logger
}

// Router is the handler New returns.
type Router struct {
	opts     Options
	defaults map[string]bool
	hosts    *otter.Cache[string, string]
	sites    *otter.Cache[string, http.Handler]
	limits   limits
}

// New returns the router of opts.
func New(opts Options) *Router {
	if opts.HostTTL <= 0 {
		opts.HostTTL = DefaultHostTTL
	}
	if opts.UnknownTTL <= 0 {
		opts.UnknownTTL = DefaultUnknownTTL
	}
	if opts.MaxHosts <= 0 {
		opts.MaxHosts = DefaultMaxHosts
	}
	if opts.MaxSites <= 0 {
		opts.MaxSites = DefaultMaxSites
	}
	if opts.SiteTTL <= 0 {
		opts.SiteTTL = DefaultSiteTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	rt := &Router{opts: opts, defaults: map[string]bool{}, limits: newLimits(opts)}
	for _, h := range opts.DefaultHosts {
		rt.defaults[strings.ToLower(h)] = true
	}
	rt.hosts = otter.Must(&otter.Options[string, string]{
		MaximumSize: opts.MaxHosts,
		ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[string, string]) time.Duration {
			if e.Value == "" {
				return opts.UnknownTTL
			}
			return opts.HostTTL
		}),
	})
	rt.sites = otter.Must(&otter.Options[string, http.Handler]{
		MaximumSize:      opts.MaxSites,
		ExpiryCalculator: otter.ExpiryWriting[string, http.Handler](opts.SiteTTL),
	})
	return rt
}

// errUnknown is a host that names no publication; errLookups a host not
// held when no lookup may be made now (LookupsPerSecond).
var (
	errUnknown = errors.New("no publication is served at this host")
	errLookups = errors.New("too many requests for hosts this server does not know; try again")
)

// Publication returns the id of the publication a request to hostport
// (a Host header) is for: DefaultID for a default host, "" and
// errUnknown for a host no publication claims, errLookups for a host not
// held past LookupsPerSecond, or the directory's error.
func (rt *Router) Publication(ctx context.Context, hostport string) (string, error) {
	host, ok := hostName(hostport)
	switch {
	case !ok:
		return "", errUnknown
	case host == "" || rt.defaults[host]:
		return rt.opts.DefaultID, nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		// No publication claims an address: one is the server's own.
		return rt.opts.DefaultID, nil
	}
	id, err := rt.hosts.Get(ctx, host, otter.LoaderFunc[string, string](rt.lookup))
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", errUnknown
	}
	return id, nil
}

// lookup returns the id of the publication host names: by the platform's
// pattern, then by a claim; "" for none; errLookups past LookupsPerSecond.
// Concurrent requests for one host share one lookup, and its limit.
func (rt *Router) lookup(ctx context.Context, host string) (string, error) {
	if !rt.limits.lookup() {
		return "", errLookups
	}
	if slug, ok := rt.opts.Pattern.Slug(host); ok && rt.opts.LookupSlug != nil {
		id, err := rt.opts.LookupSlug(ctx, slug)
		if err != nil || id != "" {
			return id, err
		}
	}
	return rt.opts.Lookup(ctx, host)
}

// ServeHTTP hands the request to its publication's handler.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, err := rt.Publication(r.Context(), r.Host)
	switch {
	case errors.Is(err, errUnknown):
		plain(w, http.StatusNotFound, errUnknown.Error())
		return
	case errors.Is(err, errLookups):
		limited(w, r, time.Second, errLookups.Error())
		return
	case err != nil:
		rt.unavailable(w, r, "look the host up", err)
		return
	}
	if ok, retry := rt.limits.admit(id); !ok {
		if rt.opts.Observe != nil {
			rt.opts.Observe(r.Context(), id, true)
		}
		limited(w, r, retry, "too many requests for this publication; try again later")
		return
	}
	if rt.opts.Observe != nil {
		ctx, done := rt.opts.Observe(r.Context(), id, false)
		defer done()
		r = r.WithContext(ctx)
	}
	if id == rt.opts.DefaultID {
		rt.opts.Default.ServeHTTP(w, r)
		return
	}
	h, err := rt.sites.Get(r.Context(), id, otter.LoaderFunc[string, http.Handler](rt.opts.Build))
	if err != nil {
		rt.unavailable(w, r, "build the publication's handler", err)
		return
	}
	h.ServeHTTP(w, r)
}

// unavailable answers 503 for a failure of the directory.
func (rt *Router) unavailable(w http.ResponseWriter, r *http.Request, what string, err error) {
	rt.opts.Logger.ErrorContext(r.Context(), "routing: "+what, "host", r.Host, "err", err)
	plain(w, http.StatusServiceUnavailable, "the publication cannot be found now; try again")
}

// hostName returns the name of a Host header (host or host:port) in
// lower case, without its port and an IPv6 address's brackets; false for
// a name with a trailing dot, which no claim has.
func hostName(hostport string) (string, bool) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return host, !strings.HasSuffix(host, ".")
}

// plain answers with a short text that no cache keeps.
func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, body+"\n")
}
