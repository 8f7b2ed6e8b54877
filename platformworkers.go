package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/blogql/blog/storage"
)

// The workers of the whole platform: "schedule" and "rerender" run on one
// server of the fleet at a time, as every worker does, and cover every
// publication of the table (docs/platform-operations.md).

// scheduleTick returns the "schedule" worker's Tick on store: every
// publication's scheduled posts go live within about a second of their
// time, with their post.published, from the go-live index (one Query a
// tick, however many publications). The first tick of this server first
// indexes the schedule items an earlier version wrote (a walk of the
// publications' directory); until it has done that whole, each tick tries
// it again, and sweeps the index all the same, so a publication that
// fails the walk holds up no other's posts.
func scheduleTick(store *storage.Store, logger *slog.Logger) func(context.Context) error {
	indexed := false
	return func(ctx context.Context) error {
		var indexErr error
		if !indexed {
			n, err := store.IndexSchedule(ctx)
			indexed, indexErr = err == nil, err
			if n > 0 {
				logger.Info("schedule items added to the go-live index", "items", n)
			}
		}
		_, err := store.GoLive(ctx)
		return errors.Join(indexErr, err)
	}
}
