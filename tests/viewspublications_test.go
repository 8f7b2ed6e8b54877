package tests

import (
	"context"
	"testing"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/views"
)

// publishedIn returns the id of a post published in store's publication,
// by an author made for it.
func publishedIn(t *testing.T, store *storage.Store, title string) string {
	t.Helper()
	ctx := context.Background()
	a, err := store.CreateAuthor(ctx, storage.NewAuthor{Name: "Writer of " + title})
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.CreatePost(ctx, storage.NewPost{AuthorID: a.ID, Title: title, Body: "Words."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Publish(ctx, storage.PublishPost{ID: p.ID, ExpectedVersion: p.Version}); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// TestViewsOfPublicationsFlushIntoTheirOwn: the counter of a
// publication (Counter.In) counts its posts only, a post of another
// publication as a missing one, and the one flush of the server's counter
// writes each publication's views into that publication.
func TestViewsOfPublicationsFlushIntoTheirOwn(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	pub, err := s.store.CreatePublication(ctx, storage.NewPublication{Slug: "beta", Title: "Beta"})
	if err != nil {
		t.Fatal(err)
	}
	storeB, err := s.store.In(pub.ID)
	if err != nil {
		t.Fatal(err)
	}
	postA, postB := publishedIn(t, s.store, "On A"), publishedIn(t, storeB, "On B")

	counter := views.New(s.store, views.Options{})
	onB := counter.In(storeB)
	for _, c := range []struct {
		counter *views.Counter
		post    string
		want    views.Outcome
	}{
		{onB, postB, views.Counted},
		{onB, postA, views.Hidden},
		{counter, postB, views.Hidden},
		{counter, postA, views.Counted},
		{onB, postB, views.Duplicate},
	} {
		if got := c.counter.Record(ctx, views.Hit{PostID: c.post, IP: "192.0.2.1", UserAgent: browser}); got != c.want {
			t.Errorf("a view of %s = %s, want %s", c.post, got, c.want)
		}
	}
	// One flush, on either counter, writes both publications' views.
	if err := onB.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what  string
		store *storage.Store
		post  string
		want  int64
	}{
		{"B's post on B", storeB, postB, 1},
		{"A's post on A", s.store, postA, 1},
		{"A's post on B", storeB, postA, 0},
		{"B's post on A", s.store, postB, 0},
	} {
		n, err := c.store.ViewCounts(ctx, []string{c.post})
		if err != nil {
			t.Fatal(err)
		}
		if n[0] != c.want {
			t.Errorf("%s: %d views, want %d", c.what, n[0], c.want)
		}
	}
}
