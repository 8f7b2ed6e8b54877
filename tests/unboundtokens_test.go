package tests

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
)

// Tokens bound to no publication (no pub claim, as every token issued
// before publications) are the default publication's: on another
// publication their staff roles are refused, and a publication is made
// usable by a platform admin in one call, with its first owner.

// refusedForDefault fails t unless err is FORBIDDEN, saying the token is
// the default publication's, with the HTTP status status.
func refusedForDefault(t *testing.T, what string, status int, err error) {
	t.Helper()
	got := http.StatusOK
	if httpErr, ok := errors.AsType[*graphql.HTTPError](err); ok {
		got = httpErr.StatusCode
	}
	if code(err) != "FORBIDDEN" || got != status || !strings.Contains(err.Error(), "the token is for the default publication") {
		t.Errorf("%s: %d %v, want %d FORBIDDEN for the default publication's token", what, got, err, status)
	}
}

// TestUnboundTokensActOnTheDefaultPublicationOnly: a platform admin
// creates publication B with its owner in one call; an admin or author
// token bound to no publication is refused on B's host (reads too) and
// when naming B in a staff mutation, and changes nothing; B's owner, by a
// token bound to B, works; a reader's token and a platform admin's keep
// working on B.
func TestUnboundTokensActOnTheDefaultPublicationOnly(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	ctx := context.Background()
	platform := h.client("", "ops", auth.RolePlatform)

	var created struct {
		CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
	}
	in := map[string]any{"slug": "bee", "title": "Bee", "hosts": []string{"b.example"}, "ownerAccount": "olive"}
	if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
		t.Fatal(err)
	}
	bee := created.CreatePublication.Publication.ID
	if got := staffOf(t, platform, bee); len(got) != 1 || got["olive"] != "OWNER" {
		t.Fatalf("B's staff after createPublication = %v, want olive an OWNER", got)
	}

	authorsOfB := func() []string {
		t.Helper()
		var out struct {
			Authors struct {
				Edges []struct{ Node struct{ Name string } }
			} `json:"authors"`
		}
		if err := gql(h.scoped("b.example", bee, "olive", auth.PubOwner), `{ authors { edges { node { name } } } }`, nil, &out); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range out.Authors.Edges {
			names = append(names, e.Node.Name)
		}
		return names
	}

	t.Run("an unbound admin or author token is refused on B and changes nothing", func(t *testing.T) {
		for _, role := range []string{auth.RoleAdmin, auth.RoleAuthor} {
			c := h.client("b.example", "mallory", role)
			_, err := CreateAuthor(ctx, c, CreateAuthorInput{Subject: ptr("mallory"), Name: "Mallory"})
			refusedForDefault(t, role+": createAuthor on B's host", http.StatusForbidden, err)
			refusedForDefault(t, role+": a read on B's host", http.StatusForbidden, gql(c, `{ posts(first: 1) { edges { cursor } } }`, nil, &struct{}{}))
		}
		add := map[string]any{"publication": bee, "account": "mallory", "role": "OWNER"}
		refusedForDefault(t, "addPublicationMember naming B from the default host", http.StatusOK,
			gql(h.client("blog.test", "admin", auth.RoleAdmin), addMemberMutation, map[string]any{"in": add}, &struct{}{}))
		if got := authorsOfB(); len(got) != 0 {
			t.Errorf("B's authors = %v, want none", got)
		}
		if got := staffOf(t, platform, bee); len(got) != 1 {
			t.Errorf("B's staff = %v, want olive alone", got)
		}
	})

	t.Run("the same token still administers the default publication", func(t *testing.T) {
		ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, h.client("blog.test", "admin", auth.RoleAdmin), CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	})

	t.Run("B's owner, bound to B, administers B", func(t *testing.T) {
		olive := h.scoped("b.example", bee, "olive", auth.PubOwner)
		ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, olive, CreateAuthorInput{Subject: ptr("bob"), Name: "Bob"}))
		if got := authorsOfB(); len(got) != 1 || got[0] != "Bob" {
			t.Errorf("B's authors = %v, want Bob", got)
		}
		// createPublication counted its owner: the last one stays.
		rm := map[string]any{"publication": bee, "account": "olive"}
		if err := gql(olive, removeMemberMutation, map[string]any{"in": rm}, &struct{}{}); code(err) != "CONFLICT" || extension(err, "reason") != "LAST_OWNER" {
			t.Errorf("removing B's only owner: %v, want CONFLICT LAST_OWNER", err)
		}
	})

	t.Run("a reader's and a platform admin's tokens keep working on B", func(t *testing.T) {
		if err := gql(h.client("b.example", "rita"), `{ posts(first: 1) { edges { cursor } } }`, nil, &struct{}{}); err != nil {
			t.Errorf("a reader's read on B: %v", err)
		}
		add := map[string]any{"publication": bee, "account": "pat", "role": "OWNER"}
		if err := gql(h.client("b.example", "ops", auth.RolePlatform), addMemberMutation, map[string]any{"in": add}, &struct{}{}); err != nil {
			t.Errorf("a platform admin's addPublicationMember on B's host: %v", err)
		}
		// A platform admin's token that is an admin too keeps its
		// platform role on B, not its admin role.
		both := h.client("b.example", "ops", auth.RolePlatform, auth.RoleAdmin)
		if _, err := CreateAuthor(ctx, both, CreateAuthorInput{Subject: ptr("opsy"), Name: "Ops"}); code(err) != "FORBIDDEN" {
			t.Errorf("createAuthor on B by a platform admin's admin token: %v, want FORBIDDEN", err)
		}
	})

	t.Run("a bad first owner creates nothing", func(t *testing.T) {
		for _, c := range []struct {
			name string
			in   map[string]any
			code string
		}{
			{"an address without an account", map[string]any{"ownerEmail": "nobody@example.com"}, "NOT_FOUND"},
			{"both an account and an address", map[string]any{"ownerAccount": "olive", "ownerEmail": "olive@example.com"}, "BAD_USER_INPUT"},
			{"a bad account id", map[string]any{"ownerAccount": "bad\nid"}, "BAD_USER_INPUT"},
		} {
			in := map[string]any{"slug": "wasp", "title": "Wasp", "hosts": []string{"w.example"}}
			for k, v := range c.in {
				in[k] = v
			}
			if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &struct{}{}); code(err) != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
		}
		in := map[string]any{"slug": "wasp", "title": "Wasp", "hosts": []string{"w.example"}}
		if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &struct{}{}); err != nil {
			t.Errorf("wasp after the refusals: %v, want its slug and host free", err)
		}
	})
}
