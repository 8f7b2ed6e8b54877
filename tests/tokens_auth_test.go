package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/golang-jwt/jwt/v5"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
)

// TestTokensOfNoAuthorAreReaders covers tokens that verify but name no
// author who may write: they may not write posts (FORBIDDEN, nothing
// written), they comment as readers, held for moderation, and their
// viewer is null, with no read, even when their subject is an author's id
// (the role is missing, misspelled, or reader).
func TestTokensOfNoAuthorAreReaders(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t) // ada and grace, and ada's post
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
			r := ok[*AddCommentResponse](t)(AddComment(ctx, c.client, AddCommentInput{PostId: b.post, Body: "As a reader: " + c.name}))
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
