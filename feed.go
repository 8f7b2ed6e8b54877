package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// embeddedFeedOwner names the server in the change feed's leases on the
// embedded engine.
const embeddedFeedOwner = "embedded"

// embeddedReadGap is how often the change feed reads the embedded
// engine's stream while it is quiet.
const embeddedReadGap = 25 * time.Millisecond

// newFeed returns the server's part of the change feed on store's table
// (package changefeed), to run until the server stops: every server of
// the fleet runs one, and the leases in the table share the stream's
// shards and the workers among them. Workers that follow the content are
// added here, before it runs.
func newFeed(ctx context.Context, clientCfg storage.ClientConfig, store *storage.Store, hooks *webhooks.Service, tailStart func(context.Context) (int64, error), cfg *config, logger *slog.Logger) (*changefeed.Feed, error) {
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
	}
	feed := changefeed.New(store, streams, opts)
	// One server at a time sweeps the schedule: a scheduled post goes
	// live, with its post.published, within about a second of its time.
	feed.AddWorker(changefeed.Worker{Name: "schedule", Every: time.Second, Tick: func(ctx context.Context) error {
		_, err := store.GoLive(ctx)
		return err
	}})
	// One server at a time renders again the bodies another renderer
	// rendered; once done, a tick is one GetItem.
	feed.AddWorker(changefeed.Worker{Name: "rerender", Every: rerenderEvery, Tick: func(ctx context.Context) error {
		r, err := store.Rerender(ctx)
		if r.Rendered > 0 || r.Done {
			logger.Info("bodies rendered again", "rendered", r.Rendered, "stale", r.Stale, "done", r.Done, "render_version", store.RenderVersion())
		}
		return err
	}})
	// One server at a time delivers to webhooks: what the log brings,
	// and every second the retries that are due.
	// Its checkpoint stays before the events whose first attempts are
	// still queued, so none waits for its claim to lapse after a crash.
	feed.AddWorker(changefeed.Worker{Name: "webhooks", Events: hooks.HandleEvents, Tick: hooks.RetryDue, Every: time.Second, Hold: hooks.Hold})
	// One server at a time copies the comment counts onto the posts'
	// summaries: after a post's comment or post events, at most once a
	// second a post (storage/countsync.go).
	// A sync that fails is logged as the worker's tick and tried again
	// a second later.
	counts := store.NewCountSync()
	feed.AddWorker(changefeed.Worker{Name: "counts", Events: counts.Events, Tick: counts.Tick, Every: storage.CountSyncTick, Hold: counts.Hold})
	logger.Info("change feed", "owner", feed.Owner(), "event_retention", cfg.eventRetention, "read_stream", cfg.readStream)
	return feed, nil
}
