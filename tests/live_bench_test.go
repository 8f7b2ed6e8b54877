package tests

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/longtest"
)

// TestLiveFigures measures what docs/performance.md reports of subscriptions,
// with the server's own change feed settings, on the backend the tests
// run on: the time from a comment's mutation answered to its event
// received by an SSE subscriber on the same server, and the memory and
// fan-out time of many idle subscribers. With LIVE_BENCH=1 it measures
// (LIVE_BENCH_SUBSCRIBERS sets how many, default 2000); without, it
// checks the same small. It is a long run: BLOG_LONG=1 runs it.
func TestLiveFigures(t *testing.T) {
	longtest.Skip(t, "the figures of many subscribers")
	// Without LIVE_BENCH it runs small, with the tests' short polls: 50
	// subscribers, each of whom gets the comment.
	n, comments := 50, 10
	if os.Getenv("LIVE_BENCH") != "" {
		n, comments = 2000, 40
		if v, err := strconv.Atoi(os.Getenv("LIVE_BENCH_SUBSCRIBERS")); err == nil {
			n = v
		}
		// The server's settings on the embedded engine (server.go,
		// newFeed): its stream read every 25 ms, the log's tail every
		// 500 ms.
		saved := liveFeedOptions
		liveFeedOptions = changefeed.Options{ReadGap: 25 * time.Millisecond, PollEvery: 25 * time.Millisecond}
		defer func() { liveFeedOptions = saved }()
	}
	if os.Getenv("LIVE_BENCH_HEAP") != "" {
		// Every allocation of 512 bytes on average sampled: the profile
		// shows what each subscriber holds.
		runtime.MemProfileRate = 512
	}
	s := newLiveServer(t, func(o *graph.HandlerOptions) { o.HTTP.Streams.PerAddress = n + 1 })
	ada, post := s.livePost(t)

	vars := map[string]any{"post": post, "after": s.cursor(t)}
	st := s.subscribeSSEOK(t, "", vars)
	var lat []time.Duration
	for i := range comments {
		addLiveComment(t, ada, post, fmt.Sprint(i))
		acked := time.Now()
		bodies(t, st, 1)
		lat = append(lat, time.Since(acked))
	}
	slices.Sort(lat)
	t.Logf("write answered → event received, one server, %d comments: p50 %v, p99 %v, max %v",
		len(lat), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	st.close()

	// A subscriber of another server on the same table: that server's
	// tail finds the event at its next read of the log.
	other := s.another(t)
	st = other.subscribeSSEOK(t, "", map[string]any{"post": post, "after": other.cursor(t)})
	lat = lat[:0]
	for i := range comments / 2 {
		addLiveComment(t, ada, post, fmt.Sprint("other ", i))
		acked := time.Now()
		bodies(t, st, 1)
		lat = append(lat, time.Since(acked))
	}
	slices.Sort(lat)
	t.Logf("write answered → event received, another server, %d comments: p50 %v, p99 %v, max %v",
		len(lat), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
	st.close()

	for _, websocket := range []bool{false, true} {
		idleFigures(t, s, ada, post, n, websocket)
	}
}

// idleFigures measures n idle subscribers of one transport, whose
// clients run in a process of their own (TestLiveClients): the heap and
// goroutine stacks they add to the server's process, and the time one
// comment takes to reach them all.
func idleFigures(t *testing.T, s *liveServer, ada graphql.Client, post string, n int, websocket bool) {
	transport := "SSE"
	if websocket {
		transport = "WebSocket"
	}
	heapBefore, stackBefore := heap()
	goroutines := runtime.NumGoroutine()
	clients := startClients(t, s.url, post, n, websocket)
	waitSubscribers(t, s, n)
	heapAfter, stackAfter := heap()
	if f := os.Getenv("LIVE_BENCH_HEAP"); f != "" {
		out, err := os.Create(f + "." + strings.ToLower(transport))
		if err != nil {
			t.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(out)
		out.Close()
		if out, err = os.Create(f + "." + strings.ToLower(transport) + ".goroutines"); err != nil {
			t.Fatal(err)
		}
		_ = pprof.Lookup("goroutine").WriteTo(out, 1)
		out.Close()
	}
	t.Logf("%d idle %s subscribers, the server's process alone: heap %.1f MB more (%.1f KB each), goroutine stacks %.1f MB more (%.1f KB each), %.2f goroutines each",
		n, transport, float64(heapAfter-heapBefore)/1e6, float64(heapAfter-heapBefore)/float64(n)/1e3,
		float64(stackAfter-stackBefore)/1e6, float64(stackAfter-stackBefore)/float64(n)/1e3,
		float64(runtime.NumGoroutine()-goroutines)/float64(n))
	// Timed from the mutation sent: on a busy machine its answer may
	// come after the event reached every subscriber.
	sent := time.Now()
	addLiveComment(t, ada, post, "to all "+transport)
	acked := time.Since(sent)
	clients.wait(t, clientsReceived)
	t.Logf("one comment to all %d %s subscribers: %v from the mutation sent to the last received (its answer took %v)",
		n, transport, time.Since(sent).Round(time.Millisecond), acked.Round(time.Millisecond))
	clients.stop()
	waitSubscribers(t, s, 0)
}

// waitSubscribers waits until the server holds n subscriptions, for as
// long as opening many takes on a busy machine.
func waitSubscribers(t *testing.T, s *liveServer, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for s.hub.Subscribers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers, want %d", s.hub.Subscribers(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heap returns the bytes of heap and of goroutine stacks in use, after a
// collection.
func heap() (heap, stacks uint64) {
	// A collection halves the stack of a goroutine that uses less than
	// a quarter of it: a few give the stacks a busy server keeps.
	for range 4 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse
}
