package storage

import (
	"context"

	"github.com/blogql/blog/storage/internal/keys"
)

// testKS is the key space of the default publication, which the internal
// tests' stores are in.
var testKS = keys.MustIn(DefaultPublication)

// WithMigrationStop makes Migrate read the table in pages of size items
// in its layout 5 step, and stop after pages pages, as a crash would
// (migrations.ErrStopped); pages 0 never stops.
func WithMigrationStop(pages, size int) Option {
	return func(s *Store) { s.migrationStop.pages, s.migrationStop.size = pages, size }
}

// ReadPostIn reads, through s, the post id of the publication of other:
// the tenant guard's test asks s for a key outside its space.
func ReadPostIn(ctx context.Context, s, other *Store, id string) error {
	var it map[string]any
	return s.db.Get(ctx, other.ks.Post(id), true, &it)
}
