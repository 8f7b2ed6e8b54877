package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestDraftsAndScheduledPostsAreVisibleToTheirAuthor reads ada's draft and
// scheduled post as each kind of reader: only ada and admins see them,
// everyone else finds nothing.
func TestDraftsAndScheduledPostsAreVisibleToTheirAuthor(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	readers := []struct {
		name   string
		client graphql.Client
		sees   bool
	}{
		{"anonymous", s.client, false},
		{"a reader", s.reader("lin", "Lin", ""), false},
		{"another author", b.writers[1], false},
		{"the author", b.writers[0], true},
		{"an admin", s.admin, true},
	}
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			wantCode := "NOT_FOUND"
			if r.sees {
				wantCode = ""
			}
			for _, id := range []string{b.draft, b.scheduled} {
				_, err := PostByID(ctx, r.client, id)
				equal(t, "post by id", code(err), wantCode)
				_, err = Node(ctx, r.client, id)
				equal(t, "node", code(err), wantCode)
			}
			page, err := PostPage(ctx, r.client, "a-draft")
			equal(t, "post by slug", code(err), wantCode)
			if r.sees {
				equal(t, "draft status", page.Post.Status, PostStatusDraft)
			}
			p, err := PostByID(ctx, r.client, b.scheduled)
			if r.sees && err == nil {
				equal(t, "scheduled status", p.Post.Status, PostStatusScheduled)
			}

			posts := ok[*AuthorPageResponse](t)(AuthorPage(ctx, r.client, b.authors[0], ptr(100), nil)).Author.Posts
			listed := slices.ContainsFunc(posts.Edges, func(e AuthorPageAuthorPostsPostConnectionEdgesPostEdge) bool {
				return e.Node.Id == b.scheduled
			})
			equal(t, "scheduled post in the author's posts", listed, r.sees)
			equal(t, "the draft is never in the author's posts", slices.ContainsFunc(posts.Edges, func(e AuthorPageAuthorPostsPostConnectionEdgesPostEdge) bool {
				return e.Node.Id == b.draft
			}), false)
		})
	}

	t.Run("drafts are listed for the author and admins only", func(t *testing.T) {
		for _, r := range readers {
			d, err := AuthorDrafts(ctx, r.client, b.authors[0], nil, nil)
			want := map[string]string{"anonymous": "UNAUTHENTICATED", "a reader": "FORBIDDEN", "another author": "FORBIDDEN"}[r.name]
			equal(t, r.name+" code", code(err), want)
			equal(t, r.name+" still gets the author", d.Author.Name, "Ada Lovelace")
			if want == "" {
				equal(t, r.name+" drafts", len(d.Author.Drafts.Edges), 1)
				equal(t, r.name+" draft", d.Author.Drafts.Edges[0].Node.Id, b.draft)
				equal(t, r.name+" draft body", d.Author.Drafts.Edges[0].Node.Body, "")
			} else if d.Author.Drafts != nil {
				t.Errorf("%s got drafts %+v", r.name, d.Author.Drafts)
			}
		}
	})

	t.Run("viewer is the signed-in author", func(t *testing.T) {
		v := ok[*ViewerResponse](t)(Viewer(ctx, b.writers[0]))
		equal(t, "viewer", v.Viewer.Name, "Ada Lovelace")
		equal(t, "viewer id", v.Viewer.Id, b.authors[0])
		if v := ok[*ViewerResponse](t)(Viewer(ctx, s.client)); v.Viewer != nil {
			t.Errorf("anonymous viewer = %+v, want null", v.Viewer)
		}
		if v := ok[*ViewerResponse](t)(Viewer(ctx, s.admin)); v.Viewer != nil {
			t.Errorf("viewer of an admin who is no author = %+v, want null", v.Viewer)
		}
		if v := ok[*ViewerResponse](t)(Viewer(ctx, readers[1].client)); v.Viewer != nil {
			t.Errorf("viewer of a reader = %+v, want null", v.Viewer)
		}
	})
}

// TestHiddenPostsLookMissing asks for a draft and a scheduled post, and
// for posts that do not exist, as readers who may not see the former: each
// pair answers alike, in code, message, path and the DynamoDB requests
// that timing follows, and no message names an internal id.
func TestHiddenPostsLookMissing(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	// A comment on a post that went back to being a draft.
	onDraft := ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[1], AddCommentInput{PostId: b.published[3], Body: "Hidden soon."})).AddComment.Comment.Id
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, b.writers[1], UnpublishPostInput{Id: b.published[3]}))
	missingPost := b64("Post:01900000-0000-7000-8000-000000000000")
	missingComment := b64("Comment:01900000-0000-7000-8000-000000000000:1700000000000-ab")

	type answer struct {
		code, message, path string
		requests            int
	}
	ask := func(t *testing.T, c graphql.Client, query string, vars map[string]any) answer {
		t.Helper()
		var resp graphql.Response
		err := c.MakeRequest(ctx, &graphql.Request{Query: query, Variables: vars}, &resp)
		a := answer{code: code(err), requests: total(s.requests())}
		if len(resp.Errors) > 0 {
			a.message, a.path = resp.Errors[0].Message, resp.Errors[0].Path.String()
		}
		return a
	}
	bySlug := `query($slug: String!) { post(slug: $slug) { title } }`
	byID := `query($id: ID!) { post(id: $id) { title } }`
	node := `query($id: ID!) { node(id: $id) { id } }`
	pairs := []struct {
		name            string
		query           string
		hidden, missing map[string]any
	}{
		{"a draft by slug", bySlug, map[string]any{"slug": "a-draft"}, map[string]any{"slug": "no-such-post"}},
		{"a scheduled post by slug", bySlug, map[string]any{"slug": "soon"}, map[string]any{"slug": "no-such-post"}},
		{"a draft by id", byID, map[string]any{"id": b.draft}, map[string]any{"id": missingPost}},
		{"a draft as a node", node, map[string]any{"id": b.draft}, map[string]any{"id": missingPost}},
		{"a scheduled post as a node", node, map[string]any{"id": b.scheduled}, map[string]any{"id": missingPost}},
		{"a comment on a draft as a node", node, map[string]any{"id": onDraft}, map[string]any{"id": missingComment}},
	}
	readers := map[string]graphql.Client{"anonymous": s.client, "another author": b.writers[2]}
	for _, p := range pairs {
		for name, c := range readers {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				hidden, missing := ask(t, c, p.query, p.hidden), ask(t, c, p.query, p.missing)
				equal(t, "code", hidden.code, "NOT_FOUND")
				equal(t, "answer to a hidden post", hidden, missing)
				for _, v := range p.hidden {
					id, _ := base64.RawURLEncoding.DecodeString(v.(string))
					if _, internal, ok := strings.Cut(string(id), ":"); ok && strings.Contains(hidden.message, internal) {
						t.Errorf("message %q names the internal id %s", hidden.message, internal)
					}
				}
			})
		}
	}

	t.Run("a slug in use by a draft cannot be taken", func(t *testing.T) {
		_, err := CreatePost(ctx, b.writers[2], CreatePostInput{Title: "Mine", Slug: "a-draft"})
		equal(t, "code", code(err), "CONFLICT")
		equal(t, "reason", errReason(err), "SLUG_TAKEN")
	})
}

// TestHiddenPostsReadNothingBelowThem asks for a post that went back to
// being a draft after collecting 100 long comments, with its comments,
// and for a post that does not exist, as the anonymous and as another
// author: by id, by slug, as a node (alone, and beside another node),
// and with its previous and next posts. Each pair answers alike, with
// the same DynamoDB requests reading the same capacity: nothing under a
// post is read before the post is known to be visible, so the answer to
// a hidden post does not take the time its comments take to read.
func TestHiddenPostsReadNothingBelowThem(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	hiddenID := b.published[5] // grace's, "post-5"
	body := strings.Repeat("A long comment that takes its share of a read. ", 8)
	for i := range 100 {
		ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[i%3], AddCommentInput{PostId: hiddenID, Body: fmt.Sprintf("%d %s", i, body)}))
		s.clock.Advance(time.Second)
	}
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, b.writers[1], UnpublishPostInput{Id: hiddenID}))
	missingID := b64("Post:01900000-0000-7000-8000-000000000000")

	type answer struct {
		body      string
		requests  map[string]int
		readUnits float64
	}
	ask := func(t *testing.T, c graphql.Client, query string, vars map[string]any) answer {
		t.Helper()
		var resp graphql.Response
		_ = c.MakeRequest(ctx, &graphql.Request{Query: query, Variables: vars}, &resp)
		// Fields resolve concurrently: their errors come in any order.
		slices.SortFunc(resp.Errors, func(x, y *gqlerror.Error) int { return strings.Compare(x.Path.String(), y.Path.String()) })
		out, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		read, _ := s.last.Capacity()
		s.mu.Unlock()
		return answer{body: string(out), requests: s.requests(), readUnits: read}
	}
	const comments = `comments(first: 100) { totalCount edges { cursor node { body author { name bio } } } }`
	bySlug := `query($slug: String!) { post(slug: $slug) { title ` + comments + ` } }`
	byID := `query($id: ID!) { post(id: $id) { title ` + comments + ` } }`
	node := `query($id: ID!) { node(id: $id) { id ... on Post { ` + comments + ` } } }`
	nodes := `query($id: ID!) { node(id: $id) { id ... on Post { ` + comments + ` } } other: node(id: $id) { id } }`
	around := `query($slug: String!) { post(slug: $slug) { previous { ` + comments + ` } next { ` + comments + ` } } }`
	pairs := []struct {
		name            string
		query           string
		hidden, missing map[string]any
		// postUnits is what reading the hidden post's own items costs
		// more than looking for a missing one: half a unit in the Query
		// of its post, count and body items (under 4 KB), where a Query
		// that finds nothing costs none; half a unit an item in a
		// BatchGetItem, where a missing key costs none.
		postUnits float64
	}{
		{"by id", byID, map[string]any{"id": hiddenID}, map[string]any{"id": missingID}, 0.5},
		{"by slug", bySlug, map[string]any{"slug": "post-5"}, map[string]any{"slug": "no-such-post"}, 0.5},
		// Its slug's reservation says when it goes live: its comments are
		// not read ahead before then.
		{"scheduled, by slug", bySlug, map[string]any{"slug": "soon"}, map[string]any{"slug": "no-such-post"}, 0.5},
		{"as the only node", node, map[string]any{"id": hiddenID}, map[string]any{"id": missingID}, 0.5},
		{"as one of two nodes", nodes, map[string]any{"id": hiddenID}, map[string]any{"id": missingID}, 1.5},
		{"with its previous and next posts", around, map[string]any{"slug": "post-5"}, map[string]any{"slug": "no-such-post"}, 0.5},
	}
	readers := map[string]graphql.Client{"anonymous": s.client, "another author": b.writers[2]}
	for _, p := range pairs {
		for name, c := range readers {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				hidden, missing := ask(t, c, p.query, p.hidden), ask(t, c, p.query, p.missing)
				if !strings.Contains(hidden.body, "NOT_FOUND") {
					t.Errorf("hidden post answered %s", hidden.body)
				}
				equal(t, "answer to a hidden post", hidden.body, missing.body)
				if !maps.Equal(hidden.requests, missing.requests) {
					t.Errorf("DynamoDB requests for a hidden post %v, for a missing one %v", hidden.requests, missing.requests)
				}
				equal(t, "read capacity units for a hidden post", hidden.readUnits, missing.readUnits+p.postUnits)
			})
		}
	}

	t.Run("its author still reads its comments", func(t *testing.T) {
		a := ask(t, b.writers[1], byID, map[string]any{"id": hiddenID})
		if strings.Contains(a.body, "errors") || strings.Count(a.body, `"cursor"`) != 100 {
			t.Errorf("the draft's author got %.300s", a.body)
		}
	})
}

// TestDeletingACommentOnAHiddenPostSucceeds deletes one's own comment on
// a post that went back to being a draft, asking for the comment's post
// as a client would: the comment is deleted, and the answer says so
// without an error, with the comment's id and no comment to show, since
// its post may not be shown. Its post's author and admins get the comment.
func TestDeletingACommentOnAHiddenPostSucceeds(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	post := b.published[0] // ada's
	grace, ada := b.writers[1], b.writers[0]
	comment := func() string {
		return ok[*AddCommentResponse](t)(AddComment(ctx, grace, AddCommentInput{PostId: post, Body: "Mine."})).AddComment.Comment.Id
	}
	mine, hers := comment(), comment()
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: post}))

	r, err := DeleteComment(ctx, grace, DeleteCommentInput{Id: mine, IdempotencyKey: ptr("delete-mine")})
	if err != nil {
		t.Fatalf("deleteComment of one's own comment on a hidden post: %v", err)
	}
	equal(t, "deletedCommentId", r.DeleteComment.DeletedCommentId, mine)
	if r.DeleteComment.Comment != nil {
		t.Errorf("comment %+v shown with a post its writer may not see", r.DeleteComment.Comment)
	}
	again := ok[*DeleteCommentResponse](t)(DeleteComment(ctx, grace, DeleteCommentInput{Id: mine, IdempotencyKey: ptr("delete-mine")}))
	equal(t, "retried deleteComment", again.DeleteComment.DeletedCommentId, mine)
	if again.DeleteComment.Comment != nil {
		t.Errorf("retry shows comment %+v", again.DeleteComment.Comment)
	}
	_, err = DeleteComment(ctx, grace, DeleteCommentInput{Id: mine})
	equal(t, "deleting it again", code(err), "NOT_FOUND")

	byAuthor := ok[*DeleteCommentResponse](t)(DeleteComment(ctx, ada, DeleteCommentInput{Id: hers}))
	if c := byAuthor.DeleteComment.Comment; c == nil || c.Post.Id != post {
		t.Errorf("the post's author deleting a comment on their draft gets %+v, want the comment", c)
	}
	s.consistent()
}

// TestDeletingACommentWhileItsPostIsHidden deletes one's own comment,
// asking for the comment's post, while its author unpublishes the post
// between the deletion's write and the answer: the answer says the
// comment is deleted, without an error and without the comment, whose
// post may no longer be shown.
func TestDeletingACommentWhileItsPostIsHidden(t *testing.T) {
	between := &afterWrite{}
	s := newServer(t, inFront(func(backend http.RoundTripper) http.RoundTripper { between.next = backend; return between }))
	b := s.seedBlog(t)
	ctx := context.Background()
	post := b.published[0] // ada's
	grace, ada := b.writers[1], b.writers[0]
	mine := ok[*AddCommentResponse](t)(AddComment(ctx, grace, AddCommentInput{PostId: post, Body: "Mine."})).AddComment.Comment.Id

	hide := func() { ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: post})) }
	between.hook.Store(&hide)
	r, err := DeleteComment(ctx, grace, DeleteCommentInput{Id: mine})
	if err != nil {
		t.Fatalf("deleteComment while its post is unpublished: %v", err)
	}
	if between.hook.Load() != nil {
		t.Fatal("the post was not unpublished during the deletion")
	}
	equal(t, "deletedCommentId", r.DeleteComment.DeletedCommentId, mine)
	if r.DeleteComment.Comment != nil {
		t.Errorf("comment %+v shown with a post its writer may no longer see", r.DeleteComment.Comment)
	}
	s.consistent()
}

// afterWrite is a transport in front of DynamoDB that runs its hook once,
// after the next TransactWriteItems has taken effect and before its answer
// returns.
type afterWrite struct {
	next http.RoundTripper
	hook atomic.Pointer[func()]
}

func (a *afterWrite) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusOK && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		if hook := a.hook.Swap(nil); hook != nil {
			(*hook)()
		}
	}
	return resp, err
}
