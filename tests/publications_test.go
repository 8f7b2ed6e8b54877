package tests

import (
	"context"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
)

const createPublicationMutation = `mutation($in: CreatePublicationInput!) { createPublication(input: $in) { publication { id slug title hosts status } } }`

type publicationAnswer struct {
	ID     string   `json:"id"`
	Slug   string   `json:"slug"`
	Title  string   `json:"title"`
	Hosts  []string `json:"hosts"`
	Status string   `json:"status"`
}

// gql sends query with vars through c and decodes its data into out.
func gql(c graphql.Client, query string, vars map[string]any, out any) error {
	return c.MakeRequest(context.Background(), &graphql.Request{Query: query, Variables: vars}, &graphql.Response{Data: out})
}

// TestPublicationsOverGraphQL: a platform admin creates publications and
// gives them hosts; anyone finds one by slug or host; a taken slug or host
// is BAD_USER_INPUT and creates nothing; anyone but a platform admin is
// refused the directory's list and writes.
func TestPublicationsOverGraphQL(t *testing.T) {
	s := newServer(t)
	platform := s.as("ops", auth.RolePlatform)

	var created struct {
		CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
	}
	in := map[string]any{"slug": "alpha", "title": "Alpha", "hosts": []string{"alpha.localhost"}}
	if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
		t.Fatal(err)
	}
	a := created.CreatePublication.Publication
	if a.Slug != "alpha" || a.Status != "ACTIVE" || len(a.Hosts) != 1 {
		t.Fatalf("created %+v", a)
	}

	for name, c := range map[string]graphql.Client{"an admin": s.admin, "an author": s.as("ann", auth.RoleAuthor)} {
		err := gql(c, createPublicationMutation, map[string]any{"in": map[string]any{"slug": "beta", "title": "Beta"}}, &created)
		if code(err) != "FORBIDDEN" {
			t.Errorf("%s creates a publication: %v, want FORBIDDEN", name, err)
		}
		var list struct{}
		if err := gql(c, `{ publications { edges { node { id } } } }`, nil, &list); code(err) != "FORBIDDEN" {
			t.Errorf("%s lists publications: %v, want FORBIDDEN", name, err)
		}
	}
	if err := gql(s.client, createPublicationMutation, map[string]any{"in": map[string]any{"slug": "beta", "title": "Beta"}}, &created); code(err) != "UNAUTHENTICATED" {
		t.Errorf("anonymous creates a publication: %v, want UNAUTHENTICATED", err)
	}

	for _, c := range []struct {
		name, field string
		in          map[string]any
	}{
		{"a taken slug", "slug", map[string]any{"slug": "alpha", "title": "Again"}},
		{"a taken host", "hosts", map[string]any{"slug": "beta", "title": "Beta", "hosts": []string{"beta.localhost", "alpha.localhost"}}},
		{"an IP address", "hosts", map[string]any{"slug": "beta", "title": "Beta", "hosts": []string{"127.0.0.1"}}},
		{"a punycode look-alike", "hosts", map[string]any{"slug": "beta", "title": "Beta", "hosts": []string{"xn--pypal-4ve.example"}}},
	} {
		err := gql(platform, createPublicationMutation, map[string]any{"in": c.in}, &created)
		if code(err) != "BAD_USER_INPUT" || extension(err, "field") != c.field {
			t.Errorf("%s: %v (field %v), want BAD_USER_INPUT on %s", c.name, err, extension(err, "field"), c.field)
		}
	}

	var found struct {
		Publication *publicationAnswer `json:"publication"`
	}
	for _, q := range []string{`{ publication(slug: "alpha") { id slug } }`, `{ publication(host: "alpha.localhost") { id slug } }`} {
		if err := gql(s.client, q, nil, &found); err != nil || found.Publication == nil || found.Publication.ID != a.ID {
			t.Errorf("%s = %+v, %v", q, found.Publication, err)
		}
	}
	for _, q := range []string{`{ publication(slug: "beta") { id } }`, `{ publication(host: "beta.localhost") { id } }`} {
		found.Publication = &publicationAnswer{}
		if err := gql(s.client, q, nil, &found); err != nil || found.Publication != nil {
			t.Errorf("%s = %+v, %v, want null: nothing was created", q, found.Publication, err)
		}
	}
	if err := gql(s.client, `{ publication { id } }`, nil, &found); code(err) != "BAD_USER_INPUT" {
		t.Errorf("publication without slug or host: %v, want BAD_USER_INPUT", err)
	}

	var added struct {
		AddPublicationHost struct{ Publication publicationAnswer } `json:"addPublicationHost"`
	}
	err := gql(platform, `mutation($id: ID!) { addPublicationHost(input: {id: $id, host: "www.alpha.localhost"}) { publication { hosts } } }`, map[string]any{"id": a.ID}, &added)
	if err != nil || len(added.AddPublicationHost.Publication.Hosts) != 2 {
		t.Errorf("addPublicationHost = %+v, %v", added, err)
	}
	var removed struct {
		RemovePublicationHost struct{ Publication publicationAnswer } `json:"removePublicationHost"`
	}
	err = gql(platform, `mutation($id: ID!) { removePublicationHost(input: {id: $id, host: "alpha.localhost"}) { publication { hosts } } }`, map[string]any{"id": a.ID}, &removed)
	if err != nil || len(removed.RemovePublicationHost.Publication.Hosts) != 1 {
		t.Errorf("removePublicationHost = %+v, %v", removed, err)
	}
	if err := gql(s.as("ann", auth.RoleAdmin), `mutation($id: ID!) { removePublicationHost(input: {id: $id, host: "www.alpha.localhost"}) { publication { id } } }`, map[string]any{"id": a.ID}, &removed); code(err) != "FORBIDDEN" {
		t.Errorf("an admin removes a host: %v, want FORBIDDEN", err)
	}

	var list struct {
		Publications struct {
			Edges []struct{ Node publicationAnswer }
		}
	}
	if err := gql(platform, `{ publications(first: 10) { edges { node { slug hosts } } } }`, nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Publications.Edges) != 1 || list.Publications.Edges[0].Node.Slug != "alpha" {
		t.Errorf("publications = %+v", list.Publications.Edges)
	}
}
