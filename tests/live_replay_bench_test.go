package tests

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/storage"
)

// TestLiveReplayFigures measures what BENCHMARKS.md reports of resumes:
// the read units and Queries of the server's whole DynamoDB client while
// one client resubscribes after the first event of the log, over and
// over, on one WebSocket, against the same server idle for the same time. With
// LIVE_BENCH=1 it runs the figures (a log of about 1,340 events,
// 200 resumes, the server's own change feed settings); without, it runs
// small.
func TestLiveReplayFigures(t *testing.T) {
	comments, resumes := 30, 20
	if os.Getenv("LIVE_BENCH") != "" {
		comments, resumes = 1330, 200
		saved := liveFeedOptions
		liveFeedOptions = changefeed.Options{ReadGap: 25 * time.Millisecond, PollEvery: 25 * time.Millisecond}
		defer func() { liveFeedOptions = saved }()
	}
	var mu sync.Mutex
	var queries int
	var units float64
	liveObserve = func(c storage.Call) {
		mu.Lock()
		defer mu.Unlock()
		units += c.CapacityUnits
		if c.Operation == "Query" {
			queries++
		}
	}
	defer func() { liveObserve = nil }()
	reset := func() (int, float64) {
		mu.Lock()
		defer mu.Unlock()
		q, u := queries, units
		queries, units = 0, 0
		return q, u
	}
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	start := s.cursorAt(t, 0)
	for i := range comments {
		addLiveComment(t, ada, post, fmt.Sprint("comment ", i))
	}
	vars := map[string]any{"post": post, "after": start}
	// The first resume reads what the events are about, once for every
	// subscriber of the server.
	sse := s.subscribeSSEOK(t, "", vars)
	bodies(t, sse, comments)
	sse.close()
	head := s.logPosition(t, s.cursor(t))

	reset()
	began, cpu := time.Now(), cpuTime()
	conn := s.dialWS(t, nil)
	for i := range resumes {
		id := fmt.Sprint(i)
		bodies(t, conn.subscribe(id, commentAddedQuery, vars), comments)
		conn.stop(id)
	}
	took, busy := time.Since(began), cpuTime()-cpu
	q, u := reset()
	// The same time idle: the tail of the log, the workers, the leases.
	idle := time.NewTimer(took)
	<-idle.C
	iq, iu := reset()
	t.Logf("log of %d events; %d resumes after its first event (%d comments each) in %v, %v of CPU: %d Queries, %.1f read units; the same time idle: %d Queries, %.1f read units",
		head, resumes, comments, took.Round(time.Millisecond), busy.Round(time.Millisecond), q, u, iq, iu)
	if os.Getenv("LIVE_BENCH") != "" {
		// The 10 s: the server idle for 10 s.
		<-time.After(10 * time.Second)
		iq, iu = reset()
		t.Logf("10 s idle: %d Queries, %.1f read units", iq, iu)
	}
}

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
