package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/storage"
)

// readyTable makes the table where cfg asks (by default everywhere but on
// AWS), migrates it as -migrate says, and seeds the demo blog where
// -seed-demo says (by default into a new table of the embedded engine).
func readyTable(ctx context.Context, cfg *config, store *storage.Store, logger *slog.Logger) (fresh bool, err error) {
	backend := cfg.backend()
	if cfg.createTable.or(backend != backendAWS) {
		if err := store.CreateTable(ctx); err != nil {
			return false, err
		}
	}
	seed := cfg.seedDemo.value
	if !cfg.seedDemo.set && backend == backendEmbedded && cfg.migrate != migrateOnly {
		// The demo goes into a new table only: a blog kept in the data
		// file stays as its users left it.
		if seed, err = store.Empty(ctx); err != nil {
			return false, err
		}
	}
	if fresh, err = migrateLayout(ctx, cfg.migrate, store, logger); err != nil || cfg.migrate == migrateOnly {
		return fresh, err
	}
	if seed {
		start := time.Now()
		if err := demo.Seed(ctx, store, time.Now()); err != nil {
			return false, err
		}
		if err := demo.SeedPlatform(ctx, store, time.Now()); err != nil {
			return false, err
		}
		logger.Info("demo blog seeded", "duration", time.Since(start).Round(time.Millisecond))
	}
	return fresh, nil
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
// stops half-way is finished by the next. It reports whether the table
// was new: one without a layout, with nothing to migrate, only gets the
// current layout's mark, which is not worth a line of the log.
func migrateLayout(ctx context.Context, mode string, store *storage.Store, logger *slog.Logger) (fresh bool, err error) {
	if mode == migrateOff {
		v, err := store.LayoutVersion(ctx)
		if err != nil {
			return false, err
		}
		if v < storage.CurrentLayout {
			logger.Warn("the table was written by an earlier version and is not migrated: start a server with -migrate=only (or auto) to migrate it",
				"layout", v, "current_layout", storage.CurrentLayout)
		}
		return false, nil
	}
	start := time.Now()
	m, err := store.Migrate(ctx)
	if err != nil {
		return false, fmt.Errorf("migrate the table to layout %d: %w; start the server again to go on", storage.CurrentLayout, err)
	}
	fresh = m.From < m.To && m.Authors+m.Posts+m.Comments+m.Counters+m.Scheduled+m.Split+m.Moved == 0 && len(m.Unrendered) == 0
	if m.From < m.To && !fresh {
		logger.Info("table migrated", "from_layout", m.From, "to_layout", m.To, "authors", m.Authors, "posts", m.Posts,
			"comments", m.Comments, "counters", m.Counters, "scheduled", m.Scheduled, "split", m.Split, "moved", m.Moved, "duration", time.Since(start).Round(time.Millisecond))
	}
	// Posts with a locale written before its lists by category, tag and
	// author existed get their copies there, and pages with a locale
	// written before the lists of pages by locale theirs, in every
	// publication; a table done costs a Query and two GetItems a
	// publication.
	lc, err := store.MigrateAllLocaleCopies(ctx)
	if err != nil {
		return false, fmt.Errorf("write the locale copies of older posts: %w; start the server again to go on", err)
	}
	if lc.Posts > 0 {
		logger.Info("posts with a locale got their copies in its lists", "posts", lc.Posts, "copies", lc.Copies)
	}
	if lc.Pages > 0 {
		logger.Info("pages with a locale got their copies in its list", "pages", lc.Pages)
	}
	// Comments, reactions and memberships written before readers' trails
	// existed get their entries, so deleting an account finds them; a
	// table done costs a Query and a GetItem a publication.
	tr, err := store.MigrateAllTrails(ctx)
	if err != nil {
		return false, fmt.Errorf("write the trail entries of older comments, reactions and memberships: %w; start the server again to go on", err)
	}
	if tr.Entries > 0 {
		logger.Info("readers' older comments, reactions and memberships got their trail entries", "entries", tr.Entries)
	}
	// Staff roles granted before roles had their trail entries get them,
	// so deleting an account takes its roles away; a table done costs a
	// Query and a GetItem a publication.
	st, err := store.MigrateAllStaffTrails(ctx)
	if err != nil {
		return false, fmt.Errorf("write the trail entries of older staff roles: %w; start the server again to go on", err)
	}
	if st.Entries > 0 {
		logger.Info("older staff roles got their trail entries", "entries", st.Entries)
	}
	if len(m.Unrendered) > 0 {
		logger.Warn("posts whose body renders to more HTML than a post may hold were migrated without it; edit their bodies",
			"posts", m.Unrendered)
	}
	if mode == migrateOnly {
		logger.Info("the table is in the current layout; exiting (-migrate=only)", "layout", storage.CurrentLayout)
	}
	return fresh, nil
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
