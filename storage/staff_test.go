package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestOwnersRemovingEachOtherLeaveOne interleaves two owners' removals of
// each other deterministically: the second is read before the first
// commits and sent after, and is refused by the owners' count, so one
// owner is left.
func TestOwnersRemovingEachOtherLeaveOne(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, o := range []string{"olive", "oscar"} {
		must[*storage.StaffMember](t)(e.store.AddStaff(ctx, storage.NewStaff{AccountID: o, Role: storage.RoleOwner}))
	}
	_, err := e.store.RemoveStaff(ctx, "oscar", func(*storage.StaffMember) error {
		// oscar removes olive between olive's read of oscar and her write.
		_, err := e.store.RemoveStaff(ctx, "olive", func(*storage.StaffMember) error { return nil })
		return err
	})
	if !errors.Is(err, storage.ErrLastOwner) {
		t.Fatalf("the second removal: %v, want ErrLastOwner", err)
	}
	if _, err := e.store.StaffMemberOf(ctx, "oscar", true); err != nil {
		t.Errorf("oscar, the owner left: %v", err)
	}
	if _, err := e.store.StaffMemberOf(ctx, "olive", true); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("olive: %v, want removed", err)
	}
	// A demotion is counted the same way.
	if _, err := e.store.ChangeStaffRole(ctx, "oscar", storage.RoleAdmin, func(*storage.StaffMember) error { return nil }); !errors.Is(err, storage.ErrLastOwner) {
		t.Errorf("the last owner demoted: %v, want ErrLastOwner", err)
	}
	if _, err := e.store.AddStaff(ctx, storage.NewStaff{AccountID: "oscar", Role: storage.RoleAuthor}); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Errorf("oscar added twice: %v, want ErrAlreadyExists", err)
	}
	e.consistent()
}
