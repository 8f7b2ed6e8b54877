package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// TestEveryConnectionRefusesAPageSizeOutOfRange sends each field of the
// schema that takes first, with a size out of its range, selecting
// nothing that reads (__typename), and wants BAD_USER_INPUT naming the
// argument: a page size is refused whatever the selection, never
// answered.
func TestEveryConnectionRefusesAPageSizeOutOfRange(t *testing.T) {
	s := newServer(t)
	s.seedBlog(t)
	ctx := context.Background()
	ada := authorIDOf(t, s)
	ok[*storage.Post](t)(s.store.CreatePost(ctx, storage.NewPost{AuthorID: ada, Title: "Tagged", Slug: "tagged", Tags: []string{"Go"}}))
	ok[*storage.Series](t)(s.store.CreateSeries(ctx, storage.NewSeries{Slug: "tour", Title: "Tour", OwnerID: ada}))

	// Where each field is reached, with %s for its arguments, and its
	// largest page. The search index's own limits are checked by
	// TestSearchRefusesBadCursorsAndWhatIsTooLongOrSlow; a webhook's
	// deliveries are read only with a webhook, which needs a public
	// address.
	fields := map[string]struct {
		query string
		max   int
	}{
		"Query.posts":              {`{ posts(%s) { __typename } }`, 100},
		"Query.authors":            {`{ authors(%s) { __typename } }`, 100},
		"Query.moderationQueue":    {`{ moderationQueue(%s) { __typename } }`, 100},
		"Query.tags":               {`{ tags(%s) { __typename } }`, 100},
		"Query.pages":              {`{ pages(%s) { __typename } }`, 100},
		"Query.featuredPosts":      {`{ featuredPosts(%s) { __typename } }`, 100},
		"Query.allSeries":          {`{ allSeries(%s) { __typename } }`, 100},
		"Query.media":              {`{ media(%s) { __typename } }`, 100},
		"Query.popularPosts":       {`{ popularPosts(period: DAY, %s) { __typename } }`, 100},
		"Query.members":            {`{ members(%s) { __typename } }`, 100},
		"Post.comments":            {`{ post(slug: "post-24") { comments(%s) { __typename } } }`, 100},
		"Post.related":             {`{ post(slug: "post-24") { related(%s) { __typename } } }`, 20},
		"Post.revisions":           {`{ post(slug: "post-24") { revisions(%s) { __typename } } }`, 100},
		"Author.posts":             {`{ author(slug: "ada-lovelace") { posts(%s) { __typename } } }`, 100},
		"Author.drafts":            {`{ author(slug: "ada-lovelace") { drafts(%s) { __typename } } }`, 100},
		"Category.posts":           {`{ category(slug: "go") { posts(%s) { __typename } } }`, 100},
		"Comment.replyConnection":  {`{ post(slug: "post-24") { comments(first: 1) { edges { node { replyConnection(%s) { __typename } } } } } }`, storage.MaxReplyPage},
		"Series.posts":             {`{ series(slug: "tour") { posts(%s) { __typename } } }`, 100},
		"Tag.posts":                {`{ tag(slug: "go") { posts(%s) { __typename } } }`, 100},
		"Query.outboxEmails":       {`{ outboxEmails(%s) { __typename } }`, 100},
		"Query.publications":       {`{ publications(%s) { __typename } }`, 100},
		"Query.publicationMembers": {`{ publicationMembers(publication: "default", %s) { __typename } }`, 100},
	}
	exempt := []string{"Query.search", "Webhook.recentDeliveries"}

	sdl, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(sdl)})
	// A platform admin's token may list the publications too.
	token := "Bearer " + s.signed(s.claims("admin", "admin", auth.RolePlatform))
	for _, typ := range schema.Types {
		for _, f := range typ.Fields {
			name := typ.Name + "." + f.Name
			if f.Arguments.ForName("first") == nil || slices.Contains(exempt, name) {
				continue
			}
			c, found := fields[name]
			if !found {
				t.Errorf("%s takes first: add it to this test", name)
				continue
			}
			args := []string{"first: -2147483648", "first: 0", fmt.Sprintf("first: %d", c.max+1), "first: 2147483647"}
			if f.Arguments.ForName("last") != nil {
				args = append(args, "last: -2147483648", "last: 0", fmt.Sprintf("last: %d", c.max+1))
			}
			for _, arg := range args {
				t.Run(name+"("+arg+")", func(t *testing.T) {
					q := fmt.Sprintf(c.query, arg)
					a := s.fetch(t, http.MethodPost, s.url, `{"query":`+jsonString(q)+`}`, map[string]string{"Authorization": token})
					var r struct {
						Errors []struct {
							Extensions struct{ Code, Field string } `json:"extensions"`
						} `json:"errors"`
					}
					if err := json.Unmarshal([]byte(a.body), &r); err != nil {
						t.Fatalf("%s: %v", a.body, err)
					}
					want := strings.Split(arg, ":")[0]
					if len(r.Errors) != 1 || r.Errors[0].Extensions.Code != "BAD_USER_INPUT" || r.Errors[0].Extensions.Field != want {
						t.Errorf("%s answered %s, want BAD_USER_INPUT on %s", q, a.body, want)
					}
				})
			}
		}
	}
}
