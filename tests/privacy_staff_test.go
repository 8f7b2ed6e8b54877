package tests

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/blogql/blog/auth"
)

// staffRoles returns the roles of the staff of the publication pub by
// account, as the platform admin token lists them.
func (r *signInRig) staffRoles(t *testing.T, token, pub string) map[string]string {
	t.Helper()
	var out struct {
		Edges []struct {
			Node struct{ Account, Role string }
		}
	}
	if a := r.gql(t, token, staffQuery, map[string]any{"p": pub}, "publicationMembers", &out); a.code() != "" {
		t.Fatalf("publicationMembers = %s", a.body)
	}
	roles := map[string]string{}
	for _, e := range out.Edges {
		roles[e.Node.Account] = e.Node.Role
	}
	return roles
}

// consistentIn runs the checker on the publication id too.
func (r *signInRig) consistentIn(t *testing.T, id string) {
	t.Helper()
	r.consistent()
	st, err := r.store.In(id)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := st.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("invariant of publication %s: %s", id, b)
	}
}

// TestPrivacyDeleteTakesStaffRoles: an account that is an author of a
// publication deletes itself, and its role goes with it; the last owner
// of the publication cannot delete itself (CONFLICT, LAST_OWNER, naming
// the publication) and nothing changes, until another owner is made.
func TestPrivacyDeleteTakesStaffRoles(t *testing.T) {
	r := newSignInRig(t, 50)
	platform := r.token(auth.RolePlatform)
	olga := r.signInAs(t, "olga@example.com")
	ann := r.signInAs(t, "ann@example.com")
	var created struct {
		Publication publicationAnswer `json:"publication"`
	}
	if a := r.gql(t, platform, createPublicationMutation, map[string]any{"in": map[string]any{
		"slug": "bee", "title": "Bee", "ownerEmail": "olga@example.com"}}, "createPublication", &created); a.code() != "" {
		t.Fatalf("createPublication = %s", a.body)
	}
	bee := created.Publication.ID
	addMember := func(email, role string) {
		t.Helper()
		if a := r.gql(t, platform, addMemberMutation, map[string]any{"in": map[string]any{"publication": bee, "email": email, "role": role}},
			"", nil); a.code() != "" {
			t.Fatalf("addPublicationMember = %s", a.body)
		}
	}
	addMember("ann@example.com", "AUTHOR")
	deleteAs := func(s sessionAnswer) gqlAnswer {
		return r.gql(t, s.AccessToken, deleteMine, map[string]any{"e": s.Account.Email}, "", nil)
	}

	t.Run("an author deletes their account: the role goes", func(t *testing.T) {
		if a := deleteAs(ann); a.code() != "" {
			t.Fatalf("deleteMyAccount = %s", a.body)
		}
		t.Logf("deleteMyAccount of an author: %d DynamoDB requests %v", total(r.requests()), r.requests())
		if got, want := r.staffRoles(t, platform, bee), map[string]string{olga.Account.ID: "OWNER"}; !maps.Equal(got, want) {
			t.Errorf("bee's staff = %v, want %v", got, want)
		}
		r.consistentIn(t, bee)
	})

	t.Run("the last owner is refused, and nothing changes", func(t *testing.T) {
		a := deleteAs(olga)
		equal(t, "code", a.code(), "CONFLICT")
		equal(t, "reason", a.ext("reason"), any("LAST_OWNER"))
		if pubs, _ := a.ext("publications").([]any); !slices.Equal(pubs, []any{"bee"}) {
			t.Errorf("publications = %v, want [bee]", a.ext("publications"))
		}
		if a := r.gql(t, olga.AccessToken, `{ account { id } }`, nil, "", nil); a.code() != "" {
			t.Errorf("the refused account's token: %s, want it working", a.body)
		}
		if got, want := r.staffRoles(t, platform, bee), map[string]string{olga.Account.ID: "OWNER"}; !maps.Equal(got, want) {
			t.Errorf("bee's staff = %v, want %v", got, want)
		}
		r.consistentIn(t, bee)
	})

	t.Run("with a second owner, the owner may go", func(t *testing.T) {
		pat := r.signInAs(t, "pat@example.com")
		addMember("pat@example.com", "OWNER")
		if a := deleteAs(olga); a.code() != "" {
			t.Fatalf("deleteMyAccount = %s", a.body)
		}
		if got, want := r.staffRoles(t, platform, bee), map[string]string{pat.Account.ID: "OWNER"}; !maps.Equal(got, want) {
			t.Errorf("bee's staff = %v, want %v", got, want)
		}
		// pat, now the last owner, is refused in turn: olga's leaving
		// took one from the owners' count.
		equal(t, "the new last owner deletes", deleteAs(pat).code(), "CONFLICT")
		r.consistentIn(t, bee)
	})
}
