package storage

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage/internal/keys"
)

// The previous and next post of a post, in the whole blog or in one
// category: the nearest visible post on either side in the same sort
// order the lists use, read from the feed's partition or the category's.

// AdjacentPost returns the visible post published just before p (newer
// false) or just after it (newer true) in the whole blog, or in the
// category with the slug category when that is not empty. It returns nil
// when there is none, or when p is not published. The whole blog costs
// one Query of the feed's partition; a category one Query.
func (s *Store) AdjacentPost(ctx context.Context, p *Post, category string, newer bool) (*Post, error) {
	partitions := s.ks.FeedPartitions()
	if category != "" {
		if err := validateSlug("slug", category); err != nil {
			return nil, err
		}
		partitions = []string{s.ks.CategoryPartition(category)}
	}
	if p.Status != StatusPublished {
		return nil, nil
	}
	sk := keys.PostSort(p.PublishedAt, p.ID)
	r := skRange{lo: keys.PrefixPost, hi: s.visibleBound(), skip: sk}
	if newer {
		r.lo = sk
	} else {
		r.hi = min(r.hi, sk)
	}
	if r.lo > r.hi {
		return nil, nil
	}
	found := make([][]postItem, len(partitions))
	g, gctx := errgroup.WithContext(ctx)
	for i, part := range partitions {
		g.Go(func() error {
			var err error
			found[i], _, err = s.rangeQuery(gctx, part, r, !newer, 1, nil)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var best *postItem
	for _, items := range found {
		for i := range items {
			if best == nil || (items[i].GSI1SK < best.GSI1SK) == newer {
				best = &items[i]
			}
		}
	}
	if best == nil {
		return nil, nil
	}
	return best.post(), nil
}
