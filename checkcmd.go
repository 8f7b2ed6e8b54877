package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/telemetry"
)

// checkCommand is the first argument that runs the table's consistency
// check instead of the server.
const checkCommand = "check"

// Exit codes of the check command.
const (
	checkClean     = 0
	checkViolation = 1
	checkFailed    = 2
)

// runCheck is the command "blog check [flags]": it opens the table the
// server would open with the same flags and environment, runs the
// store's consistency check on it (storage.Store.Check: every finding
// confirmed by a second read) and prints each finding on its own line to
// stdout. It only reads: it creates, migrates and seeds nothing. It
// returns checkClean when the table is consistent, checkViolation when a
// finding is confirmed, and an error (checkFailed) when the table cannot
// be read, is of an older layout, or the flags are wrong; -h prints the
// help and returns checkClean.
func runCheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) (int, error) {
	cfg, err := parseConfig(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return checkClean, nil
	}
	if err != nil {
		return checkFailed, err
	}
	// The server's DynamoDB and store options: Check compares every
	// stored body with what this server would render of it.
	db, err := openDynamoDB(ctx, cfg, getenv, &telemetry.Telemetry{}, slog.New(slog.DiscardHandler))
	if err != nil {
		return checkFailed, err
	}
	defer db.close()
	store := storage.New(db.client, cfg.table, storeOptions(cfg)...)
	layout, err := store.LayoutVersion(ctx)
	if err != nil {
		return checkFailed, err
	}
	if layout != storage.CurrentLayout {
		return checkFailed, fmt.Errorf("table %q has layout %d, this version checks layout %d: start the server (or -migrate only) to migrate it first", cfg.table, layout, storage.CurrentLayout)
	}
	found, err := store.Check(ctx)
	if err != nil {
		return checkFailed, fmt.Errorf("check table %q: %w", cfg.table, err)
	}
	for _, f := range found {
		fmt.Fprintln(stdout, f)
	}
	if len(found) > 0 {
		fmt.Fprintf(stdout, "table %q: %d findings confirmed by a second read\n", cfg.table, len(found))
		return checkViolation, nil
	}
	fmt.Fprintf(stdout, "table %q: consistent\n", cfg.table)
	return checkClean, nil
}
