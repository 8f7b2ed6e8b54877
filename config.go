package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/httpguard"
	"github.com/blogql/blog/internal/rlimit"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/pprofserver"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
	"github.com/blogql/blog/webhooks"
)

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
	readerSecret      string
	readerJWKSURL     string
	readerIssuer      string
	readerAudience    string
	cacheMaxAge       time.Duration
	cacheSMaxAge      time.Duration
	cacheSWR          time.Duration
	answerCacheBytes  int64
	inflightBytes     int64
	execSlots         int
	execQueue         int
	eventRetention    time.Duration
	readStream        bool
	pprofAddr         string
	metricsAddr       string
	moderation        string
	moderateEdits     bool
	commentRate       int
	subsPerConn       int
	streamsPerAddr    int
	maxStreams        int
	liveWindow        int
	migrate           string
	allowedHosts      httpguard.HostList
	platform          platformConfig
	corsOrigins       httpguard.OriginList
	viewsClientHeader string
	maxQueryBytes     int
	queryCacheBytes   int64
	apqCacheBytes     int64
	apqWrites         int
	privateURLs       bool
	highlightCode     bool
	headingIDPrefix   string
	webhooksPrivate   bool
	webhooksHTTP      autoBool
	siteURL           string
	siteTitle         string
	siteDescription   string
	paths             frontend.Paths
	feedContent       string
	searchIndex       string
	searchLanguage    string
	// searchOpenIndexes is -search-open-indexes.
	searchOpenIndexes int

	// Readers' sign-in by email (signin.go); sesRegion, when set, sends
	// by Amazon SES's API (at sesEndpoint, when set) instead of SMTP.
	smtpURL          string
	smtpFrom         string
	sesRegion        string
	sesEndpoint      string
	signInLinkTTL    time.Duration
	signInAddresses  int
	readerAccessTTL  time.Duration
	readerSessionKey []byte
	media            mediaConfig
	// quota bounds each publication's posts and webhooks, unless a
	// platform admin set its own limits.
	quota storage.PublicationQuota
	// The newsletter and the mail worker's rate (newsletter.go).
	mailRate  int
	publicURL string
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

// webhookOptions returns the webhooks' options: plain http only in the
// development mode (the embedded engine) unless configured, private
// addresses only with the unsafe flag.
func (c *config) webhookOptions(logger *slog.Logger) webhooks.Options {
	return webhooks.Options{
		AllowPrivate: c.webhooksPrivate,
		AllowHTTP:    c.webhooksHTTP.or(c.backend() == backendEmbedded),
		PrivateHint:  "a receiver on this machine, for local development only, needs the server started with -webhooks-allow-private-unsafe (WEBHOOKS_ALLOW_PRIVATE_UNSAFE=true)",
		Logger:       logger,
	}
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
	// The home page has no setting: the feeds' and events' home is the
	// site's root.
	c := &config{paths: frontend.Paths{Home: frontend.DefaultPaths.Home}}
	fs := flag.NewFlagSet("blog", flag.ContinueOnError)
	fs.SetOutput(out)
	env := map[string]string{} // flag → environment variable
	for _, s := range settings(c) {
		fs.Var(s.value, s.name, s.usage)
		env[s.name] = s.env
	}
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
		if v := env[f.Name]; getenv(v) != "" {
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
	if err := c.check(fs.Args()); err != nil {
		return nil, err
	}
	return c, nil
}

// check returns an error naming the first setting of c out of its range,
// or the stray arguments.
func (c *config) check(stray []string) error {
	switch {
	case len(stray) > 0:
		return fmt.Errorf("unexpected arguments %q", stray)
	case c.port < 0 || c.port > 65535:
		return fmt.Errorf("port %d: must be 0 to 65535", c.port)
	case c.table == "":
		return errors.New("table: must not be empty")
	case c.dataDir == "":
		return fmt.Errorf("data directory: must not be empty (%s keeps the data in memory)", memoryData)
	case c.logFormat != "text" && c.logFormat != "json":
		return fmt.Errorf("log format %q: must be text or json", c.logFormat)
	case c.requestTimeout <= 0 || c.requestTimeout >= writeTimeout:
		return fmt.Errorf("request timeout %s: must be more than 0 and less than %s", c.requestTimeout, writeTimeout)
	case c.maxAttempts < 1 || c.maxAttempts > storage.MaxAttemptsLimit:
		return fmt.Errorf("dynamodb max attempts %d: must be 1 to %d", c.maxAttempts, storage.MaxAttemptsLimit)
	case c.cacheMaxAge < 0:
		return fmt.Errorf("cache max age %s: must not be negative", c.cacheMaxAge)
	case c.cacheSMaxAge < 0 || c.cacheSWR < 0:
		return errors.New("cache s-maxage and stale-while-revalidate: must not be negative")
	case c.answerCacheBytes < 0:
		return fmt.Errorf("answer cache bytes %d: must not be negative", c.answerCacheBytes)
	case c.platform.hostLookups < 0 || c.platform.publicationRate < 0:
		return fmt.Errorf("host lookup rate %d, publication rate limit %d: must not be negative", c.platform.hostLookups, c.platform.publicationRate)
	case c.platform.inflightShare < 1 || c.platform.inflightShare > 100:
		return fmt.Errorf("publication inflight share %d: must be 1 to 100 (percent)", c.platform.inflightShare)
	case c.execQueue < 0:
		return fmt.Errorf("execution queue %d: must not be negative", c.execQueue)
	case c.inflightBytes < 0:
		return fmt.Errorf("inflight bytes %d: must not be negative", c.inflightBytes)
	case c.media.maxBytes < 1 || c.media.maxPixels < 1:
		return errors.New("media max bytes and max pixels: must be at least 1")
	case c.media.workers < 0:
		return errors.New("media workers: must be at least 0 (0: cores − 1, at least 1)")
	case c.media.quotaBytes < 0 || c.media.quotaFiles < 0:
		return errors.New("media quota bytes and files: must be at least 0 (0: no bound)")
	case c.quota.Posts < 0 || c.quota.Webhooks < 0:
		return errors.New("quota posts and webhooks: must be at least 0 (0: no bound)")
	case c.eventRetention < time.Minute:
		return fmt.Errorf("event retention %s: must be at least 1m", c.eventRetention)
	case c.cursorKey != "" && len(c.cursorKey) < storage.MinCursorKeyBytes:
		return fmt.Errorf("cursor key: must be at least %d bytes", storage.MinCursorKeyBytes)
	case c.moderation != moderationHold && c.moderation != moderationPublish:
		return fmt.Errorf("comment moderation %q: must be %s or %s", c.moderation, moderationHold, moderationPublish)
	case c.subsPerConn < 1:
		return fmt.Errorf("subscriptions per connection %d: must be at least 1", c.subsPerConn)
	case c.streamsPerAddr < 1:
		return fmt.Errorf("streams per address %d: must be at least 1", c.streamsPerAddr)
	case c.maxStreams < 0:
		return fmt.Errorf("max streams %d: must not be negative", c.maxStreams)
	case c.liveWindow < 1:
		return fmt.Errorf("live window %d: must be at least 1", c.liveWindow)
	case c.commentRate < 1 || c.commentRate > storage.MaxCommentsPerMinute:
		return fmt.Errorf("comment rate limit %d: must be 1 to %d", c.commentRate, storage.MaxCommentsPerMinute)
	case markdown.CheckHeadingIDPrefix(c.headingIDPrefix) != nil:
		return markdown.CheckHeadingIDPrefix(c.headingIDPrefix)
	case c.migrate != migrateAuto && c.migrate != migrateOnly && c.migrate != migrateOff:
		return fmt.Errorf("migrate %q: must be %s, %s or %s", c.migrate, migrateAuto, migrateOnly, migrateOff)
	case c.maxQueryBytes < 1 || c.maxQueryBytes > gqlhttp.MaxBodyBytes:
		return fmt.Errorf("max query bytes %d: must be 1 to %d", c.maxQueryBytes, gqlhttp.MaxBodyBytes)
	case c.queryCacheBytes < 0 || c.apqCacheBytes < 0:
		return errors.New("query cache bytes: must not be negative")
	case c.apqWrites < 0:
		return errors.New("persisted query writes: must not be negative")
	case c.searchOpenIndexes < 1:
		return fmt.Errorf("search open indexes %d: must be 1 or more", c.searchOpenIndexes)
	case !slices.Contains(search.Languages, c.searchLanguage):
		return fmt.Errorf("search language %q: must be one of %s", c.searchLanguage, strings.Join(search.Languages, ", "))
	case c.paths.Post == "":
		return errors.New("post path: must not be empty")
	case c.paths.Check() != nil:
		return c.paths.Check()
	case c.feedContent != string(syndication.ContentFull) && c.feedContent != string(syndication.ContentExcerpt):
		return fmt.Errorf("feed content %q: must be %s or %s", c.feedContent, syndication.ContentFull, syndication.ContentExcerpt)
	}
	if c.siteURL != "" {
		if _, err := syndication.CheckSiteURL(c.siteURL); err != nil {
			return err
		}
	}
	if err := c.checkNewsletter(); err != nil {
		return err
	}
	if err := c.checkSignIn(); err != nil {
		return err
	}
	if c.pprofAddr != "" {
		if err := pprofserver.CheckAddr(c.pprofAddr); err != nil {
			return fmt.Errorf("pprof address %q: %w", c.pprofAddr, err)
		}
	}
	return nil
}

// defaultPlaygroundDir is the default of -playground-assets, where
// scripts/playground-assets.sh installs the playground's files.
const defaultPlaygroundDir = ".cache/playground"

// executable and sourceFile locate the binary and the source it was built
// from, beside which the playground's files are looked for; tests replace
// them. sourceFile is relative (and not used) in a binary built with
// -trimpath.
var (
	executable = os.Executable
	sourceFile = func() string { _, file, _, _ := runtime.Caller(0); return file }()
)

// playgroundDirs returns the directories in which the playground's files
// are looked for, in order. A directory set with -playground-assets is
// the only one. Left at its default, the files are found wherever the
// server is started from: in .cache/playground of the working directory,
// in playground of the data directory, and in .cache/playground beside
// the executable and in the source directory the binary was built from
// (which `go run` and `go build` in a checkout are).
func (c *config) playgroundDirs() []string {
	if c.playgroundDir != defaultPlaygroundDir {
		return []string{c.playgroundDir}
	}
	dirs := []string{defaultPlaygroundDir}
	if c.dataDir != memoryData {
		dirs = append(dirs, filepath.Join(c.dataDir, "playground"))
	}
	if exe, err := executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), defaultPlaygroundDir))
	}
	if filepath.IsAbs(sourceFile) {
		dirs = append(dirs, filepath.Join(filepath.Dir(sourceFile), defaultPlaygroundDir))
	}
	seen := map[string]bool{}
	unique := dirs[:0]
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		if !seen[abs] {
			seen[abs] = true
			unique = append(unique, d)
		}
	}
	return unique
}

// minStreams is the least default bound on the server's streams, for an
// open-file limit too small to halve.
const minStreams = 64

// maxStreams returns the bound on the subscription streams open at once
// on the server: -max-streams, or half the open-file limit, each stream
// holding one descriptor, so that the other half is left for DynamoDB's
// connections, the requests and the data files. Zero, where the limit
// is unknown, is no bound.
func maxStreams(configured int, logger *slog.Logger) int {
	if configured > 0 {
		return configured
	}
	files, ok := rlimit.OpenFiles()
	if !ok {
		logger.Warn("the open-file limit is unknown: subscription streams are bounded per address only; set -max-streams")
		return 0
	}
	n := max(int(files/2), minStreams)
	logger.Info("subscription streams bounded by the open-file limit", "max_streams", n, "open_files", files)
	return n
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
