package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/httpguard"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/playground"
	"github.com/blogql/blog/routing"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
	"github.com/blogql/blog/webhooks"
)

// Which publication a request is for (package routing): the default
// publication's hosts are served by the server's routes as a server of
// one blog serves them; a host another publication claims is served that
// publication's site (publicationSite); any other host gets 404, but for
// /healthz and /readyz, which answer on every host. The router holds what
// it looked up until the change feed says it changed (routing.Forget).

// routed returns the server's endpoints: site, the default publication's,
// behind the router of the publications' hosts.
func (a *api) routed(cfg *config, site http.Handler, cors *httpguard.CORS, shares *budgetShares, logger *slog.Logger) http.Handler {
	router := routing.New(routing.Options{
		Default:      site,
		DefaultID:    a.store.Publication(),
		DefaultHosts: defaultHosts(cfg),
		Lookup: func(ctx context.Context, host string) (string, error) {
			id, err := a.store.PublicationIDByHost(ctx, host)
			if errors.Is(err, storage.ErrNotFound) {
				return "", nil
			}
			return id, err
		},
		Pattern: cfg.platform.hostPattern,
		LookupSlug: func(ctx context.Context, slug string) (string, error) {
			id, err := a.store.PublicationIDBySlug(ctx, slug)
			if errors.Is(err, storage.ErrNotFound) {
				return "", nil
			}
			return id, err
		},
		Build: func(ctx context.Context, id string) (http.Handler, error) {
			return a.publicationSite(ctx, cfg, id, cors, shares.share(id), logger)
		},
		LookupsPerSecond:     cfg.platform.hostLookups,
		PublicationPerMinute: cfg.platform.publicationRate,
		Observe:              a.tel.PublicationObserver(cfg.platform.metricsPublications),
		Logger:               logger,
	})
	// The hosts and handlers it holds are dropped by the change feed's
	// publication.updated of a write that changes what a host resolves to.
	a.workers.feed.Subscribe(router.Forget)
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", site)
	mux.Handle("GET /readyz", site)
	mux.Handle("/", router)
	return mux
}

// defaultHosts returns the names the default publication is served at
// without a lookup: this machine's (httpguard.LoopbackHosts), those of
// -allowed-hosts, and the hosts of -site-url, -public-url and
// -media-url. IP addresses and requests without a Host are the default
// publication's too (package routing).
func defaultHosts(cfg *config) []string {
	hosts := append(append([]string(nil), httpguard.LoopbackHosts...), cfg.allowedHosts...)
	for _, raw := range []string{cfg.siteURL, cfg.publicURL, cfg.media.url} {
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
			hosts = append(hosts, u.Hostname())
		}
	}
	return hosts
}

// publicationSite returns the site of the publication id, other than the
// default: its GraphQL endpoint and its feeds and sitemap, on its Store
// (storage.Store.In), the theme of highlighted code and the playground
// (without a token). Its GraphQL
// answers share the server's answer cache under the publication's scope,
// so no answer of one publication is served for another. Its search is
// its own index (search.Publications, opened on demand), its
// subscriptions the server's hub's events of the publication only. Its
// readers and media are its own (pubsite.go): its media library with its
// renditions and uploads, its views (the server's counter, flushing into
// it), its readers' sign-in (links to its hosts; a session made there is
// refused elsewhere) and members, the members' and readers' exports and
// the newsletter's unsubscribe links. A suspended publication's site
// serves platform admins only (suspendedSite).
func (a *api) publicationSite(ctx context.Context, cfg *config, id string, cors *httpguard.CORS, budget *inflight.Budget, logger *slog.Logger) (http.Handler, error) {
	pub, err := a.store.CurrentPublication(ctx, id)
	if err != nil {
		return nil, err
	}
	store, err := a.store.In(id)
	if err != nil {
		return nil, err
	}
	siteURL := publicationURL(cfg.siteURL, pub)
	opts := a.graphQLOptions(cfg, cors, budget, logger)
	opts.HTTP.AnswerScope = id
	opts.HTTP.AdmissionKey = id
	opts.Live = graph.LiveOptions{Hub: a.workers.hub, PerConnection: cfg.subsPerConn}
	opts.Webhooks = webhooks.New(store, cfg.webhookOptions(logger))
	readers, err := a.publicationReaders(ctx, cfg, pub, store)
	if err != nil {
		return nil, err
	}
	opts.Search = a.workers.pubSearch.For(id)
	opts.Media, opts.Views, opts.SignIn = readers.media, readers.views, readers.signIn
	opts.Site = graph.SiteDefaults{Title: pub.Title, URL: siteURL, Paths: cfg.paths}
	opts.PublicationSlug = pub.Slug
	mux := http.NewServeMux()
	mux.Handle("/graphql", httpguard.WithCORS(cors, a.graphQLOn(store, opts, cors)))
	fo := feedOptions(cfg, budget, logger)
	fo.SiteURL, fo.Title, fo.Description = siteURL, pub.Title, ""
	feeds, err := syndication.New(store, fo)
	if err != nil {
		return nil, fmt.Errorf("feeds of publication %q: %w", id, err)
	}
	feeds.Register(mux)
	readers.register(mux, store, pub.Slug, cors, a.verifier, logger)
	mux.Handle("GET /code.css", httpguard.WithCORS(cors, markdown.CodeCSS()))
	if cfg.playgroundOn() {
		// Without the default publication's development token.
		playground.Mount(mux, cfg.playgroundDirs(), nil, logger)
	}
	if pub.Suspended() {
		return suspendedSite(mux, a.verifier), nil
	}
	return mux, nil
}

// publicationURL returns the URL of pub's site: siteURL (-site-url) with
// pub's first host in place of its host and port kept, so a development
// server's http://localhost:8080 becomes http://b.localhost:8080;
// https://<host> without a -site-url.
func publicationURL(siteURL string, pub *storage.Publication) string {
	if len(pub.Hosts) == 0 {
		return siteURL
	}
	u, err := url.Parse(siteURL)
	if err != nil || u.Host == "" {
		return "https://" + pub.Hosts[0]
	}
	host := pub.Hosts[0]
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	return (&url.URL{Scheme: u.Scheme, Host: host}).String()
}

// feedOptions returns the options of the default publication's feeds and
// sitemap, which share budget with the GraphQL endpoint.
func feedOptions(cfg *config, budget *inflight.Budget, logger *slog.Logger) syndication.Options {
	return syndication.Options{
		SiteURL: cfg.siteURL, Title: cfg.siteTitle, Description: cfg.siteDescription,
		Paths: cfg.paths, Content: syndication.Content(cfg.feedContent),
		CacheMaxAge: cfg.cacheMaxAge, CacheSMaxAge: cfg.cacheSMaxAge, CacheStaleWhileRevalidate: cfg.cacheSWR,
		Timeout: cfg.requestTimeout, Logger: logger, Budget: budget,
	}
}
