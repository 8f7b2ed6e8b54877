package storage

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEventsOfStaffWrites: each change of the staff is one event naming
// the publication, the account and its roles, never the address the
// membership keeps; the owners' count written with an owner is none.
func TestEventsOfStaffWrites(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db, table := testBackend(t, clock, "staffevents")
	s := New(db, table, WithClock(clock))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	f := &feed{t: t, db: db, table: table, now: &now}
	f.records()
	allow := func(*StaffMember) error { return nil }
	for _, c := range []struct {
		name  string
		write func() error
		want  []EventData
		typ   EventType
	}{
		{"an owner added", func() error {
			_, err := s.AddStaff(ctx, NewStaff{AccountID: "olive", Email: "olive@example.com", Role: RoleOwner})
			return err
		}, []EventData{{PublicationID: DefaultPublication, AccountID: "olive", Role: "OWNER"}}, EventMemberAdded},
		{"an author added by address", func() error {
			_, err := s.AddStaff(ctx, NewStaff{AccountID: "zoe", Email: "zoe@example.com", Role: RoleAuthor})
			return err
		}, []EventData{{PublicationID: DefaultPublication, AccountID: "zoe", Role: "AUTHOR"}}, EventMemberAdded},
		{"the same role again is none", func() error {
			_, err := s.ChangeStaffRole(ctx, "zoe", RoleAuthor, allow)
			return err
		}, nil, ""},
		{"another role", func() error {
			_, err := s.ChangeStaffRole(ctx, "zoe", RoleOwner, allow)
			return err
		}, []EventData{{PublicationID: DefaultPublication, AccountID: "zoe", Role: "OWNER", PreviousRole: "AUTHOR"}}, EventMemberRoleChanged},
		{"removed", func() error {
			_, err := s.RemoveStaff(ctx, "zoe", allow)
			return err
		}, []EventData{{PublicationID: DefaultPublication, AccountID: "zoe", PreviousRole: "OWNER"}}, EventMemberRemoved},
	} {
		now = now.Add(time.Second)
		if err := c.write(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		evs := f.events()
		var got []EventData
		for _, e := range evs {
			if e.Type != c.typ {
				t.Errorf("%s: event %s, want %s", c.name, e.Type, c.typ)
			}
			if b, _ := json.Marshal(e); strings.Contains(string(b), "@") {
				t.Errorf("%s: the event carries an address: %s", c.name, b)
			}
			got = append(got, e.Data)
		}
		if !slices.EqualFunc(got, c.want, func(a, b EventData) bool {
			return a.PublicationID == b.PublicationID && a.AccountID == b.AccountID && a.Role == b.Role && a.PreviousRole == b.PreviousRole
		}) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
