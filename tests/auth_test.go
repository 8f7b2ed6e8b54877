package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/golang-jwt/jwt/v5"
	"github.com/vektah/gqlparser/v2/gqlerror"

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

	// For every actor a case prepares a target (an id), calls the mutation
	// on it and returns the name of the author of what it wrote, or "".
	// The author is the actor when byActor is set, else grace, the owner,
	// whoever made the change. want maps an actor to the code it gets, ""
	// for success.
	cases := []struct {
		mutation string
		prepare  func() string
		call     func(c graphql.Client, target string) (string, error)
		byActor  bool
		want     map[string]string
	}{
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
	for _, c := range cases {
		for _, actor := range actors {
			want, run := c.want[actor]
			if !run {
				continue
			}
			t.Run(c.mutation+"/"+actor, func(t *testing.T) {
				target := c.prepare()
				before := s.snapshot()
				author, err := c.call(clients[actor], target)
				if want != "" {
					equal(t, "code", code(err), want)
					s.unchanged(before)
					return
				}
				if err != nil {
					t.Fatalf("%s as %s: %v, want success", c.mutation, actor, err)
				}
				wantAuthor := names[owner]
				if c.byActor {
					wantAuthor = names[actor]
				}
				if author != "" {
					equal(t, "author", author, wantAuthor)
				}
				s.consistent()
			})
		}
	}
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

// TestTokensOfNoAuthorAreReaders covers tokens that verify but name no
// author who may write: they may not write posts (FORBIDDEN, nothing
// written), they comment as readers, held for moderation, and their
// viewer is null, with no read, even when their subject is an author's id
// (the role is missing, misspelled, or reader).
func TestTokensOfNoAuthorAreReaders(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	clients := []struct {
		name   string
		client graphql.Client
		// viewerReads is what viewer reads: the author a token with the
		// author role names, to find there is none.
		viewerReads int
	}{
		{"an author without a role", s.as("grace"), 0},
		{"an unknown role", s.as("grace", "editor"), 0},
		{"a subject that is no author", s.as("nobody", auth.RoleAuthor), 1},
		{"a subject that is no valid author id", s.as("auth0|12345", auth.RoleAuthor), 0},
		{"the reader role", s.as("auth0|67890", auth.RoleReader), 0},
		{"an author's subject with the reader role", s.as("grace", auth.RoleReader), 0},
		{"an author's subject with a misspelled role", s.as("grace", "Author"), 0},
		{"an author's subject with a plural role", s.as("grace", "authors"), 0},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			s.clock.Advance(time.Minute) // under the readers' rate limit
			if v := ok[*ViewerResponse](t)(Viewer(ctx, c.client)); v.Viewer != nil {
				t.Errorf("viewer = %+v, want null", v.Viewer)
			}
			equal(t, "DynamoDB requests of viewer", total(s.requests()), c.viewerReads)
			before := s.snapshot()
			_, err := CreatePost(ctx, c.client, CreatePostInput{Title: "T", Slug: "refused"})
			equal(t, "createPost", code(err), "FORBIDDEN")
			s.unchanged(before)
			r := ok[*AddCommentResponse](t)(AddComment(ctx, c.client, AddCommentInput{PostId: b.published[0], Body: "As a reader: " + c.name}))
			equal(t, "status", r.AddComment.Comment.Status, CommentStatusPending)
			equal(t, "commenter", *r.AddComment.Comment.Commenter, AddCommentAddCommentAddCommentPayloadCommentCommenter{Name: "Reader"})
			s.consistent()
		})
	}
}

// TestInvalidTokensAreRefused sends tokens that do not verify: every
// request, reads included, is answered 401 UNAUTHENTICATED, and nothing
// is written.
func TestInvalidTokensAreRefused(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	admin := func(change func(*auth.Claims)) auth.Claims {
		c := s.claims("ada", auth.RoleAdmin)
		change(&c)
		return c
	}
	now := s.clock.Now()
	tests := []struct {
		name   string
		client graphql.Client
	}{
		{"expired", s.withClaims(admin(func(c *auth.Claims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Hour)) }), testSecret)},
		{"without expiry", s.withClaims(admin(func(c *auth.Claims) { c.ExpiresAt = nil }), testSecret)},
		{"not valid yet", s.withClaims(admin(func(c *auth.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Hour)) }), testSecret)},
		{"bad signature", s.withClaims(admin(func(*auth.Claims) {}), []byte("not-the-secret-of-this-server-at-all"))},
		{"wrong issuer", s.withClaims(admin(func(c *auth.Claims) { c.Issuer = "https://id.elsewhere.test/" }), testSecret)},
		{"wrong audience", s.withClaims(admin(func(c *auth.Claims) { c.Audience = jwt.ClaimStrings{"another-api"} }), testSecret)},
		{"no subject", s.withClaims(admin(func(c *auth.Claims) { c.Subject = "" }), testSecret)},
		{"not a JWT", s.withToken("not-a-jwt")},
		{"issued in the future", s.withClaims(admin(func(c *auth.Claims) { c.IssuedAt = jwt.NewNumericDate(now.Add(time.Hour)) }), testSecret)},
		{"an expiry that is a string", s.withToken(s.rawToken(jwt.MapClaims{"exp": fmt.Sprint(now.Add(time.Hour).Unix())}, nil))},
		{"roles that are a string", s.withToken(s.rawToken(jwt.MapClaims{"roles": "admin"}, nil))},
		{"a critical header extension", s.withToken(s.rawToken(nil, map[string]any{"crit": []string{"exp-policy"}, "exp-policy": "strict"}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.snapshot()
			_, err := CreateCategory(ctx, tt.client, CreateCategoryInput{Slug: "refused", Name: "Refused"})
			equal(t, "mutation code", code(err), "UNAUTHENTICATED")
			equal(t, "mutation status", status(err), http.StatusUnauthorized)
			_, err = Categories(ctx, tt.client)
			equal(t, "read code", code(err), "UNAUTHENTICATED")
			equal(t, "read status", status(err), http.StatusUnauthorized)
			for _, goTalk := range []string{"Claims", "[]string", "json:", "NumericDate"} {
				if err != nil && strings.Contains(err.Error(), goTalk) {
					t.Errorf("error %q speaks Go (%q)", err, goTalk)
				}
			}
			s.unchanged(before)
		})
	}

	t.Run("a token expires as time passes", func(t *testing.T) {
		c := s.as("ada", auth.RoleAdmin)
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, c, CreateCategoryInput{Slug: "in-time", Name: "In time"}))
		s.clock.Advance(25 * time.Hour)
		_, err := CreateCategory(ctx, c, CreateCategoryInput{Slug: "too-late", Name: "Too late"})
		equal(t, "code", code(err), "UNAUTHENTICATED")
	})

	t.Run("the answer names the bearer scheme", func(t *testing.T) {
		a := s.fetch(t, http.MethodPost, s.url, `{"query":"{ __typename }"}`, map[string]string{"Authorization": "Basic YWRhOnNlY3JldA=="})
		equal(t, "status", a.status, http.StatusUnauthorized)
		equal(t, "WWW-Authenticate", a.header.Get("WWW-Authenticate"), `Bearer error="invalid_token"`)
	})
}

// rawToken returns an admin token valid for the test server but for what
// claims and header change: claims and header parameters the typed Claims
// cannot hold.
func (s *server) rawToken(claims jwt.MapClaims, header map[string]any) string {
	s.t.Helper()
	now := s.clock.Now()
	c := jwt.MapClaims{"sub": "ada", "iss": testIssuer, "aud": testAudience, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "roles": []string{auth.RoleAdmin}}
	for k, v := range claims {
		c[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	for k, v := range header {
		tok.Header[k] = v
	}
	signed, err := tok.SignedString(testSecret)
	if err != nil {
		s.t.Fatal(err)
	}
	return signed
}

// TestAuthorizationCost counts the DynamoDB requests the ownership check
// adds to a post write: one read for its author, none for an admin, and a
// refused write sends that read and nothing else.
func TestAuthorizationCost(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	post := b.published[0] // ada's, version 2
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: post, ExpectedVersion: 2, Title: ptr("By ada")}))
	byAuthor := s.requests()
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, s.admin, UpdatePostInput{Id: post, ExpectedVersion: 3, Title: ptr("By an admin")}))
	byAdmin := s.requests()
	t.Logf("updatePost by its author: %v; by an admin: %v", byAuthor, byAdmin)
	equal(t, "transactions", byAuthor["TransactWriteItems"], 1)
	equal(t, "requests added by the check", total(byAuthor)-total(byAdmin), 1)

	_, err := UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: post, ExpectedVersion: 4, Title: ptr("By grace")})
	equal(t, "code", code(err), "FORBIDDEN")
	refused := s.requests()
	t.Logf("refused updatePost: %v", refused)
	equal(t, "requests of a refused write", total(refused), 1)
	equal(t, "transactions of a refused write", refused["TransactWriteItems"], 0)
}

// TestRetriedDeletesReturnTheSameResult retries deletes by their authors
// with the same idempotency key: the ownership check, which finds nothing
// the second time, must not turn the retry into NOT_FOUND.
func TestRetriedDeletesReturnTheSameResult(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()

	in := DeletePostInput{Id: b.published[0], IdempotencyKey: ptr("delete-post-0")}
	first := ok[*DeletePostResponse](t)(DeletePost(ctx, b.writers[0], in))
	again := ok[*DeletePostResponse](t)(DeletePost(ctx, b.writers[0], in))
	equal(t, "retried deletePost", again.DeletePost.Post, first.DeletePost.Post)
	_, err := DeletePost(ctx, b.writers[0], DeletePostInput{Id: b.published[0]})
	equal(t, "deletePost without key after it", code(err), "NOT_FOUND")

	c := ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[1], AddCommentInput{PostId: b.published[1], Body: "Soon gone."})).AddComment.Comment
	cin := DeleteCommentInput{Id: c.Id, IdempotencyKey: ptr("delete-comment")}
	firstC := ok[*DeleteCommentResponse](t)(DeleteComment(ctx, b.writers[1], cin))
	againC := ok[*DeleteCommentResponse](t)(DeleteComment(ctx, b.writers[1], cin))
	equal(t, "retried deleteComment", *againC.DeleteComment.Comment, *firstC.DeleteComment.Comment)
	s.consistent()
}

// TestIdempotencyKeysAreEachUsers sends one user's idempotency key as
// other users: it replays nothing of the first user's result, and the same
// key serves each user's own write.
func TestIdempotencyKeysAreEachUsers(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ada, grace := b.writers[0], b.writers[1]

	in := DeletePostInput{Id: b.published[0], IdempotencyKey: ptr("ada-deletes")}
	ok[*DeletePostResponse](t)(DeletePost(ctx, ada, in))
	for name, c := range map[string]graphql.Client{"another author": grace, "an admin": s.admin} {
		_, err := DeletePost(ctx, c, in)
		equal(t, "deletePost of a deleted post with its author's key, by "+name, code(err), "NOT_FOUND")
	}

	key := ptr("my-first-post")
	mine := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Ada's", Slug: "adas", IdempotencyKey: key})).CreatePost.Post
	theirs := ok[*CreatePostResponse](t)(CreatePost(ctx, grace, CreatePostInput{Title: "Grace's", Slug: "graces", IdempotencyKey: key})).CreatePost.Post
	if mine.Id == theirs.Id {
		t.Errorf("two authors' createPost with one key made one post %s", mine.Id)
	}
	again := ok[*CreatePostResponse](t)(CreatePost(ctx, grace, CreatePostInput{Title: "Grace's", Slug: "graces", IdempotencyKey: key})).CreatePost.Post
	equal(t, "grace's retried createPost", again.Id, theirs.Id)
	s.consistent()
}

// errReason returns extensions.reason of the first GraphQL error in err.
func errReason(err error) string {
	var list gqlerror.List
	if errors.As(err, &list) && len(list) > 0 {
		r, _ := list[0].Extensions["reason"].(string)
		return r
	}
	return ""
}

// TestAdminsAreASeparateKindOfPrincipal signs in as an admin whose subject
// is no author: every administrative action works (authors, categories,
// anyone's posts and comments), and what an admin writes as someone is
// written as the token's subject: creating a post needs an author there
// (FORBIDDEN, and nothing written), while a comment is a reader's, never
// held.
func TestAdminsAreASeparateKindOfPrincipal(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	root := s.as("root", auth.RoleAdmin)
	comment := ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[1], AddCommentInput{PostId: b.published[2], Body: "Grace's."})).AddComment.Comment.Id

	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, root, CreateAuthorInput{Subject: ptr("edsger"), Name: "Edsger Dijkstra"}))
	ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, root, UpdateAuthorInput{Id: b.authors[1], Bio: ptr("Edited by an admin")}))
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, root, CreateCategoryInput{Slug: "admin-made", Name: "Admin made"}))
	ok[*UpdateCategoryResponse](t)(UpdateCategory(ctx, root, UpdateCategoryInput{Slug: ptr("go"), Description: ptr("Edited")}))
	edited := ok[*UpdatePostResponse](t)(UpdatePost(ctx, root, UpdatePostInput{Id: b.published[0], ExpectedVersion: 2, Title: ptr("Edited by an admin")})).UpdatePost.Post
	equal(t, "author of a post an admin edited", edited.Author.Name, "Ada Lovelace")
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, root, UnpublishPostInput{Id: b.published[1]}))
	ok[*PublishPostResponse](t)(PublishPost(ctx, root, PublishPostInput{Id: b.published[1]}))
	ok[*PublishPostResponse](t)(PublishPost(ctx, root, PublishPostInput{Id: b.draft}))
	ok[*DeleteCommentResponse](t)(DeleteComment(ctx, root, DeleteCommentInput{Id: comment}))
	ok[*DeletePostResponse](t)(DeletePost(ctx, root, DeletePostInput{Id: b.published[4]}))
	s.consistent()

	before := s.snapshot()
	_, err := CreatePost(ctx, root, CreatePostInput{Title: "As whom?", Slug: "as-whom"})
	equal(t, "createPost by an admin who is no author", code(err), "FORBIDDEN")
	s.unchanged(before)
	c := ok[*AddCommentResponse](t)(AddComment(ctx, root, AddCommentInput{PostId: b.published[2], Body: "As whom?"})).AddComment.Comment
	equal(t, "an admin who is no author comments as a reader", c.Commenter.IsAuthor, false)
	equal(t, "and is not held", c.Status, CommentStatusPublished)
	s.consistent()
	if v := ok[*ViewerResponse](t)(Viewer(ctx, root)); v.Viewer != nil {
		t.Errorf("viewer of an admin who is no author = %+v, want null", v.Viewer)
	}
}

// TestSubjectsThatCannotBeIDs sends valid tokens whose subject no author
// id can be: one longer than any key allows (and than OpenID Connect's
// 255 characters) is refused like any malformed token, 401
// UNAUTHENTICATED; a shorter one that is no id is a reader who is no
// author: viewer null, writes FORBIDDEN. Never INTERNAL.
func TestSubjectsThatCannotBeIDs(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	long := s.as(strings.Repeat("a", 1500), auth.RoleAuthor, auth.RoleAdmin)
	before := s.snapshot()
	_, err := Viewer(ctx, long)
	equal(t, "viewer with a 1500-character subject", code(err), "UNAUTHENTICATED")
	equal(t, "status", status(err), http.StatusUnauthorized)
	_, err = CreatePost(ctx, long, CreatePostInput{Title: "T", Slug: "long-subject"})
	equal(t, "createPost with a 1500-character subject", code(err), "UNAUTHENTICATED")
	_, err = AddComment(ctx, long, AddCommentInput{PostId: b.published[0], Body: "Long."})
	equal(t, "addComment with a 1500-character subject", code(err), "UNAUTHENTICATED")

	odd := s.as("auth0|"+strings.Repeat("x", 200), auth.RoleAuthor)
	if v := ok[*ViewerResponse](t)(Viewer(ctx, odd)); v.Viewer != nil {
		t.Errorf("viewer = %+v, want null", v.Viewer)
	}
	_, err = CreatePost(ctx, odd, CreatePostInput{Title: "T", Slug: "odd-subject"})
	equal(t, "createPost with a subject that is no id", code(err), "FORBIDDEN")
	_, err = AuthorDrafts(ctx, odd, b.authors[0], nil, nil)
	equal(t, "drafts of another with a subject that is no id", code(err), "FORBIDDEN")
	s.unchanged(before)
}

// TestRefusalsSayWhyWithoutAPosition checks the messages of UNAUTHENTICATED
// and FORBIDDEN errors: what a client reads says why, and where in the
// document the field is stays in locations and path, not at the head of
// the message ("input:1:12: ...").
func TestRefusalsSayWhyWithoutAPosition(t *testing.T) {
	s := newServer(t)
	create := `{"query":"mutation { createCategory(input: {slug: \"refused\", name: \"Refused\"}) { category { slug } } }"}`
	cases := []struct {
		name, token, code, message string
	}{
		{"anonymous", "", "UNAUTHENTICATED", `authentication required: send "Authorization: Bearer <token>"`},
		{"a reader", s.signed(s.claims("auth0|lin", auth.RoleReader)), "FORBIDDEN", "not allowed: the token has neither the author nor the admin role"},
		{"an author", s.signed(s.claims("grace", auth.RoleAuthor)), "FORBIDDEN", "not allowed: admins only"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := map[string]string{}
			if c.token != "" {
				headers["Authorization"] = "Bearer " + c.token
			}
			_, _, body := entries(t, s.fetch(t, http.MethodPost, s.url, create, headers))
			var errs gqlerror.List
			if err := json.Unmarshal(body["errors"], &errs); err != nil || len(errs) != 1 {
				t.Fatalf("errors %s: %v", body["errors"], err)
			}
			equal(t, "code", errs[0].Extensions["code"], any(c.code))
			equal(t, "message", errs[0].Message, c.message)
			equal(t, "path", errs[0].Path.String(), "createCategory")
			if len(errs[0].Locations) != 1 || errs[0].Locations[0].Line != 1 {
				t.Errorf("locations %v, want the field's", errs[0].Locations)
			}
		})
	}
}
