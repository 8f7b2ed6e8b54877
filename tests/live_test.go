package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// Subscriptions over both transports, as a frontend uses them: a page
// read with the log's cursor, then a subscription after it.

// cursor returns liveCursor, read as a frontend reads it with its page.
func (s *liveServer) cursor(t *testing.T) string {
	t.Helper()
	resp, err := http.Post(s.url, "application/json", strings.NewReader(`{"query":"{ liveCursor }"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct{ LiveCursor string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Data.LiveCursor == "" {
		t.Fatalf("liveCursor: %v %+v", err, out)
	}
	return out.Data.LiveCursor
}

// bodies returns the bodies of the next n comment events of st, and the
// cursor of the last.
func bodies(t *testing.T, st stream, n int) ([]string, string) {
	t.Helper()
	var got []string
	cursor := ""
	for range n {
		r, ok := st.next()
		if !ok {
			t.Fatalf("the stream completed after %v", got)
		}
		e := r.comment(t)
		if r.id != "" && r.id != e.Cursor {
			t.Errorf("SSE id %q, cursor %q", r.id, e.Cursor)
		}
		got = append(got, e.Comment.Body)
		cursor = e.Cursor
	}
	return got, cursor
}

func TestLiveACommentArrivesOnBothTransports(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	after := s.cursor(t)
	vars := map[string]any{"post": post, "after": after}
	ws := s.dialWS(t, nil).subscribe("1", commentAddedQuery, vars)
	sse, _ := s.subscribeSSE(t, http.MethodPost, "", commentAddedQuery, vars, "")
	addLiveComment(t, ada, post, "First!")
	for name, st := range map[string]stream{"websocket": ws, "sse": sse} {
		got, _ := bodies(t, st, 1)
		equal(t, name+" body", got[0], "First!")
	}
}

func TestLiveResumeDeliversExactlyTheMissedEventsInOrder(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	start := s.cursor(t)
	addLiveComment(t, ada, post, "c0")
	// Both transports read c0 and leave.
	conn := s.dialWS(t, map[string]any{"Authorization": "Bearer " + s.token(time.Hour, "ada", auth.RoleAuthor)})
	_, wsCursor := bodies(t, conn.subscribe("a", commentAddedQuery, map[string]any{"post": post, "after": start}), 1)
	conn.stop("a")
	sse, _ := s.subscribeSSE(t, http.MethodPost, "", commentAddedQuery, map[string]any{"post": post, "after": start}, "")
	_, sseCursor := bodies(t, sse, 1)
	sse.close()

	var want []string
	for i := range 120 { // more than a page of the log
		want = append(want, fmt.Sprintf("c%d", i+1))
		addLiveComment(t, ada, post, want[i])
	}
	ws := conn.subscribe("b", commentAddedQuery, map[string]any{"post": post, "after": wsCursor})
	// EventSource resumes with a GET whose Last-Event-ID is the last id.
	resumed, _ := s.subscribeSSE(t, http.MethodGet, "", commentAddedQuery, map[string]any{"post": post}, sseCursor)
	for name, st := range map[string]stream{"websocket": ws, "sse": resumed} {
		got, _ := bodies(t, st, len(want))
		equal(t, name+" replay", strings.Join(got, ","), strings.Join(want, ","))
	}
	// Then live, with nothing twice.
	addLiveComment(t, ada, post, "live")
	for name, st := range map[string]stream{"websocket": ws, "sse": resumed} {
		got, _ := bodies(t, st, 1)
		equal(t, name+" live", got[0], "live")
	}
}

func TestLiveReadersDoNotSeePendingComments(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	after := s.cursor(t)
	vars := map[string]any{"post": post, "after": after}
	reader := s.subscribeSSEOK(t, "", vars)
	author := s.subscribeSSEOK(t, s.token(time.Hour, "ada", auth.RoleAuthor), vars)
	addLiveComment(t, s.as("rita", auth.RoleReader), post, "held")
	addLiveComment(t, ada, post, "by the author")

	got, _ := bodies(t, author, 2)
	equal(t, "the author's events", strings.Join(got, ","), "held,by the author")
	got, _ = bodies(t, reader, 1)
	equal(t, "the reader's first event", got[0], "by the author")
}

func (s *liveServer) subscribeSSEOK(t *testing.T, token string, vars map[string]any) *sseStream {
	t.Helper()
	st, status := s.subscribeSSE(t, http.MethodPost, token, commentAddedQuery, vars, "")
	equal(t, "status", status, http.StatusOK)
	return st
}

func TestLiveBadSubscriptionsFailClearly(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	ctx := context.Background()
	draft := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Draft", Slug: "draft", Categories: []string{"news"}})).CreatePost.Post.Id
	ahead := s.cursorAt(t, 1<<40)
	// Cursors are sealed: one made of a position, one altered, one of
	// another key are no cursors.
	forged := base64.RawURLEncoding.EncodeToString([]byte("event:0"))
	altered, _ := base64.RawURLEncoding.DecodeString(s.cursor(t))
	altered[len(altered)-1] ^= 1
	tampered := base64.RawURLEncoding.EncodeToString(altered)
	foreign := storage.New(s.db, s.table).EventCursor(0)
	for _, c := range []struct {
		name string
		vars map[string]any
		code string
	}{
		{"a post id that is not one", map[string]any{"post": "no/pe"}, graph.CodeBadUserInput},
		{"a comment's id", map[string]any{"post": base64.RawURLEncoding.EncodeToString([]byte("Comment:p:c"))}, graph.CodeBadUserInput},
		{"a post that does not exist", map[string]any{"post": postGIDOf("missing")}, graph.CodeNotFound},
		{"a post's raw id that no post has", map[string]any{"post": "missing"}, graph.CodeNotFound},
		{"a draft, for a reader", map[string]any{"post": draft}, graph.CodeNotFound},
		{"a cursor that is not one", map[string]any{"post": post, "after": "bad"}, graph.CodeBadUserInput},
		{"a cursor forged from a position", map[string]any{"post": post, "after": forged}, graph.CodeBadUserInput},
		{"a cursor altered", map[string]any{"post": post, "after": tampered}, graph.CodeBadUserInput},
		{"a cursor of another server's key", map[string]any{"post": post, "after": foreign}, graph.CodeBadUserInput},
		{"a cursor past the log's end", map[string]any{"post": post, "after": ahead}, graph.CodeBadUserInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			for name, st := range map[string]stream{
				"websocket": s.dialWS(t, nil).subscribe("x", commentAddedQuery, c.vars),
				"sse":       s.subscribeSSEOK(t, "", c.vars),
			} {
				r, ok := st.next()
				if !ok {
					t.Fatalf("%s: completed with no error", name)
				}
				equal(t, name+" code", r.code(), c.code)
			}
		})
	}
}

func TestLiveACursorOlderThanTheWindowIsCursorExpired(t *testing.T) {
	saved := liveWindow
	liveWindow = 2 // the server keeps the log's last 2 events
	defer func() { liveWindow = saved }()
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	addLiveComment(t, ada, post, "one")
	addLiveComment(t, ada, post, "two")
	// Until this server's tail read past them.
	waitFor(t, func() bool { first, _ := s.hub.Window(); return first > 0 })
	vars := map[string]any{"post": post, "after": s.cursorAt(t, 0)}
	for name, st := range map[string]stream{
		"websocket": s.dialWS(t, nil).subscribe("x", commentAddedQuery, vars),
		"sse":       s.subscribeSSEOK(t, "", vars),
	} {
		r, _ := st.next()
		equal(t, name+" code", r.code(), graph.CodeCursorExpired)
	}
}

// cursorAt returns the cursor of position pos, as the server makes it.
func (s *liveServer) cursorAt(t *testing.T, pos int64) string {
	t.Helper()
	return s.store.EventCursor(pos)
}

func TestLiveLimits(t *testing.T) {
	limited := func(t *testing.T) (*liveServer, map[string]any) {
		s := newLiveServer(t, func(o *graph.HandlerOptions) {
			o.Live.PerConnection = 2
			o.HTTP.Streams.PerAddress = 2
		})
		ada, post := s.livePost(t)
		s.ada = ada
		return s, map[string]any{"post": post}
	}
	t.Run("subscriptions per connection", func(t *testing.T) {
		s, vars := limited(t)
		ada, post := s.ada, vars["post"].(string)
		vars["after"] = s.cursor(t)
		conn := s.dialWS(t, nil)
		first := conn.subscribe("1", commentAddedQuery, vars)
		second := conn.subscribe("2", commentAddedQuery, vars)
		addLiveComment(t, ada, post, "both are open")
		bodies(t, first, 1)
		bodies(t, second, 1)
		r, _ := conn.subscribe("3", commentAddedQuery, vars).next()
		equal(t, "code", r.code(), graph.CodeTooManySubscriptions)
	})
	t.Run("streams per address", func(t *testing.T) {
		s, vars := limited(t)
		s.dialWS(t, nil)
		s.subscribeSSEOK(t, "", vars)
		_, status := s.subscribeSSE(t, http.MethodPost, "", commentAddedQuery, vars, "")
		equal(t, "status", status, http.StatusTooManyRequests)
		// A browser's WebSocket shows no handshake's status: the
		// connection is closed with 1013 (try again later).
		_, err := s.dialWSErr(t, nil)
		var ce *websocket.CloseError
		if !asCloseError(err, &ce) || ce.Code != 1013 || !strings.HasPrefix(ce.Text, gqlhttp.CodeTooManyStreams) {
			t.Errorf("a third WebSocket: %v, want a close with 1013 and %s", err, gqlhttp.CodeTooManyStreams)
		}
	})
	t.Run("a subscription sent as a plain request", func(t *testing.T) {
		s, vars := limited(t)
		body, _ := json.Marshal(map[string]any{"query": commentAddedQuery, "variables": vars})
		resp, err := http.Post(s.url, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r result
		_ = json.NewDecoder(resp.Body).Decode(&r)
		equal(t, "code", r.code(), gqlhttp.CodeBadRequest)
	})
}

const postUpdatedQuery = `subscription($id: ID!, $after: String) {
  postUpdated(id: $id, after: $after) { cursor kind deleted postId post { title status } }
}`

const postPublishedQuery = `subscription($category: String, $after: String) {
  postPublished(category: $category, after: $after) { kind post { title } }
}`

// postEvent is what the tests ask postUpdated and postPublished for.
type postEvent struct {
	Kind    string
	Deleted bool
	Post    *struct{ Title, Status string }
}

func (r result) post(t *testing.T, field string) postEvent {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	var e postEvent
	if err := json.Unmarshal(r.Data[field], &e); err != nil {
		t.Fatalf("%s %s: %v", field, r.Data[field], err)
	}
	return e
}

func TestLivePostUpdatedFollowsWhatTheReaderMaySee(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	ctx := context.Background()
	vars := map[string]any{"id": post, "after": s.cursor(t)}
	reader := s.dialWS(t, nil).subscribe("r", postUpdatedQuery, vars)
	author := s.dialWS(t, map[string]any{"Authorization": "Bearer " + s.token(time.Hour, "ada", auth.RoleAuthor)}).subscribe("a", postUpdatedQuery, vars)

	// Each event shows the post as it is when it is sent: the test waits
	// for each before the next write.
	version := 2
	steps := []struct {
		write          func()
		reader, author string
	}{
		{func() {
			version = ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: post, ExpectedVersion: version, Title: ptr("Edited")})).UpdatePost.Post.Version
		}, "EDITED Edited", "EDITED Edited"},
		{func() { ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: post})) },
			"UNPUBLISHED -", "UNPUBLISHED Edited"}, // the author still sees the draft
		{func() {
			ok[*UpdatePostResponse](t)(UpdatePost(ctx, ada, UpdatePostInput{Id: post, ExpectedVersion: version + 1, Title: ptr("Again")}))
			ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post}))
		}, "PUBLISHED Again", "PUBLISHED Again"}, // a draft's edit is no event
		{func() { ok[*DeletePostResponse](t)(DeletePost(ctx, ada, DeletePostInput{Id: post})) },
			"DELETED -", "DELETED -"},
	}
	for _, step := range steps {
		step.write()
		for name, c := range map[string]struct {
			st   stream
			want string
		}{"reader": {reader, step.reader}, "author": {author, step.author}} {
			r, _ := c.st.next()
			e := r.post(t, "postUpdated")
			title := "-"
			if e.Post != nil {
				title = e.Post.Title
			}
			equal(t, name, e.Kind+" "+title, c.want)
		}
	}
	for name, st := range map[string]stream{"reader": reader, "author": author} {
		if _, ok := st.next(); ok {
			t.Errorf("%s: the subscription of a deleted post goes on", name)
		}
	}
}

func TestLivePostPublishedByCategory(t *testing.T) {
	s := newLiveServer(t)
	ada, _ := s.livePost(t)
	ctx := context.Background()
	admin := s.as("admin", auth.RoleAdmin)
	ok[*CreateCategoryResponse](t)(CreateCategory(ctx, admin, CreateCategoryInput{Slug: "go", Name: "Go"}))
	after := s.cursor(t)
	goPosts := s.subscribeSSEOKQuery(t, postPublishedQuery, map[string]any{"category": "go", "after": after})
	everything := s.subscribeSSEOKQuery(t, postPublishedQuery, map[string]any{"after": after})
	for _, p := range []struct {
		title string
		cats  []string
	}{{"Elsewhere", []string{"news"}}, {"On Go", []string{"go"}}} {
		id := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: p.title, Slug: strings.ToLower(strings.ReplaceAll(p.title, " ", "-")), Categories: p.cats})).CreatePost.Post.Id
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: id}))
	}
	r, _ := goPosts.next()
	equal(t, "the category's first", r.post(t, "postPublished").Post.Title, "On Go")
	for _, want := range []string{"Elsewhere", "On Go"} {
		r, _ := everything.next()
		equal(t, "the blog's", r.post(t, "postPublished").Post.Title, want)
	}
	st, _ := s.subscribeSSE(t, http.MethodPost, "", postPublishedQuery, map[string]any{"category": "nope"}, "")
	r, _ = st.next()
	equal(t, "an unknown category", r.code(), graph.CodeNotFound)
}

func (s *liveServer) subscribeSSEOKQuery(t *testing.T, query string, vars map[string]any) *sseStream {
	t.Helper()
	st, status := s.subscribeSSE(t, http.MethodPost, "", query, vars, "")
	equal(t, "status", status, http.StatusOK)
	return st
}

func TestLiveAnExpiredTokenEndsTheSubscription(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	vars := map[string]any{"post": post, "after": s.cursor(t)}
	// The token expires in two or three seconds (exp is in whole
	// seconds): its subscription ends then, with the events before it.
	short := s.token(3*time.Second, "ada", auth.RoleAuthor)
	st := s.subscribeSSEOK(t, short, vars)
	addLiveComment(t, ada, post, "before")
	bodies(t, st, 1)
	r, _ := st.next()
	equal(t, "code", r.code(), graph.CodeUnauthenticated)
	if _, ok := st.next(); ok {
		t.Error("the stream goes on after the token expired")
	}
}

func TestLiveWebSocketsChecksOriginAndToken(t *testing.T) {
	s := newLiveServer(t)
	t.Run("a page of another origin", func(t *testing.T) {
		h := http.Header{"Origin": {"https://evil.example"}}
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		_, resp, err := d.Dial("ws"+strings.TrimPrefix(s.url, "http"), h)
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("got %v, want 403", err)
		}
	})
	t.Run("a page of the server's own origin", func(t *testing.T) {
		h := http.Header{"Origin": {s.url}}
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		conn, _, err := d.Dial("ws"+strings.TrimPrefix(s.url, "http"), h)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	})
	t.Run("a bad token in connection_init", func(t *testing.T) {
		_, err := s.dialWSErr(t, map[string]any{"Authorization": "Bearer nope"})
		var ce *websocket.CloseError
		if !asCloseError(err, &ce) || ce.Code != 4403 {
			t.Fatalf("got %v, want close 4403", err)
		}
	})
}

func TestLiveShutdownTellsClientsToReconnect(t *testing.T) {
	s := newLiveServer(t)
	_, post := s.livePost(t)
	vars := map[string]any{"post": post, "after": s.cursor(t)}
	conn := s.dialWS(t, nil)
	ws := conn.subscribe("1", commentAddedQuery, vars)
	sse := s.subscribeSSEOK(t, "", vars)
	// Both are registered once the hub counts them.
	waitFor(t, func() bool { return s.hub.Subscribers() == 2 })
	s.hub.Close()
	close(s.shutdown)
	for name, st := range map[string]stream{"websocket": ws, "sse": sse} {
		r, _ := st.next()
		equal(t, name+" code", r.code(), graph.CodeShuttingDown)
	}
	select {
	case code := <-conn.closed:
		equal(t, "close code", code, 1012)
	case <-time.After(waitLimit):
		t.Fatal("the connection stays open")
	}
}

// waitFor waits until cond holds, failing the test after waitLimit.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const moderationQuery = `subscription($after: String) {
  moderationQueueChanged(after: $after) { cursor comment { id body status } }
}`

func TestLiveModerationQueueChangedIsForModerators(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	ctx := context.Background()
	after := s.cursor(t)
	vars := map[string]any{"after": after}
	author := s.subscribeSSEOKQuery2(t, s.token(time.Hour, "ada", auth.RoleAuthor), moderationQuery, vars)
	// grace is an author, not of this post: her queue stays empty of it.
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.as("admin", auth.RoleAdmin), CreateAuthorInput{Subject: ptr("grace"), Name: "Grace Hopper"}))
	other := s.subscribeSSEOKQuery2(t, s.token(time.Hour, "grace", auth.RoleAuthor), moderationQuery, vars)

	// Each event shows the comment as it is when sent: the approval waits
	// for the first.
	held := addLiveComment(t, s.as("rita", auth.RoleReader), post, "held")
	var got []string
	for _, write := range []func(){func() {
		ok[*ApproveCommentResponse](t)(ApproveComment(ctx, ada, ApproveCommentInput{Id: held}))
	}, func() {}} {
		r, _ := author.next()
		e := r.commentOf(t, "moderationQueueChanged")
		got = append(got, e.Comment.Body+" "+e.Comment.Status)
		write()
	}
	equal(t, "the post's author", strings.Join(got, ", "), "held PENDING, held PUBLISHED")
	// grace's own post, commented on last: the first event she gets.
	g := ok[*CreatePostResponse](t)(CreatePost(ctx, s.as("grace", auth.RoleAuthor), CreatePostInput{Title: "Grace's", Slug: "graces", Categories: []string{"news"}})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, s.as("grace", auth.RoleAuthor), PublishPostInput{Id: g}))
	addLiveComment(t, s.as("rita", auth.RoleReader), g, "for grace")
	r, _ := other.next()
	equal(t, "another author's first", r.commentOf(t, "moderationQueueChanged").Comment.Body, "for grace")

	for name, c := range map[string]struct {
		token, code string
	}{"anonymous": {"", graph.CodeUnauthenticated}, "a reader": {s.token(time.Hour, "rita", auth.RoleReader), graph.CodeForbidden}} {
		st := s.subscribeSSEOKQuery2(t, c.token, moderationQuery, nil)
		r, _ := st.next()
		equal(t, name, r.code(), c.code)
	}
}

func (s *liveServer) subscribeSSEOKQuery2(t *testing.T, token, query string, vars map[string]any) *sseStream {
	t.Helper()
	st, status := s.subscribeSSE(t, http.MethodPost, token, query, vars, "")
	equal(t, "status", status, http.StatusOK)
	return st
}

func TestLiveAnIdleWebSocketIsClosed(t *testing.T) {
	s := newLiveServer(t, func(o *graph.HandlerOptions) { o.HTTP.Streams.IdleTimeout = 300 * time.Millisecond })
	_, post := s.livePost(t)
	closedWith := func(conn *wsConn) int {
		select {
		case code := <-conn.closed:
			return code
		case <-time.After(waitLimit):
			t.Fatal("the idle connection stays open")
			return 0
		}
	}
	t.Run("a connection that never subscribes", func(t *testing.T) {
		equal(t, "close code", closedWith(s.dialWS(t, nil)), websocket.CloseNormalClosure)
	})
	t.Run("a connection whose subscriptions ended", func(t *testing.T) {
		conn := s.dialWS(t, nil)
		conn.subscribe("1", commentAddedQuery, map[string]any{"post": post})
		waitFor(t, func() bool { return s.hub.Subscribers() == 1 })
		conn.stop("1")
		equal(t, "close code", closedWith(conn), websocket.CloseNormalClosure)
	})
}

func TestLiveAWriteOnOneServerReachesSubscribersOfAnother(t *testing.T) {
	a := newLiveServer(t)
	b := a.another(t)
	ada, post := a.livePost(t)
	vars := map[string]any{"post": post, "after": b.cursor(t)}
	onB := b.dialWS(t, nil).subscribe("1", commentAddedQuery, vars)
	addLiveComment(t, ada, post, "written through a")
	got, cursor := bodies(t, onB, 1)
	equal(t, "on b", got[0], "written through a")
	// The cursor of one server resumes on the other.
	addLiveComment(t, ada, post, "missed")
	resumed, _ := a.subscribeSSE(t, http.MethodPost, "", commentAddedQuery, map[string]any{"post": post, "after": cursor}, "")
	got, _ = bodies(t, resumed, 1)
	equal(t, "resumed on a", got[0], "missed")
}
