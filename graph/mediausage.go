package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
)

// The media library's quota and usage: the storage keeps the counter,
// package media the quota.

// mediaUsage answers Query.mediaUsage for admins: one read of the counter.
func (r *Resolver) mediaUsage(ctx context.Context) (*model.MediaUsage, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	lib, err := r.library()
	if err != nil {
		return nil, err
	}
	u, err := r.store.MediaUsage(ctx)
	if err != nil {
		return nil, err
	}
	q := lib.Quota()
	out := &model.MediaUsage{Bytes: int(u.Bytes), Files: int(u.Files)}
	if q.Bytes > 0 {
		out.BytesLimit = new(int(q.Bytes))
	}
	if q.Files > 0 {
		out.FilesLimit = new(int(q.Files))
	}
	return out, nil
}
