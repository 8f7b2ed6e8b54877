package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
)

// A client away during a burst: the log holds what it missed, so how
// long it was away does not matter as long as the events are within the
// log's retention. The test disconnects, writes the burst and resumes
// at once: the log's content, not the time, is what a resume reads.

// logPosition returns the position in the event log a cursor names.
func (s *liveServer) logPosition(t *testing.T, cursor string) int64 {
	t.Helper()
	pos, err := s.store.EventPosition(cursor)
	if err != nil {
		t.Fatalf("cursor %q: %v", cursor, err)
	}
	return pos
}

func TestLiveAClientAwayDuringABurstOf500GetsAllInOrderOnBothTransports(t *testing.T) {
	const burst, writers = 500, 8
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	start := s.cursor(t)
	addLiveComment(t, ada, post, "before")

	// Each transport reads the comment before the burst, then leaves.
	conn := s.dialWS(t, map[string]any{"Authorization": "Bearer " + s.token(time.Hour, "ada", auth.RoleAuthor)})
	_, wsCursor := bodies(t, conn.subscribe("a", commentAddedQuery, map[string]any{"post": post, "after": start}), 1)
	conn.stop("a")
	sse := s.subscribeSSEOK(t, "", map[string]any{"post": post, "after": start})
	_, sseCursor := bodies(t, sse, 1)
	sse.close()
	equal(t, "the cursors of both transports", sseCursor, wsCursor)

	written := commentBurst(t, ada, post, burst, writers)

	// Resume: graphql-transport-ws with after, EventSource's GET with
	// Last-Event-ID.
	ws := conn.subscribe("b", commentAddedQuery, map[string]any{"post": post, "after": wsCursor})
	resumed, status := s.subscribeSSE(t, http.MethodGet, "", commentAddedQuery, map[string]any{"post": post}, sseCursor)
	equal(t, "status", status, http.StatusOK)
	got := map[string][]string{}
	for name, st := range map[string]stream{"websocket": ws, "sse": resumed} {
		last := s.logPosition(t, wsCursor)
		seen := map[string]bool{}
		for range burst {
			r, ok := st.next()
			if !ok {
				t.Fatalf("%s: the stream completed after %d events", name, len(seen))
			}
			e := r.comment(t)
			if pos := s.logPosition(t, e.Cursor); pos <= last {
				t.Fatalf("%s: %q at position %d after position %d: not in the log's order", name, e.Comment.Body, pos, last)
			} else {
				last = pos
			}
			if r.id != "" && r.id != e.Cursor {
				t.Errorf("%s: SSE id %q, cursor %q", name, r.id, e.Cursor)
			}
			if seen[e.Comment.Body] || !written[e.Comment.Body] {
				t.Fatalf("%s: %q twice or never written", name, e.Comment.Body)
			}
			seen[e.Comment.Body] = true
			got[name] = append(got[name], e.Comment.Body)
		}
	}
	// Both transports read the same log: the same order.
	equal(t, "the order of both transports", strings.Join(got["sse"], ","), strings.Join(got["websocket"], ","))

	// Then live, with nothing twice.
	addLiveComment(t, ada, post, "live")
	for name, st := range map[string]stream{"websocket": ws, "sse": resumed} {
		live, _ := bodies(t, st, 1)
		equal(t, name+" live", live[0], "live")
	}
}

// The TypeScript client's live comment thread (clients/typescript/src/live.ts)
// sends its documents as a browser does: liveCursor with a POST, then the
// subscription with EventSource's GET, resumed with Last-Event-ID.
func TestTypeScriptLiveThread(t *testing.T) {
	ops := tsOperations(t)
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	resp, err := http.Post(s.url, "application/json", strings.NewReader(`{"query":`+strconv.Quote(ops["LiveCursor"])+`}`))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Data struct{ LiveCursor string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || page.Data.LiveCursor == "" {
		t.Fatalf("LiveCursor: %v %+v", err, page)
	}
	resp.Body.Close()
	// A comment written after the page's cursor, before the thread starts.
	addLiveComment(t, ada, post, "meanwhile")
	thread, status := s.subscribeSSE(t, http.MethodGet, "", ops["CommentAdded"], map[string]any{"postId": post, "after": page.Data.LiveCursor}, "")
	equal(t, "status", status, http.StatusOK)
	got, last := bodies(t, thread, 1)
	equal(t, "the first comment", got[0], "meanwhile")
	thread.close()
	addLiveComment(t, ada, post, "while away")
	resumed, _ := s.subscribeSSE(t, http.MethodGet, "", ops["CommentAdded"], map[string]any{"postId": post, "after": page.Data.LiveCursor}, last)
	got, _ = bodies(t, resumed, 1)
	equal(t, "after the reconnection", got[0], "while away")
}

// A client that resumes often costs no read of the table: the server
// replays from the events it keeps in memory, and shares with every
// subscriber its reads of what the events are about and of the post a
// subscription starts on. Only the first resume reads those, but for the
// post's check, read again every few seconds.
func TestLiveAResumeReplaysFromMemoryWithNoReadOfTheTable(t *testing.T) {
	const comments = 30
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	start := s.cursor(t)
	for i := range comments {
		addLiveComment(t, ada, post, fmt.Sprint("missed ", i))
	}
	head := s.logPosition(t, s.cursor(t))
	// Until this server's tail read them: a resume on another server
	// waits for its tail, which reads the log for every subscriber.
	waitFor(t, func() bool { _, last := s.hub.Window(); return last >= head })
	for round := range 3 {
		sse := s.subscribeSSEOK(t, "", map[string]any{"post": post, "after": start})
		s.mu.Lock()
		counter := s.last
		s.mu.Unlock()
		got, _ := bodies(t, sse, comments)
		equal(t, "the last comment replayed", got[comments-1], fmt.Sprint("missed ", comments-1))
		sse.close()
		// The post a subscription starts on is read again once its
		// shared read is older than a few seconds, which a busy machine
		// can make a round take: one Query at most, never the log's.
		if n, ops := counter.Total(), counter.ByOperation(); round > 0 && (n > 1 || n != ops["Query"]) {
			t.Fatalf("resume %d: %d DynamoDB requests, want none but the post's check: %v", round, n, ops)
		}
	}
}

// A burst larger than a subscriber's queue (256 events) reaches live
// subscribers whole, in the log's order, on both transports: the tail
// publishes it in pages of 100, faster than a subscriber sends them, and
// the subscriber takes what its queue could not hold from the window.
func TestLiveSubscribersGetEveryCommentOfABurstOf1000(t *testing.T) {
	const burst, writers = 1000, 16
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	conn := s.dialWS(t, map[string]any{"Authorization": "Bearer " + s.token(time.Hour, "ada", auth.RoleAuthor)})
	streams := map[string]stream{
		"websocket": conn.subscribe("a", commentAddedQuery, map[string]any{"post": post}),
		"sse":       s.subscribeSSEOK(t, "", map[string]any{"post": post}),
	}
	start := s.cursor(t)
	addLiveComment(t, ada, post, "before")
	for name, st := range streams {
		got, _ := bodies(t, st, 1)
		equal(t, name+" first", got[0], "before")
	}

	written := commentBurst(t, ada, post, burst, writers)
	for name, st := range streams {
		last, seen := s.logPosition(t, start), map[string]bool{}
		for range burst {
			r, ok := st.next()
			if !ok {
				t.Fatalf("%s: the stream completed after %d events", name, len(seen))
			}
			if len(r.Errors) > 0 {
				t.Fatalf("%s: after %d events: %+v", name, len(seen), r.Errors)
			}
			e := r.comment(t)
			pos := s.logPosition(t, e.Cursor)
			if pos <= last || seen[e.Comment.Body] || !written[e.Comment.Body] {
				t.Fatalf("%s: %q at position %d after %d, or twice", name, e.Comment.Body, pos, last)
			}
			last, seen[e.Comment.Body] = pos, true
		}
	}
}

// commentBurst writes n comments on post from writers in parallel, as
// many readers comment at once, and returns their bodies. Their order in
// the log is the order the change feed read them.
func commentBurst(t *testing.T, c graphql.Client, post string, n, writers int) map[string]bool {
	t.Helper()
	written := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				body := fmt.Sprintf("burst %d", i)
				// t.Fatal belongs to the test's goroutine: a writer reports.
				if _, err := AddComment(context.Background(), c, AddCommentInput{PostId: post, Body: body}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				written[body] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return written
}
