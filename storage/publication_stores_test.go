package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestStoreInKeepsPublicationsApart writes through the Store of one
// publication and reads through another's: nothing of one is seen in the
// other, and a bad publication id is refused.
func TestStoreInKeepsPublicationsApart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := must[*storage.Store](t)(e.store.In("a"))
	b := must[*storage.Store](t)(e.store.In("b"))
	if a.Publication() != "a" || b.Publication() != "b" {
		t.Fatalf("publications %q, %q, want a, b", a.Publication(), b.Publication())
	}
	must[*storage.Author](t)(b.CreateAuthor(ctx, storage.NewAuthor{ID: "ann", Name: "Ann"}))
	p := must[*storage.Post](t)(b.CreatePost(ctx, storage.NewPost{AuthorID: "ann", Title: "In b", Slug: "in-b", Body: "b"}))

	if _, err := a.GetPost(ctx, p.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("publication a reads b's post: err %v, want ErrNotFound", err)
	}
	if got, err := a.GetAuthor(ctx, "ann"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("publication a reads b's author: %v, %v, want ErrNotFound", got, err)
	}
	if _, err := e.store.GetPost(ctx, p.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the default publication reads b's post: err %v, want ErrNotFound", err)
	}
	if got := must[*storage.Post](t)(b.GetPost(ctx, p.ID)); got.Title != "In b" {
		t.Errorf("b reads its post titled %q", got.Title)
	}
	again := must[*storage.Store](t)(e.store.In("b"))
	if got := must[*storage.Post](t)(again.GetPost(ctx, p.ID)); got.ID != p.ID {
		t.Errorf("another Store of b reads post %q", got.ID)
	}

	before := storage.TenantViolations()
	if err := storage.ReadPostIn(ctx, a, b, p.ID); !errors.Is(err, storage.ErrOutsideSpace) {
		t.Errorf("a read of b's key through a: err %v, want ErrOutsideSpace", err)
	}
	if err := storage.ReadPostIn(ctx, b, b, p.ID); err != nil {
		t.Errorf("b reads its own key: %v", err)
	}
	if got := storage.TenantViolations() - before; got < 1 {
		t.Errorf("%d violations counted, want at least 1", got)
	}

	for _, bad := range []string{"", "a#b"} {
		if _, err := e.store.In(bad); err == nil {
			t.Errorf("In(%q) made a Store", bad)
		}
	}
}

// TestForgetSiteOfEveryPublication: the site settings a server holds of
// a publication other than the default are dropped by that
// publication's site.updated, which the change feed hands to the
// default publication's Store, and by no other publication's.
func TestForgetSiteOfEveryPublication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := must[*storage.Store](t)(e.store.In("b"))
	must[*storage.Site](t)(b.UpdateSite(ctx, storage.SitePatch{Title: ptr("Field Notes")}))
	equal(t, "this server reads b's settings", must[*storage.Site](t)(b.Site(ctx)).Title, "Field Notes")

	// Another server on the table renames b.
	other := must[*storage.Store](t)(storage.New(e.client, e.table).In("b"))
	must[*storage.Site](t)(other.UpdateSite(ctx, storage.SitePatch{ExpectedVersion: 1, Title: ptr("Trail Notes")}))
	updated := func(pub string) []storage.LoggedEvent {
		return []storage.LoggedEvent{{Event: storage.Event{Type: storage.EventSiteUpdated, Publication: pub}}}
	}
	e.store.ForgetSite(updated("c"))
	e.store.ForgetSite(updated(""))
	equal(t, "after other publications' events", must[*storage.Site](t)(b.Site(ctx)).Title, "Field Notes")
	e.store.ForgetSite(updated("b"))
	equal(t, "after b's event", must[*storage.Site](t)(b.Site(ctx)).Title, "Trail Notes")
	again := must[*storage.Store](t)(e.store.In("b"))
	equal(t, "another Store of b on this server", must[*storage.Site](t)(again.Site(ctx)).Title, "Trail Notes")
}
