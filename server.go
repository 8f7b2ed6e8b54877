// Command blog serves the blog's GraphQL API over DynamoDB.
//
// With nothing configured it runs an embedded DynamoDB-compatible engine in
// the process, creates the table, seeds a demo blog and serves the GraphiQL
// playground on http://localhost:8080/. Run with -h for the configuration;
// every flag has an environment variable, and a flag wins over its
// variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/live"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
	"github.com/blogql/blog/tuning"
	"github.com/blogql/blog/webhooks"
)

// listen opens the API's listener; tests replace it.
var listen = net.Listen

// Server limits.
const (
	// maxHeaderBytes bounds the request line and headers, so also the
	// query of a GET request.
	maxHeaderBytes = 64 << 10
	// writeTimeout bounds writing a response; a GraphQL request's own
	// timeout (-request-timeout) must end before it.
	writeTimeout = 30 * time.Second
	// readyTimeout bounds the table check of /readyz.
	readyTimeout = 2 * time.Second
	// shutdownTimeout is how long requests in flight get to finish after
	// SIGINT or SIGTERM.
	shutdownTimeout = 10 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, the next one kills the process at once.
		<-ctx.Done()
		stop()
	}()
	if len(os.Args) > 1 && os.Args[1] == checkCommand {
		code, err := runCheck(ctx, os.Args[2:], os.Getenv, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "blog check:", err)
		}
		os.Exit(code)
	}
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "blog:", err)
		os.Exit(1)
	}
}

// run starts the server and serves until ctx is done, then shuts it down
// gracefully. It returns an error when the configuration is invalid or
// the backend cannot be prepared; -h prints the help and returns nil.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stdout)
	gc := tuning.Apply(getenv)
	logger.Info("garbage collector", "gogc", gc.Percent, "memory_limit_bytes", gc.MemoryLimit, "from_environment", gc.FromEnvironment)
	backend := cfg.backend()
	verifier, devTokens, err := newVerifier(cfg, backend)
	if err != nil {
		return err
	}

	tel, err := newTelemetry(ctx, cfg, getenv, logger)
	if err != nil {
		return err
	}
	defer tel.shutdown(ctx, logger)

	clientCfg := storage.ClientConfig{
		Embedded:    backend == backendEmbedded,
		Endpoint:    cfg.endpoint,
		Region:      cfg.region,
		MaxAttempts: cfg.maxAttempts,
		// DynamoDB Local accepts any credentials; AWS never gets these.
		LocalCredentials: backend == backendLocal && getenv("AWS_ACCESS_KEY_ID") == "",
	}
	dataPath := ""
	if backend == backendEmbedded {
		engine, err := openEngine(cfg.dataDir)
		if err != nil {
			return err
		}
		defer engine.Close()
		dataPath = engine.Path()
		clientCfg.HTTPClient = &http.Client{Transport: engine}
	}
	client, err := storage.NewClient(ctx, tel.client(clientCfg))
	if err != nil {
		return err
	}
	// The configured site URL only: the embedded engine's default (this
	// server's address) would make every new port a new renderer.
	storeOpts := []storage.Option{storage.WithHeadingIDPrefix(cfg.headingIDPrefix), storage.WithSiteURL(cfg.siteURL),
		storage.WithHighlight(cfg.highlightCode), storage.WithStream()}
	if cfg.privateURLs {
		storeOpts = append(storeOpts, storage.WithPrivateHosts())
	}
	store := storage.New(client, cfg.table, storeOpts...)
	logger.Info("dynamodb", "backend", backend, "table", cfg.table, "dynamodb_endpoint", cfg.endpoint, "region", cfg.region, "data", dataPath)
	if cfg.createTable.or(backend != backendAWS) {
		if err := store.CreateTable(ctx); err != nil {
			return err
		}
	}
	seed := cfg.seedDemo.value
	if !cfg.seedDemo.set && backend == backendEmbedded && cfg.migrate != migrateOnly {
		// The demo goes into a new table only: a blog kept in the data
		// file stays as its users left it.
		if seed, err = store.Empty(ctx); err != nil {
			return err
		}
	}
	if err := migrateLayout(ctx, cfg.migrate, store, logger); err != nil || cfg.migrate == migrateOnly {
		return err
	}
	if seed {
		start := time.Now()
		if err := demo.Seed(ctx, store, time.Now()); err != nil {
			return err
		}
		logger.Info("demo blog seeded", "duration", time.Since(start).Round(time.Millisecond))
	}
	// This server's renderer becomes the table's: the "rerender" worker
	// renders again what another rendered (storage/rerender.go).
	if claimed, err := store.ClaimRenderer(ctx); err != nil {
		return err
	} else if claimed {
		logger.Info("renderer changed: stored bodies are rendered again in the background", "render_version", store.RenderVersion())
	}
	cursorKey, err := cursorKeyOf(ctx, cfg, store)
	if err != nil {
		return err
	}
	store = storage.New(client, cfg.table, append(storeOpts, storage.WithCursorKey(cursorKey))...)
	go store.WatchRenderer(ctx)
	// One webhooks service serves the GraphQL webhook mutations and is
	// the change feed's "webhooks" worker.
	hooks := webhooks.New(store, cfg.webhookOptions(logger))
	feed, err := newFeed(ctx, tel.client(clientCfg), store, hooks, cfg, logger)
	if err != nil {
		return err
	}
	// Subscriptions get the events this server reads from the log.
	hub := live.NewHub(store, 0)
	feed.Subscribe(hub.Publish)
	// The answers this server keeps that show what changed are dropped
	// by the events, and the searches' again once its index applied them.
	var answers *gqlhttp.AnswerCache
	searchChanged := func() {}
	if cfg.answerCacheBytes > 0 {
		answers = gqlhttp.NewAnswerCache(cfg.answerCacheBytes, tel.answerObserver())
		searchChanged = func() { answers.Invalidate(frontend.TagSearch) }
	}
	// This server's search index applies every event of the log after
	// its own position.
	searcher, err := newSearch(store, cfg, searchChanged, logger)
	if err != nil {
		return err
	}
	defer searcher.Close()
	feed.Subscribe(searcher.Events)
	// The site settings this server holds are dropped when they change.
	feed.Subscribe(store.ForgetSite)
	if answers != nil {
		feed.Subscribe(graph.InvalidateAnswers(answers))
	}
	streamsDone := make(chan struct{})
	var streamsRunning sync.WaitGroup
	if cfg.playgroundOn() && !cfg.introspectionOn() {
		logger.Warn("the playground cannot load the schema with introspection off")
	}

	if cfg.pprofAddr != "" {
		if _, err := servePprof(ctx, cfg.pprofAddr, cfg.allowedHosts, logger); err != nil {
			return err
		}
	}
	if err := tel.serveMetrics(ctx, cfg.metricsAddr, cfg.allowedHosts, logger); err != nil {
		return err
	}
	ln, err := listen("tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		return err
	}
	var playgroundHeaders map[string]string
	loopback := isLoopback(ln.Addr())
	if devTokens {
		verifier, playgroundHeaders, err = devVerifier(ctx, logger, cfg, store, loopback, time.Now())
		if err != nil {
			ln.Close()
			return err
		}
		devTokens = verifier != nil
	}
	if cfg.siteURL == "" && backend == backendEmbedded {
		// Development: the feeds link to this server until a site is named.
		cfg.siteURL = "http://" + displayAddr(ln.Addr())
		logger.Info("feeds and sitemap link to this server's address; set -site-url to the frontend's", "site_url", cfg.siteURL)
	}
	handler := routes(store, verifier, tel, cfg, playgroundHeaders, devTokens, hooks, searcher, liveStreams{hub, streamsDone, &streamsRunning, answers}, logger)
	if loopback || devTokens {
		// See hosts.go: no page of a name rebound to this machine reaches it.
		handler = guardHost(cfg.allowedHosts, handler)
		logger.Info("answering requests addressed to this machine's names only (421 for others; -allowed-hosts adds names)",
			"hosts", append(append([]string(nil), loopbackHosts...), cfg.allowedHosts...))
	}
	srv := &http.Server{
		Handler:           gqlhttp.WithRequestID(logRequests(logger, securityHeaders(handler))),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	fed, indexed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fed)
		_ = feed.Run(ctx) // until ctx ends; it logs what fails and goes on
	}()
	go func() {
		defer close(indexed)
		searcher.Run(ctx) // until ctx ends; it logs what fails and goes on
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	base := "http://" + displayAddr(ln.Addr())
	if cfg.playgroundOn() {
		logger.Info(fmt.Sprintf("playground at %s/ , endpoint %s/graphql", base, base),
			"playground", base+"/", "endpoint", base+"/graphql")
	} else {
		logger.Info(fmt.Sprintf("endpoint at %s/graphql", base), "endpoint", base+"/graphql")
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout, "subscriptions", hub.Subscribers())
	// Subscriptions end with SHUTTING_DOWN, then their streams: WebSocket
	// connections close with 1012, so clients reconnect to another server.
	hub.Close()
	close(streamsDone)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// The streams the server handed over end with their last answers.
	streamsEnded := make(chan struct{})
	go func() { streamsRunning.Wait(); close(streamsEnded) }()
	select {
	case <-streamsEnded:
	case <-sctx.Done():
		return fmt.Errorf("shutdown: streams: %w", sctx.Err())
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	<-fed // the feed released its leases
	<-indexed
	logger.Info("stopped")
	return nil
}

// searchDir is the search index's directory in the data directory.
const searchDir = "search"

// newSearch returns the server's search index (package search) in
// -search-index, by default in the data directory: search/ beside the
// embedded engine's data file, and search-<table>/ on DynamoDB, where the
// data directory holds nothing else (the Docker image's /data volume);
// in memory with -data :memory:. An index that is lost is rebuilt from
// the table. changed is called after each change of what it finds.
func newSearch(store *storage.Store, cfg *config, changed func(), logger *slog.Logger) (*search.Service, error) {
	dir := cfg.searchIndex
	switch {
	case dir != "":
	case cfg.dataDir == memoryData:
	case cfg.backend() == backendEmbedded:
		dir = filepath.Join(cfg.dataDir, searchDir)
	default:
		dir = filepath.Join(cfg.dataDir, searchDir+"-"+cfg.table)
	}
	s, err := search.New(store, search.Options{Dir: dir, Language: cfg.searchLanguage, Table: cfg.table, Timeout: cfg.requestTimeout, Logger: logger, Changed: changed})
	if err != nil {
		return nil, err
	}
	pos, ok := s.Position()
	logger.Info("search index", "dir", dir, "language", cfg.searchLanguage, "found", ok, "position", pos)
	return s, nil
}

// rerenderEvery is how often the "rerender" worker looks at the renderer
// item, and sweeps while it is not done.
const rerenderEvery = 10 * time.Second

// Values of -migrate.
const (
	migrateAuto = "auto"
	migrateOnly = "only"
	migrateOff  = "off"
)

// migrateLayout brings the table to the current layout when mode asks for
// it (auto, only), and logs what it did; with off it only reads the
// table's layout version and warns when it is older. Migrating is safe
// while other servers serve and migrate the same table, and a run that
// stops half-way is finished by the next.
func migrateLayout(ctx context.Context, mode string, store *storage.Store, logger *slog.Logger) error {
	if mode == migrateOff {
		v, err := store.LayoutVersion(ctx)
		if err != nil {
			return err
		}
		if v < storage.CurrentLayout {
			logger.Warn("the table was written by an earlier version and is not migrated: start a server with -migrate=only (or auto) to migrate it",
				"layout", v, "current_layout", storage.CurrentLayout)
		}
		return nil
	}
	start := time.Now()
	m, err := store.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate the table to layout %d: %w; start the server again to go on", storage.CurrentLayout, err)
	}
	if m.From < m.To {
		logger.Info("table migrated", "from_layout", m.From, "to_layout", m.To, "authors", m.Authors, "posts", m.Posts,
			"comments", m.Comments, "counters", m.Counters, "scheduled", m.Scheduled, "split", m.Split, "duration", time.Since(start).Round(time.Millisecond))
	}
	if len(m.Unrendered) > 0 {
		logger.Warn("posts whose body renders to more HTML than a post may hold were migrated without it; edit their bodies",
			"posts", m.Unrendered)
	}
	if mode == migrateOnly {
		logger.Info("the table is in the current layout; exiting (-migrate=only)", "layout", storage.CurrentLayout)
	}
	return nil
}

// cursorKeyName names the table's key (storage.Store.Secret) that seals
// cursors when none is configured.
const cursorKeyName = "cursor"

// cursorKeyOf returns the key that seals cursors: the configured one, or
// the table's own, which every server on the table shares. It returns the
// DynamoDB error when the table's key can be neither read nor made.
func cursorKeyOf(ctx context.Context, cfg *config, store *storage.Store) ([]byte, error) {
	if cfg.cursorKey != "" {
		return []byte(cfg.cursorKey), nil
	}
	key, err := store.Secret(ctx, cursorKeyName)
	if err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	return key, nil
}

// The embedded engine's data file in the data directory, and the
// directory that means memory.
const (
	dataFile   = "blog.db"
	memoryData = ":memory:"
)

// openEngine opens the embedded engine on its data file in dir, or in
// memory. It fails when another server holds the file, or it cannot be
// made or read.
func openEngine(dir string) (*embedded.Engine, error) {
	if dir == memoryData {
		return embedded.OpenMemory()
	}
	e, err := embedded.Open(embedded.Options{Path: filepath.Join(dir, dataFile)})
	if errors.Is(err, embedded.ErrLocked) {
		return nil, fmt.Errorf("data directory %s: %w; stop the other server or start this one with another -data", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	return e, nil
}

// newLogger returns the server's logger; lines logged with a request's
// context carry its request_id.
func newLogger(cfg *config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logFormat == "json" {
		return slog.New(gqlhttp.LogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(gqlhttp.LogHandler(slog.NewTextHandler(w, opts)))
}

// serveAside serves srv on addr, a listener apart from the API's, until ctx
// is done, and logs the URL of path there under name. On loopback it
// answers only requests addressed to this machine or to allowedHosts
// (guardHost). It returns the address it listens on, or the error of
// listening.
func serveAside(ctx context.Context, name, path, addr string, allowedHosts []string, srv *http.Server, logger *slog.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if isLoopback(ln.Addr()) {
		srv.Handler = guardHost(allowedHosts, srv.Handler)
	}
	// A browser may open these pages too: they get the API's headers.
	srv.Handler = securityHeaders(srv.Handler)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error(name+" server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	url := "http://" + displayAddr(ln.Addr()) + path
	logger.Info(name+" at "+url, name, url)
	return ln.Addr(), nil
}

// displayAddr returns addr as a browser would reach it: localhost for an
// address that listens on every interface.
func displayAddr(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() || ip.IsLoopback() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// queryLimits returns opts with the size limit of query documents and the
// bounds of the query caches. A flag's 0 (keep none) is the handler's -1:
// its zero means its default.
func (c *config) queryLimits(opts graph.HandlerOptions) graph.HandlerOptions {
	none := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	opts.HTTP.MaxQueryBytes = c.maxQueryBytes
	opts.HTTP.QueryCacheBytes, opts.HTTP.PersistedQueryCacheBytes = none(c.queryCacheBytes), none(c.apqCacheBytes)
	opts.HTTP.PersistedQueryWrites = int(none(int64(c.apqWrites)))
	return opts
}

// routes returns the server's endpoints; hooks manages the webhooks. The playground prefills
// playgroundHeaders (the development token) in its headers editor. /graphql
// answers the CORS requests of -cors-origins (cors.go) and, when
// devTokens says that verifier checks development tokens, refuses a token
// from a page of another origin (hosts.go).
func routes(store *storage.Store, verifier *auth.Verifier, tel *telemetry, cfg *config, playgroundHeaders map[string]string, devTokens bool, hooks *webhooks.Service, searcher *search.Service, streams liveStreams, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	cors := newCORSPolicy(cfg.corsOrigins)
	var budget *inflight.Budget // the GraphQL endpoint's and the feeds'
	if cfg.inflightBytes > 0 {
		budget = inflight.NewBudget(cfg.inflightBytes, inflight.DefaultWait)
	}
	var api http.Handler = graph.NewHandler(store, tel.handler(cfg.queryLimits(graph.HandlerOptions{
		Logger: logger,
		HTTP: gqlhttp.Options{
			Introspection:             cfg.introspectionOn(),
			RequestTimeout:            cfg.requestTimeout,
			CacheMaxAge:               cfg.cacheMaxAge,
			CacheSMaxAge:              cfg.cacheSMaxAge,
			CacheStaleWhileRevalidate: cfg.cacheSWR,
			Answers:                   streams.answers,
			Budget:                    budget,
			Streams: &gqlhttp.StreamOptions{
				CheckOrigin: websocketOrigins(cors),
				PerAddress:  cfg.streamsPerAddr,
				Shutdown:    streams.shutdown,
				Running:     streams.running,
			},
		},
		Live:     graph.LiveOptions{Hub: streams.hub, PerConnection: cfg.subsPerConn},
		Verifier: verifier,
		Comments: graph.CommentPolicy{Moderation: cfg.moderationOption(), UnmoderatedEdits: !cfg.moderateEdits, PerMinute: cfg.commentRate},
		ShowCost: cfg.backend() == backendEmbedded,
		Webhooks: hooks,
		Search:   searcher,
		Site:     graph.SiteDefaults{Title: cfg.siteTitle, Description: cfg.siteDescription, URL: cfg.siteURL, Paths: cfg.paths},
	})))
	if devTokens {
		api = devTokenOrigins(cors, api)
	}
	mux.Handle("/graphql", withCORS(cors, api))
	// RSS, Atom, JSON Feed and the sitemap (syndication).
	feeds, err := syndication.New(store, syndication.Options{
		SiteURL: cfg.siteURL, Title: cfg.siteTitle, Description: cfg.siteDescription,
		Paths: cfg.paths, Content: syndication.Content(cfg.feedContent),
		CacheMaxAge: cfg.cacheMaxAge, Timeout: cfg.requestTimeout, Logger: logger,
		Budget: budget,
	})
	if err != nil {
		// parseConfig checked every option New checks.
		panic(err)
	}
	feeds.Register(mux)
	// The theme of highlighted code (-highlight-code).
	mux.Handle("GET /code.css", withCORS(cors, codeCSS()))
	if cfg.playgroundOn() {
		mountPlayground(mux, cfg.playgroundDirs(), playgroundHeaders, logger)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := store.Ready(ctx); err != nil {
			logger.Warn("not ready", "err", err)
			plain(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		plain(w, http.StatusOK, "ready")
	})
	return mux
}

// liveStreams are what subscriptions need of the server: the hub of its
// events, the channel closed when it shuts down, and the streams that
// http.Server.Shutdown does not wait for.
type liveStreams struct {
	hub      *live.Hub
	shutdown <-chan struct{}
	running  *sync.WaitGroup
	// answers is the answer cache the change feed's events invalidate
	// (nil: none).
	answers *gqlhttp.AnswerCache
}

// websocketOrigins returns the origin check of WebSocket handshakes,
// which CORS does not cover (a browser opens a WebSocket to any origin):
// pages of the server's own host (the playground) and of -cors-origins.
func websocketOrigins(cors *corsPolicy) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" || cors.allows(origin) {
			return true
		}
		u, err := url.Parse(origin)
		return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
	}
}

// securityHeaders sets on every response the headers that keep browsers
// from doing with it what it is not for: no framing, no guessing of media
// types, no referrer sent on, and a Content-Security-Policy that allows
// nothing (an API answer runs no script and loads nothing); the
// playground's page sets a policy of its own.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, body+"\n")
}

// logRequests logs one line per request. Health probes log at debug level,
// so they do not drown the rest; server errors log at error level.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		level := slog.LevelInfo
		switch {
		case rec.status >= 500:
			level = slog.LevelError
		case r.URL.Path == "/healthz" || r.URL.Path == "/readyz":
			level = slog.LevelDebug
		}
		logger.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.Status()),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
		)
	})
}

// statusRecorder remembers the status and size of a response. Unwrap lets
// http.ResponseController reach the connection's Flush and Hijack.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Status returns the response's status; a handler that wrote nothing
// answered 200.
func (r *statusRecorder) Status() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}
