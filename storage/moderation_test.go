package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestModerationDecisionsRace lets another moderator's decision land
// between a decision's read and its transaction, and sends opposite
// decisions at once: one decision takes effect, every other one is
// ErrNotPending, and a rejection is never overturned but by an approval
// that says so.
func TestModerationDecisionsRace(t *testing.T) {
	approve := func(ctx context.Context, s *storage.Store, ref storage.CommentRef) error {
		_, err := s.ApproveComment(ctx, ref)
		return err
	}
	overturn := func(ctx context.Context, s *storage.Store, ref storage.CommentRef) error {
		ref.OverturnRejection = true
		_, err := s.ApproveComment(ctx, ref)
		return err
	}
	reject := func(ctx context.Context, s *storage.Store, ref storage.CommentRef) error {
		_, err := s.RejectComment(ctx, ref)
		return err
	}
	type decision = func(ctx context.Context, s *storage.Store, ref storage.CommentRef) error
	cases := []struct {
		name         string
		rejectedFrom bool
		race, write  decision
		want         storage.CommentStatus
	}{
		{"an approval while the comment is rejected", false, reject, approve, storage.CommentRejected},
		{"an approval that may overturn while the comment is rejected", false, reject, overturn, storage.CommentRejected},
		{"a rejection while the comment is approved", false, approve, reject, storage.CommentPublished},
		{"a rejection while the comment is rejected", false, reject, reject, storage.CommentRejected},
		{"an approval while the comment is approved", false, approve, approve, storage.CommentPublished},
		{"an overturn while the rejection is overturned", true, overturn, overturn, storage.CommentPublished},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRaceEnv(t)
			e.blog()
			ctx := context.Background()
			held := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: e.published.ID,
				Reader: &storage.ReaderProfile{ID: "lin", Name: "Lin"}, Rules: storage.ReaderRules{Hold: true}, Body: "held"}))
			ref := storage.CommentRef{PostID: held.PostID, CommentID: held.ID}
			if c.rejectedFrom {
				must[*storage.Comment](t)(e.store.RejectComment(ctx, ref))
			}
			e.hooks.at("TransactWriteItems", 1, e.racing("decision", func(ctx context.Context, s *storage.Store) error { return c.race(ctx, s, ref) }))
			if err := c.write(ctx, e.store, ref); !errors.Is(err, storage.ErrNotPending) {
				t.Errorf("decision after another one: err = %v, want ErrNotPending", err)
			}
			got, errs := e.store.GetComments(ctx, []storage.CommentKey{{PostID: ref.PostID, CommentID: ref.CommentID}})
			if errs[0] != nil || got[0].Status != c.want {
				t.Errorf("comment = %+v, %v; want status %s", got[0], errs[0], c.want)
			}
			e.consistent()
		})
	}

	t.Run("four approvals and four rejections at once", func(t *testing.T) {
		e := newRaceEnv(t)
		e.blog()
		ctx := context.Background()
		for round := range 3 {
			held := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: e.published.ID,
				Reader: &storage.ReaderProfile{ID: "lin", Name: "Lin"}, Rules: storage.ReaderRules{Hold: true}, Body: fmt.Sprint("held ", round)}))
			ref := storage.CommentRef{PostID: held.PostID, CommentID: held.ID}
			var (
				wg        sync.WaitGroup
				start     = make(chan struct{})
				errs      = make([]error, 8)
				stores    = []*storage.Store{e.store, e.direct}
				decisions = []decision{approve, reject}
			)
			for i := range errs {
				wg.Go(func() {
					<-start
					errs[i] = decisions[i%2](ctx, stores[i/2%2], ref)
				})
			}
			close(start)
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, storage.ErrNotPending):
					t.Errorf("decision %d: err = %v, want ErrNotPending or success", i, err)
				}
			}
			equal(t, "decisions that took effect", won, 1)
			e.consistent()
		}
	})
}
