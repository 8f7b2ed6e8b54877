// Command blog serves the blog's GraphQL API over DynamoDB.
//
// With nothing configured it runs an embedded DynamoDB-compatible engine in
// the process, creates the table, seeds a demo blog and serves the GraphiQL
// playground on http://localhost:8080/. Run with -h for the configuration;
// every flag has an environment variable, and a flag wins over its
// variable.
package main

import (
	"bytes"
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// Server limits.
const (
	// maxBodyBytes bounds a GraphQL request body.
	maxBodyBytes = 1 << 20
	// maxHeaderBytes bounds the request line and headers, so also the
	// query of a GET request.
	maxHeaderBytes = 64 << 10
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
	host          string
	port          int
	endpoint      string
	aws           bool
	table         string
	region        string
	createTable   autoBool
	seedDemo      autoBool
	playground    bool
	introspection bool
	logLevel      slog.Level
	logFormat     string
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
		"dynamodb-endpoint": "DYNAMODB_ENDPOINT", "aws": "DYNAMODB_AWS",
		"table": "DYNAMODB_TABLE", "region": "AWS_REGION",
		"create-table": "CREATE_TABLE", "seed-demo": "SEED_DEMO",
		"playground": "PLAYGROUND", "introspection": "INTROSPECTION",
		"log-level": "LOG_LEVEL", "log-format": "LOG_FORMAT",
	}
	fs.StringVar(&c.host, "host", "localhost", "interface to listen on; \"\" or 0.0.0.0 for all (in a container), localhost keeps a dev run private")
	fs.IntVar(&c.port, "port", 8080, "port to listen on; 0 picks a free one")
	fs.StringVar(&c.endpoint, "dynamodb-endpoint", "", "DynamoDB endpoint `URL`, e.g. http://127.0.0.1:8765 for DynamoDB Local;\nwith neither this nor -aws the server runs an embedded in-memory engine")
	fs.BoolVar(&c.aws, "aws", false, "use AWS DynamoDB in -region with credentials from the SDK's default chain\n(at -dynamodb-endpoint when set, e.g. a VPC endpoint)")
	fs.StringVar(&c.table, "table", "blog", "DynamoDB table name")
	fs.StringVar(&c.region, "region", "us-east-1", "AWS region")
	fs.Var(&c.createTable, "create-table", "create the table and its index if missing: true, false or auto\n(auto: true for the embedded engine and -dynamodb-endpoint, false for -aws)")
	fs.Var(&c.seedDemo, "seed-demo", "seed the demo blog (idempotent, works on any backend): true, false or auto\n(auto: true for the embedded engine only)")
	fs.BoolVar(&c.playground, "playground", true, "serve the GraphiQL playground at /")
	fs.BoolVar(&c.introspection, "introspection", true, "allow schema introspection (the playground and code generators need it)")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")

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
	case c.logFormat != "text" && c.logFormat != "json":
		return nil, fmt.Errorf("log format %q: must be text or json", c.logFormat)
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
	backend := cfg.backend()

	client, err := storage.NewClient(ctx, storage.ClientConfig{
		Embedded: backend == backendEmbedded,
		Endpoint: cfg.endpoint,
		Region:   cfg.region,
	})
	if err != nil {
		return err
	}
	store := storage.New(client, cfg.table)
	logger.Info("dynamodb", "backend", backend, "table", cfg.table, "dynamodb_endpoint", cfg.endpoint, "region", cfg.region)
	if cfg.createTable.or(backend != backendAWS) {
		if err := store.CreateTable(ctx); err != nil {
			return err
		}
	}
	if cfg.seedDemo.or(backend == backendEmbedded) {
		start := time.Now()
		if err := demo.Seed(ctx, store, time.Now()); err != nil {
			return err
		}
		logger.Info("demo blog seeded", "duration", time.Since(start).Round(time.Millisecond))
	}
	if cfg.playground && !cfg.introspection {
		logger.Warn("the playground cannot load the schema with introspection off")
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           logRequests(logger, routes(store, cfg, logger)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	base := "http://" + displayAddr(ln.Addr())
	if cfg.playground {
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

func newLogger(cfg *config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
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

// routes returns the server's endpoints.
func routes(store *storage.Store, cfg *config, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/graphql", limitBody(maxBodyBytes, graph.NewHandler(store, graph.HandlerOptions{
		Logger:        logger,
		Introspection: cfg.introspection,
	})))
	if cfg.playground {
		mux.Handle("GET /{$}", playground.Handler("Blog GraphQL", "/graphql"))
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

func plain(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, body+"\n")
}

// limitBody refuses request bodies larger than n bytes with 413 and a
// GraphQL error. A body of unknown length (chunked) is read here to find out,
// which costs nothing extra: the GraphQL transport reads it whole anyway.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > n {
			tooLarge(w, n)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, n)
		if r.ContentLength < 0 {
			b, err := io.ReadAll(r.Body)
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				tooLarge(w, n)
				return
			case err != nil:
				plain(w, http.StatusBadRequest, "could not read the request body")
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, n int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	fmt.Fprintf(w, `{"errors":[{"message":"request body larger than %d bytes","extensions":{"code":%q}}]}`+"\n",
		n, graph.CodeBadUserInput)
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
