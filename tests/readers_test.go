package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// publishReaders makes readers' comments public at once.
func publishReaders(_ *storage.ClientConfig, o *graph.HandlerOptions) {
	o.Comments.Moderation = graph.PublishReaderComments
}

// readersBlog is a published post of ada's with a server's clients.
type readersBlog struct {
	ada, grace graphql.Client // authors
	post, slug string
}

func (s *server) seedReadersBlog(t *testing.T) *readersBlog {
	t.Helper()
	ctx := context.Background()
	for _, a := range [][2]string{{"ada", "Ada Lovelace"}, {"grace", "Grace Hopper"}} {
		ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &a[0], Name: a[1], AvatarUrl: ptr("https://example.com/" + a[0] + ".png")}))
	}
	b := &readersBlog{ada: s.as("ada", auth.RoleAuthor), grace: s.as("grace", auth.RoleAuthor), slug: "open-to-readers"}
	b.post = ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "Open to readers", Slug: b.slug})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, b.ada, PublishPostInput{Id: b.post}))
	return b
}

// TestReadersCommentWithHS256Tokens has readers, signed in with tokens of
// the server's secret, comment, reply, edit and delete their comments
// next to authors, shown by their tokens' name and picture.
func TestReadersCommentWithHS256Tokens(t *testing.T) {
	s := newServer(t, publishReaders)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	lin := s.reader("auth0|lin", "Lin Reader", "https://id.example.com/lin.png")

	c := ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: b.post, Body: "Hello from a reader."})).AddComment.Comment
	equal(t, "status", c.Status, CommentStatusPublished)
	equal(t, "commenter", c.Commenter.Name, "Lin Reader")
	equal(t, "picture", *c.Commenter.AvatarUrl, "https://id.example.com/lin.png")
	equal(t, "is an author", c.Commenter.IsAuthor, false)
	if c.Author != nil {
		t.Errorf("author of a reader's comment = %+v, want null", c.Author)
	}
	equal(t, "comment count", c.Post.CommentCount, 1)
	s.clock.Advance(time.Second)
	answer := ok[*AddCommentResponse](t)(AddComment(ctx, b.ada, AddCommentInput{PostId: b.post, Body: "Welcome!", ParentId: &c.Id})).AddComment.Comment
	equal(t, "author's commenter", answer.Commenter.IsAuthor, true)
	equal(t, "author's name", answer.Commenter.Name, "Ada Lovelace")
	s.clock.Advance(time.Second)
	reply := ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: b.post, Body: "Thanks!", ParentId: &c.Id})).AddComment.Comment
	equal(t, "reply's parent", reply.Parent.Id, c.Id)

	page := ok[*PostReplyPagesResponse](t)(PostReplyPages(ctx, s.client, b.slug, ptr(3))).Post.Comments.Edges
	equal(t, "threads", len(page), 1)
	replies := page[0].Node.ReplyConnection
	equal(t, "replies", replies.TotalCount, 2)
	equal(t, "first reply by", replies.Edges[0].Node.Commenter.Name, "Ada Lovelace")
	equal(t, "second reply by", replies.Edges[1].Node.Commenter.Name, "Lin Reader")
	ofReply := (*ok[*MoreRepliesResponse](t)(MoreReplies(ctx, s.client, reply.Id, nil, nil)).Node).(*MoreRepliesNodeComment).ReplyConnection
	equal(t, "replies of a reply", len(ofReply.Edges), 0)
	equal(t, "reply count of a reply", ofReply.TotalCount, 0)

	s.clock.Advance(time.Minute)
	edited := ok[*UpdateCommentResponse](t)(UpdateComment(ctx, lin, UpdateCommentInput{Id: c.Id, Body: "Hello from a reader, edited."})).UpdateComment.Comment
	equal(t, "edited body", edited.Body, "Hello from a reader, edited.")
	if edited.EditedAt == nil || !edited.EditedAt.Equal(s.clock.Now()) {
		t.Errorf("editedAt = %v, want %v", edited.EditedAt, s.clock.Now())
	}

	t.Run("a new name in the token shows on every comment of the reader", func(t *testing.T) {
		renamed := s.reader("auth0|lin", "Lin R.", "")
		s.clock.Advance(time.Second)
		ok[*AddCommentResponse](t)(AddComment(ctx, renamed, AddCommentInput{PostId: b.post, Body: "Same reader, new name."}))
		list := ok[*PostCommentsResponse](t)(PostComments(ctx, s.client, b.slug, nil, nil)).Post.Comments.Edges
		for _, e := range list {
			if e.Node.Commenter.Name != "Lin R." || *e.Node.Commenter.AvatarUrl != "https://id.example.com/lin.png" {
				t.Errorf("commenter = %+v, want Lin R. with the picture kept", *e.Node.Commenter)
			}
		}
	})

	t.Run("readers delete their own comments", func(t *testing.T) {
		del := ok[*DeleteCommentResponse](t)(DeleteComment(ctx, lin, DeleteCommentInput{Id: reply.Id})).DeleteComment.Comment
		equal(t, "deleted", del.Deleted, true)
		s.consistent()
	})
}

// TestReadersCommentWithJWKSTokens has a reader comment with an RS256
// token of an identity provider whose keys the server fetches.
func TestReadersCommentWithJWKSTokens(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "idp-1", "use": "sig", "alg": "RS256",
			"n": b64.EncodeToString(key.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	t.Cleanup(idp.Close)
	s := newServerWith(t, func(c *auth.Config) { c.JWKSURL = idp.URL + "/.well-known/jwks.json" }, publishReaders)
	b := s.seedReadersBlog(t)
	ctx := context.Background()

	claims := s.claims("google-oauth2|1092837465", auth.RoleReader)
	claims.Name, claims.Picture = "Rosa Reader", "https://lh3.example.com/rosa.jpg"
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "idp-1"
	signed, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	rosa := s.withToken(signed)
	c := ok[*AddCommentResponse](t)(AddComment(ctx, rosa, AddCommentInput{PostId: b.post, Body: "Signed by my identity provider."})).AddComment.Comment
	equal(t, "commenter", c.Commenter.Name, "Rosa Reader")
	equal(t, "picture", *c.Commenter.AvatarUrl, "https://lh3.example.com/rosa.jpg")
	s.clock.Advance(time.Second)
	r := ok[*AddCommentResponse](t)(AddComment(ctx, rosa, AddCommentInput{PostId: b.post, Body: "And a reply.", ParentId: &c.Id})).AddComment.Comment
	equal(t, "reply by", r.Commenter.Name, "Rosa Reader")
	_, err = CreatePost(ctx, rosa, CreatePostInput{Title: "Mine", Slug: "mine"})
	equal(t, "a reader's createPost", code(err), "FORBIDDEN")
	s.consistent()
}

// TestReaderNamesHoldNoMarkup has readers whose tokens' name claims hold
// HTML, look-alikes of its characters and invisible characters comment:
// the name kept and shown with their comments is plain text of one line,
// and a claim with nothing left is no name.
func TestReaderNamesHoldNoMarkup(t *testing.T) {
	s := newServer(t, publishReaders)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	cases := []struct{ claim, want string }{
		{"<img src=x onerror=alert(1)>Eve", "Eve"},
		{"Mallory<script>alert(1)</script>", "Mallory alert(1)"},
		{"＜img src=x onerror=alert(1)＞Trent", "Trent"},
		{"Ｐｅｇｇｙ\u200b", "Peggy"},
		{"\u202eBob\u202c", "Bob"},
		{"Ada\nLovelace\tthe  Second", "Ada Lovelace the Second"},
		{`Tom & Jerry's "Café"`, `Tom & Jerry's "Café"`},
		{"<b></b>", storage.DefaultReaderName},
	}
	const shown = `query($slug: String!) { post(slug: $slug) { comments(last: 1) { edges { node { commenter { name } } } } } }`
	for i, c := range cases {
		t.Run(c.claim, func(t *testing.T) {
			s.clock.Advance(time.Second) // the last comment is this one
			reader := s.reader(fmt.Sprintf("auth0|named-%d", i), c.claim, "")
			got := ok[*AddCommentResponse](t)(AddComment(ctx, reader, AddCommentInput{PostId: b.post, Body: "Named " + c.want})).AddComment.Comment
			equal(t, "commenter in the payload", got.Commenter.Name, c.want)
			var resp struct {
				Post struct {
					Comments struct {
						Edges []struct {
							Node struct{ Commenter struct{ Name string } }
						}
					}
				}
			}
			if err := s.client.MakeRequest(ctx, &graphql.Request{Query: shown, Variables: map[string]any{"slug": b.slug}}, &graphql.Response{Data: &resp}); err != nil {
				t.Fatal(err)
			}
			equal(t, "commenter read back", resp.Post.Comments.Edges[0].Node.Commenter.Name, c.want)
		})
	}
	t.Run("a name of markup alone keeps the name already kept", func(t *testing.T) {
		eve := s.reader("auth0|named-0", "<br>", "")
		got := ok[*AddCommentResponse](t)(AddComment(ctx, eve, AddCommentInput{PostId: b.post, Body: "Eve again"})).AddComment.Comment
		equal(t, "commenter", got.Commenter.Name, "Eve")
	})
	s.consistent()
}

// TestHeldCommentsWaitForModeration holds a reader's comments: nobody but
// the reader and the post's moderators sees them, no count includes them,
// and approving one makes it public at once.
func TestHeldCommentsWaitForModeration(t *testing.T) {
	s := newServer(t) // holding readers' comments is the default
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	lin := s.reader("lin", "Lin", "")
	ok[*AddCommentResponse](t)(AddComment(ctx, b.grace, AddCommentInput{PostId: b.post, Body: "An author is never held."}))
	var held []string
	for i := range 3 {
		s.clock.Advance(time.Second)
		c := ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: b.post, Body: fmt.Sprintf("Held %d", i)})).AddComment.Comment
		equal(t, "status", c.Status, CommentStatusPending)
		equal(t, "count in the payload", c.Post.CommentCount, 1)
		held = append(held, c.Id)
	}
	s.consistent()

	public := func(client graphql.Client) *PostCommentsPost {
		return ok[*PostCommentsResponse](t)(PostComments(ctx, client, b.slug, nil, nil)).Post
	}
	for name, client := range map[string]graphql.Client{"anonymous": s.client, "the reader": lin, "the post's author": b.ada} {
		p := public(client)
		equal(t, name+": comment count", p.CommentCount, 1)
		equal(t, name+": total count", p.Comments.TotalCount, 1)
		equal(t, name+": comments listed", len(p.Comments.Edges), 1)
	}
	for name, want := range map[string]struct {
		client graphql.Client
		code   string
	}{
		"anonymous":         {s.client, "NOT_FOUND"},
		"another reader":    {s.reader("rosa", "Rosa", ""), "NOT_FOUND"},
		"another author":    {b.grace, "NOT_FOUND"},
		"the reader":        {lin, ""},
		"the post's author": {b.ada, ""},
		"an admin":          {s.admin, ""},
	} {
		r, err := CommentByID(ctx, want.client, held[0])
		equal(t, name+" reading a pending comment", code(err), want.code)
		if want.code == "" && err == nil {
			equal(t, name+" sees it pending", (*r.Node).(*CommentByIDNodeComment).Status, CommentStatusPending)
		}
	}

	t.Run("the queue pages with one request each", func(t *testing.T) {
		var got []string
		var after *string
		for {
			q := ok[*ModerationQueueBodiesResponse](t)(ModerationQueueBodies(ctx, b.ada, ptr(2), after)).ModerationQueue
			equal(t, "requests of a page", total(s.requests()), 1)
			for _, e := range q.Edges {
				got = append(got, e.Node.Id)
			}
			if !q.PageInfo.HasNextPage {
				break
			}
			after = q.PageInfo.EndCursor
		}
		equal(t, "queue", fmt.Sprint(got), fmt.Sprint([]string{held[2], held[1], held[0]}))
		all := ok[*ModerationQueueResponse](t)(ModerationQueue(ctx, s.admin, ptr(10), nil)).ModerationQueue
		equal(t, "the admins' queue", len(all.Edges), 3)
		equal(t, "with who wrote them", all.Edges[0].Node.Commenter.Name, "Lin")
		equal(t, "and where", all.Edges[0].Node.Post.Title, "Open to readers")
		t.Logf("the admins' queue with commenters and posts: %v", s.requests())
		if n := ok[*ModerationQueueResponse](t)(ModerationQueue(ctx, b.grace, nil, nil)).ModerationQueue; len(n.Edges) != 0 {
			t.Errorf("another author's queue = %+v, want empty", n.Edges)
		}
		_, err := ModerationQueue(ctx, lin, nil, nil)
		equal(t, "a reader's queue", code(err), "FORBIDDEN")
		_, err = ModerationQueue(ctx, s.client, nil, nil)
		equal(t, "the anonymous' queue", code(err), "UNAUTHENTICATED")
	})

	t.Run("approving publishes, rejecting hides", func(t *testing.T) {
		a := ok[*ApproveCommentResponse](t)(ApproveComment(ctx, b.ada, ApproveCommentInput{Id: held[0]})).ApproveComment.Comment
		equal(t, "approved", a.Status, CommentStatusPublished)
		equal(t, "count", a.Post.CommentCount, 2)
		r := ok[*RejectCommentResponse](t)(RejectComment(ctx, s.admin, RejectCommentInput{Id: held[1]})).RejectComment.Comment
		equal(t, "rejected", r.Status, CommentStatusRejected)
		p := public(s.client)
		equal(t, "public count", p.CommentCount, 2)
		equal(t, "listed", len(p.Comments.Edges), 2)
		equal(t, "the approved one", p.Comments.Edges[1].Node.Id, held[0])
		_, err := CommentByID(ctx, s.client, held[1])
		equal(t, "a rejected comment for the anonymous", code(err), "NOT_FOUND")
		rr := ok[*CommentByIDResponse](t)(CommentByID(ctx, lin, held[1]))
		equal(t, "a rejected comment for its reader", (*rr.Node).(*CommentByIDNodeComment).Status, CommentStatusRejected)
		equal(t, "queue", len(ok[*ModerationQueueResponse](t)(ModerationQueue(ctx, b.ada, nil, nil)).ModerationQueue.Edges), 1)
		_, err = RejectComment(ctx, b.ada, RejectCommentInput{Id: held[0]})
		equal(t, "rejecting a published comment", code(err), "CONFLICT")
		equal(t, "reason", extension(err, "reason"), "NOT_PENDING")
		s.consistent()
	})
}

// TestReaderRateLimitAcrossServers sends a reader's comments to two
// servers on one table: the sixth in a minute is refused with
// RATE_LIMITED and the seconds to wait, and writes nothing.
func TestReaderRateLimitAcrossServers(t *testing.T) {
	one := newServer(t, publishReaders)
	b := one.seedReadersBlog(t)
	two := one.another()
	ctx := context.Background()
	lin := []graphql.Client{one.reader("lin", "Lin", ""), two.reader("lin", "Lin", "")}
	for i := range graph.DefaultCommentsPerMinute {
		ok[*AddCommentResponse](t)(AddComment(ctx, lin[i%2], AddCommentInput{PostId: b.post, Body: fmt.Sprintf("Comment %d", i)}))
		one.clock.Advance(5 * time.Second)
	}
	before := one.snapshot()
	_, err := AddComment(ctx, lin[1], AddCommentInput{PostId: b.post, Body: "One too many"})
	equal(t, "sixth comment", code(err), "RATE_LIMITED")
	equal(t, "retry after", extension(err, "retryAfter"), any(float64(35)))
	one.unchanged(before)
	_, err = AddComment(ctx, lin[0], AddCommentInput{PostId: b.post, Body: "One too many"})
	equal(t, "sixth comment on the other server", code(err), "RATE_LIMITED")

	ok[*AddCommentResponse](t)(AddComment(ctx, b.grace, AddCommentInput{PostId: b.post, Body: "Authors have no limit"}))
	one.clock.Advance(35 * time.Second)
	ok[*AddCommentResponse](t)(AddComment(ctx, lin[1], AddCommentInput{PostId: b.post, Body: "One too many"}))

	t.Run("the same comment twice in a minute", func(t *testing.T) {
		one.clock.Advance(time.Minute)
		in := AddCommentInput{PostId: b.post, Body: "Great post!", IdempotencyKey: ptr("first-try")}
		first := ok[*AddCommentResponse](t)(AddComment(ctx, lin[0], in)).AddComment.Comment
		again := ok[*AddCommentResponse](t)(AddComment(ctx, lin[1], in)).AddComment.Comment
		equal(t, "a retry with the same key", again.Id, first.Id)
		before := one.snapshot()
		in.IdempotencyKey = ptr("second-try")
		_, err := AddComment(ctx, lin[1], in)
		equal(t, "the same text with another key", code(err), "CONFLICT")
		equal(t, "reason", extension(err, "reason"), "DUPLICATE_COMMENT")
		one.unchanged(before)
	})
}

// TestModerationUnderConcurrentRequests sends readers' comments and
// replies, edits, approvals, rejections and deletions at once through two
// servers: every answer is a result or a refusal with its documented
// code, never INTERNAL, and the table stays consistent.
func TestModerationUnderConcurrentRequests(t *testing.T) {
	one := newServer(t)
	b := one.seedReadersBlog(t)
	two := one.another()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		ids []string
	)
	pick := func(n int) string {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return ""
		}
		return ids[n%len(ids)]
	}
	refusals := map[string]bool{"": true, "NOT_FOUND": true, "BAD_USER_INPUT": true, "CONFLICT": true, "FORBIDDEN": true, "RATE_LIMITED": true, "UNAVAILABLE": true}
	var wg sync.WaitGroup
	codes := make(chan string, 1000)
	for g := range 6 {
		srv := []*server{one, two}[g%2]
		reader := srv.reader(fmt.Sprintf("reader-%d", g%3), fmt.Sprintf("Reader %d", g%3), "")
		moderator := srv.as("ada", auth.RoleAuthor)
		wg.Go(func() {
			for n := range 25 {
				var err error
				switch (g + n) % 6 {
				case 0, 1:
					in := AddCommentInput{PostId: b.post, Body: fmt.Sprintf("Comment %d-%d", g, n)}
					if id := pick(n); id != "" && n%2 == 0 {
						in.ParentId = &id
					}
					var r *AddCommentResponse
					if r, err = AddComment(ctx, reader, in); err == nil {
						mu.Lock()
						ids = append(ids, r.AddComment.Comment.Id)
						mu.Unlock()
					}
				case 2:
					_, err = ApproveComment(ctx, moderator, ApproveCommentInput{Id: pick(n)})
				case 3:
					_, err = RejectComment(ctx, moderator, RejectCommentInput{Id: pick(n)})
				case 4:
					_, err = UpdateComment(ctx, reader, UpdateCommentInput{Id: pick(n), Body: fmt.Sprintf("Edit %d-%d", g, n)})
				default:
					_, err = DeleteComment(ctx, []graphql.Client{reader, moderator}[n%2], DeleteCommentInput{Id: pick(n)})
				}
				codes <- code(err)
				one.clock.Advance(time.Second)
			}
		})
	}
	wg.Wait()
	close(codes)
	seen := map[string]int{}
	for c := range codes {
		seen[c]++
		if !refusals[c] {
			t.Errorf("an answer with code %q", c)
		}
	}
	t.Logf("codes: %v", seen)
	if seen[""] == 0 {
		t.Error("nothing succeeded")
	}
	one.consistent()
}

// TestCommentMutationRequests pins the DynamoDB requests of each comment
// mutation whose payload selects only what it wrote: one read and one
// TransactWriteItems, and one consistent read before them for the check
// of who may change a comment, which admins skip. A new comment on a post
// the server has seen is its TransactWriteItems alone.
func TestCommentMutationRequests(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	lin := s.reader("lin", "Lin", "")
	send := func(c graphql.Client, query string, vars map[string]any) map[string]any {
		t.Helper()
		var data map[string]any
		if err := c.MakeRequest(ctx, &graphql.Request{Query: query, Variables: vars}, &graphql.Response{Data: &data}); err != nil {
			t.Fatal(err)
		}
		return data
	}
	id := func(data map[string]any, field string) string {
		return data[field].(map[string]any)["comment"].(map[string]any)["id"].(string)
	}
	const (
		add     = `mutation($post: ID!, $body: String!) { addComment(input: {postId: $post, body: $body}) { comment { id status } } }`
		edit    = `mutation($id: ID!) { updateComment(input: {id: $id, body: "Edited."}) { comment { id body } } }`
		del     = `mutation($id: ID!) { deleteComment(input: {id: $id}) { comment { id deleted } } }`
		approve = `mutation($id: ID!) { approveComment(input: {id: $id}) { comment { id status } } }`
		reject  = `mutation($id: ID!) { rejectComment(input: {id: $id}) { comment { id status } } }`
		queue   = `{ moderationQueue(first: 10) { edges { node { id body } } } }`
	)
	n := 0
	held := func() string {
		n++
		s.clock.Advance(15 * time.Second)
		return id(send(lin, add, map[string]any{"post": b.post, "body": fmt.Sprintf("Held %d", n)}), "addComment")
	}
	cases := []struct {
		name string
		run  func()
		want map[string]int
	}{
		{"addComment by a reader", func() { held() }, map[string]int{"TransactWriteItems": 1}},
		{"moderationQueue", func() { send(b.ada, queue, nil) }, map[string]int{"Query": 1}},
		{"updateComment by its reader", func() { send(lin, edit, map[string]any{"id": held()}) },
			map[string]int{"TransactGetItems": 2, "TransactWriteItems": 1}},
		{"updateComment by an admin", func() { send(s.admin, edit, map[string]any{"id": held()}) },
			map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"approveComment by the post's author", func() { send(b.ada, approve, map[string]any{"id": held()}) },
			map[string]int{"TransactGetItems": 2, "TransactWriteItems": 1}},
		{"approveComment by an admin", func() { send(s.admin, approve, map[string]any{"id": held()}) },
			map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"rejectComment by the post's author", func() { send(b.ada, reject, map[string]any{"id": held()}) },
			map[string]int{"TransactGetItems": 2, "TransactWriteItems": 1}},
		{"deleteComment by its reader", func() { send(lin, del, map[string]any{"id": held()}) },
			map[string]int{"TransactGetItems": 2, "TransactWriteItems": 1}},
	}
	for _, c := range cases {
		c.run()
		got := s.requests()
		t.Logf("%s: %v", c.name, got)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: requests %v, want %v", c.name, got, c.want)
		}
	}
	s.consistent()
}

// refuseBatchWrites is a transport in front of DynamoDB that refuses every
// BatchWriteItem, throttled, while refusing is set.
type refuseBatchWrites struct {
	next     http.RoundTripper
	refusing atomic.Bool
}

func (f *refuseBatchWrites) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.refusing.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".BatchWriteItem") {
		body := []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"refused by the test"}`)
		h := http.Header{}
		h.Set("Content-Type", "application/x-amz-json-1.0")
		h.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(body)))
		return &http.Response{StatusCode: http.StatusBadRequest, Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}, nil
	}
	return f.next.RoundTrip(r)
}

// TestModerationQueueLeavesOutDeletedPosts deletes a post with a reader's
// comment waiting for moderation while its comments cannot be removed
// yet (they go after the post, and DynamoDB refuses): the queue, which
// still holds the comment until they are, leaves it out of a page that
// shows the comments' posts, instead of failing on the missing post; the
// deletion sent again with its key removes it for good.
func TestModerationQueueLeavesOutDeletedPosts(t *testing.T) {
	faults := &refuseBatchWrites{}
	s := newServer(t, inFront(func(backend http.RoundTripper) http.RoundTripper { faults.next = backend; return faults }))
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	lin := s.reader("lin", "Lin", "")
	other := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "Still here", Slug: "still-here"})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, b.ada, PublishPostInput{Id: other}))
	kept := ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: other, Body: "Kept."})).AddComment.Comment.Id
	s.clock.Advance(time.Second)
	ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: b.post, Body: "On a post about to go."}))

	faults.refusing.Store(true)
	_, err := DeletePost(ctx, b.ada, DeletePostInput{Id: b.post, IdempotencyKey: ptr("delete-it")})
	faults.refusing.Store(false)
	equal(t, "deletion whose comments could not go", code(err), "UNAVAILABLE")
	for name, client := range map[string]graphql.Client{"the post's author": b.ada, "an admin": s.admin} {
		q := ok[*ModerationQueueResponse](t)(ModerationQueue(ctx, client, ptr(10), nil)).ModerationQueue
		var got []string
		for _, e := range q.Edges {
			got = append(got, e.Node.Id+" on "+e.Node.Post.Title)
		}
		equal(t, name+": queue", fmt.Sprint(got), fmt.Sprint([]string{kept + " on Still here"}))
	}
	ok[*DeletePostResponse](t)(DeletePost(ctx, b.ada, DeletePostInput{Id: b.post, IdempotencyKey: ptr("delete-it")}))
	equal(t, "the queue once the comments went", len(ok[*ModerationQueueBodiesResponse](t)(ModerationQueueBodies(ctx, s.admin, ptr(10), nil)).ModerationQueue.Edges), 1)
	s.consistent()
}

// TestReaderPicturesNameNoPrivateHost has readers whose tokens' picture
// claims name the metadata service, loopback and private addresses
// comment: as with an author's avatar, frontends fetch the picture, so
// such a claim is no picture (a new reader has none, one who had a
// picture keeps it), and a public one is kept.
func TestReaderPicturesNameNoPrivateHost(t *testing.T) {
	s := newServer(t, publishReaders)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	bad := []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://127.0.0.1/a.png",
		"http://2130706433/a.png",
		"http://0x7f.1/a.png",
		"http://[::1]/a.png",
		"http://localhost:3000/a.png",
		"http://10.0.0.7/a.png",
		"https://example.com:99999/a.png",
	}
	for i, picture := range bad {
		t.Run(picture, func(t *testing.T) {
			s.clock.Advance(time.Second)
			reader := s.reader(fmt.Sprintf("auth0|pictured-%d", i), "Pat", picture)
			got := ok[*AddCommentResponse](t)(AddComment(ctx, reader, AddCommentInput{PostId: b.post, Body: "Pictured"})).AddComment.Comment
			if got.Commenter.AvatarUrl != nil {
				t.Fatalf("avatarUrl = %q, want null", *got.Commenter.AvatarUrl)
			}
		})
	}
	t.Run("a reader with a picture keeps it", func(t *testing.T) {
		const kept = "https://id.example.com/pat.png"
		s.clock.Advance(time.Second)
		pat := s.reader("auth0|pictured-kept", "Pat", kept)
		got := ok[*AddCommentResponse](t)(AddComment(ctx, pat, AddCommentInput{PostId: b.post, Body: "First"})).AddComment.Comment
		equal(t, "avatarUrl", *got.Commenter.AvatarUrl, kept)
		s.clock.Advance(time.Second)
		pat = s.reader("auth0|pictured-kept", "Pat", "http://169.254.169.254/latest/meta-data/")
		got = ok[*AddCommentResponse](t)(AddComment(ctx, pat, AddCommentInput{PostId: b.post, Body: "Second"})).AddComment.Comment
		equal(t, "avatarUrl", *got.Commenter.AvatarUrl, kept)
	})
	s.consistent()
	for _, old := range []string{"http://169.254.169.254/latest/meta-data/", "https://example.com:99999/a.png"} {
		t.Run("a picture kept before these rules is not shown: "+old, func(t *testing.T) {
			showsNoPicture(t, s, b.slug, "auth0|pictured-kept", old)
		})
	}
}

// showsNoPicture stores picture as reader's, as an earlier version kept
// it, and checks that the last comment on the post at slug, the reader's,
// shows none.
func showsNoPicture(t *testing.T, s *server, slug, readerID, picture string) {
	t.Helper()
	ctx := context.Background()
	reader := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "READER#" + readerID}, "SK": &types.AttributeValueMemberS{Value: "READER#" + readerID}}
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: reader,
		UpdateExpression:          aws.String("SET avatarUrl = :old"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":old": &types.AttributeValueMemberS{Value: picture}}}); err != nil {
		t.Fatal(err)
	}
	const shown = `query($slug: String!) { post(slug: $slug) { comments(last: 1) { edges { node { commenter { name avatarUrl } } } } } }`
	var resp struct {
		Post struct {
			Comments struct {
				Edges []struct {
					Node struct{ Commenter struct{ AvatarUrl *string } }
				}
			}
		}
	}
	if err := s.client.MakeRequest(ctx, &graphql.Request{Query: shown, Variables: map[string]any{"slug": slug}}, &graphql.Response{Data: &resp}); err != nil {
		t.Fatal(err)
	}
	if got := resp.Post.Comments.Edges[0].Node.Commenter.AvatarUrl; got != nil {
		t.Fatalf("avatarUrl = %q, want null", *got)
	}
}
