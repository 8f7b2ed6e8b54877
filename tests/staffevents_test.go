package tests

import (
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// staffFollower is a second server on s's table with a Store of its own,
// so the roles it holds are its own, and a change feed that drops them as
// the server's does (storage.Store.ForgetStaff), whose events are handed
// to the test after it did.
func (s *server) staffFollower(t *testing.T) *answerFollower {
	t.Helper()
	store := storage.New(s.db, s.table, storage.WithClock(s.clock.Now))
	o := &server{t: t, db: s.db, table: s.table, cfg: s.cfg, store: store, clock: s.clock, opts: s.opts}
	o.serve()
	return &answerFollower{server: o, events: o.follow(t, store.ForgetStaff)}
}

// staffClient returns a client of s that signs in as sub with a token
// bound to the default publication, listing role.
func (s *server) staffClient(sub, role string) graphql.Client {
	c := s.claims(sub, role)
	c.Publication = storage.DefaultPublication
	return s.withClaims(c, testSecret)
}

// TestRolesHeldByAnotherServerFollowTheChangeFeed: a member demoted on
// one server, then removed, loses the rights on a second server that
// held their role once its change feed brought the change, with the
// servers' clock standing still, so that no hold has run out.
func TestRolesHeldByAnotherServerFollowTheChangeFeed(t *testing.T) {
	s := newServerOn(t, []storage.Option{storage.WithStream()}, nil)
	b := s.staffFollower(t)
	platform := s.as("ops", auth.RolePlatform)
	member := func(mutation string, in map[string]any) {
		t.Helper()
		in["publication"] = storage.DefaultPublication
		if err := gql(platform, mutation, map[string]any{"in": in}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	member(addMemberMutation, map[string]any{"account": "adam", "role": "ADMIN"})
	b.awaitEvent(t, staffEvent(storage.EventMemberAdded, "adam"))

	adam := b.staffClient("adam", auth.PubAdmin)
	category := func(slug string) error {
		return gql(adam, `mutation($s: String!) { createCategory(input: {slug: $s, name: $s}) { category { slug } } }`, map[string]any{"s": slug}, &struct{}{})
	}
	if err := category("held"); err != nil {
		t.Fatalf("an admin makes a category on the second server: %v", err)
	}

	member(changeMemberMutation, map[string]any{"account": "adam", "role": "AUTHOR"})
	b.awaitEvent(t, staffEvent(storage.EventMemberRoleChanged, "adam"))
	if err := category("demoted"); code(err) != "FORBIDDEN" {
		t.Errorf("a demoted admin makes a category on the second server: %v, want FORBIDDEN", err)
	}

	member(removeMemberMutation, map[string]any{"account": "adam"})
	b.awaitEvent(t, staffEvent(storage.EventMemberRemoved, "adam"))
	if err := gql(adam, `{ site { title } }`, nil, &struct{}{}); code(err) != "FORBIDDEN" {
		t.Errorf("a removed member reads on the second server: %v, want FORBIDDEN", err)
	}
}

// staffEvent matches an event of type typ about the account accountID.
func staffEvent(typ storage.EventType, accountID string) func(storage.LoggedEvent) bool {
	return func(e storage.LoggedEvent) bool { return e.Type == typ && e.Data.AccountID == accountID }
}
