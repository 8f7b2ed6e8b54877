package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/live"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/telemetry"
	"github.com/blogql/blog/views"
	"github.com/blogql/blog/webhooks"
)

// embeddedFeedOwner names the server in the change feed's leases on the
// embedded engine.
const embeddedFeedOwner = "embedded"

// embeddedReadGap is how often the change feed reads the embedded
// engine's stream while it is quiet.
const embeddedReadGap = 25 * time.Millisecond

// embeddedCheckpointEvery is the most often the embedded engine's shard
// checkpoint moves past records without events (a webhook delivery's, a
// comment count's): no other server takes the shard over, the write is
// not billed, and the server goes idle, writing nothing, within a second
// of its last write rather than a minute.
const embeddedCheckpointEvery = time.Second

// newFeed returns the server's part of the change feed on store's table
// (package changefeed), to run until the server stops: every server of
// the fleet runs one, and the leases in the table share the stream's
// shards and the workers among them. Workers that follow the content are
// added here, before it runs.
func newFeed(ctx context.Context, clientCfg storage.ClientConfig, store *storage.Store, pubs *publicationWorkers, tailStart func(context.Context) (int64, error), cfg *config, logger *slog.Logger) (*changefeed.Feed, error) {
	streams, err := storage.NewStreamsClient(ctx, clientCfg)
	if err != nil {
		return nil, err
	}
	opts := changefeed.Options{Retention: cfg.eventRetention, Logger: logger, NoShards: !cfg.readStream, TailStart: tailStart}
	// Events name the frontend's pages with the paths the feeds link to.
	paths := cfg.paths
	opts.Paths = &paths
	if cfg.backend() == backendEmbedded {
		// One process at a time opens the data file (embedded.ErrLocked),
		// so a lease in it is this server's or one of a process that has
		// ended: the feed is exclusive, takes them all at once and writes
		// no heartbeat, and an idle server writes nothing. One owner name
		// keeps the leases' owner the same across restarts.
		opts.Owner, opts.Exclusive = embeddedFeedOwner, true
		// The engine's stream is in this process and has no limit on
		// reads: a write reaches the log within tens of milliseconds.
		opts.ReadGap, opts.PollEvery = embeddedReadGap, embeddedReadGap
		opts.CheckpointEvery = embeddedCheckpointEvery
	}
	feed := changefeed.New(store, streams, opts)
	// One server at a time sweeps the schedule of every publication: a
	// scheduled post goes live, with its post.published, within about a
	// second of its time (platformworkers.go).
	feed.AddWorker(changefeed.Worker{Name: "schedule", Every: time.Second, Tick: scheduleTick(store, logger)})
	// One server at a time renders again the bodies another renderer
	// rendered, the default publication's and then, a directory page a
	// tick, every other's; once done, a tick is one GetItem.
	feed.AddWorker(changefeed.Worker{Name: "rerender", Every: rerenderEvery, Tick: func(ctx context.Context) error {
		r, err := store.Rerender(ctx)
		if r.Rendered > 0 || r.Done || r.WalkDone {
			logger.Info("bodies rendered again", "rendered", r.Rendered, "stale", r.Stale, "done", r.Done, "walk_done", r.WalkDone, "render_version", store.RenderVersion())
		}
		return err
	}})
	// One server at a time runs each of the workers that follow every
	// publication's content: "webhooks", "counts", "pages", "newsletter"
	// and "reply-notifications" (pubworkers.go).
	for _, w := range pubs.workers() {
		feed.AddWorker(w)
	}
	logger.Info("change feed", "owner", feed.Owner(), "event_retention", cfg.eventRetention, "read_stream", cfg.readStream)
	return feed, nil
}

// rerenderEvery is how often the "rerender" worker looks at the renderer
// item, and sweeps while it is not done.
const rerenderEvery = 10 * time.Second

// workers are what follows the change feed on this server: the webhooks,
// the subscriptions' hub, the answer cache and the search index, and the
// feed itself, which runs the workers that run on one server at a time.
type workers struct {
	hooks    *webhooks.Service
	hub      *live.Hub
	feed     *changefeed.Feed
	answers  *gqlhttp.AnswerCache // nil: none kept
	searcher *search.Service
	// pubSearch is the other publications' search indexes.
	pubSearch *search.Publications
	// views counts the posts' views and flushes them (package views).
	views *views.Counter
}

// newWorkers returns the server's workers on store, letters the
// newsletter's, each subscribed to
// the change feed, which is made with the client configuration clientCfg.
// They start with start.
func newWorkers(ctx context.Context, cfg *config, clientCfg storage.ClientConfig, store *storage.Store, letters *newsletter.Service, tel *telemetry.Telemetry, logger *slog.Logger) (*workers, error) {
	w := &workers{views: views.New(store, views.Options{ClientIPHeader: cfg.viewsClientHeader, Observe: tel.ViewObserver(), Logger: logger})}
	// The default publication's webhooks service serves its GraphQL
	// webhook mutations and is its part of the "webhooks" worker.
	pubs := newPublicationWorkers(store, cfg, letters, logger)
	w.hooks = pubs.defaultHooks
	// Subscriptions get the events this server reads from the log, and
	// replay from the last of them, which the hub loads before the
	// feed's tail starts after them.
	w.hub = live.NewHub(live.StoreLog(store), live.Options{Window: cfg.liveWindow})
	feed, err := newFeed(ctx, clientCfg, store, pubs, w.hub.Load, cfg, logger)
	if err != nil {
		return nil, err
	}
	w.feed = feed
	feed.Subscribe(w.hub.Publish)
	// The answers this server keeps that show what changed are dropped
	// by the events, and the searches' again once its index applied them.
	searchChanged := func() {}
	if cfg.answerCacheBytes > 0 {
		answers := gqlhttp.NewAnswerCache(cfg.answerCacheBytes, tel.AnswerObserver())
		w.answers = answers
		searchChanged = func() { answers.Invalidate(frontend.TagSearch) }
	}
	// This server's search index applies every event of the log after
	// its own position.
	if w.searcher, err = newSearch(store, cfg, searchChanged, logger); err != nil {
		return nil, err
	}
	feed.Subscribe(w.searcher.Events)
	if w.pubSearch, err = newPublicationsSearch(store, cfg, w.searcher.Dir(), searchChanged, logger); err != nil {
		return nil, err
	}
	feed.Subscribe(w.pubSearch.Events)
	// The site settings and the staff's roles this server holds of every
	// publication are dropped when they change.
	feed.Subscribe(func(events []storage.LoggedEvent) { store.ForgetSite(events) })
	feed.Subscribe(func(events []storage.LoggedEvent) { store.ForgetStaff(events) })
	if w.answers != nil {
		feed.Subscribe(graph.InvalidateAnswers(w.answers))
	}
	return w, nil
}

// start runs the change feed and the search index until ctx ends; they
// log what fails and go on. The channels are closed when they have
// stopped, the feed's leases released.
func (w *workers) start(ctx context.Context) (fed, indexed <-chan struct{}) {
	f, i := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(f)
		_ = w.feed.Run(ctx)
	}()
	go func() {
		defer close(i)
		w.runSearch(ctx)
	}()
	return f, i
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
