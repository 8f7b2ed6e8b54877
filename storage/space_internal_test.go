package storage

import "github.com/blogql/blog/storage/internal/keys"

// testKS is the key space of the default publication, which the internal
// tests' stores are in.
var testKS = keys.MustIn(DefaultPublication)

// WithMigrationStop makes Migrate read the table in pages of size items
// in its layout 5 step, and stop after pages pages, as a crash would
// (migrations.ErrStopped); pages 0 never stops.
func WithMigrationStop(pages, size int) Option {
	return func(s *Store) { s.migrationStop.pages, s.migrationStop.size = pages, size }
}
