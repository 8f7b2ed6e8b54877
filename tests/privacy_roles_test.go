package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// exportedRole is a staff role as the export lists it.
type exportedRole struct {
	Publication string `json:"publication"`
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	Role        string `json:"role"`
	GrantedAt   string `json:"grantedAt"`
}

// exportRoles downloads the export of the session s and returns its
// staff roles by publication slug.
func exportRoles(t *testing.T, u string, s sessionAnswer) (map[string]exportedRole, string) {
	t.Helper()
	status, _, body := download(t, u, s.AccessToken)
	if status != http.StatusOK {
		t.Fatalf("export of %s: %d %s", s.Account.Email, status, body)
	}
	var doc struct {
		exportDoc
		StaffRoles *[]exportedRole `json:"staffRoles"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, body)
	}
	equal(t, "the account exported", doc.Account.ID, s.Account.ID)
	if doc.StaffRoles == nil {
		t.Fatalf("export of %s has no staffRoles list: %s", s.Account.Email, body)
	}
	roles := map[string]exportedRole{}
	for _, r := range *doc.StaffRoles {
		if r.GrantedAt == "" {
			t.Errorf("role %+v without grantedAt", r)
		}
		r.GrantedAt = ""
		roles[r.Slug] = r
	}
	equal(t, "roles, one a publication", len(roles), len(*doc.StaffRoles))
	return roles, body
}

// TestPrivacyExportListsStaffRoles: an account that owns one publication
// and writes for another finds both roles in its export, with their
// publications' ids, slugs and titles; a role taken away is no longer
// listed; another account's roles never are.
func TestPrivacyExportListsStaffRoles(t *testing.T) {
	r := newSignInRig(t, 50)
	platform := r.token(auth.RolePlatform)
	olga := r.signInAs(t, "olga@example.com")
	ann := r.signInAs(t, "ann@example.com")
	bob := r.signInAs(t, "bob@example.com")
	create := func(slug, title, owner string) string {
		t.Helper()
		var created struct {
			Publication publicationAnswer `json:"publication"`
		}
		if a := r.gql(t, platform, createPublicationMutation, map[string]any{"in": map[string]any{
			"slug": slug, "title": title, "ownerEmail": owner}}, "createPublication", &created); a.code() != "" {
			t.Fatalf("createPublication = %s", a.body)
		}
		return created.Publication.ID
	}
	member := func(mutation string, in map[string]any) {
		t.Helper()
		if a := r.gql(t, platform, mutation, map[string]any{"in": in}, "", nil); a.code() != "" {
			t.Fatalf("%s = %s", mutation, a.body)
		}
	}
	bee := create("bee", "The Bee", "olga@example.com")
	wasp := create("wasp", "The Wasp", "bob@example.com")
	member(addMemberMutation, map[string]any{"publication": wasp, "email": "olga@example.com", "role": "AUTHOR"})
	member(addMemberMutation, map[string]any{"publication": bee, "email": "ann@example.com", "role": "EDITOR"})
	u := r.exportServer(t)

	t.Run("an owner of one publication and an author of another sees both", func(t *testing.T) {
		got, body := exportRoles(t, u, olga)
		want := map[string]exportedRole{
			"bee":  {Publication: bee, Slug: "bee", Title: "The Bee", Role: "OWNER"},
			"wasp": {Publication: wasp, Slug: "wasp", Title: "The Wasp", Role: "AUTHOR"},
		}
		if !maps.Equal(got, want) {
			t.Errorf("olga's roles = %+v, want %+v\n%s", got, want, body)
		}
		// The account's GetItem by the handler, then the export's: 2
		// GetItem, the Query of the sessions, of the trail and of the
		// roles, the BatchGetItem of the membership the sign-in left,
		// and one of both roles with their publications.
		want2 := map[string]int{"GetItem": 3, "Query": 3, "BatchGetItem": 2}
		if got := r.requests(); !maps.Equal(got, want2) {
			t.Errorf("export's DynamoDB requests = %v, want %v", got, want2)
		}
	})

	t.Run("another account's roles never appear", func(t *testing.T) {
		got, body := exportRoles(t, u, bob)
		want := map[string]exportedRole{"wasp": {Publication: wasp, Slug: "wasp", Title: "The Wasp", Role: "OWNER"}}
		if !maps.Equal(got, want) {
			t.Errorf("bob's roles = %+v, want %+v\n%s", got, want, body)
		}
		got, body = exportRoles(t, u, ann)
		want = map[string]exportedRole{"bee": {Publication: bee, Slug: "bee", Title: "The Bee", Role: "EDITOR"}}
		if !maps.Equal(got, want) {
			t.Errorf("ann's roles = %+v, want %+v\n%s", got, want, body)
		}
	})

	t.Run("a role taken away is no longer listed", func(t *testing.T) {
		member(removeMemberMutation, map[string]any{"publication": bee, "account": ann.Account.ID})
		got, body := exportRoles(t, u, ann)
		if len(got) != 0 {
			t.Errorf("ann's roles = %+v, want none\n%s", got, body)
		}
		// An account without roles pays the Query that finds none.
		want := map[string]int{"GetItem": 3, "Query": 3, "BatchGetItem": 1}
		if got := r.requests(); !maps.Equal(got, want) {
			t.Errorf("export's DynamoDB requests = %v, want %v", got, want)
		}
		if got, _ := exportRoles(t, u, olga); len(got) != 2 {
			t.Errorf("olga's roles = %+v, want her 2", got)
		}
	})
}

// TestPrivacyExportPagesStaffRoles: an account with more roles than one
// Query of its trail returns finds them all, read a page at a time and
// 100 keys a BatchGetItem.
func TestPrivacyExportPagesStaffRoles(t *testing.T) {
	r := newSignInRig(t, 50)
	ctx := context.Background()
	olga := r.signInAs(t, "olga@example.com")
	const n = 101
	for i := range n {
		slug := fmt.Sprintf("pub-%03d", i)
		if _, err := r.store.CreatePublication(ctx, storage.NewPublication{Slug: slug, Title: "Publication " + slug,
			Owner: &storage.NewStaff{AccountID: olga.Account.ID, Email: olga.Account.Email}}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := exportRoles(t, r.exportServer(t), olga)
	equal(t, "roles", len(got), n)
	for i := range n {
		slug := fmt.Sprintf("pub-%03d", i)
		if r := got[slug]; r.Role != "OWNER" || r.Title != "Publication "+slug || r.Publication == "" {
			t.Errorf("role in %s = %+v", slug, r)
		}
	}
	// 2 Query of the roles, and 3 BatchGetItem of their 202 keys (100,
	// 100, 2) beside the membership's.
	want := map[string]int{"GetItem": 3, "Query": 4, "BatchGetItem": 4}
	if got := r.requests(); !maps.Equal(got, want) {
		t.Errorf("export's DynamoDB requests = %v, want %v", got, want)
	}
}
