package tests

import (
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
)

// A publication's staff: accounts with a role in it, managed by its
// owners and admins, and tokens bound to one publication.

const (
	addMemberMutation    = `mutation($in: AddPublicationMemberInput!) { addPublicationMember(input: $in) { member { account email role } } }`
	changeMemberMutation = `mutation($in: ChangePublicationMemberRoleInput!) { changePublicationMemberRole(input: $in) { member { account role } } }`
	removeMemberMutation = `mutation($in: RemovePublicationMemberInput!) { removePublicationMember(input: $in) { member { account role } } }`
	staffQuery           = `query($p: String!) { publicationMembers(publication: $p) { edges { node { account role } } } }`
)

// scoped returns a client addressed to host that signs in as sub with a
// token bound to the publication pub, listing role.
func (h *hosted) scoped(host, pub, sub, role string) graphql.Client {
	c := h.s.claims(sub, role)
	c.Publication = pub
	token, err := auth.Sign(testSecret, c)
	if err != nil {
		h.s.t.Fatal(err)
	}
	return graphql.NewClient(h.url+"/graphql", &http.Client{Transport: toHost{host: host, next: bearer{token: token, next: http.DefaultTransport}}})
}

// staffOf returns the roles of a publication's staff by account, as the
// platform admin c lists them.
func staffOf(t *testing.T, c graphql.Client, pub string) map[string]string {
	t.Helper()
	var out struct {
		PublicationMembers struct {
			Edges []struct {
				Node struct{ Account, Role string }
			}
		} `json:"publicationMembers"`
	}
	if err := gql(c, staffQuery, map[string]any{"p": pub}, &out); err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{}
	for _, e := range out.PublicationMembers.Edges {
		roles[e.Node.Account] = e.Node.Role
	}
	return roles
}

// twoPublications makes the publications mag (mag.localhost) and other
// (other.localhost) behind s's router, and returns their ids.
func twoPublications(t *testing.T, h *hosted) (mag, other string) {
	t.Helper()
	platform := h.client("", "ops", auth.RolePlatform)
	var ids []string
	for _, slug := range []string{"mag", "other"} {
		var created struct {
			CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
		}
		in := map[string]any{"slug": slug, "title": slug, "hosts": []string{slug + ".localhost"}}
		if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, created.CreatePublication.Publication.ID)
	}
	return ids[0], ids[1]
}

// TestPublicationStaffOverHTTP: a platform admin makes an owner; the owner
// makes an admin; each refusal (a member added twice, a role the caller
// may not grant, an owner touched by an admin, the last owner removed, an
// unknown publication) is a clear error and changes nothing; removing a
// member stops their token at once on this server.
func TestPublicationStaffOverHTTP(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	mag, other := twoPublications(t, h)
	platform := h.client("", "ops", auth.RolePlatform)

	add := func(c graphql.Client, pub, account, role string) error {
		var out struct{}
		return gql(c, addMemberMutation, map[string]any{"in": map[string]any{"publication": pub, "account": account, "role": role}}, &out)
	}
	if err := add(platform, "mag", "olive", "OWNER"); err != nil {
		t.Fatal(err)
	}
	olive := h.scoped("mag.localhost", mag, "olive", auth.PubOwner)
	for _, m := range []string{"adam", "eddie"} {
		role := map[string]string{"adam": "ADMIN", "eddie": "EDITOR"}[m]
		if err := add(olive, mag, m, role); err != nil {
			t.Fatal(err)
		}
	}
	// An owner's add on the publication's own host, by id: olive's role
	// is held since the first request; one transaction.
	if got := h.requests(); total(got) != 1 || got["TransactWriteItems"] != 1 {
		t.Errorf("addPublicationMember made %v, want one TransactWriteItems", got)
	}
	adam := h.scoped("mag.localhost", mag, "adam", auth.PubAdmin)
	want := map[string]string{"olive": "OWNER", "adam": "ADMIN", "eddie": "EDITOR"}

	for _, c := range []struct {
		name, code, reason string
		do                 func() error
	}{
		{"a member added twice", "CONFLICT", "ALREADY_EXISTS", func() error { return add(olive, mag, "adam", "EDITOR") }},
		{"an admin makes an owner", "FORBIDDEN", "", func() error { return add(adam, mag, "zed", "OWNER") }},
		{"an admin makes an admin an owner", "FORBIDDEN", "", func() error {
			return gql(adam, changeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": "adam", "role": "OWNER"}}, &struct{}{})
		}},
		{"an admin demotes an owner", "FORBIDDEN", "", func() error {
			return gql(adam, changeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": "olive", "role": "EDITOR"}}, &struct{}{})
		}},
		{"an admin removes an owner", "FORBIDDEN", "", func() error {
			return gql(adam, removeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": "olive"}}, &struct{}{})
		}},
		{"the last owner removes themself", "CONFLICT", "LAST_OWNER", func() error {
			return gql(olive, removeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": "olive"}}, &struct{}{})
		}},
		{"the last owner unmakes themself", "CONFLICT", "LAST_OWNER", func() error {
			return gql(olive, changeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": "olive", "role": "ADMIN"}}, &struct{}{})
		}},
		{"an unknown publication", "NOT_FOUND", "", func() error { return add(platform, "nowhere", "zed", "AUTHOR") }},
		{"an address without an account", "NOT_FOUND", "", func() error {
			return gql(olive, addMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "email": "nobody@example.com", "role": "AUTHOR"}}, &struct{}{})
		}},
		{"an editor manages the staff", "FORBIDDEN", "", func() error {
			return add(h.scoped("mag.localhost", mag, "eddie", auth.PubEditor), mag, "zed", "AUTHOR")
		}},
		{"a token of mag used on other's host", "FORBIDDEN", "", func() error {
			return add(h.scoped("other.localhost", mag, "olive", auth.PubOwner), other, "zed", "AUTHOR")
		}},
		{"a token of mag names other", "FORBIDDEN", "", func() error { return add(olive, other, "zed", "AUTHOR") }},
		{"anonymous", "UNAUTHENTICATED", "", func() error { return add(h.client("mag.localhost", ""), mag, "zed", "AUTHOR") }},
	} {
		err := c.do()
		if code(err) != c.code || (c.reason != "" && extension(err, "reason") != c.reason) {
			t.Errorf("%s: %v (reason %v), want %s %s", c.name, err, extension(err, "reason"), c.code, c.reason)
		}
	}
	if got := staffOf(t, platform, mag); !maps.Equal(got, want) {
		t.Errorf("mag's staff after the refusals: %v, want %v", got, want)
	}
	if got := staffOf(t, platform, other); len(got) != 0 {
		t.Errorf("other's staff: %v, want none", got)
	}

	// A token bound to mag is refused on other's host, reads included,
	// though its account is an owner of other too.
	var nothing struct{}
	if err := add(platform, other, "olive", "OWNER"); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]graphql.Client{
		"on other's host":    h.scoped("other.localhost", mag, "olive", auth.PubOwner),
		"naming other by id": h.scoped("mag.localhost", mag, "olive", auth.PubOwner),
	} {
		err := gql(c, staffQuery, map[string]any{"p": other}, &nothing)
		if code(err) != "FORBIDDEN" || !strings.Contains(err.Error(), "bound to another publication") {
			t.Errorf("mag's token %s: %v, want FORBIDDEN saying it is bound to another publication", name, err)
		}
	}
	if err := gql(h.scoped("other.localhost", mag, "olive", auth.PubOwner), `{ site { title } }`, nil, &nothing); status(err) != http.StatusForbidden {
		t.Errorf("mag's token reads on other's host: %v (status %d), want 403", err, status(err))
	}

	// Removed, adam's token stops working at once on this server.
	if err := gql(olive, removeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": "adam"}}, &nothing); err != nil {
		t.Fatal(err)
	}
	if got := h.requests(); total(got) != 2 || got["GetItem"] != 1 || got["TransactWriteItems"] != 1 {
		t.Errorf("removePublicationMember made %v, want a GetItem of the member and one TransactWriteItems", got)
	}
	if err := add(adam, mag, "zed", "AUTHOR"); code(err) != "FORBIDDEN" {
		t.Errorf("a removed admin adds a member: %v, want FORBIDDEN", err)
	}
}

// TestTwoOwnersRemovingEachOtherLeaveOne: of two owners who remove each
// other at once, one succeeds and one owner is left.
func TestTwoOwnersRemovingEachOtherLeaveOne(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	mag, _ := twoPublications(t, h)
	platform := h.client("", "ops", auth.RolePlatform)
	for _, o := range []string{"olive", "oscar"} {
		if err := gql(platform, addMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": o, "role": "OWNER"}}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, pair := range [][2]string{{"olive", "oscar"}, {"oscar", "olive"}} {
		wg.Go(func() {
			c := h.scoped("mag.localhost", mag, pair[0], auth.PubOwner)
			errs[i] = gql(c, removeMemberMutation, map[string]any{"in": map[string]any{"publication": mag, "account": pair[1]}}, &struct{}{})
		})
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two owners removing each other: %v and %v, want one success", errs[0], errs[1])
	}
	if got := staffOf(t, platform, mag); len(got) != 1 {
		t.Errorf("staff left: %v, want one owner", got)
	}
}

// TestRolesInThePublication: a contributor writes drafts and publishes
// nothing; an editor publishes anyone's post but makes no category; a
// token with global roles keeps its meaning.
func TestRolesInThePublication(t *testing.T) {
	s := newServer(t)
	h := s.route(t)
	platform := h.client("", "ops", auth.RolePlatform)
	var nothing struct{}
	for _, a := range []string{"cora", "eddie"} {
		if err := gql(s.admin, `mutation($s: String!) { createAuthor(input: {subject: $s, name: $s}) { author { id } } }`, map[string]any{"s": a}, &nothing); err != nil {
			t.Fatal(err)
		}
	}
	for a, role := range map[string]string{"cora": "CONTRIBUTOR", "eddie": "EDITOR"} {
		if err := gql(platform, addMemberMutation, map[string]any{"in": map[string]any{"publication": "default", "account": a, "role": role}}, &nothing); err != nil {
			t.Fatal(err)
		}
	}
	cora := h.scoped("localhost", "default", "cora", auth.PubAuthor) // the account's role bounds the token's
	var created struct {
		CreatePost struct{ Post struct{ ID string } } `json:"createPost"`
	}
	if err := gql(cora, `mutation { createPost(input: {title: "Draft", slug: "cora-draft"}) { post { id } } }`, nil, &created); err != nil {
		t.Fatalf("a contributor writes a draft: %v", err)
	}
	publish := `mutation($id: ID!) { publishPost(input: {id: $id}) { post { status } } }`
	id := map[string]any{"id": created.CreatePost.Post.ID}
	if err := gql(cora, publish, id, &nothing); code(err) != "FORBIDDEN" {
		t.Errorf("a contributor publishes: %v, want FORBIDDEN", err)
	}
	eddie := h.scoped("localhost", "default", "eddie", auth.PubEditor)
	if err := gql(eddie, `mutation { createCategory(input: {slug: "mine", name: "Mine"}) { category { slug } } }`, nil, &nothing); code(err) != "FORBIDDEN" {
		t.Errorf("an editor makes a category: %v, want FORBIDDEN", err)
	}
	if err := gql(eddie, publish, id, &nothing); err != nil {
		t.Errorf("an editor publishes a contributor's draft: %v", err)
	}
	if err := gql(h.client("localhost", "ada-lovelace", auth.RoleAdmin), `mutation { createCategory(input: {slug: "ours", name: "Ours"}) { category { slug } } }`, nil, &nothing); err != nil {
		t.Errorf("a global admin token makes a category: %v", err)
	}
	s.consistent()
}
