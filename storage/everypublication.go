package storage

import (
	"context"
	"fmt"
)

// inEveryPublication calls fn with the Store of each publication that
// publicationIDs returns, the Store's own first, and stops at fn's first
// error, which it returns with the publication's id. An error listing
// the publications it returns under what.
func (s *Store) inEveryPublication(ctx context.Context, what string, fn func(*Store) error) error {
	ids, err := s.publicationIDs(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, id := range ids {
		st, err := s.In(id)
		if err != nil {
			return err
		}
		if err := fn(st); err != nil {
			return fmt.Errorf("publication %s: %w", id, err)
		}
	}
	return nil
}

// publicationIDs returns the id of the Store's publication, then those
// of every other publication of the table's directory (ListPublications,
// a Query of 100 a page): what the migrations at start walk.
func (s *Store) publicationIDs(ctx context.Context) ([]string, error) {
	ids := []string{s.ks.ID()}
	for p := (PageArgs{Limit: MaxPageSize}); ; {
		res, err := s.ListPublications(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("list publications: %w", err)
		}
		for _, pub := range res.Items {
			if pub.ID != s.ks.ID() {
				ids = append(ids, pub.ID)
			}
		}
		if !res.HasNext {
			return ids, nil
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
}
