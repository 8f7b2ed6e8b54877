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

// mediaCommand is the first argument of the media library's commands:
// "blog media recount [flags]".
const mediaCommand = "media"

// runMedia is the command "blog media <sub> [flags]". Its one
// subcommand, recount, opens the table the server would open with the
// same flags and environment and, in every publication, sets the media
// library's counter from its items and adds the usage entries that
// posts, authors and the site need (storage.Store.RecountMedia), then
// prints a line a publication to stdout. It is for tables whose media
// predate the counter or usage tracking, safe beside running servers,
// and running it again changes nothing. It returns an error for an
// unknown subcommand, wrong flags, a table of an older layout, or a
// failed read or write; -h prints the help.
func runMedia(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "recount" {
		return errors.New(`usage: blog media recount [server flags]: recount every publication's media library`)
	}
	cfg, err := parseConfig(args[1:], getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	db, err := openDynamoDB(ctx, cfg, getenv, &telemetry.Telemetry{}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer db.close()
	store := storage.New(db.client, cfg.table, storeOptions(cfg)...)
	layout, err := store.LayoutVersion(ctx)
	if err != nil {
		return err
	}
	if layout != storage.CurrentLayout {
		return fmt.Errorf("table %q has layout %d, this version recounts layout %d: start the server (or -migrate only) to migrate it first", cfg.table, layout, storage.CurrentLayout)
	}
	ids, err := publicationIDs(ctx, store)
	if err != nil {
		return err
	}
	for _, id := range ids {
		pub, err := store.In(id)
		if err != nil {
			return err
		}
		r, err := pub.RecountMedia(ctx)
		if err != nil {
			return fmt.Errorf("publication %q: %w", id, err)
		}
		fmt.Fprintf(stdout, "publication %q: %d files, %d bytes (the counter held %d files, %d bytes); %d uses added\n",
			id, r.After.Files, r.After.Bytes, r.Before.Files, r.Before.Bytes, r.UsesAdded)
	}
	return nil
}

// publicationIDs returns the ids of the Store's publication and of every
// publication in the directory.
func publicationIDs(ctx context.Context, store *storage.Store) ([]string, error) {
	ids := []string{storage.DefaultPublication}
	seen := map[string]bool{storage.DefaultPublication: true}
	for after := ""; ; {
		page, err := store.ListPublications(ctx, storage.PageArgs{Limit: 100, After: after})
		if err != nil {
			return nil, fmt.Errorf("list publications: %w", err)
		}
		for i, p := range page.Items {
			if !seen[p.ID] {
				seen[p.ID] = true
				ids = append(ids, p.ID)
			}
			after = page.Cursors[i]
		}
		if !page.HasNext || len(page.Items) == 0 {
			return ids, nil
		}
	}
}
