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
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/accesslog"
	"github.com/blogql/blog/admission"
	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/devtokens"
	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/httpguard"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/playground"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
	"github.com/blogql/blog/telemetry"
	"github.com/blogql/blog/tuning"
	"github.com/blogql/blog/views"
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
	if len(os.Args) > 1 && os.Args[1] == tokenCommand {
		err := runToken(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "blog token:", err)
			os.Exit(2)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == mediaCommand {
		err := runMedia(ctx, os.Args[2:], os.Getenv, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "blog media:", err)
			os.Exit(2)
		}
		return
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
	verifier, devTokens, err := newVerifier(cfg, cfg.backend())
	if err != nil {
		return err
	}
	tel, err := telemetry.New(ctx, cfg.metricsAddr != "", getenv, logger)
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx, logger)
	db, err := openDynamoDB(ctx, cfg, getenv, tel, logger)
	if err != nil {
		return err
	}
	defer db.close()
	store, err := openStore(ctx, cfg, db.client, logger)
	if err != nil || cfg.migrate == migrateOnly {
		return err
	}
	// Readers' sessions are signed with the reader key, the table's when
	// none is configured: the verifier takes it into the reader domain.
	if cfg.readerSessionKey, err = readerSessionKey(ctx, cfg, store); err != nil {
		return err
	}
	if verifier != nil {
		if verifier, err = auth.NewVerifier(authConfig(cfg)); err != nil {
			return err
		}
	}
	mail, err := newMailWorker(ctx, cfg, store, logger)
	if err != nil {
		return err
	}
	go mail.Run(ctx)
	letters, err := newNewsletter(ctx, cfg, store, mail, logger)
	if err != nil {
		return err
	}
	w, err := newWorkers(ctx, cfg, db.config, store, letters, tel, logger)
	if err != nil {
		return err
	}
	defer w.searcher.Close()
	if cfg.playgroundOn() && !cfg.introspectionOn() {
		logger.Warn("the playground cannot load the schema with introspection off")
	}
	if err := serveAsides(ctx, cfg, tel, logger); err != nil {
		return err
	}
	ln, err := listen("tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		return err
	}
	a := api{store: store, verifier: verifier, devTokens: devTokens, tel: tel, workers: w, mail: mail, letters: letters, shutdown: make(chan struct{}), gate: executionGate(cfg)}
	handler, err := a.handler(ctx, cfg, ln.Addr(), logger)
	defer a.media.close()
	if err != nil {
		ln.Close()
		return err
	}
	return serve(ctx, cfg, ln, newHTTPServer(handler, logger), &a, logger)
}

// dynamoDB is the DynamoDB the server talks to: its client, the client's
// configuration, which the change feed's streams client shares, and the
// embedded engine when the server runs it.
type dynamoDB struct {
	client *dynamodb.Client
	config storage.ClientConfig
	engine *embedded.Engine // nil on DynamoDB
}

// openDynamoDB opens the backend cfg names: the embedded engine on its
// data file, or the client of DynamoDB at its endpoint or on AWS, its
// calls observed by tel.
func openDynamoDB(ctx context.Context, cfg *config, getenv func(string) string, tel *telemetry.Telemetry, logger *slog.Logger) (*dynamoDB, error) {
	backend := cfg.backend()
	clientCfg := storage.ClientConfig{
		Embedded:    backend == backendEmbedded,
		Endpoint:    cfg.endpoint,
		Region:      cfg.region,
		MaxAttempts: cfg.maxAttempts,
		// DynamoDB Local accepts any credentials; AWS never gets these.
		LocalCredentials: backend == backendLocal && getenv("AWS_ACCESS_KEY_ID") == "",
	}
	db := &dynamoDB{}
	dataPath := ""
	if backend == backendEmbedded {
		engine, err := openEngine(cfg.dataDir)
		if err != nil {
			return nil, err
		}
		db.engine, dataPath = engine, engine.Path()
		clientCfg.HTTPClient = &http.Client{Transport: engine}
	}
	db.config = tel.Client(clientCfg)
	client, err := storage.NewClient(ctx, db.config)
	if err != nil {
		db.close()
		return nil, err
	}
	db.client = client
	logger.Info("dynamodb", "backend", backend, "table", cfg.table, "dynamodb_endpoint", cfg.endpoint, "region", cfg.region, "data", dataPath)
	return db, nil
}

// close closes the embedded engine, if the server runs it.
func (db *dynamoDB) close() {
	if db.engine != nil {
		db.engine.Close()
	}
}

// openStore returns the server's Store on cfg's table, readied: the table
// made where cfg asks, migrated, the demo seeded into it, this server's
// renderer claimed and the cursors sealed with the table's key. With
// -migrate=only it returns once the table is migrated.
func openStore(ctx context.Context, cfg *config, client *dynamodb.Client, logger *slog.Logger) (*storage.Store, error) {
	store := storage.New(client, cfg.table, append(storeOptions(cfg), storage.WithStream())...)
	fresh, err := readyTable(ctx, cfg, store, logger)
	if err != nil || cfg.migrate == migrateOnly {
		return store, err
	}
	// This server's renderer becomes the table's: the "rerender" worker
	// renders again what another rendered (storage/rerender.go). A new
	// table has nothing another rendered. The embedded engine's server is
	// its table's only writer, whose re-render need not settle.
	claim := store.ClaimRenderer
	if cfg.backend() == backendEmbedded {
		claim = store.ClaimRendererAlone
	}
	if claimed, err := claim(ctx); err != nil {
		return nil, err
	} else if claimed && !fresh {
		logger.Info("renderer changed: stored bodies are rendered again in the background", "render_version", store.RenderVersion())
	}
	cursorKey, err := cursorKeyOf(ctx, cfg, store)
	if err != nil {
		return nil, err
	}
	// The table's key is read through the Store, so it is set on the
	// Store once read, before the Store serves anything or runs in the
	// background.
	storage.WithCursorKey(cursorKey)(store)
	go store.WatchRenderer(ctx)
	return store, nil
}

// storeOptions returns the options of the store cfg asks for: how it
// renders, which links it accepts and the publications' default quotas. The configured site and media URLs
// only: the embedded engine's default (this server's address) would make
// every new port a new renderer.
func storeOptions(cfg *config) []storage.Option {
	opts := []storage.Option{storage.WithHeadingIDPrefix(cfg.headingIDPrefix), storage.WithSiteURL(cfg.siteURL),
		storage.WithHighlight(cfg.highlightCode), storage.WithLibraryImages(media.BodyImages(cfg.media.url)),
		storage.WithPublicationQuota(cfg.quota)}
	if cfg.privateURLs {
		opts = append(opts, storage.WithPrivateHosts())
	}
	return opts
}

// api is what the API's endpoints are composed of.
type api struct {
	store    *storage.Store
	verifier *auth.Verifier
	// devTokens is whether verifier is to be the development tokens'
	// (newVerifier), then whether it is.
	devTokens bool
	tel       *telemetry.Telemetry
	workers   *workers
	// mail sends the outbox's emails; letters is the newsletter.
	mail    *mailer.Worker
	letters *newsletter.Service
	// playgroundHeaders are the headers the playground prefills: the
	// development admin's token, on loopback.
	playgroundHeaders map[string]string
	// shutdown is closed when the server shuts down; running are the
	// streams that http.Server.Shutdown does not wait for.
	shutdown chan struct{}
	running  sync.WaitGroup
	// media is the media library (mediacmd.go).
	media *mediaLibrary
	// gate admits the GraphQL requests of every publication to
	// execution (executionGate).
	gate *admission.Gate
}

// handler returns the API's endpoints for a server that listens on addr:
// on loopback, or wherever development tokens are accepted, it answers
// only requests addressed to this machine's names and -allowed-hosts.
// It makes the development tokens and, in the embedded mode without a
// -site-url, links the feeds to addr.
func (a *api) handler(ctx context.Context, cfg *config, addr net.Addr, logger *slog.Logger) (http.Handler, error) {
	loopback := httpguard.IsLoopback(addr)
	if a.devTokens {
		var err error
		a.verifier, a.playgroundHeaders, err = devtokens.Verifier(ctx, a.store, devtokens.Options{
			Auth: authConfig(cfg), Loopback: loopback, Insecure: cfg.insecureDevTokens, Logger: logger, Now: time.Now(),
		})
		if err != nil {
			return nil, err
		}
		a.devTokens = a.verifier != nil
	}
	if cfg.siteURL == "" && cfg.backend() == backendEmbedded {
		// Development: the feeds link to this server until a site is named.
		cfg.siteURL = "http://" + displayAddr(addr)
		logger.Info("feeds and sitemap link to this server's address; set -site-url to the frontend's", "site_url", cfg.siteURL)
	}
	if err := a.openMedia(ctx, cfg, addr, logger); err != nil {
		return nil, err
	}
	handler := a.routes(cfg, logger)
	if loopback || a.devTokens {
		// See httpguard.Hosts: no page of a name rebound to this machine reaches it.
		handler = httpguard.Hosts(cfg.allowedHosts, handler)
		logger.Info("answering requests addressed to this machine's names only (421 for others; -allowed-hosts adds names)",
			"hosts", append(append([]string(nil), httpguard.LoopbackHosts...), cfg.allowedHosts...))
	}
	return handler, nil
}

// newHTTPServer returns the API's server of handler, with the security
// headers, the request log and request ids, and the server's limits.
func newHTTPServer(handler http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           gqlhttp.WithRequestID(accesslog.Handler(logger, httpguard.SecurityHeaders(handler))),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serve starts the workers and serves srv on ln until ctx is done, then
// shuts down gracefully (shutdown).
func serve(ctx context.Context, cfg *config, ln net.Listener, srv *http.Server, a *api, logger *slog.Logger) error {
	fed, indexed := a.workers.start(ctx)
	// The view counter flushes until the server has stopped taking
	// beacons, then flushes what they counted.
	viewsCtx, stopViews := context.WithCancel(context.WithoutCancel(ctx))
	defer stopViews()
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		a.workers.views.Run(viewsCtx)
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
	if err := shutdown(ctx, srv, served, a, logger); err != nil {
		return err
	}
	stopViews()
	<-counted
	<-fed // the feed released its leases
	<-indexed
	logger.Info("stopped")
	return nil
}

// shutdown ends the subscriptions, then lets the requests and streams in
// flight finish within shutdownTimeout.
func shutdown(ctx context.Context, srv *http.Server, served <-chan error, a *api, logger *slog.Logger) error {
	hub := a.workers.hub
	logger.Info("shutting down", "timeout", shutdownTimeout, "subscriptions", hub.Subscribers())
	// Subscriptions end with SHUTTING_DOWN, then their streams: WebSocket
	// connections close with 1012, so clients reconnect to another server.
	hub.Close()
	close(a.shutdown)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// The streams the server handed over end with their last answers.
	streamsEnded := make(chan struct{})
	go func() { a.running.Wait(); close(streamsEnded) }()
	select {
	case <-streamsEnded:
	case <-sctx.Done():
		return fmt.Errorf("shutdown: streams: %w", sctx.Err())
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// newVerifier returns the token verifier cfg configures. In the embedded
// mode without a secret or JWKS URL it returns nil and dev true: the
// development verifier (devVerifier) needs the table. Outside it, a missing
// secret and JWKS URL is an error: the server does not start rather than
// take writes it cannot attribute.
func newVerifier(cfg *config, backend string) (v *auth.Verifier, dev bool, err error) {
	ac := authConfig(cfg)
	if ac.Secret == nil && ac.JWKSURL == "" {
		if backend != backendEmbedded {
			return nil, false, errors.New("no way to verify staff tokens: set JWT_SECRET (HS256, at least 32 bytes) or JWT_JWKS_URL; " +
				"READER_JWT_SECRET and READER_JWT_JWKS_URL verify reader tokens only; only the embedded engine runs with a development secret")
		}
		return nil, true, nil
	}
	v, err = auth.NewVerifier(ac)
	return v, false, err
}

// authConfig returns the token settings of cfg.
func authConfig(cfg *config) auth.Config {
	ac := auth.Config{JWKSURL: cfg.jwksURL, Issuer: cfg.jwtIssuer, Audience: cfg.jwtAudience}
	if cfg.jwtSecret != "" {
		ac.Secret = []byte(cfg.jwtSecret)
	}
	ac.Reader = auth.ReaderConfig{JWKSURL: cfg.readerJWKSURL, Issuer: cfg.readerIssuer, Audience: cfg.readerAudience}
	if cfg.readerSecret != "" {
		ac.Reader.Secret = []byte(cfg.readerSecret)
	}
	if ac.Reader.Secret == nil && cfg.readerSessionKey != nil {
		// The table's key of readers' sessions (signin.go).
		ac.Reader.Secret = cfg.readerSessionKey
	}
	return ac
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

// routes returns the server's endpoints. The playground prefills
// a.playgroundHeaders (the development token) in its headers editor.
// /graphql answers the CORS requests of -cors-origins
// (httpguard.WithCORS) and, when a.devTokens says the verifier checks
// development tokens, refuses a token from a page of another origin
// (httpguard.DevTokenOrigins).
func (a *api) routes(cfg *config, logger *slog.Logger) http.Handler {
	store := a.store
	mux := http.NewServeMux()
	cors := httpguard.NewCORS(cfg.corsOrigins)
	var budget *inflight.Budget // the GraphQL endpoint's and the feeds'
	if cfg.inflightBytes > 0 {
		budget = inflight.NewBudget(cfg.inflightBytes, inflight.DefaultWait)
	}
	shares := newBudgetShares(budget, cfg.platform.inflightShare)
	budget = shares.share(store.Publication())
	mux.Handle("/graphql", httpguard.WithCORS(cors, a.graphQL(cfg, cors, budget, logger)))
	// RSS, Atom, JSON Feed and the sitemap (syndication).
	feeds, err := syndication.New(store, feedOptions(cfg, budget, logger))
	if err != nil {
		// parseConfig checked every option New checks.
		panic(err)
	}
	feeds.Register(mux)
	// Renditions, and the embedded store's uploads (mediacmd.go).
	a.media.register(mux, cors)
	// The view beacon (package views): CORS for -cors-origins, whose
	// preflights the OPTIONS route answers.
	mux.Handle(views.BeaconPath, httpguard.WithCORS(cors, views.Beacon(a.workers.views)))
	mux.Handle("OPTIONS /v/{postId}", httpguard.WithCORS(cors, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	// The members' CSV export, for admins (graph/members.go).
	mux.Handle("GET "+graph.MembersCSVPath, httpguard.WithCORS(cors, graph.MembersCSV(store, "", a.verifier, logger)))
	// The unsubscribe links of the newsletter and of reply
	// notifications, GET and RFC 8058's one-click POST, without signing
	// in (package newsletter).
	if a.letters != nil {
		mux.Handle("GET "+newsletter.UnsubscribePath, a.letters.Unsubscribe())
		mux.Handle("POST "+newsletter.UnsubscribePath, a.letters.Unsubscribe())
		mux.Handle("GET "+newsletter.RepliesUnsubscribePath, a.letters.UnsubscribeReplies())
		mux.Handle("POST "+newsletter.RepliesUnsubscribePath, a.letters.UnsubscribeReplies())
	}
	mux.Handle("GET "+graph.ExportPath, httpguard.WithCORS(cors, graph.ExportMyData(store, "", a.verifier, logger)))
	// The theme of highlighted code (-highlight-code).
	mux.Handle("GET /code.css", httpguard.WithCORS(cors, markdown.CodeCSS()))
	if cfg.playgroundOn() {
		playground.Mount(mux, cfg.playgroundDirs(), a.playgroundHeaders, logger)
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
	return a.routed(cfg, mux, cors, shares, logger)
}

// graphQL returns the GraphQL endpoint of the default publication,
// whose WebSocket handshakes come from the server's own pages and cors's
// origins, and which shares budget with the feeds.
func (a *api) graphQL(cfg *config, cors *httpguard.CORS, budget *inflight.Budget, logger *slog.Logger) http.Handler {
	return a.graphQLOn(a.store, a.graphQLOptions(cfg, cors, budget, logger), cors)
}

// graphQLOn returns the GraphQL endpoint of opts on store.
func (a *api) graphQLOn(store *storage.Store, opts graph.HandlerOptions, cors *httpguard.CORS) http.Handler {
	var h http.Handler = graph.NewHandler(store, opts)
	if a.devTokens {
		h = httpguard.DevTokenOrigins(cors, h)
	}
	return h
}

// graphQLOptions returns the options of the default publication's
// GraphQL endpoint.
func (a *api) graphQLOptions(cfg *config, cors *httpguard.CORS, budget *inflight.Budget, logger *slog.Logger) graph.HandlerOptions {
	w := a.workers
	return a.tel.Handler(cfg.queryLimits(graph.HandlerOptions{
		Logger: logger,
		HTTP: gqlhttp.Options{
			Introspection:             cfg.introspectionOn(),
			RequestTimeout:            cfg.requestTimeout,
			CacheMaxAge:               cfg.cacheMaxAge,
			CacheSMaxAge:              cfg.cacheSMaxAge,
			CacheStaleWhileRevalidate: cfg.cacheSWR,
			Answers:                   w.answers,
			Budget:                    budget,
			Admission:                 a.gate,
			AdmissionKey:              a.store.Publication(),
			Streams: &gqlhttp.StreamOptions{
				CheckOrigin: httpguard.WebSocketOrigins(cors),
				PerAddress:  cfg.streamsPerAddr,
				MaxStreams:  maxStreams(cfg.maxStreams, logger),
				Observe:     a.tel.StreamObserver(),
				Shutdown:    a.shutdown,
				Running:     &a.running,
			},
		},
		Live:     graph.LiveOptions{Hub: w.hub, PerConnection: cfg.subsPerConn},
		Verifier: a.verifier,
		Comments: graph.CommentPolicy{Moderation: cfg.moderationOption(), UnmoderatedEdits: !cfg.moderateEdits, PerMinute: cfg.commentRate},
		ShowCost: cfg.backend() == backendEmbedded,
		Webhooks: w.hooks,
		Search:   w.searcher,
		Media:    a.media.library(),
		Views:    w.views,
		Site:     graph.SiteDefaults{Title: cfg.siteTitle, Description: cfg.siteDescription, URL: cfg.siteURL, Paths: cfg.paths},
		SignIn:   a.signInOptions(cfg),
	}))
}

func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, body+"\n")
}
