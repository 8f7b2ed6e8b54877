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
	"strings"
	"syscall"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tuning"
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
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "blog:", err)
		os.Exit(1)
	}
}

// Backends, see config.backend.
const (
	backendEmbedded = "embedded"
	backendLocal    = "endpoint"
	backendAWS      = "aws"
)

// config is the server's configuration.
type config struct {
	host              string
	port              int
	endpoint          string
	dataDir           string
	aws               bool
	table             string
	region            string
	createTable       autoBool
	seedDemo          autoBool
	playground        autoBool
	playgroundDir     string
	introspection     autoBool
	requestTimeout    time.Duration
	maxAttempts       int
	logLevel          slog.Level
	logFormat         string
	jwtSecret         string
	cursorKey         string
	insecureDevTokens bool
	jwtIssuer         string
	jwtAudience       string
	jwksURL           string
	cacheMaxAge       time.Duration
	pprofAddr         string
	metricsAddr       string
	moderation        string
	commentRate       int
	migrate           string
	allowedHosts      hostList
	corsOrigins       originList
	maxQueryBytes     int
	queryCacheBytes   int64
	apqCacheBytes     int64
	privateURLs       bool
}

// backend returns which DynamoDB the server talks to: AWS with -aws (at
// -dynamodb-endpoint when that is set too), the DynamoDB at
// -dynamodb-endpoint (e.g. DynamoDB Local), or else the embedded engine.
func (c *config) backend() string {
	switch {
	case c.aws:
		return backendAWS
	case c.endpoint != "":
		return backendLocal
	default:
		return backendEmbedded
	}
}

// introspectionOn reports whether schema introspection and field
// suggestions are on: by default only for the embedded engine, a
// development setup, since they show the whole schema to anyone.
func (c *config) introspectionOn() bool {
	return c.introspection.or(c.backend() == backendEmbedded)
}

// playgroundOn reports whether the server serves the playground: by
// default only where introspection is on, since it cannot work without.
func (c *config) playgroundOn() bool {
	return c.playground.or(c.introspectionOn())
}

// Values of -comment-moderation.
const (
	moderationHold    = "hold"
	moderationPublish = "publish"
)

// moderationOption returns the handler's setting for readers' comments.
func (c *config) moderationOption() graph.Moderation {
	if c.moderation == moderationPublish {
		return graph.PublishReaderComments
	}
	return graph.HoldReaderComments
}

// autoBool is a boolean flag whose default depends on other flags: "auto"
// until it is set.
type autoBool struct {
	set, value bool
}

func (b *autoBool) String() string {
	if b == nil || !b.set {
		return "auto"
	}
	return strconv.FormatBool(b.value)
}

func (b *autoBool) Set(s string) error {
	if s == "auto" {
		*b = autoBool{}
		return nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("must be true, false or auto")
	}
	*b = autoBool{set: true, value: v}
	return nil
}

func (b *autoBool) IsBoolFlag() bool { return true }

// or returns the value when it was set, else def.
func (b *autoBool) or(def bool) bool {
	if b.set {
		return b.value
	}
	return def
}

// parseConfig reads the configuration from getenv and then args: a flag
// overrides its environment variable. Help and errors go to out; -h
// returns flag.ErrHelp.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("blog", flag.ContinueOnError)
	fs.SetOutput(out)
	env := map[string]string{ // flag → environment variable
		"host": "HOST", "port": "PORT",
		"dynamodb-endpoint": "DYNAMODB_ENDPOINT", "aws": "DYNAMODB_AWS", "data": "DATA_DIR",
		"table": "DYNAMODB_TABLE", "region": "AWS_REGION",
		"jwt-secret": "JWT_SECRET", "jwt-issuer": "JWT_ISSUER", "jwt-audience": "JWT_AUDIENCE", "jwt-jwks-url": "JWT_JWKS_URL",
		"create-table": "CREATE_TABLE", "seed-demo": "SEED_DEMO",
		"playground": "PLAYGROUND", "playground-assets": "PLAYGROUND_ASSETS",
		"introspection": "INTROSPECTION", "log-level": "LOG_LEVEL", "log-format": "LOG_FORMAT",
		"request-timeout": "REQUEST_TIMEOUT", "dynamodb-max-attempts": "DYNAMODB_MAX_ATTEMPTS",
		"cache-max-age": "CACHE_MAX_AGE", "pprof-addr": "PPROF_ADDR",
		"metrics-addr": "METRICS_ADDR", "insecure-dev-tokens": "INSECURE_DEV_TOKENS",
		"cursor-key":         "CURSOR_KEY",
		"comment-moderation": "COMMENT_MODERATION", "comment-rate-limit": "COMMENT_RATE_LIMIT",
		"migrate": "MIGRATE", "allowed-hosts": "ALLOWED_HOSTS", "cors-origins": "CORS_ORIGINS",
		"max-query-bytes": "MAX_QUERY_BYTES", "query-cache-bytes": "QUERY_CACHE_BYTES",
		"persisted-query-cache-bytes": "PERSISTED_QUERY_CACHE_BYTES", "allow-private-urls": "ALLOW_PRIVATE_URLS",
	}
	fs.StringVar(&c.host, "host", "localhost", "interface to listen on; \"\" or 0.0.0.0 for all (in a container), localhost keeps a dev run private")
	fs.IntVar(&c.port, "port", 8080, "port to listen on; 0 picks a free one")
	fs.StringVar(&c.endpoint, "dynamodb-endpoint", "", "DynamoDB endpoint `URL`, e.g. http://127.0.0.1:8765 for DynamoDB Local;\nwith neither this nor -aws the server runs the embedded engine")
	fs.StringVar(&c.dataDir, "data", ".data", "`directory` where the embedded engine keeps its data file ("+dataFile+");\n"+memoryData+" keeps the data in memory, gone when the server stops")
	fs.BoolVar(&c.aws, "aws", false, "use AWS DynamoDB in -region with credentials from the SDK's default chain\n(at -dynamodb-endpoint when set, e.g. a VPC endpoint)")
	fs.StringVar(&c.table, "table", "blog", "DynamoDB table name")
	fs.StringVar(&c.region, "region", "us-east-1", "AWS region")
	fs.Var(&c.createTable, "create-table", "create the table and its index if missing: true, false or auto\n(auto: true for the embedded engine and -dynamodb-endpoint, false for -aws)")
	fs.Var(&c.seedDemo, "seed-demo", "seed the demo blog (idempotent, works on any backend): true, false or auto\n(auto: into an empty table of the embedded engine)")
	fs.Var(&c.playground, "playground", "serve the GraphiQL playground at /: true, false or auto\n(auto: where introspection is on, which the playground needs)")
	fs.StringVar(&c.playgroundDir, "playground-assets", ".cache/playground", "`directory` of the playground's GraphiQL files, installed by scripts/playground-assets.sh;\nwithout them the playground loads GraphiQL from a CDN")
	fs.Var(&c.introspection, "introspection", "allow schema introspection and field suggestions in errors (the playground and code\ngenerators need them): true, false or auto (auto: true for the embedded engine only)")
	fs.DurationVar(&c.requestTimeout, "request-timeout", graph.DefaultRequestTimeout, "how long one GraphQL request may take, its DynamoDB calls included;\nless than the server's write timeout of "+writeTimeout.String())
	fs.IntVar(&c.maxAttempts, "dynamodb-max-attempts", storage.DefaultMaxAttempts, fmt.Sprintf("attempts of a DynamoDB call that is throttled or fails for a passing reason, 1 to %d", storage.MaxAttemptsLimit))
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.jwtSecret, "jwt-secret", "", "`secret` that signs HS256 bearer tokens, at least 32 bytes (prefer the variable: flags show in ps);\nthis or -jwt-jwks-url is needed outside the embedded mode, which otherwise uses a development secret")
	fs.StringVar(&c.cursorKey, "cursor-key", "", fmt.Sprintf("`key` that seals the cursors of lists, at least %d bytes (prefer the variable: flags show in ps);\nempty: a random key kept in the table, the same for every server on it", storage.MinCursorKeyBytes))
	fs.BoolVar(&c.insecureDevTokens, "insecure-dev-tokens", false, "in the embedded mode without -jwt-secret or -jwt-jwks-url, accept (and log) development tokens\neven on a listener beyond loopback: anyone who reaches the server and gets a token can write")
	fs.StringVar(&c.jwksURL, "jwt-jwks-url", "", "`URL` of an identity provider's JWKS, to verify its RS256 and ES256 tokens (https)")
	fs.StringVar(&c.jwtIssuer, "jwt-issuer", "", "the iss claim tokens must carry; empty: not checked")
	fs.StringVar(&c.jwtAudience, "jwt-audience", "", "a value the aud claim of tokens must hold; empty: not checked")
	fs.DurationVar(&c.cacheMaxAge, "cache-max-age", time.Minute, "how long a CDN or browser may reuse the answer to an anonymous GET query;\n0 marks every answer no-store")
	fs.StringVar(&c.pprofAddr, "pprof-addr", "", "serve runtime profiles at /debug/pprof/ on this loopback `address`, e.g. 127.0.0.1:6060;\nempty: off")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this `address`, a listener of its own, e.g. :9090;\nempty: off")
	fs.StringVar(&c.moderation, "comment-moderation", moderationHold, "what happens to readers' comments: hold (pending until the post's author or an admin approves)\nor publish (at once); authors' comments are never held")
	fs.IntVar(&c.commentRate, "comment-rate-limit", graph.DefaultCommentsPerMinute, fmt.Sprintf("the most comments a reader may add in any minute, 1 to %d; authors and admins have no limit", storage.MaxCommentsPerMinute))
	fs.Var(&c.allowedHosts, "allowed-hosts", "`names` besides localhost, 127.0.0.1 and [::1] that requests may be addressed to (Host), separated by commas,\nwhere only those are answered: on a loopback listener (this one, -metrics-addr's, -pprof-addr's) and wherever\ndevelopment tokens are accepted; e.g. the name a proxy on this machine passes on")
	fs.Var(&c.corsOrigins, "cors-origins", "`origins` (scheme://host[:port], separated by commas) whose pages may call /graphql from a browser (CORS);\nno wildcard; empty: none, the playground needs none")
	fs.StringVar(&c.migrate, "migrate", migrateAuto, "bring a table written by an earlier version to the current layout: auto (at start, before serving;\none read when there is nothing to do), only (do it, then exit without serving) or off (never; the log says\nwhen the table needs it)")
	fs.IntVar(&c.maxQueryBytes, "max-query-bytes", graph.DefaultMaxQueryBytes, "the longest query document a request may send, in bytes, a persisted query's included;\nlonger ones are refused before they are parsed (send long values in variables)")
	fs.Int64Var(&c.queryCacheBytes, "query-cache-bytes", graph.DefaultQueryCacheBytes, "memory, in bytes, of the parsed documents kept for requests that send the same query again;\n0: none kept")
	fs.Int64Var(&c.apqCacheBytes, "persisted-query-cache-bytes", graph.DefaultPersistedQueryCacheBytes, "memory, in bytes, of the automatic persisted queries kept; 0: none kept")
	fs.BoolVar(&c.privateURLs, "allow-private-urls", false, "let cover image, canonical, Open Graph and avatar URLs name localhost and loopback, private\nand link-local addresses (for development: frontends and crawlers would fetch them)")

	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: blog [flags]\n\nServes the blog's GraphQL API at /graphql. Every flag can also be set by\nthe environment variable in brackets; a flag wins over its variable.\n\n")
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(out, "  -%s %s  [%s]\n    \t%s (default %q)\n", f.Name, name, env[f.Name],
				strings.ReplaceAll(usage, "\n", "\n    \t"), f.DefValue)
		})
	}

	// Environment first, then the command line over it.
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := env[f.Name]; ok && getenv(v) != "" {
			if err := fs.Set(f.Name, getenv(v)); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", v, getenv(v), err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.port < 0 || c.port > 65535:
		return nil, fmt.Errorf("port %d: must be 0 to 65535", c.port)
	case c.table == "":
		return nil, errors.New("table: must not be empty")
	case c.dataDir == "":
		return nil, fmt.Errorf("data directory: must not be empty (%s keeps the data in memory)", memoryData)
	case c.logFormat != "text" && c.logFormat != "json":
		return nil, fmt.Errorf("log format %q: must be text or json", c.logFormat)
	case c.requestTimeout <= 0 || c.requestTimeout >= writeTimeout:
		return nil, fmt.Errorf("request timeout %s: must be more than 0 and less than %s", c.requestTimeout, writeTimeout)
	case c.maxAttempts < 1 || c.maxAttempts > storage.MaxAttemptsLimit:
		return nil, fmt.Errorf("dynamodb max attempts %d: must be 1 to %d", c.maxAttempts, storage.MaxAttemptsLimit)
	case c.cacheMaxAge < 0:
		return nil, fmt.Errorf("cache max age %s: must not be negative", c.cacheMaxAge)
	case c.cursorKey != "" && len(c.cursorKey) < storage.MinCursorKeyBytes:
		return nil, fmt.Errorf("cursor key: must be at least %d bytes", storage.MinCursorKeyBytes)
	case c.moderation != moderationHold && c.moderation != moderationPublish:
		return nil, fmt.Errorf("comment moderation %q: must be %s or %s", c.moderation, moderationHold, moderationPublish)
	case c.commentRate < 1 || c.commentRate > storage.MaxCommentsPerMinute:
		return nil, fmt.Errorf("comment rate limit %d: must be 1 to %d", c.commentRate, storage.MaxCommentsPerMinute)
	case c.migrate != migrateAuto && c.migrate != migrateOnly && c.migrate != migrateOff:
		return nil, fmt.Errorf("migrate %q: must be %s, %s or %s", c.migrate, migrateAuto, migrateOnly, migrateOff)
	case c.maxQueryBytes < 1 || c.maxQueryBytes > graph.MaxBodyBytes:
		return nil, fmt.Errorf("max query bytes %d: must be 1 to %d", c.maxQueryBytes, graph.MaxBodyBytes)
	case c.queryCacheBytes < 0 || c.apqCacheBytes < 0:
		return nil, errors.New("query cache bytes: must not be negative")
	}
	if c.pprofAddr != "" {
		if err := checkPprofAddr(c.pprofAddr); err != nil {
			return nil, fmt.Errorf("pprof address %q: %w", c.pprofAddr, err)
		}
	}
	return c, nil
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
	storeOpts := []storage.Option{}
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
	cursorKey, err := cursorKeyOf(ctx, cfg, store)
	if err != nil {
		return err
	}
	store = storage.New(client, cfg.table, append(storeOpts, storage.WithCursorKey(cursorKey))...)
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
	handler := routes(store, verifier, tel, cfg, playgroundHeaders, devTokens, logger)
	if loopback || devTokens {
		// See hosts.go: no page of a name rebound to this machine reaches it.
		handler = guardHost(cfg.allowedHosts, handler)
		logger.Info("answering requests addressed to this machine's names only (421 for others; -allowed-hosts adds names)",
			"hosts", append(append([]string(nil), loopbackHosts...), cfg.allowedHosts...))
	}
	srv := &http.Server{
		Handler:           graph.WithRequestID(logRequests(logger, securityHeaders(handler))),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
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
	logger.Info("shutting down", "timeout", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

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
			"comments", m.Comments, "counters", m.Counters, "duration", time.Since(start).Round(time.Millisecond))
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
		return slog.New(graph.LogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(graph.LogHandler(slog.NewTextHandler(w, opts)))
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
	opts.MaxQueryBytes = c.maxQueryBytes
	opts.QueryCacheBytes, opts.PersistedQueryCacheBytes = none(c.queryCacheBytes), none(c.apqCacheBytes)
	return opts
}

// routes returns the server's endpoints. The playground prefills
// playgroundHeaders (the development token) in its headers editor. /graphql
// answers the CORS requests of -cors-origins (cors.go) and, when
// devTokens says that verifier checks development tokens, refuses a token
// from a page of another origin (hosts.go).
func routes(store *storage.Store, verifier *auth.Verifier, tel *telemetry, cfg *config, playgroundHeaders map[string]string, devTokens bool, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	var api http.Handler = graph.NewHandler(store, tel.handler(cfg.queryLimits(graph.HandlerOptions{
		Logger:            logger,
		Introspection:     cfg.introspectionOn(),
		RequestTimeout:    cfg.requestTimeout,
		CacheMaxAge:       cfg.cacheMaxAge,
		Verifier:          verifier,
		Moderation:        cfg.moderationOption(),
		CommentsPerMinute: cfg.commentRate,
		ShowCost:          cfg.backend() == backendEmbedded,
	})))
	cors := newCORSPolicy(cfg.corsOrigins)
	if devTokens {
		api = devTokenOrigins(cors, api)
	}
	mux.Handle("/graphql", withCORS(cors, api))
	if cfg.playgroundOn() {
		mountPlayground(mux, cfg.playgroundDir, playgroundHeaders, logger)
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
