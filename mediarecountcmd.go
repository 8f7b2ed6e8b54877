package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/telemetry"
)

// mediaCommand is the first argument of the media library's commands:
// "blog media recount [flags]".
const mediaCommand = "media"

// runMedia is the command "blog media <sub> [flags]". Its one
// subcommand, recount, opens the table the server would open with the
// same flags and environment and, in every publication (in the one
// -publication names by id or slug, with one Scan of the table in place
// of one a publication), sets the media library's counter from its
// items and adds the usage entries that posts, authors and the site need
// (storage.Store.RecountMedia), then prints a line a publication to
// stdout. It is for tables whose media predate the counter or usage
// tracking, safe beside running servers, and running it again changes
// nothing. It returns an error for an unknown subcommand or publication,
// wrong flags, a table of an older layout, or a failed read or write; -h
// prints the help.
func runMedia(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "recount" {
		return errors.New(`usage: blog media recount [-publication ID|SLUG] [server flags]: recount every publication's media library, or the one named`)
	}
	only, rest, err := cutFlag(args[1:], "publication")
	if err != nil {
		return err
	}
	cfg, err := parseConfig(rest, getenv, stdout)
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
	if only != "" {
		ids, err = namedPublication(ctx, store, only)
	}
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

// namedPublication returns the id of the publication ref names, by id
// (DefaultPublication included) or by slug, or an error when none has it.
func namedPublication(ctx context.Context, store *storage.Store, ref string) ([]string, error) {
	if ref == storage.DefaultPublication {
		return []string{ref}, nil
	}
	p, err := store.GetPublication(ctx, ref)
	if errors.Is(err, storage.ErrNotFound) {
		p, err = store.PublicationBySlug(ctx, ref)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("-publication %q: no publication has this id or slug", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("-publication %q: %w", ref, err)
	}
	return []string{p.ID}, nil
}

// cutFlag returns the value of the flag -name (or --name, as -name V or
// -name=V) in args and the arguments without it, for a command that
// passes the rest to the server's flags. It fails when the flag has no
// value or is given twice.
func cutFlag(args []string, name string) (value string, rest []string, err error) {
	found := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		flagName, v, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || flagName != name {
			rest = append(rest, a)
			continue
		}
		if found {
			return "", nil, fmt.Errorf("-%s given twice", name)
		}
		found = true
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, fmt.Errorf("-%s needs a value", name)
			}
			i++
			v = args[i]
		}
		if v == "" {
			return "", nil, fmt.Errorf("-%s needs a value", name)
		}
		value = v
	}
	return value, rest, nil
}
