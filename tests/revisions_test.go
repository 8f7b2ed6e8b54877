package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// TestRevisions edits a post's title, body, cover, categories and SEO
// fields and reads its revisions as its author and an admin (newest
// first, who, which fields, what they were), refuses them to everyone
// else, restores one as a new version, keeps the last 50, and refuses
// another post's revision writing nothing.
func TestRevisions(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	for _, a := range [][2]string{{"ada", "Ada Lovelace"}, {"grace", "Grace Hopper"}, {"admin", "Admin"}} {
		ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &a[0], Name: a[1]}))
	}
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "go", Name: "Go"}))
	ada := s.as("ada", auth.RoleAuthor)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{
		Title: "First title", Slug: "revised", Excerpt: ptr("First excerpt"), Body: ptr("First body."),
	})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
	v := ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: p.Id, ExpectedVersion: 2, Title: ptr("Second title")})).UpdatePost.Post.Version
	v = ok[*UpdatePostResponse](t)(UpdatePost(ctx, s.admin, UpdatePostInput{Id: p.Id, ExpectedVersion: v, Body: ptr("Second body."),
		CoverImage: &ImageInput{Url: "https://img.example/cover.png"}})).UpdatePost.Post.Version
	// Categories are no content a revision keeps.
	v = ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: p.Id, ExpectedVersion: v, Categories: []string{"go"}})).UpdatePost.Post.Version
	v = ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: p.Id, ExpectedVersion: v, Seo: &SeoInput{Title: ptr("SEO title")}})).UpdatePost.Post.Version
	equal(t, "version", v, 6)
	s.consistent()

	read := func(as string) *PostRevisionsPost {
		client := s.client
		switch as {
		case "ada":
			client = ada
		case "admin":
			client = s.admin
		case "grace":
			client = s.as("grace", auth.RoleAuthor)
		case "reader":
			client = s.reader("auth0|lin", "Lin", "")
		}
		r, err := PostRevisions(ctx, client, p.Id, ptr(10), nil)
		if as == "ada" || as == "admin" {
			if err != nil {
				t.Fatalf("revisions as %s: %v", as, err)
			}
			return r.Post
		}
		want := "FORBIDDEN"
		if as == "anonymous" {
			want = "UNAUTHENTICATED"
		}
		equal(t, "code of revisions as "+as, code(err), want)
		if r == nil || r.Post == nil || r.Post.Revisions != nil {
			t.Errorf("as %s: the post %+v, want it without revisions", as, r)
		}
		return nil
	}
	got := read("ada")
	// The post and the page; revision 3 (an SEO edit) does not hold the
	// body, and is the post's last: the post's body item has it.
	equal(t, "requests of a post with its revisions", total(s.requests()), 3)
	revs := got.Revisions
	equal(t, "totalCount", revs.TotalCount, 3)
	var numbers []int
	for _, e := range revs.Edges {
		numbers = append(numbers, e.Node.Number)
	}
	if !slices.Equal(numbers, []int{3, 2, 1}) {
		t.Fatalf("revision numbers %v, want 3 2 1", numbers)
	}
	r3, r2, r1 := revs.Edges[0].Node, revs.Edges[1].Node, revs.Edges[2].Node
	if !slices.Equal(r1.ChangedFields, []string{"title"}) || r1.Title != "First title" || r1.Body != "First body." || r1.Version != 2 || r1.Editor == nil {
		t.Errorf("revision 1: %+v", r1)
	}
	if !slices.Equal(r2.ChangedFields, []string{"body", "coverImage"}) || r2.Body != "First body." || r2.CoverImage != nil || r2.Editor == nil || r2.Editor.Id == r1.Editor.Id {
		t.Errorf("revision 2 (by the admin): %+v", r2)
	}
	if !slices.Equal(r3.ChangedFields, []string{"seo"}) || r3.Seo.Title != "" || r3.CoverImage == nil {
		t.Errorf("revision 3: %+v", r3)
	}
	read("admin")
	for _, as := range []string{"anonymous", "reader", "grace"} {
		read(as)
	}

	// Restore revision 1: a new version with its content, which keeps
	// what it replaced as revision 4.
	restored := ok[*RestorePostRevisionResponse](t)(RestorePostRevision(ctx, ada, RestorePostRevisionInput{
		PostId: p.Id, RevisionId: r1.Id, ExpectedVersion: 6,
	})).RestorePostRevision.Post
	if restored.Title != "First title" || restored.Body != "First body." || restored.Version != 7 {
		t.Errorf("restored: %+v", restored)
	}
	after := read("ada").Revisions
	equal(t, "totalCount after the restore", after.TotalCount, 4)
	if r4 := after.Edges[0].Node; r4.Number != 4 || r4.Title != "Second title" || !slices.Equal(r4.ChangedFields, []string{"title", "body", "coverImage", "seo"}) {
		t.Errorf("revision 4: %+v", r4)
	}
	s.consistent()

	// Refused, writing nothing: another post's revision, a stale version,
	// a made-up id, a revision of a post the caller may not change.
	other := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Other", Slug: "other"})).CreatePost.Post
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: other.Id, ExpectedVersion: 1, Title: ptr("Other, edited")}))
	otherRev := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, ada, other.Id, nil, nil)).Post.Revisions.Edges[0].Node.Id
	before := s.snapshot()
	for _, c := range []struct {
		name, want string
		in         RestorePostRevisionInput
		as         string
	}{
		{"another post's revision", "BAD_USER_INPUT", RestorePostRevisionInput{PostId: p.Id, RevisionId: otherRev, ExpectedVersion: 7}, "ada"},
		{"a stale version", "CONFLICT", RestorePostRevisionInput{PostId: p.Id, RevisionId: r2.Id, ExpectedVersion: 6}, "ada"},
		{"a made-up id", "BAD_USER_INPUT", RestorePostRevisionInput{PostId: p.Id, RevisionId: "bm9wZQ", ExpectedVersion: 7}, "ada"},
		{"a post's id as the revision", "BAD_USER_INPUT", RestorePostRevisionInput{PostId: p.Id, RevisionId: p.Id, ExpectedVersion: 7}, "ada"},
		{"by another author", "FORBIDDEN", RestorePostRevisionInput{PostId: p.Id, RevisionId: r2.Id, ExpectedVersion: 7}, "grace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := ada
			if c.as == "grace" {
				client = s.as("grace", auth.RoleAuthor)
			}
			_, err := RestorePostRevision(ctx, client, c.in)
			equal(t, "code", code(err), c.want)
		})
	}
	s.unchanged(before)

	// The last 50 are kept.
	v = 7
	for i := range storage.MaxRevisions + 3 {
		v = ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: p.Id, ExpectedVersion: v, Title: ptr(fmt.Sprintf("Title %d", i))})).UpdatePost.Post.Version
	}
	kept := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, ada, p.Id, ptr(100), nil)).Post.Revisions
	equal(t, "revisions kept", len(kept.Edges), storage.MaxRevisions)
	equal(t, "totalCount kept", kept.TotalCount, storage.MaxRevisions)
	equal(t, "newest", kept.Edges[0].Node.Number, 4+storage.MaxRevisions+3)
	s.consistent()

	// Deleting the post deletes its revisions (the checker finds none
	// left over).
	ok[*DeletePostResponse](t)(DeletePost(ctx, ada, DeletePostInput{Id: p.Id}))
	s.consistent()
}

// TestRevisionBodies: a title edit keeps a revision without the body,
// marked bodyless, and a body edit one with the old body. Over GraphQL
// every revision shows the body the post had before its edit, on one
// page and page by page; restoring a bodyless revision restores that
// body; and a revision written before the mark, which holds its body,
// reads as it did.
func TestRevisionBodies(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := s.as("ada", auth.RoleAuthor)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Title one", Slug: "bodies", Body: ptr("Body A.")})).CreatePost.Post
	v := p.Version
	for _, in := range []UpdatePostInput{{Title: ptr("Title two")}, {Body: ptr("Body B.")}, {Title: ptr("Title three")}} {
		in.Id, in.ExpectedVersion = p.Id, v
		v = ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, in)).UpdatePost.Post.Version
	}
	s.consistent()

	// What the table holds: the title edits' revisions are marked and
	// hold no body; the body edit's holds the old body.
	id := rawID(t, p.Id, "Post")
	revItem := func(n int) map[string]types.AttributeValue {
		t.Helper()
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "PUB#" + storage.DefaultPublication + "#POST#" + id},
				"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("REV#%010d", n)}}})
		if err != nil || out.Item == nil {
			t.Fatalf("revision %d: %v %v", n, out, err)
		}
		return out.Item
	}
	for n, bodyless := range map[int]bool{1: true, 2: false, 3: true} {
		it := revItem(n)
		_, hasBody := it["body"]
		mark, _ := it["bodyless"].(*types.AttributeValueMemberBOOL)
		if hasBody == bodyless || (mark != nil && mark.Value) != bodyless {
			t.Errorf("revision %d: body %v, bodyless %v; want bodyless %v", n, hasBody, mark, bodyless)
		}
	}

	// Each revision's body is the post's before its edit.
	want := map[int]string{1: "Body A.", 2: "Body A.", 3: "Body B."}
	s.requests()
	page := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, ada, p.Id, ptr(10), nil)).Post.Revisions
	// The post, the page, and for revision 3 (above the page's last body,
	// and the post's last revision) the body item.
	equal(t, "requests of a post with its revisions' bodies", total(s.requests()), 3)
	equal(t, "revisions", len(page.Edges), 3)
	for _, e := range page.Edges {
		equal(t, fmt.Sprintf("body of revision %d", e.Node.Number), e.Node.Body, want[e.Node.Number])
	}
	// Page by page: revision 1 alone finds its body in revision 2 (one
	// Query past it, no body item).
	// Revision 3 alone: the post, the page and the body item; revision 2
	// holds its body; revision 1 alone finds its body in revision 2 (one
	// Query past it, no body item).
	var after *string
	for _, c := range []struct{ n, requests int }{{3, 3}, {2, 2}, {1, 3}} {
		n, requests := c.n, c.requests
		s.requests()
		r := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, ada, p.Id, ptr(1), after)).Post.Revisions
		equal(t, fmt.Sprintf("requests of revision %d alone", n), total(s.requests()), requests)
		if len(r.Edges) != 1 || r.Edges[0].Node.Number != n {
			t.Fatalf("page of revision %d: %+v", n, r.Edges)
		}
		equal(t, fmt.Sprintf("body of revision %d alone", n), r.Edges[0].Node.Body, want[n])
		after = r.PageInfo.EndCursor
	}

	// Restoring a bodyless revision restores the body before its edit.
	r1 := page.Edges[2].Node
	restored := ok[*RestorePostRevisionResponse](t)(RestorePostRevision(ctx, ada, RestorePostRevisionInput{
		PostId: p.Id, RevisionId: r1.Id, ExpectedVersion: v})).RestorePostRevision.Post
	if restored.Title != "Title one" || restored.Body != "Body A." {
		t.Errorf("restored revision 1: %+v", restored)
	}
	r3 := page.Edges[0].Node
	restored = ok[*RestorePostRevisionResponse](t)(RestorePostRevision(ctx, ada, RestorePostRevisionInput{
		PostId: p.Id, RevisionId: r3.Id, ExpectedVersion: restored.Version})).RestorePostRevision.Post
	if restored.Title != "Title two" || restored.Body != "Body B." {
		t.Errorf("restored revision 3: %+v", restored)
	}
	s.consistent()

	// A revision written before the mark holds its body and reads it.
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"PK": revItem(1)["PK"], "SK": revItem(1)["SK"]},
		UpdateExpression:          aws.String("SET body = :b REMOVE bodyless"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: "Body of old."}},
	}); err != nil {
		t.Fatal(err)
	}
	all := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, ada, p.Id, ptr(10), nil)).Post.Revisions.Edges
	if got := all[len(all)-1].Node; got.Number != 1 || got.Body != "Body of old." {
		t.Errorf("revision 1 written before the mark: number %d, body %q", got.Number, got.Body)
	}
	s.consistent()
}
