package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestPublicationStatusAndTitle: a publication is suspended and made
// active again, and renamed, each with one conditional write; the same
// call again writes nothing; bad input, an unknown publication and
// suspending the default one change nothing.
func TestPublicationStatusAndTitle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "alpha", Title: "Alpha", Hosts: []string{"alpha.example"}}))

	var got *storage.Publication
	n := counted(func(ctx context.Context) {
		got = must[*storage.Publication](t)(e.store.SetPublicationStatus(ctx, p.ID, storage.PublicationSuspended))
	})
	equal(t, "requests of a suspension", fmt.Sprint(n), "map[GetItem:1 TransactWriteItems:1]")
	if !got.Suspended() || got.Version != p.Version+1 {
		t.Errorf("suspended = %+v", got)
	}
	n = counted(func(ctx context.Context) {
		got = must[*storage.Publication](t)(e.store.SetPublicationStatus(ctx, p.ID, storage.PublicationSuspended))
	})
	equal(t, "requests of the same status again", fmt.Sprint(n), "map[GetItem:1]")
	equal(t, "version after the same status", got.Version, p.Version+1)
	if !must[bool](t)(must[*storage.Store](t)(e.store.In(p.ID)).Suspended(ctx)) {
		t.Error("Suspended = false after the suspension")
	}

	for _, c := range []struct {
		name, field string
		err         error
	}{
		{"a status that is none", "status", errOf(e.store.SetPublicationStatus(ctx, p.ID, "paused"))},
		{"the default publication suspended", "id", errOf(e.store.SetPublicationStatus(ctx, storage.DefaultPublication, storage.PublicationSuspended))},
		{"an empty title", "title", errOf(e.store.SetPublicationTitle(ctx, p.ID, " "))},
		{"a title too long", "title", errOf(e.store.SetPublicationTitle(ctx, p.ID, strings.Repeat("t", storage.MaxTitleLength+1)))},
		{"a title of two lines", "title", errOf(e.store.SetPublicationTitle(ctx, p.ID, "a\nb"))},
	} {
		if !isValidation(c.err, c.field) {
			t.Errorf("%s: %v, want a ValidationError on %s", c.name, c.err, c.field)
		}
	}
	for _, id := range []string{"0190f0f0-0000-7000-8000-000000000000", "a#b", ""} {
		if err := errOf(e.store.SetPublicationStatus(ctx, id, storage.PublicationActive)); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("status of %q: %v, want ErrNotFound", id, err)
		}
		if err := errOf(e.store.SetPublicationTitle(ctx, id, "T")); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("title of %q: %v, want ErrNotFound", id, err)
		}
	}
	if cur := must[*storage.Publication](t)(e.store.GetPublication(ctx, p.ID)); cur.Title != "Alpha" || !cur.Suspended() || cur.Version != p.Version+1 {
		t.Errorf("after bad input: %+v", cur)
	}
	got = must[*storage.Publication](t)(e.store.SetPublicationTitle(ctx, p.ID, "Alpha, again"))
	got = must[*storage.Publication](t)(e.store.SetPublicationStatus(ctx, p.ID, storage.PublicationActive))
	if cur := must[*storage.Publication](t)(e.store.GetPublication(ctx, p.ID)); cur.Title != "Alpha, again" || cur.Suspended() || cur.Slug != "alpha" || cur.Version != got.Version {
		t.Errorf("renamed and active again: %+v, returned %+v", cur, got)
	}
}

// TestPublicationStatusRaces: concurrent changes of one directory item
// (statuses, a title, a host) each take effect once, none lost: the
// version goes up by one a change.
func TestPublicationStatusRaces(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "alpha", Title: "Alpha"}))
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() { errs[0] = errOf(e.store.SetPublicationStatus(ctx, p.ID, storage.PublicationSuspended)) })
	wg.Go(func() { errs[1] = errOf(e.store.SetPublicationTitle(ctx, p.ID, "Beta")) })
	wg.Go(func() {
		errs[2] = errOf(e.store.AddPublicationHost(ctx, storage.PublicationHost{ID: p.ID, Host: "alpha.example"}))
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	cur := must[*storage.Publication](t)(e.store.GetPublication(ctx, p.ID))
	if !cur.Suspended() || cur.Title != "Beta" || len(cur.Hosts) != 1 || cur.Version != p.Version+3 {
		t.Errorf("after three concurrent changes: %+v, want all three, version %d", cur, p.Version+3)
	}
}

// TestGoLiveWaitsForASuspendedPublication: a suspended publication's
// post due goes live at the first sweep after it is active again, and
// another publication's goes live meanwhile.
func TestGoLiveWaitsForASuspendedPublication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	start := e.clock.Now()
	pub := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "bee", Title: "Bee"}))
	b := must[*storage.Store](t)(e.store.In(pub.ID))
	must[*storage.Author](t)(b.CreateAuthor(ctx, storage.NewAuthor{ID: "ann", Name: "Ann"}))
	bPost := must[*storage.Post](t)(b.CreatePost(ctx, storage.NewPost{AuthorID: "ann", Title: "T", Slug: "t", Body: "b"}))
	must[*storage.Post](t)(b.Publish(ctx, storage.PublishPost{ID: bPost.ID, At: start.Add(time.Hour)}))
	e.author("ada", "Ada")
	aPost := e.publish(e.post("ada", "a-post"), start.Add(time.Hour))
	must[*storage.Publication](t)(e.store.SetPublicationStatus(ctx, pub.ID, storage.PublicationSuspended))

	e.clock.Advance(2 * time.Hour)
	equal(t, "gone live while B is suspended", must[int](t)(e.store.GoLive(ctx)), 1)
	equal(t, "gone live again", must[int](t)(e.store.GoLive(ctx)), 0)
	if !must[*storage.Post](t)(e.store.GetPost(ctx, aPost.ID)).PublishedAt.Equal(start.Add(time.Hour)) {
		t.Error("A's post lost its time")
	}
	must[*storage.Publication](t)(e.store.SetPublicationStatus(ctx, pub.ID, storage.PublicationActive))
	equal(t, "gone live once B is active", must[int](t)(e.store.GoLive(ctx)), 1)
	equal(t, "gone live after", must[int](t)(e.store.GoLive(ctx)), 0)
}

// errOf returns the error of a call that returns a value and an error.
func errOf[T any](_ T, err error) error { return err }
