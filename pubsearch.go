package main

import (
	"context"
	"log/slog"

	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
)

// newPublicationsSearch returns the search indexes of the publications
// other than the default (package search's Publications): in dir, the
// default publication's index's directory (newSearch), under
// publications/, one directory each; in memory when dir is "". At most
// -search-open-indexes are open at once. changed is called after each
// change of what one finds.
func newPublicationsSearch(store *storage.Store, cfg *config, dir string, changed func(), logger *slog.Logger) (*search.Publications, error) {
	return search.NewPublications(store, search.PublicationsOptions{
		Options: search.Options{Dir: dir, Language: cfg.searchLanguage, Table: cfg.table, Timeout: cfg.requestTimeout, Logger: logger, Changed: changed},
		MaxOpen: cfg.searchOpenIndexes,
	})
}

// runSearch runs the default publication's search index and the other
// publications' until ctx ends.
func (w *workers) runSearch(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.pubSearch.Run(ctx)
	}()
	w.searcher.Run(ctx)
	<-done
}
