package storage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestRerenderWalksEveryPublication: after a new claim, the default
// publication's sweep and then the walk, a directory page of ten
// publications a tick, render again the bodies of every publication, the
// last page's too; the walk ends with a pass that renders nothing, and a
// tick then is one GetItem.
func TestRerenderWalksEveryPublication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	must[bool](t)(e.store.ClaimRenderer(ctx))
	const pubs = 12
	posts := map[string]string{} // publication id → post id
	for i := range pubs {
		pub := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: fmt.Sprintf("p%02d", i), Title: "P"}))
		if i%5 != 0 {
			continue
		}
		in := must[*storage.Store](t)(e.store.In(pub.ID))
		must[*storage.Author](t)(in.CreateAuthor(ctx, storage.NewAuthor{ID: "ann", Name: "Ann"}))
		p := must[*storage.Post](t)(in.CreatePost(ctx, storage.NewPost{AuthorID: "ann", Title: "T", Slug: "t", Body: "## Notes\n\nBody."}))
		posts[pub.ID] = p.ID
	}

	other := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithHeadingIDPrefix("other-"))
	equal(t, "claimed", must[bool](t)(other.ClaimRenderer(ctx)), true)
	var steps []string
	for tick := 0; ; tick++ {
		if tick > 20 {
			t.Fatalf("not done after %d ticks: %q", tick, steps)
		}
		r := must[storage.Rerendered](t)(other.Rerender(ctx))
		if r.Publications > 0 || r.WalkDone {
			steps = append(steps, fmt.Sprintf("%d/%d/%v", r.Publications, r.Rendered, r.WalkDone))
		}
		if r.WalkDone {
			break
		}
		e.clock.Advance(10 * time.Second)
	}
	// Publications swept / bodies rendered again / walk done, a step
	// each: the first pass's two pages, then a second pass that renders
	// nothing.
	equal(t, "the walk's steps", strings.Join(steps, " "), "10/2/false 2/1/false 10/0/false 2/0/true")
	for pub, id := range posts {
		in := must[*storage.Store](t)(other.In(pub))
		if got := must[*storage.Post](t)(in.GetPost(ctx, id)).BodyHTML; !strings.Contains(got, `id="other-notes"`) {
			t.Errorf("publication %s: not rendered again: %s", pub, got)
		}
	}
	equal(t, "a tick once done", fmt.Sprint(counted(func(ctx context.Context) { must[storage.Rerendered](t)(other.Rerender(ctx)) })), "map[GetItem:1]")
	// A new claim walks again.
	equal(t, "claimed back", must[bool](t)(e.store.ClaimRenderer(ctx)), true)
	e.clock.Advance(time.Minute)
	for range 3 {
		must[storage.Rerendered](t)(e.store.Rerender(ctx))
	}
	for pub, id := range posts {
		in := must[*storage.Store](t)(e.store.In(pub))
		if got := must[*storage.Post](t)(in.GetPost(ctx, id)).BodyHTML; strings.Contains(got, `other-notes`) {
			t.Errorf("publication %s: not rendered again after the claim back: %s", pub, got)
		}
	}
}

// TestRerenderOfTheOnlyWriterSettlesAtOnce: a claim of the table's only
// writer (the embedded engine's server) is done, the walk of the other
// publications included, at its first sweep that finds nothing to render
// again, with no time passed; then a tick is one GetItem and writes
// nothing. A fleet's claim waits settleAfter for the other servers.
func TestRerenderOfTheOnlyWriterSettlesAtOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "other", Title: "Other"}))
	fleet := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithHeadingIDPrefix("fleet-"))
	equal(t, "fleet's claim", must[bool](t)(fleet.ClaimRenderer(ctx)), true)
	r := must[storage.Rerendered](t)(fleet.Rerender(ctx))
	equal(t, "a fleet's first sweep done, walk done", fmt.Sprint(r.Done, r.WalkDone), "false false")

	alone := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithHeadingIDPrefix("alone-"))
	equal(t, "only writer's claim", must[bool](t)(alone.ClaimRendererAlone(ctx)), true)
	r = must[storage.Rerendered](t)(alone.Rerender(ctx))
	equal(t, "the only writer's first sweep done, walk done", fmt.Sprint(r.Done, r.WalkDone), "true true")
	equal(t, "a tick once done", fmt.Sprint(counted(func(ctx context.Context) { must[storage.Rerendered](t)(alone.Rerender(ctx)) })), "map[GetItem:1]")
}
