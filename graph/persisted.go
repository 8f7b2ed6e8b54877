package graph

import (
	"context"
	"errors"
	"time"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
)

// persistedQueries keeps the automatic persisted queries of gqlhttp in the
// table (storage.PersistQuery), so a restart, or any server of the fleet,
// knows what one server was sent.
type persistedQueries struct{ store *storage.Store }

var _ gqlhttp.PersistedQueryStore = persistedQueries{}

// LoadPersistedQuery returns the live query of hash, found false when the
// table has none.
func (p persistedQueries) LoadPersistedQuery(ctx context.Context, hash string) (string, time.Time, bool, error) {
	q, err := p.store.PersistedQuery(ctx, hash)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return "", time.Time{}, false, nil
	case err != nil:
		return "", time.Time{}, false, err
	}
	return q.Query, q.RefreshAt(), true, nil
}

// SavePersistedQuery registers query under hash.
func (p persistedQueries) SavePersistedQuery(ctx context.Context, hash, query string) (time.Time, error) {
	q, err := p.store.PersistQuery(ctx, hash, query)
	if err != nil {
		return time.Time{}, err
	}
	return q.RefreshAt(), nil
}

// RefreshPersistedQuery moves the expiry of hash's registration on.
func (p persistedQueries) RefreshPersistedQuery(ctx context.Context, hash string) (time.Time, error) {
	exp, err := p.store.RefreshPersistedQuery(ctx, hash)
	if err != nil {
		return time.Time{}, err
	}
	return storage.PersistedQuery{Hash: hash, ExpiresAt: exp}.RefreshAt(), nil
}
