package storage

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// countsFixture is a published post with every kind of copy (two
// authors', two categories', a tag's and the featured one) on the test's
// backend, and the counts worker's state with a clock of the test's.
type countsFixture struct {
	t     *testing.T
	ctx   context.Context
	s     *Store
	post  string
	ks    []key // the post's copies
	now   time.Time
	count *CountSync
	next  int64 // the next event's position
}

func newCountsFixture(t *testing.T) *countsFixture {
	ctx := context.Background()
	f := &countsFixture{t: t, ctx: ctx, now: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC), next: 1}
	clock := func() time.Time { return f.now }
	db, table := testBackend(t, clock, "counts")
	f.s = New(db, table, WithClock(clock))
	f.must(f.s.CreateTable(ctx))
	for _, id := range []string{"ada", "bob"} {
		_, err := f.s.CreateAuthor(ctx, NewAuthor{ID: id, Name: strings.ToUpper(id)})
		f.must(err)
	}
	for _, slug := range []string{"go", "aws"} {
		_, err := f.s.CreateCategory(ctx, NewCategory{Slug: slug, Name: slug})
		f.must(err)
	}
	p, err := f.s.CreatePost(ctx, NewPost{AuthorID: "ada", CoAuthors: []string{"bob"}, Title: "Counted", Slug: "counted",
		Body: "Hi.", Categories: []string{"go", "aws"}, Tags: []string{"dynamodb"}})
	f.must(err)
	_, err = f.s.Publish(ctx, PublishPost{ID: p.ID})
	f.must(err)
	_, err = f.s.SetFeatured(ctx, FeaturePost{ID: p.ID, Featured: true})
	f.must(err)
	f.post = p.ID
	var it postItem
	f.must(f.s.db.Get(ctx, testKS.Post(p.ID), true, &it))
	f.ks = it.copyKeys(testKS)
	if len(f.ks) != 6 {
		t.Fatalf("the post has copies %v, want 6", f.ks)
	}
	f.count = f.s.NewCountSync()
	f.count.now = clock
	return f
}

func (f *countsFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// comment adds a comment to the post and returns its event, at the next
// position of the log.
func (f *countsFixture) comment() LoggedEvent {
	f.t.Helper()
	c, err := f.s.AddComment(f.ctx, NewComment{PostID: f.post, AuthorID: "ada", Body: "Hello."})
	f.must(err)
	e := LoggedEvent{Position: f.next, Event: Event{Type: EventCommentAdded, Data: EventData{PostID: f.post, CommentID: c.ID}}}
	f.next++
	return e
}

// drift sets the comment count of the items keys to n, as a comment write
// that leaves the copies to the worker, or a bug, would leave them.
func (f *countsFixture) drift(n int, ks ...key) {
	f.t.Helper()
	for _, k := range ks {
		t := f.s.db.NewTxn()
		f.must(t.Update(k, expression.Set(expression.Name("commentCount"), expression.Value(n)), nil, nil))
		f.must(f.s.db.Exec(f.ctx, t))
	}
}

// counts returns the comment count of each item of keys, -1 for one that
// does not exist.
func (f *countsFixture) counts(ks ...key) []int {
	f.t.Helper()
	out := make([]int, len(ks))
	for i, k := range ks {
		var c struct {
			CommentCount int `dynamodbav:"commentCount"`
		}
		switch err := f.s.db.Get(f.ctx, k, true, &c); {
		case errors.Is(err, ErrNotFound):
			out[i] = -1
		case err != nil:
			f.t.Fatal(err)
		default:
			out[i] = c.CommentCount
		}
	}
	return out
}

// events gives events to the worker and returns the UpdateItem calls it
// made.
func (f *countsFixture) events(events ...LoggedEvent) int {
	f.t.Helper()
	ctx, c := WithRequestCounter(f.ctx)
	f.must(f.count.Events(ctx, events))
	return c.ByOperation()["UpdateItem"]
}

// tick runs the worker's tick and returns the UpdateItem calls it made.
func (f *countsFixture) tick() int {
	f.t.Helper()
	ctx, c := WithRequestCounter(f.ctx)
	f.must(f.count.Tick(ctx))
	return c.ByOperation()["UpdateItem"]
}

func TestCountSyncCopiesTheCountOntoEveryCopy(t *testing.T) {
	f := newCountsFixture(t)
	e := f.comment()
	f.comment()
	f.drift(0, f.ks...)
	if got := f.events(e); got != len(f.ks)+1 {
		t.Errorf("the sync made %d updates, want one a copy and the post item (%d)", got, len(f.ks)+1)
	}
	for i, n := range f.counts(f.ks...) {
		if n != 2 {
			t.Errorf("copy %v counts %d comments, want 2", f.ks[i], n)
		}
	}
	if bad, err := f.s.Check(f.ctx); err != nil || len(bad) > 0 {
		t.Errorf("check: %v %v", bad, err)
	}
	t.Run("a sync that finds every copy right reads the post, its copies and the count, and writes nothing", func(t *testing.T) {
		f.now = f.now.Add(CountSyncEvery)
		ctx, c := WithRequestCounter(f.ctx)
		f.must(f.count.Events(ctx, []LoggedEvent{{Position: f.next, Event: Event{Type: EventPostEdited, Data: EventData{PostID: f.post}}}}))
		if got, want := c.ByOperation(), map[string]int{"BatchGetItem": 3}; !maps.Equal(got, want) {
			t.Errorf("requests %v, want %v", got, want)
		}
	})
	t.Run("events of other kinds and posts that are gone sync nothing", func(t *testing.T) {
		f.now = f.now.Add(CountSyncEvery)
		f.drift(7, f.ks[0])
		got := f.events(
			LoggedEvent{Position: f.next, Event: Event{Type: EventCommentEdited, Data: EventData{PostID: f.post}}},
			LoggedEvent{Position: f.next + 1, Event: Event{Type: EventPostCountsUpdated, Data: EventData{PostID: f.post}}},
			LoggedEvent{Position: f.next + 2, Event: Event{Type: EventCommentAdded, Data: EventData{PostID: "gone"}}})
		if got != 0 || f.count.Pending() != 0 {
			t.Errorf("%d updates, %d pending, want none", got, f.count.Pending())
		}
		f.drift(2, f.ks[0])
	})
}

// TestCountSyncReadsThePostsOfATickTogether: the posts a tick syncs
// share their reads, three BatchGetItem calls whatever their number, and
// each gets its own writes, its copies' and its post item's.
func TestCountSyncReadsThePostsOfATickTogether(t *testing.T) {
	f := newCountsFixture(t)
	posts := map[string][]key{f.post: f.ks}
	var events []LoggedEvent
	for _, slug := range []string{"second", "third"} {
		p, err := f.s.CreatePost(f.ctx, NewPost{AuthorID: "bob", Title: slug, Slug: slug, Body: "Hi.", Categories: []string{"aws"}})
		f.must(err)
		_, err = f.s.Publish(f.ctx, PublishPost{ID: p.ID})
		f.must(err)
		var it postItem
		f.must(f.s.db.Get(f.ctx, testKS.Post(p.ID), true, &it))
		posts[p.ID] = it.copyKeys(testKS)
		c, err := f.s.AddComment(f.ctx, NewComment{PostID: p.ID, AuthorID: "ada", Body: "Hello."})
		f.must(err)
		events = append(events, LoggedEvent{Position: f.next, Event: Event{Type: EventCommentAdded, Data: EventData{PostID: p.ID, CommentID: c.ID}}})
		f.next++
	}
	events = append(events, f.comment())
	writes := 0
	for _, ks := range posts {
		f.drift(0, ks...)
		writes += len(ks) + 1 // and the post item
	}
	ctx, c := WithRequestCounter(f.ctx)
	f.must(f.count.Events(ctx, events))
	if got, want := c.ByOperation(), map[string]int{"BatchGetItem": 3, "UpdateItem": writes}; !maps.Equal(got, want) {
		t.Errorf("a tick of %d posts made %v, want %v", len(posts), got, want)
	}
	for id, ks := range posts {
		for i, n := range f.counts(ks...) {
			if n != 1 {
				t.Errorf("post %s: copy %v counts %d comments, want 1", id, ks[i], n)
			}
		}
	}
	if bad, err := f.s.Check(f.ctx); err != nil || len(bad) > 0 {
		t.Errorf("check: %v %v", bad, err)
	}
}

func TestCountSyncWritesACopyAtMostOnceAPeriod(t *testing.T) {
	f := newCountsFixture(t)
	// Two seconds of comments, one batch of events every 100 ms, each
	// comment's count left off the copies: the worker syncs at the first
	// batch, and then once each CountSyncEvery.
	writes := map[int]int{} // by period
	start := f.now
	for i := range 20 {
		f.now = start.Add(time.Duration(i) * 100 * time.Millisecond)
		e := f.comment()
		f.drift(0, f.ks...)
		period := int(f.now.Sub(start) / CountSyncEvery)
		writes[period] += f.events(e)
		writes[period] += f.tick()
		if hold := f.count.Hold(e.Position); f.count.Pending() > 0 && hold >= e.Position {
			t.Errorf("at %s the checkpoint may move to %d, past the event of a post still to sync", f.now.Sub(start), hold)
		}
	}
	for p, n := range writes {
		if n > len(f.ks)+1 {
			t.Errorf("period %d: %d updates, want at most one a copy and the post item (%d)", p, n, len(f.ks)+1)
		}
	}
	if f.count.Pending() != 1 {
		t.Fatalf("%d posts pending after the burst, want the post", f.count.Pending())
	}
	f.now = start.Add(2 * CountSyncEvery)
	if got := f.tick(); got != len(f.ks)+1 {
		t.Errorf("the last sync made %d updates, want %d", got, len(f.ks)+1)
	}
	for i, n := range f.counts(f.ks...) {
		if n != 20 {
			t.Errorf("copy %v counts %d comments, want 20", f.ks[i], n)
		}
	}
	if f.count.Pending() != 0 || f.count.Hold(f.next-1) != f.next-1 {
		t.Errorf("after the last sync: %d pending, checkpoint held at %d, want none and %d", f.count.Pending(), f.count.Hold(f.next-1), f.next-1)
	}
}

func TestCountSyncLeavesADeletedCopyDeleted(t *testing.T) {
	f := newCountsFixture(t)
	e := f.comment()
	featured := testKS.FeaturedCopy(f.post)
	tx := f.s.db.NewTxn()
	f.must(tx.Delete(featured, nil, nil))
	f.must(f.s.db.Exec(f.ctx, tx))
	var others []key
	for _, k := range f.ks {
		if k != featured {
			others = append(others, k)
		}
	}
	f.drift(0, others...)
	if got := f.events(e); got != len(f.ks) {
		t.Errorf("%d updates, want one for each copy but the deleted one, and the post item (%d)", got, len(f.ks))
	}
	if n := f.counts(featured)[0]; n != -1 {
		t.Errorf("the deleted featured copy is back with %d comments", n)
	}
	t.Run("a copy deleted between the read and the write is not made again", func(t *testing.T) {
		var out CountSynced
		f.must(f.s.setCounts(f.ctx, featured, 0, 1, -1, -1, &out))
		if out.Wrote != 0 || out.Stale != 1 || f.counts(featured)[0] != -1 {
			t.Errorf("wrote %d, stale %d, featured copy %d, want 0, 1 and none", out.Wrote, out.Stale, f.counts(featured)[0])
		}
	})
}

func TestCheckAllowsACountToLag(t *testing.T) {
	f := newCountsFixture(t)
	f.comment()
	f.comment()
	lagging := f.ks[2]
	var waited time.Duration
	for _, c := range []struct {
		name   string
		during func() // what happens while the checker waits
		want   string
	}{
		{"a copy synced within the allowed lag is no report", func() {
			_, err := f.s.SyncCounts(f.ctx, f.post)
			f.must(err)
		}, ""},
		{"a copy still behind after the allowed lag is reported with its lag", func() {}, "lagging over"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.drift(1, lagging)
			f.s.lagWait = func(ctx context.Context, d time.Duration) error {
				waited = d
				c.during()
				return nil
			}
			bad, err := f.s.Check(f.ctx)
			f.must(err)
			if waited != CountLag {
				t.Errorf("the checker waited %s, want CountLag (%s)", waited, CountLag)
			}
			switch {
			case c.want == "" && len(bad) > 0:
				t.Errorf("reported %v", bad)
			case c.want != "" && (len(bad) != 1 || !strings.Contains(bad[0], c.want) || !strings.Contains(bad[0], lagging.SK) || !strings.Contains(bad[0], "allowed 5s")):
				t.Errorf("reported %v, want the copy %v %s", bad, lagging, c.want)
			}
		})
	}
	t.Run("another difference than the count is reported at once", func(t *testing.T) {
		_, err := f.s.SyncCounts(f.ctx, f.post)
		f.must(err)
		tx := f.s.db.NewTxn()
		f.must(tx.Update(lagging, expression.Set(expression.Name("title"), expression.Value("Other")).
			Set(expression.Name("commentCount"), expression.Value(0)), nil, nil))
		f.must(f.s.db.Exec(f.ctx, tx))
		waited = 0
		bad, err := f.s.Check(f.ctx)
		f.must(err)
		if waited != 0 || len(bad) != 1 || !strings.Contains(bad[0], "disagrees") {
			t.Errorf("waited %s, reported %v, want no wait and the copy's disagreement", waited, bad)
		}
	})
}
