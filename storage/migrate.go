package storage

import (
	"context"
	"fmt"

	"github.com/blogql/blog/storage/internal/keys"

	"github.com/blogql/blog/storage/internal/migrations"
)

// CurrentLayout is the version of the layout this package writes (doc.go,
// doc_layout.go); the layout steps that bring an older table to it are
// package migrations, each frozen in its own file.
const CurrentLayout = migrations.Current

// LayoutVersion returns the version of the table's layout: CurrentLayout
// once Migrate has run on it, 1 for a table without a layout item. It
// costs one GetItem and returns the DynamoDB error when that fails.
func (s *Store) LayoutVersion(ctx context.Context) (int, error) {
	return migrations.LayoutVersion(ctx, s.migrationEnv())
}

// Migrate brings a table written by an earlier version to the current
// layout, then records CurrentLayout in the layout item. A table already
// there costs one GetItem. Otherwise the steps to layout 4 read the table
// by Queries, and the step to layout 5 by a Scan (which the server's IAM
// policy lacks: docs/operations.md), and write what is missing:
//
//   - an author without a slug gets one from its name, as CreateAuthor
//     makes one, with its reservation, in one transaction that counts as
//     an edit of the author (its version and nameVer grow); authors go
//     one after another, oldest first, so of two of one name the older
//     gets the slug without a number;
//   - a post without slugs (no version of layout 2 or later ever wrote
//     it) is written again with its copies in one transaction, as layout
//     2 wrote a post, but without a new version or updatedAt: with its
//     slugs, its author's slug, what is derived from its body, and, when
//     published, one more post in its month on its author, its
//     categories and STATS. Writes of the current version count a post
//     by month only once it has slugs (see counterChanges), so the months
//     are exact whatever they do meanwhile. A post that has slugs already
//     (this version wrote it) gets its author's slug copied in, as a
//     rename does (refreshNames), when it has not;
//   - a comment without a version gets version 1, and a top-level one
//     with replies the copies of its first MaxReplyPage replies, in one
//     transaction with checks that none of them changed;
//   - the "-" entry of a scheduled map goes, and so do the empty strings
//     layout 1 left for a cleared bio, avatarUrl or description;
//   - a post scheduled after now without a go-live marker (layouts 1 and
//     2) gets its marker and its schedule item, in one transaction
//     conditional on the post as read, without a new version; the posts
//     are found among the author copies sorted after now, so a table of
//     layout 2 costs a Query per author and little more;
//   - a post of layout 3 (or brought to it by the steps before) gets its
//     body item and count item, and leaves the feed's four old
//     partitions for FEED;
//   - every item of the blog but the global ones moves under the prefix
//     of the Store's publication (PUB#<id>#), its GSI1 partition too, one
//     transaction an item that puts the new item unless a server of this
//     version wrote it meanwhile and deletes the old one, a Scan page at
//     a time with a checkpoint after each; the publication gets its
//     directory item. A table without a layout item and without authors
//     or categories is new: it gets the directory item, and no Scan.
//
// Every write is conditional on what was read, and one that meets a
// change made meanwhile reads again, so Migrate is safe beside live
// writes and beside other servers migrating the same table, and may be
// stopped at any point and run again: what was done is found done. It
// needs every server of the previous version stopped, as they write the
// old layout. It returns what it did, or the first error, with the
// layout item unwritten so the next run goes on.
func (s *Store) Migrate(ctx context.Context) (*Migration, error) {
	r, err := migrations.Run(ctx, s.migrationEnv())
	if err != nil {
		return nil, err
	}
	// A migration that ran puts the publication in the directory whole;
	// one with nothing to do stays one GetItem.
	if r.From < r.To {
		if err := s.ensureDirectory(ctx); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
	}
	m := Migration(*r)
	return &m, nil
}

// migrationEnv is what the layout steps work with: the table, without the
// tenant guard, as the steps read and write the keys of layouts before
// publications and move them into the Store's; the clock, the renderer,
// the Store's publication, and this version's refresh of a post's copied
// names for the posts it wrote before the migration, in the keys of the
// blog before publications (legacy).
func (s *Store) migrationEnv() *migrations.Env {
	return &migrations.Env{DB: s.db.Unconfined(), Now: s.Now, Render: s.render, Renamed: s.legacy().refreshNames,
		Publication: s.ks.ID(), StopAfter: s.migrationStop.pages, PageSize: s.migrationStop.size}
}

// legacy returns the Store in the keys of layout 4, before publications:
// the zero key space, whose keys have no prefix, on the table without the
// guard. Only the layout steps before 5 use it, through Env.Renamed.
func (s *Store) legacy() *Store {
	c := *s
	c.ks = keys.Space{}
	c.db = s.db.Unconfined()
	return &c
}
