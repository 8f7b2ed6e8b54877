package storage

import "github.com/blogql/blog/storage/internal/keys"

// testKS is the key space of the default publication, which the internal
// tests' stores are in.
var testKS = keys.MustIn(DefaultPublication)

// WithMigrationStop makes Migrate stop its layout 5 step after pages
// pages of its Scan, as a crash would (migrations.ErrStopped).
func WithMigrationStop(pages int) Option {
	return func(s *Store) { s.stopMigrationAfter = pages }
}
