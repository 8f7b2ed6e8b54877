package storage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/legacytest"
)

// TestMigrateStaffTrails turns a publication's staff roles back into
// what was granted before roles had trail entries: the checker reports
// them, the sweep of every publication writes their entries, the
// checker then finds nothing, and a run after the end costs one
// GetItem.
func TestMigrateStaffTrails(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pub := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "beta", Title: "Beta",
		Owner: &storage.NewStaff{AccountID: "olga"}}))
	beta := must[*storage.Store](t)(e.store.In(pub.ID))
	must[*storage.StaffMember](t)(beta.AddStaff(ctx, storage.NewStaff{AccountID: "ann", Role: storage.RoleAuthor}))
	if bad := must[[]string](t)(beta.Check(ctx)); len(bad) > 0 {
		t.Fatalf("the checker with the roles' entries: %q", bad)
	}
	equal(t, "entries deleted", must[int](t)(legacytest.WithoutTrails(ctx, e.client, e.table)), 2)
	found := strings.Join(must[[]string](t)(beta.Check(ctx)), "\n")
	for _, who := range []string{"olga", "ann"} {
		if !strings.Contains(found, fmt.Sprintf("staff role of account %q is not in the account's trail", who)) {
			t.Errorf("the checker on roles without entries found:\n%s\nwant %s's role reported", found, who)
		}
	}
	equal(t, "entries written", must[storage.StaffTrails](t)(e.store.MigrateAllStaffTrails(ctx)).Entries, 2)
	if bad := must[[]string](t)(beta.Check(ctx)); len(bad) > 0 {
		t.Errorf("the checker after the sweep: %q", bad)
	}
	n := counted(func(ctx context.Context) { must[storage.StaffTrails](t)(beta.MigrateStaffTrails(ctx)) })
	equal(t, "requests of a run after the end", fmt.Sprint(n), "map[GetItem:1]")
}
