package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// snapshot returns every item of the table, each as canonical JSON, in
// order: two equal snapshots mean nothing was written in between.
func (s *server) snapshot() []string {
	s.t.Helper()
	var items []string
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			s.t.Fatal(err)
		}
		for _, it := range page.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				s.t.Fatal(err)
			}
			b, err := json.Marshal(m)
			if err != nil {
				s.t.Fatal(err)
			}
			items = append(items, string(b))
		}
	}
	slices.Sort(items)
	return items
}

// unchanged fails the test when the table differs from before or the
// invariant checker finds anything.
func (s *server) unchanged(before []string) {
	s.t.Helper()
	if after := s.snapshot(); !slices.Equal(before, after) {
		s.t.Errorf("the table changed: %d items before, %d after", len(before), len(after))
	}
	s.consistent()
}

// The actors of the authorization matrix.
const (
	anonymous   = "anonymous"
	reader      = "a reader"
	otherReader = "another reader"
	other       = "another author"
	owner       = "owner"
	postAuthor  = "the post's author"
	admin       = "admin"
)

// actors are the actors of the authorization matrix, in the order the
// matrix runs them.
var actors = []string{anonymous, reader, otherReader, other, owner, postAuthor, admin}

// TestAuthorizationMatrix sends every mutation as each actor and checks
// the outcome: the error code, or success with the right author on what
// was written. The readers may comment and change their own comments and
// nothing else; a pending comment is not found by anyone but its reader,
// the post's author and admins. A refused mutation leaves every item of
// the table as it was.
func TestAuthorizationMatrix(t *testing.T) {
	// Each mutation runs on a table of its own: the checks after every
	// call read the whole table, which would otherwise hold what every
	// mutation before it wrote.
	first := newAuthMatrix(t)
	for i, c := range first.cases {
		t.Run(c.mutation, func(t *testing.T) {
			m := first
			if i > 0 {
				m = newAuthMatrix(t)
			}
			c, s := m.cases[i], m.s
			for _, actor := range actors {
				want, run := c.want[actor]
				if !run {
					continue
				}
				t.Run(actor, func(t *testing.T) {
					target := c.prepare()
					before := s.snapshot()
					author, err := c.call(m.clients[actor], target)
					if want != "" {
						equal(t, "code", code(err), want)
						s.unchanged(before)
						return
					}
					if err != nil {
						t.Fatalf("%s as %s: %v, want success", c.mutation, actor, err)
					}
					wantAuthor := m.names[owner]
					if c.byActor {
						wantAuthor = m.names[actor]
					}
					if author != "" {
						equal(t, "author", author, wantAuthor)
					}
					s.consistent()
				})
			}
		})
	}
}

// authMatrix is a server with the authors, readers and category of the
// authorization matrix, each actor's client and the matrix's cases, whose
// targets it prepares.
type authMatrix struct {
	s       *server
	clients map[string]graphql.Client
	names   map[string]string // the actors' names as authors or readers
	cases   []authCase
}

// For every actor a case prepares a target (an id), calls the mutation
// on it and returns the name of the author of what it wrote, or "".
// The author is the actor when byActor is set, else grace, the owner,
// whoever made the change. want maps an actor to the code it gets, ""
// for success.
type authCase struct {
	mutation string
	prepare  func() string
	call     func(c graphql.Client, target string) (string, error)
	byActor  bool
	want     map[string]string
}

// newAuthMatrix starts a server on a table of its own for the
// authorization matrix.
func newAuthMatrix(t *testing.T) authMatrix {
	// The clock stands still: the readers need more than five comments.
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.Comments.PerMinute = 100 })
	ctx := context.Background()
	ids := map[string]string{}
	for _, a := range [][2]string{{"ada", "Ada Lovelace"}, {"grace", "Grace Hopper"}, {"alan", "Alan Turing"}, {"margaret", "Margaret Hamilton"}} {
		r := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &a[0], Name: a[1]}))
		ids[a[0]] = r.CreateAuthor.Author.Id
	}
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "go", Name: "Go"}))
	clients := map[string]graphql.Client{
		anonymous:   s.client,
		reader:      s.reader("auth0|lin", "Lin Reader", ""),
		otherReader: s.reader("auth0|rosa", "Rosa Reader", ""),
		other:       s.as("alan", auth.RoleAuthor),
		owner:       s.as("grace", auth.RoleAuthor),
		postAuthor:  s.as("margaret", auth.RoleAuthor),
		admin:       s.as("ada", auth.RoleAdmin),
	}
	names := map[string]string{reader: "Lin Reader", otherReader: "Rosa Reader", other: "Alan Turing", owner: "Grace Hopper", postAuthor: "Margaret Hamilton", admin: "Ada Lovelace"}

	n := 0
	unique := func(prefix string) string { n++; return fmt.Sprintf("%s-%d", prefix, n) }
	// draft and published make a post of grace, the owner.
	draft := func() string {
		return ok[*CreatePostResponse](t)(CreatePost(ctx, clients[owner], CreatePostInput{Title: "Grace's", Slug: unique("grace")})).CreatePost.Post.Id
	}
	published := func() string {
		id := draft()
		ok[*PublishPostResponse](t)(PublishPost(ctx, clients[owner], PublishPostInput{Id: id}))
		return id
	}
	// coAuthored makes a published post of grace with margaret, the post
	// author, as its co-author, with a tag.
	coAuthored := func() string {
		id := ok[*CreatePostResponse](t)(CreatePost(ctx, clients[owner], CreatePostInput{
			Title: "Grace's and Margaret's", Slug: unique("together"), CoAuthors: []string{ids["margaret"]}, Tags: []string{"Pair"},
		})).CreatePost.Post.Id
		ok[*PublishPostResponse](t)(PublishPost(ctx, clients[owner], PublishPostInput{Id: id}))
		return id
	}
	// comment returns a preparer of a comment of grace on a post of
	// margaret, which margaret unpublished since when draftSince is set.
	comment := func(draftSince bool) func() string {
		return func() string {
			post := ok[*CreatePostResponse](t)(CreatePost(ctx, clients[postAuthor], CreatePostInput{Title: "Margaret's", Slug: unique("margaret")})).CreatePost.Post.Id
			ok[*PublishPostResponse](t)(PublishPost(ctx, clients[postAuthor], PublishPostInput{Id: post}))
			c := ok[*AddCommentResponse](t)(AddComment(ctx, clients[owner], AddCommentInput{PostId: post, Body: "Mine."})).AddComment.Comment.Id
			if draftSince {
				ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, clients[postAuthor], UnpublishPostInput{Id: post}))
			}
			return c
		}
	}
	// readersComment returns a preparer of a comment of the reader on a
	// post of margaret: pending, or approved by her when published is
	// set.
	readersComment := func(published bool) func() string {
		return func() string {
			post := ok[*CreatePostResponse](t)(CreatePost(ctx, clients[postAuthor], CreatePostInput{Title: "Margaret's", Slug: unique("margaret")})).CreatePost.Post.Id
			ok[*PublishPostResponse](t)(PublishPost(ctx, clients[postAuthor], PublishPostInput{Id: post}))
			c := ok[*AddCommentResponse](t)(AddComment(ctx, clients[reader], AddCommentInput{PostId: post, Body: unique("Lin's")})).AddComment.Comment.Id
			if published {
				ok[*ApproveCommentResponse](t)(ApproveComment(ctx, clients[postAuthor], ApproveCommentInput{Id: c}))
			}
			return c
		}
	}
	updateComment := func(c graphql.Client, id string) (string, error) {
		body := unique("Edited")
		r, err := UpdateComment(ctx, c, UpdateCommentInput{Id: id, Body: body})
		if err == nil && r.UpdateComment.Comment.Body != body {
			err = fmt.Errorf("comment %+v not edited", r.UpdateComment.Comment)
		}
		return "", err
	}
	approveComment := func(c graphql.Client, id string) (string, error) {
		r, err := ApproveComment(ctx, c, ApproveCommentInput{Id: id})
		if err == nil && r.ApproveComment.Comment.Status != CommentStatusPublished {
			err = fmt.Errorf("comment %+v not approved", r.ApproveComment.Comment)
		}
		return "", err
	}
	rejectComment := func(c graphql.Client, id string) (string, error) {
		r, err := RejectComment(ctx, c, RejectCommentInput{Id: id})
		if err == nil && r.RejectComment.Comment.Status != CommentStatusRejected {
			err = fmt.Errorf("comment %+v not rejected", r.RejectComment.Comment)
		}
		return "", err
	}
	deleteComment := func(c graphql.Client, id string) (string, error) {
		r, err := DeleteComment(ctx, c, DeleteCommentInput{Id: id})
		switch {
		case err != nil:
		case r.DeleteComment.DeletedCommentId != id:
			err = fmt.Errorf("deleted %s, want %s", r.DeleteComment.DeletedCommentId, id)
		case r.DeleteComment.Comment != nil && (!r.DeleteComment.Comment.Deleted || r.DeleteComment.Comment.Body != ""):
			err = fmt.Errorf("comment %+v not deleted", r.DeleteComment.Comment)
		}
		return "", err
	}
	none := func() string { return "" }
	// draftPage and publishedPage make a static page as the admin.
	draftPage := func() string {
		return ok[*CreatePageResponse](t)(CreatePage(ctx, clients[admin], CreatePageInput{Title: "Page", Slug: unique("page")})).CreatePage.Page.Id
	}
	publishedPage := func() string {
		id := draftPage()
		ok[*PublishPageResponse](t)(PublishPage(ctx, clients[admin], PublishPageInput{Id: id}))
		return id
	}
	adminsOnly := map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", admin: ""}
	siteVersion := 0
	// seriesOf returns a preparer of a series of grace, the owner, and a
	// published post of hers ("<slug> <postId>"), in the series when
	// inSeries is set.
	seriesOf := func(inSeries bool) func() string {
		return func() string {
			slug := unique("series")
			ok[*CreateSeriesResponse](t)(CreateSeries(ctx, clients[owner], CreateSeriesInput{Slug: slug, Title: "Grace's series"}))
			post := published()
			if inSeries {
				ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, clients[owner], AddPostToSeriesInput{SeriesSlug: slug, PostId: post}))
			}
			return slug + " " + post
		}
	}
	// revised returns a published post of grace's with one revision
	// ("<postId> <revisionId>"), at version 3.
	revised := func() string {
		post := published()
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, clients[owner], UpdatePostInput{Id: post, ExpectedVersion: 2, Title: ptr("Edited")}))
		rev := ok[*PostRevisionsResponse](t)(PostRevisions(ctx, clients[owner], post, nil, nil)).Post.Revisions.Edges[0].Node.Id
		return post + " " + rev
	}
	two := func(target string) (string, string) { a, b, _ := strings.Cut(target, " "); return a, b }

	cases := []authCase{
		{"createAuthor", none, func(c graphql.Client, _ string) (string, error) {
			_, err := CreateAuthor(ctx, c, CreateAuthorInput{Name: "New author"})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", admin: ""}},
		{"updateAuthor", func() string { return ids["grace"] }, func(c graphql.Client, id string) (string, error) {
			r, err := UpdateAuthor(ctx, c, UpdateAuthorInput{Id: id, Bio: ptr(unique("bio"))})
			if err != nil {
				return "", err
			}
			return r.UpdateAuthor.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"createCategory", none, func(c graphql.Client, _ string) (string, error) {
			_, err := CreateCategory(ctx, c, CreateCategoryInput{Slug: unique("cat"), Name: "New"})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", admin: ""}},
		{"updateCategory", none, func(c graphql.Client, _ string) (string, error) {
			_, err := UpdateCategory(ctx, c, UpdateCategoryInput{Slug: ptr("go"), Description: ptr(unique("about"))})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", admin: ""}},
		{"createPost", none, func(c graphql.Client, _ string) (string, error) {
			r, err := CreatePost(ctx, c, CreatePostInput{Title: "Mine", Slug: unique("mine"), Categories: []string{"go"}})
			if err != nil {
				return "", err
			}
			return r.CreatePost.Post.Author.Name, nil
		}, true, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "", owner: "", admin: ""}},
		{"updatePost of a published post", published, func(c graphql.Client, id string) (string, error) {
			r, err := UpdatePost(ctx, c, UpdatePostInput{Id: id, ExpectedVersion: 2, Title: ptr("Edited")})
			if err != nil {
				return "", err
			}
			return r.UpdatePost.Post.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"updatePost of a draft", draft, func(c graphql.Client, id string) (string, error) {
			r, err := UpdatePost(ctx, c, UpdatePostInput{Id: id, ExpectedVersion: 1, Title: ptr("Edited")})
			if err != nil {
				return "", err
			}
			return r.UpdatePost.Post.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "NOT_FOUND", owner: "", admin: ""}},
		{"updatePost of a co-authored post", coAuthored, func(c graphql.Client, id string) (string, error) {
			r, err := UpdatePost(ctx, c, UpdatePostInput{Id: id, ExpectedVersion: 2, Title: ptr("Edited"), Tags: []string{"Pair", "Edited"}})
			if err != nil {
				return "", err
			}
			return r.UpdatePost.Post.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", postAuthor: "", admin: ""}},
		{"Post.revisions of a co-authored post", coAuthored, func(c graphql.Client, id string) (string, error) {
			_, err := PostRevisions(ctx, c, id, nil, nil)
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", postAuthor: "", admin: ""}},
		{"updatePost of a post's co-authors", coAuthored, func(c graphql.Client, id string) (string, error) {
			r, err := UpdatePost(ctx, c, UpdatePostInput{Id: id, ExpectedVersion: 2, CoAuthors: []string{ids["alan"]}})
			if err != nil {
				return "", err
			}
			return r.UpdatePost.Post.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", postAuthor: "FORBIDDEN", admin: ""}},
		{"renameTag", coAuthored, func(c graphql.Client, _ string) (string, error) {
			_, err := RenameTag(ctx, c, RenameTagInput{Slug: "pair", Name: unique("Pair")})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", postAuthor: "FORBIDDEN", admin: ""}},
		{"mergeTags", func() string {
			coAuthored()
			from := unique("solo")
			ok[*CreatePostResponse](t)(CreatePost(ctx, clients[owner], CreatePostInput{Title: "Solo", Slug: from, Tags: []string{from}}))
			return from
		}, func(c graphql.Client, from string) (string, error) {
			_, err := MergeTags(ctx, c, MergeTagsInput{From: from, Into: "pair"})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", postAuthor: "FORBIDDEN", admin: ""}},
		{"publishPost", draft, func(c graphql.Client, id string) (string, error) {
			r, err := PublishPost(ctx, c, PublishPostInput{Id: id})
			if err != nil {
				return "", err
			}
			return r.PublishPost.Post.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "NOT_FOUND", owner: "", admin: ""}},
		{"unpublishPost", published, func(c graphql.Client, id string) (string, error) {
			r, err := UnpublishPost(ctx, c, UnpublishPostInput{Id: id})
			if err != nil {
				return "", err
			}
			return r.UnpublishPost.Post.Author.Name, nil
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"deletePost", published, func(c graphql.Client, id string) (string, error) {
			_, err := DeletePost(ctx, c, DeletePostInput{Id: id})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"addComment", published, func(c graphql.Client, id string) (string, error) {
			r, err := AddComment(ctx, c, AddCommentInput{PostId: id, Body: "Nice."})
			if err != nil {
				return "", err
			}
			return r.AddComment.Comment.Commenter.Name, nil
		}, true, map[string]string{anonymous: "UNAUTHENTICATED", reader: "", otherReader: "", other: "", owner: "", postAuthor: "", admin: ""}},
		{"updateComment of an author's comment", comment(false), updateComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", otherReader: "FORBIDDEN", other: "FORBIDDEN", owner: "", postAuthor: "FORBIDDEN", admin: ""}},
		{"deleteComment", comment(false), deleteComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", otherReader: "FORBIDDEN", other: "FORBIDDEN", owner: "", postAuthor: "", admin: ""}},
		{"deleteComment on a post unpublished since", comment(true), deleteComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "NOT_FOUND", otherReader: "NOT_FOUND", other: "NOT_FOUND", owner: "", postAuthor: "", admin: ""}},
		{"updateComment of a reader's comment", readersComment(true), updateComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "", otherReader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", postAuthor: "FORBIDDEN", admin: ""}},
		{"deleteComment of a reader's comment", readersComment(true), deleteComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "", otherReader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", postAuthor: "", admin: ""}},
		{"updateComment of a pending comment", readersComment(false), updateComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "", otherReader: "NOT_FOUND", other: "NOT_FOUND", owner: "NOT_FOUND", postAuthor: "FORBIDDEN", admin: ""}},
		{"deleteComment of a pending comment", readersComment(false), deleteComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "", otherReader: "NOT_FOUND", other: "NOT_FOUND", owner: "NOT_FOUND", postAuthor: "", admin: ""}},
		{"approveComment", readersComment(false), approveComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", otherReader: "NOT_FOUND", other: "NOT_FOUND", owner: "NOT_FOUND", postAuthor: "", admin: ""}},
		{"rejectComment", readersComment(false), rejectComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", otherReader: "NOT_FOUND", other: "NOT_FOUND", owner: "NOT_FOUND", postAuthor: "", admin: ""}},
		{"approveComment of a published comment", readersComment(true), approveComment, false,
			map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", otherReader: "FORBIDDEN", other: "FORBIDDEN", owner: "FORBIDDEN", postAuthor: "CONFLICT", admin: "CONFLICT"}},
		{"createPage", none, func(c graphql.Client, _ string) (string, error) {
			_, err := CreatePage(ctx, c, CreatePageInput{Title: "About", Slug: unique("about")})
			return "", err
		}, false, adminsOnly},
		{"updatePage", draftPage, func(c graphql.Client, id string) (string, error) {
			_, err := UpdatePage(ctx, c, UpdatePageInput{Id: id, ExpectedVersion: 1, Title: ptr("Edited")})
			return "", err
		}, false, adminsOnly},
		{"publishPage", draftPage, func(c graphql.Client, id string) (string, error) {
			_, err := PublishPage(ctx, c, PublishPageInput{Id: id})
			return "", err
		}, false, adminsOnly},
		{"unpublishPage", publishedPage, func(c graphql.Client, id string) (string, error) {
			_, err := UnpublishPage(ctx, c, UnpublishPageInput{Id: id})
			return "", err
		}, false, adminsOnly},
		{"deletePage", publishedPage, func(c graphql.Client, id string) (string, error) {
			_, err := DeletePage(ctx, c, DeletePageInput{Id: id})
			return "", err
		}, false, adminsOnly},
		{"updateSite", none, func(c graphql.Client, _ string) (string, error) {
			r, err := UpdateSite(ctx, c, UpdateSiteInput{ExpectedVersion: siteVersion, Title: ptr(unique("Blog"))})
			if err == nil {
				siteVersion = r.UpdateSite.Site.Version
			}
			return "", err
		}, false, adminsOnly},
		{"updateAuthor's profile", func() string { return ids["grace"] }, func(c graphql.Client, id string) (string, error) {
			_, err := UpdateAuthorProfile(ctx, c, UpdateAuthorInput{Id: id, Website: ptr("https://grace.example.com/" + unique("w")),
				Location: ptr("Arlington"), SocialLinks: []SocialAccountInput{{Network: "GitHub", Url: "https://github.com/grace"}}})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},

		// Featured posts, series and revisions.
		{"setPostFeatured", published, func(c graphql.Client, id string) (string, error) {
			_, err := SetPostFeatured(ctx, c, SetPostFeaturedInput{Id: id, Featured: true})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"createSeries", none, func(c graphql.Client, _ string) (string, error) {
			_, err := CreateSeries(ctx, c, CreateSeriesInput{Slug: unique("new-series"), Title: "New"})
			return "", err
		}, true, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "", owner: "", admin: ""}},
		{"updateSeries", seriesOf(false), func(c graphql.Client, target string) (string, error) {
			slug, _ := two(target)
			_, err := UpdateSeries(ctx, c, UpdateSeriesInput{Slug: slug, Title: ptr("Renamed")})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"deleteSeries", seriesOf(true), func(c graphql.Client, target string) (string, error) {
			slug, _ := two(target)
			_, err := DeleteSeries(ctx, c, DeleteSeriesInput{Slug: slug})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"addPostToSeries", seriesOf(false), func(c graphql.Client, target string) (string, error) {
			slug, post := two(target)
			_, err := AddPostToSeries(ctx, c, AddPostToSeriesInput{SeriesSlug: slug, PostId: post})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", postAuthor: "FORBIDDEN", owner: "", admin: ""}},
		{"removePostFromSeries", seriesOf(true), func(c graphql.Client, target string) (string, error) {
			slug, post := two(target)
			_, err := RemovePostFromSeries(ctx, c, RemovePostFromSeriesInput{SeriesSlug: slug, PostId: post})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", postAuthor: "FORBIDDEN", owner: "", admin: ""}},
		{"moveSeriesPost", seriesOf(true), func(c graphql.Client, target string) (string, error) {
			slug, post := two(target)
			_, err := MoveSeriesPost(ctx, c, MoveSeriesPostInput{SeriesSlug: slug, PostId: post, Position: 1})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", owner: "", admin: ""}},
		{"restorePostRevision", revised, func(c graphql.Client, target string) (string, error) {
			post, rev := two(target)
			_, err := RestorePostRevision(ctx, c, RestorePostRevisionInput{PostId: post, RevisionId: rev, ExpectedVersion: 3})
			return "", err
		}, false, map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", other: "FORBIDDEN", postAuthor: "FORBIDDEN", owner: "", admin: ""}},
	}
	return authMatrix{s: s, clients: clients, names: names, cases: cases}
}

// TestPendingCommentReads reads a reader's pending comment as each actor:
// by its id, in the post's comments, in the moderation queue. Only the
// reader, the post's author and admins find it, and never in the post's
// comments.
func TestPendingCommentReads(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t) // ada's post
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alan"), Name: "Alan Turing"}))
	clients := map[string]graphql.Client{
		anonymous:   s.client,
		reader:      s.reader("lin", "Lin", ""),
		otherReader: s.reader("rosa", "Rosa", ""),
		other:       s.as("alan", auth.RoleAuthor),
		owner:       b.grace, // an author with a comment of her own on the post
		postAuthor:  b.ada,
		admin:       s.admin,
	}
	ok[*AddCommentResponse](t)(AddComment(ctx, b.grace, AddCommentInput{PostId: b.post, Body: "Grace's."}))
	held := ok[*AddCommentResponse](t)(AddComment(ctx, clients[reader], AddCommentInput{PostId: b.post, Body: "Lin's."})).AddComment.Comment.Id
	sees := map[string]bool{reader: true, postAuthor: true, admin: true}
	queue := map[string]string{anonymous: "UNAUTHENTICATED", reader: "FORBIDDEN", otherReader: "FORBIDDEN", other: "", owner: "", postAuthor: "", admin: ""}
	for _, actor := range actors {
		t.Run(actor, func(t *testing.T) {
			c := clients[actor]
			want := "NOT_FOUND"
			if sees[actor] {
				want = ""
			}
			_, err := CommentByID(ctx, c, held)
			equal(t, "by id", code(err), want)
			list := ok[*PostCommentsResponse](t)(PostComments(ctx, c, b.slug, nil, nil)).Post.Comments
			equal(t, "in the post's comments", len(list.Edges), 1)
			q, err := ModerationQueue(ctx, c, nil, nil)
			equal(t, "moderation queue", code(err), queue[actor])
			if err == nil {
				listed := slices.ContainsFunc(q.ModerationQueue.Edges, func(e ModerationQueueModerationQueuePendingCommentConnectionEdgesCommentEdge) bool {
					return e.Node.Id == held
				})
				equal(t, "in the moderation queue", listed, sees[actor] && actor != reader)
			}
		})
	}
}
