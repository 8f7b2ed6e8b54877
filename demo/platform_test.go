package demo

import (
	"context"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestSeedPlatformMakesFieldNotesOwner: the second publication is seeded
// with its owner, so a token bound to it administers it; a second run
// writes nothing.
func TestSeedPlatformMakesFieldNotesOwner(t *testing.T) {
	store, calls := testStore(t)
	ctx := context.Background()
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		calls.take()
		if err := SeedPlatform(ctx, store, now); err != nil {
			t.Fatalf("SeedPlatform: %v", err)
		}
	}
	if _, writes := calls.take(); writes != 0 {
		t.Errorf("the second run made %d writes, want none", writes)
	}
	pub, err := store.PublicationBySlug(ctx, NotesSlug)
	if err != nil {
		t.Fatal(err)
	}
	in, err := store.In(pub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if role, err := in.StaffRoleOf(ctx, NotesOwner); err != nil || role != storage.RoleOwner {
		t.Errorf("%s's role in %s = %q, %v; want OWNER", NotesOwner, NotesSlug, role, err)
	}
}
