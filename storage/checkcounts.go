package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// CountLag is how long the invariant checker lets a summary's comment
// count lag the post's authoritative count (doccounts.go): the counts
// worker syncs a post within about CountSyncEvery of its last event.
const CountLag = 5 * time.Second

// WithCountLag makes Check let summaries' comment counts and page
// indexes (pagesync.go) lag for d instead of CountLag.
func WithCountLag(d time.Duration) Option {
	return func(s *Store) { s.countLag = d }
}

// checkCountLag reads again, after the allowed lag, the posts whose copies
// keys (by post id) Check found with another comment count than the
// post's, and returns a line for each copy, and each post item, whose
// count still differs from the authoritative one, naming how long it has
// been seen to lag. It fails when a read fails.
func (s *Store) checkCountLag(ctx context.Context, lagging map[string][]key) ([]string, error) {
	if len(lagging) == 0 {
		return nil, nil
	}
	seen := time.Now()
	lag := s.countLag
	if lag == 0 {
		lag = CountLag
	}
	wait := s.lagWait
	if wait == nil {
		wait = sleepFor
	}
	if err := wait(ctx, lag); err != nil {
		return nil, err
	}
	var bad []string
	for _, id := range slices.Sorted(maps.Keys(lagging)) {
		comments, threads, err := s.readCommentCount(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // deleted with its copies since
		case err != nil:
			return nil, fmt.Errorf("check: %w", err)
		}
		lagged := func(what string, has int64) {
			bad = append(bad, fmt.Sprintf("%s of post %s counts %d comments, the post has %d: lagging over %s (allowed %s)",
				what, id, has, comments, time.Since(seen).Round(time.Millisecond), lag))
		}
		ks := append([]key{s.ks.Post(id)}, lagging[id]...)
		found, err := s.db.BatchGet(ctx, ks, true)
		if err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
		for i, k := range ks {
			it, ok := found[k]
			if !ok {
				continue
			}
			var c struct {
				CommentCount int64 `dynamodbav:"commentCount"`
				ThreadCount  int64 `dynamodbav:"threadCount"`
			}
			if err := attributevalue.UnmarshalMap(it, &c); err != nil {
				return nil, fmt.Errorf("check: decode %s/%s: %w", k.PK, k.SK, err)
			}
			switch {
			case i == 0 && (c.CommentCount != int64(comments) || c.ThreadCount != int64(threads)):
				lagged("the post item", c.CommentCount)
			case i > 0 && c.CommentCount != int64(comments):
				lagged(fmt.Sprintf("copy %s/%s", k.PK, k.SK), c.CommentCount)
			}
		}
	}
	return bad, nil
}

// sleepFor waits d, and fails with ctx's error when ctx ends first.
func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
