package storage

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestEventsOfThePublicationsDirectory checks the change feed's events of
// the directory: creating a publication, adding a host to it and taking
// one from it are each one publication.updated of that publication, with
// its slug and hosts after the write and the hosts it left; the claims
// mean nothing of their own.
func TestEventsOfThePublicationsDirectory(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db, table := testBackend(t, clock, "pubevents")
	s := New(db, table, WithClock(clock))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	f := &feed{t: t, db: db, table: table, now: &now}
	f.events()
	check := func(what, pub string, hosts, previous []string) {
		t.Helper()
		evs := f.events()
		if !slices.Equal(typesOf(evs), []EventType{EventPublicationUpdated}) {
			t.Fatalf("%s: %+v, want one publication.updated", what, evs)
		}
		e := evs[0]
		if e.Publication != pub || e.Data.Slug != "pea" || !slices.Equal(e.Data.Hosts, hosts) || !slices.Equal(e.Data.PreviousHosts, previous) {
			t.Errorf("%s: %+v, want publication %s, slug pea, hosts %v, previous hosts %v", what, e, pub, hosts, previous)
		}
	}

	p, err := s.CreatePublication(ctx, NewPublication{Slug: "pea", Title: "Pea", Hosts: []string{"a.example"}})
	if err != nil {
		t.Fatal(err)
	}
	check("created", p.ID, []string{"a.example"}, nil)
	if _, err := s.AddPublicationHost(ctx, PublicationHost{ID: p.ID, Host: "b.example"}); err != nil {
		t.Fatal(err)
	}
	check("a host added", p.ID, []string{"a.example", "b.example"}, nil)
	if _, err := s.RemovePublicationHost(ctx, PublicationHost{ID: p.ID, Host: "a.example"}); err != nil {
		t.Fatal(err)
	}
	check("a host removed", p.ID, []string{"b.example"}, []string{"a.example"})
}
