package tests

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/internal/longtest"
	"github.com/blogql/blog/storage"
)

// The change feed end to end: the server binary, its stream, event log,
// workers and webhooks, seen from an admin's GraphQL client and a webhook
// receiver on loopback. On the embedded engine by default, on DynamoDB
// Local where internal/dynamotest says so.

// feedServer is the server binary on the test's backend, started again
// on the same data (directory or table) by restart.
type feedServer struct {
	*binaryServer
	t     testing.TB
	dir   string
	env   []string
	flags []string
}

// startFeedServer starts the server binary with its change feed, webhooks
// allowed to reach loopback over plain http, no demo blog, and tokens
// signed with testSecret.
func startFeedServer(t testing.TB) *feedServer {
	t.Helper()
	s := &feedServer{t: t, dir: t.TempDir(), env: []string{"JWT_SECRET=" + string(testSecret)},
		flags: []string{"-log-format", "json", "-log-level", "warn", "-seed-demo=false",
			"-webhooks-allow-private-unsafe=true", "-webhooks-allow-http=true"}}
	if e := dynamotest.Endpoint(t); e != "" {
		db, err := storage.NewClient(context.Background(), dynamotest.ClientConfig(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		s.flags = append(s.flags, "-dynamodb-endpoint", e, "-table", dynamotest.Table(t, db, "e2e"))
	}
	s.restart()
	return s
}

// restart starts the server again on the same data.
func (s *feedServer) restart() {
	s.t.Helper()
	s.binaryServer = startBinaryEnv(s.t, s.dir, s.env, s.flags...)
}

// as returns a typed client of the server that signs in as sub with role.
func (s *feedServer) as(sub, role string) graphql.Client {
	s.t.Helper()
	now := time.Now()
	token, err := auth.Sign(testSecret, auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: sub, IssuedAt: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))},
		Roles: []string{role}, Name: sub,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return graphql.NewClient(s.base+"/graphql", &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
}

// writer creates the author writer (an admin) and the category feeds,
// and returns writer's client.
func (s *feedServer) writer() graphql.Client {
	s.t.Helper()
	ctx := context.Background()
	root := s.as("root", auth.RoleAdmin)
	ok[*CreateAuthorResponse](s.t)(CreateAuthor(ctx, root, CreateAuthorInput{Subject: ptr("writer"), Name: "Wendy Writer", Slug: ptr("wendy")}))
	ok[*CreateCategoryResponse](s.t)(CreateCategory(ctx, root, CreateCategoryInput{Slug: "feeds", Name: "Feeds"}))
	return s.as("writer", auth.RoleAdmin)
}

// hook creates a webhook of events to r and returns its secret.
func (s *feedServer) hook(c graphql.Client, r *feedReceiver, events ...string) string {
	s.t.Helper()
	_, secret, err := createWebhook(c, r.URL+"/hooks", events, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") {
		s.t.Fatalf("createWebhook answered the secret %q", secret)
	}
	return secret
}

// delivery is one request a webhook receiver got.
type delivery struct {
	ID, Timestamp, Signature string
	Body                     []byte
	At                       time.Time // when it was received
	Type                     string
	Data                     storage.EventData
}

// feedReceiver is a webhook endpoint that records every delivery.
type feedReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []delivery
	changed chan struct{} // closed at the next delivery
}

func newFeedReceiver(t testing.TB) *feedReceiver {
	r := &feedReceiver{changed: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		d := delivery{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
			Signature: req.Header.Get("webhook-signature"), Body: body, At: time.Now()}
		var payload struct {
			Type string
			Data storage.EventData
		}
		if json.Unmarshal(body, &payload) == nil {
			d.Type, d.Data = payload.Type, payload.Data
		}
		r.mu.Lock()
		r.got = append(r.got, d)
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// deliveries returns what r received so far.
func (r *feedReceiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor waits until cond holds of the deliveries received, woken by
// each, and returns them; it fails the test after 30 s.
func (r *feedReceiver) waitFor(t testing.TB, what string, cond func([]delivery) bool) []delivery {
	t.Helper()
	// A wait fails only after a while with no new delivery: a busy
	// machine's pace sets how long the deliveries take, and a server
	// started after a crash waits for the dead one's leases to lapse
	// (changefeed.DefaultLeaseDuration, 30 s) before it delivers.
	const quiet = 60 * time.Second
	deadline := time.NewTimer(quiet)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		got, changed := slices.Clone(r.got), r.changed
		r.mu.Unlock()
		if cond(got) {
			return got
		}
		select {
		case <-changed:
			deadline.Reset(quiet)
		case <-deadline.C:
			t.Fatalf("no delivery of %s: none new in %s; got %d deliveries", what, quiet, len(got))
		}
	}
}

// waitEvent waits for a delivery of an event of type typ that match
// accepts, and returns it.
func (r *feedReceiver) waitEvent(t testing.TB, typ string, match func(storage.EventData) bool) delivery {
	t.Helper()
	var found delivery
	r.waitFor(t, typ, func(ds []delivery) bool {
		for _, d := range ds {
			if d.Type == typ && match(d.Data) {
				found = d
				return true
			}
		}
		return false
	})
	return found
}

// verify checks d's signature as a receiver does, per Standard Webhooks:
// a v1 HMAC-SHA256, keyed with the secret's base64 after whsec_, of
// id.timestamp.body, and a timestamp within five minutes.
func verify(t *testing.T, secret string, d delivery) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(d.ID + "." + d.Timestamp + "."))
	mac.Write(d.Body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !slices.Contains(strings.Fields(d.Signature), want) {
		t.Errorf("delivery %s: webhook-signature %q does not verify", d.ID, d.Signature)
	}
	ts, err := strconv.ParseInt(d.Timestamp, 10, 64)
	if err != nil || d.At.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		t.Errorf("delivery %s: webhook-timestamp %q is not the time it was sent", d.ID, d.Timestamp)
	}
	if !strings.HasPrefix(d.ID, "evt_") {
		t.Errorf("delivery %s: webhook-id is not an event's id", d.ID)
	}
}

// hasAll reports whether list holds every one of want.
func hasAll(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

// rawID returns the id inside the global id gid of kind ("Post:<id>").
func rawID(t testing.TB, gid, kind string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(gid)
	id, ok := strings.CutPrefix(string(b), kind+":")
	if err != nil || !ok {
		t.Fatalf("%q is not a %s id", gid, kind)
	}
	return id
}

// TestWebhooksFollowTheContent: an admin creates a webhook over GraphQL,
// and a publication, an edit, an approved comment, an author's rename and
// a scheduled post going live each reach it as its event, with the pages
// and cache tags to refresh, signed with the secret createWebhook gave.
func TestWebhooksFollowTheContent(t *testing.T) {
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	r := newFeedReceiver(t)
	secret := s.hook(writer, r, "post.published", "post.published.edited", "comment.added", "comment.approved", "author.updated")

	post := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "First", Slug: "first", Categories: []string{"feeds"}})).CreatePost.Post
	id := rawID(t, post.Id, "Post")
	pub := ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: post.Id})).PublishPost.Post
	month := pub.PublishedAt.UTC()
	t.Run("publishing a post is post.published with its pages and tags", func(t *testing.T) {
		d := r.waitEvent(t, "post.published", func(e storage.EventData) bool { return e.PostID == id })
		wantPaths := []string{"/", "/posts/first", "/authors/wendy", "/categories/feeds", month.Format("/archive/2006/01")}
		wantTags := []string{"post:" + id, "author:writer", "feed", "category:feeds", month.Format("archive:2006-01")}
		if !hasAll(d.Data.Paths, wantPaths...) || !hasAll(d.Data.CacheTags, wantTags...) || d.Data.Slug != "first" || d.Data.AuthorID != "writer" {
			t.Errorf("post.published data %+v, want paths %v and tags %v", d.Data, wantPaths, wantTags)
		}
	})

	ok[*UpdatePostResponse](t)(UpdatePost(ctx, writer, UpdatePostInput{Id: post.Id, ExpectedVersion: pub.Version, Title: ptr("First, again"), Slug: ptr("first-again")}))
	t.Run("an edit of a published post is post.published.edited with its old and new pages", func(t *testing.T) {
		d := r.waitEvent(t, "post.published.edited", func(e storage.EventData) bool { return e.PostID == id })
		if d.Data.Slug != "first-again" || !slices.Contains(d.Data.PreviousSlugs, "first") ||
			!hasAll(d.Data.Paths, "/posts/first", "/posts/first-again") || !slices.Contains(d.Data.CacheTags, "post:"+id) {
			t.Errorf("post.published.edited data %+v", d.Data)
		}
	})

	held := ok[*PostCommentResponse](t)(PostComment(ctx, s.as("rita", auth.RoleReader), AddCommentInput{PostId: post.Id, Body: "Nice"})).AddComment.Comment
	equal(t, "a reader's comment", held.Status, CommentStatusPending)
	commentID := rawID(t, held.Id, "Comment")
	ok[*ApproveCommentResponse](t)(ApproveComment(ctx, writer, ApproveCommentInput{Id: held.Id}))
	t.Run("an approved comment is comment.approved", func(t *testing.T) {
		d := r.waitEvent(t, "comment.approved", func(e storage.EventData) bool { return id+":"+e.CommentID == commentID })
		if d.Data.PostID != id || !slices.Equal(d.Data.CacheTags, []string{"comments:" + id, "comments"}) || strings.Contains(string(d.Body), "rita") {
			t.Errorf("comment.approved %s", d.Body)
		}
	})

	ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, writer, UpdateAuthorInput{Id: authorGIDOf("writer"), Name: ptr("Wendy W. Writer"), Slug: ptr("wendy-w")}))
	t.Run("an author's rename is author.updated with both pages", func(t *testing.T) {
		d := r.waitEvent(t, "author.updated", func(e storage.EventData) bool { return e.AuthorID == "writer" && e.Slug == "wendy-w" })
		if d.Data.Slug != "wendy-w" || !slices.Equal(d.Data.PreviousSlugs, []string{"wendy"}) ||
			!hasAll(d.Data.Paths, "/authors/wendy", "/authors/wendy-w") || !slices.Equal(d.Data.CacheTags, []string{"author:writer", "search", "authors"}) {
			t.Errorf("author.updated data %+v", d.Data)
		}
	})

	t.Run("a scheduled post is post.published once, after its time", func(t *testing.T) {
		later := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "Later", Slug: "later", Categories: []string{"feeds"}})).CreatePost.Post
		laterID := rawID(t, later.Id, "Post")
		at := time.Now().Add(2 * time.Second).Truncate(time.Millisecond)
		scheduled := ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: later.Id, At: &at})).PublishPost.Post
		equal(t, "status of a post published in the future", scheduled.Status, PostStatusScheduled)
		live := r.waitEvent(t, "post.published", func(e storage.EventData) bool { return e.PostID == laterID })
		if live.At.Before(at) {
			t.Errorf("post.published received at %v, before the post's time %v", live.At, at)
		}
		if !live.Data.PublishedAt.Equal(at) || !slices.Contains(live.Data.Paths, "/posts/later") {
			t.Errorf("post.published data %+v", live.Data)
		}
		// A comment written after it is delivered after it: the worker
		// hands events on in the log's order, so by then a second
		// go-live would have been delivered too.
		c := ok[*PostCommentResponse](t)(PostComment(ctx, writer, AddCommentInput{PostId: later.Id, Body: "Fence"})).AddComment.Comment
		r.waitEvent(t, "comment.added", func(e storage.EventData) bool { return laterID+":"+e.CommentID == rawID(t, c.Id, "Comment") })
		var ids []string
		for _, d := range r.deliveries() {
			if d.Data.PostID == laterID && d.Type != "comment.added" {
				ids = append(ids, d.Type+" "+d.ID)
			}
		}
		if len(ids) != 1 {
			t.Errorf("deliveries about the scheduled post: %v, want its post.published once", ids)
		}
	})

	for _, d := range r.deliveries() {
		verify(t, secret, d)
	}
}

// authorGIDOf returns the global id of the author id.
func authorGIDOf(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("Author:" + id))
}

// TestCrashLosesNoWebhookDelivery kills the server with SIGKILL during a
// burst of comments from several writers (100 to 400 acknowledged, by the
// machine's pace), with deliveries on their way, and starts it again on
// the same data: the event of every comment it acknowledged reaches the
// webhook after the restart, and a delivery made twice is the same event,
// with the same webhook-id and body.
func TestCrashLosesNoWebhookDelivery(t *testing.T) {
	longtest.Skip(t, "the server killed with SIGKILL under a write load with deliveries on their way")
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	r := newFeedReceiver(t)
	secret := s.hook(writer, r, "comment.added")
	var posts []string
	for i := range 4 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "Busy", Slug: "busy-" + strconv.Itoa(i)})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: p.Id}))
		posts = append(posts, p.Id)
	}

	// Eight writers add comments, up to 400, while the server delivers
	// the first ones: it is killed once 100 are acknowledged and 10
	// delivered, with more on their way.
	const most, killAt, deliveredAt = 400, 100, 10
	var (
		mu      sync.Mutex
		acked   []string // comments' global ids
		started int
	)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for {
				mu.Lock()
				if started == most {
					mu.Unlock()
					return
				}
				started++
				n := started
				mu.Unlock()
				out, err := PostComment(ctx, writer, AddCommentInput{PostId: posts[w%len(posts)], Body: "Comment " + strconv.Itoa(n)})
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, out.AddComment.Comment.Id)
				mu.Unlock()
			}
		})
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()
	r.waitFor(t, "the first comments while writing", func(ds []delivery) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= killAt && len(ds) >= deliveredAt
	})
	select {
	case <-writing:
		t.Log("the writers were done before the first deliveries: the server is killed after its burst")
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.exited
	wg.Wait()
	before := len(r.deliveries())
	t.Logf("%d of %d comments acknowledged before SIGKILL, %d deliveries", len(acked), started, before)

	s.restart()
	want := map[string]bool{} // "<postId>:<commentId>" of every acknowledged comment
	for _, gid := range acked {
		want[rawID(t, gid, "Comment")] = true
	}
	delivered := func(ds []delivery) map[string]bool {
		got := map[string]bool{}
		for _, d := range ds {
			got[d.Data.PostID+":"+d.Data.CommentID] = true
		}
		return got
	}
	got := r.waitFor(t, "every acknowledged comment", func(ds []delivery) bool {
		got := delivered(ds)
		for k := range want {
			if !got[k] {
				return false
			}
		}
		return true
	})
	t.Logf("%d deliveries, %d after the restart", len(got), len(got)-before)
	bodies, ids := map[string]string{}, map[string]string{}
	for _, d := range got {
		verify(t, secret, d)
		if b, seen := bodies[d.ID]; seen && b != string(d.Body) {
			t.Errorf("webhook-id %s delivered with two bodies:\n%s\n%s", d.ID, b, d.Body)
		}
		bodies[d.ID] = string(d.Body)
		k := d.Data.PostID + ":" + d.Data.CommentID
		if id, seen := ids[k]; seen && id != d.ID {
			t.Errorf("comment %s delivered as two events, %s and %s", k, id, d.ID)
		}
		ids[k] = d.ID
	}
}
