package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestViewDaysMoveOnceWhateverTheServers: a flush is one UpdateItem; the
// first flush on a later day leaves past days to a move of one
// TransactWriteItems; a server whose clock is behind adds to a day after
// it moved, and the next move carries the rest; two servers moving the
// same days move them once. Post.stats' days stay exact throughout.
func TestViewDaysMoveOnceWhateverTheServers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "counted"), e.clock.Now().Add(-time.Hour))
	day := e.clock.Now().UTC().Truncate(24 * time.Hour)
	flush := func(at time.Time, n int64, refs map[string]int64) storage.ViewTotals {
		t.Helper()
		var got storage.ViewTotals
		reqs := counted(func(ctx context.Context) {
			got = must[storage.ViewTotals](t)(e.store.FlushViews(ctx, storage.ViewBatch{PostID: p.ID, At: at, Views: n, Referrers: refs}))
		})
		if reqs["UpdateItem"] != 1 || len(reqs) != 1 {
			t.Fatalf("requests of a flush: %v, want one UpdateItem", reqs)
		}
		return got
	}
	move := func(tot storage.ViewTotals) {
		t.Helper()
		reqs := counted(func(ctx context.Context) { must[int](t)(e.store.MoveViewDays(ctx, tot)) })
		if reqs["TransactWriteItems"] != 1 || len(reqs) != 1 {
			t.Fatalf("requests of a move: %v, want one TransactWriteItems", reqs)
		}
	}
	stats := func(want ...int64) {
		t.Helper()
		got := must[[]storage.ViewDay](t)(e.store.PostViewDays(ctx, p.ID, day, day.AddDate(0, 0, len(want)-1)))
		byDay := map[string]int64{}
		for _, d := range got {
			byDay[d.Day.Format(time.DateOnly)] = d.Views
		}
		for i, w := range want {
			d := day.AddDate(0, 0, i).Format(time.DateOnly)
			if byDay[d] != w {
				t.Errorf("views of %s = %d, want %d", d, byDay[d], w)
			}
		}
	}

	if tot := flush(day.Add(time.Hour), 3, map[string]int64{"news.example.com": 2}); tot.Day != 3 || tot.PastDays() {
		t.Fatalf("first flush: %+v", tot)
	}
	stats(3)
	next := flush(day.Add(25*time.Hour), 2, nil)
	if next.Day != 2 || next.Total != 5 || !next.PastDays() {
		t.Fatalf("first flush of the next day: %+v", next)
	}
	stats(3, 2)
	move(next)
	stats(3, 2)
	got := must[[]storage.ViewDay](t)(e.store.PostViewDays(ctx, p.ID, day, day))
	if len(got) != 1 || got[0].Referrers["news.example.com"] != 2 {
		t.Errorf("referrers of the moved day: %+v", got)
	}

	// A server whose clock is behind adds to the day that moved.
	if late := flush(day.Add(24*time.Hour-time.Second), 4, nil); late.PastDays() {
		t.Fatalf("a late flush sees past days: %+v", late)
	}
	stats(7, 2)

	// Two servers flush on the third day and both try to move.
	a := flush(day.Add(49*time.Hour), 1, nil)
	b := flush(day.Add(49*time.Hour), 1, nil)
	if !a.PastDays() || !b.PastDays() {
		t.Fatalf("flushes of the third day see no past days: %+v %+v", a, b)
	}
	move(a)
	move(b) // refused: the views item changed since b read it
	stats(7, 2, 2)
	if c := flush(day.Add(50*time.Hour), 1, nil); c.PastDays() || c.Total != 12 {
		t.Fatalf("after the move: %+v", c)
	}
	stats(7, 2, 3)
}
