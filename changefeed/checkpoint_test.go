package changefeed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// TestAWorkerCheckpointsOnceAWhile: a worker's checkpoint is a write,
// so it moves at most once a WorkerCheckpointEvery, not once a batch,
// whether events keep coming or come a few seconds apart; the first
// moves once the log is quiet for a second, and a worker that stops
// moves it to the last event done.
func TestAWorkerCheckpointsOnceAWhile(t *testing.T) {
	e := newEnv(t)
	f := e.feed("a")
	// Exclusive: no heartbeat, so the only UpdateItem is the checkpoint.
	f.opts.Exclusive = true
	f.opts.WorkerCheckpointEvery = time.Hour
	took := make(chan int64, 1000)
	f.AddWorker(Worker{Name: "busy", Events: func(_ context.Context, events []storage.LoggedEvent) error {
		took <- events[len(events)-1].Position
		return nil
	}})
	ctx, counter := storage.WithRequestCounter(context.Background())
	stop := e.runIn(ctx, f)
	position := func() int64 {
		leases, err := e.store.Feed().Leases(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases {
			if l.Name == feedstore.WorkerLease("busy") {
				return l.Position
			}
		}
		return -1
	}
	last := int64(0)
	// next writes an event and waits until the worker took it.
	next := func() {
		t.Helper()
		e.write(1)
		for want := last + 1; last < want; {
			select {
			case last = <-took:
			case <-time.After(30 * time.Second):
				t.Fatalf("the worker took no event after %d in 30 s", last)
			}
		}
	}
	next()
	e.eventually("the first event's checkpoint", func() bool { return position() == 1 })
	before := counter.ByOperation()["UpdateItem"]
	const batches, paced = 20, 3
	for range batches {
		next()
	}
	// Quiet spells of more than a second, as between comments a few
	// seconds apart: each let the checkpoint move before.
	for range paced {
		time.Sleep(1200 * time.Millisecond)
		next()
	}
	time.Sleep(1200 * time.Millisecond)
	if n := counter.ByOperation()["UpdateItem"] - before; n != 0 {
		t.Errorf("the checkpoint moved %d times while %d batches came one after another and %d more a second apart, want none within an hour of its last move", n, batches, paced)
	}
	stop()
	if p, want := position(), int64(1+batches+paced); p != want {
		t.Errorf("the checkpoint of the stopped worker is at %d, want %d", p, want)
	}
}

// TestIdleWorkersLeaveTheLogToTheTail: workers that have read the whole
// log and owe no checkpoint read it again when the server's tail finds
// events (or after WorkerIdlePoll), not every TailEvery each, so an idle
// server's reads of the log are its tail's.
func TestIdleWorkersLeaveTheLogToTheTail(t *testing.T) {
	e := newEnv(t)
	f := e.feed("a")
	f.opts.Exclusive = true
	const workers = 4
	took := addWorkers(f, workers)
	ctx, counter := storage.WithRequestCounter(context.Background())
	e.runIn(ctx, f)
	// checkpoints returns how many workers' checkpoints are at pos.
	checkpoints := func(pos int64) int {
		leases, err := e.store.Feed().Leases(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range leases {
			if strings.HasPrefix(l.Name, feedstore.WorkerLease("w")) && l.Position == pos {
				n++
			}
		}
		return n
	}
	e.eventually("every worker's lease taken", func() bool { return checkpoints(0) == workers })
	pos := e.writeTaken(took, workers)
	e.eventually("every worker's checkpoint at the event", func() bool { return checkpoints(pos) == workers })

	before, start := counter.ByOperation()["Query"], time.Now()
	time.Sleep(2 * time.Second)
	queries, elapsed := counter.ByOperation()["Query"]-before, time.Since(start)
	// The tail's reads, and the coordinator's of the leases, at most.
	if most := int(elapsed/f.opts.TailEvery) + int(elapsed/f.opts.RenewEvery) + 4; queries > most {
		t.Errorf("%d Query calls in %s of an idle log, want at most %d: the tail's and the leases'", queries, elapsed.Round(time.Millisecond), most)
	}
	// A write after the idle spell reaches every worker.
	e.writeTaken(took, workers)
}

// addWorkers adds n workers to f, w0 and on, each of which sends the
// position of the last event of each batch it takes to the channel
// returned.
func addWorkers(f *Feed, n int) <-chan int64 {
	took := make(chan int64, 100)
	for i := range n {
		f.AddWorker(Worker{Name: fmt.Sprintf("w%d", i), Events: func(_ context.Context, events []storage.LoggedEvent) error {
			took <- events[len(events)-1].Position
			return nil
		}})
	}
	return took
}

// writeTaken writes an event, waits until each of the n workers that
// send to took took a batch, and returns the last position they took.
func (e *env) writeTaken(took <-chan int64, n int) int64 {
	e.t.Helper()
	e.write(1)
	var pos int64
	for range n {
		select {
		case pos = <-took:
		case <-time.After(30 * time.Second):
			e.t.Fatal("a worker took no event of a write in 30 s")
		}
	}
	return pos
}

// TestWorkersReadTheEventsTheTailRead: the workers of a server take the
// events its tail read, not each its own Query of the log, so a batch of
// events costs the log one Query however many workers follow it.
func TestWorkersReadTheEventsTheTailRead(t *testing.T) {
	e := newEnv(t)
	f := e.feed("a")
	f.opts.Exclusive = true
	// The tail reads the log when this server appended to it, and only
	// then: every read of the log is the tail's or a worker's own.
	f.opts.TailEvery = time.Hour
	const workers, writes = 4, 5
	took := addWorkers(f, workers)
	ctx, counter := storage.WithRequestCounter(context.Background())
	e.runIn(ctx, f)
	e.writeTaken(took, workers)
	before, start := counter.ByOperation()["Query"], time.Now()
	for range writes {
		e.writeTaken(took, workers)
	}
	queries, elapsed := counter.ByOperation()["Query"]-before, time.Since(start)
	t.Logf("%d Query calls in %v", queries, elapsed)
	// The tail's read of each write, and the coordinator's of the leases.
	if most := writes + int(elapsed/f.opts.RenewEvery) + 2; queries > most {
		t.Errorf("%d Query calls for %d writes that %d workers took, in %s, want at most %d: the tail's and the leases'", queries, writes, workers, elapsed.Round(time.Millisecond), most)
	}
}

// TestRecentEventsKeepsAnUnbrokenRun: what the tail keeps for the
// workers gives only events that follow a reader's position, and sends
// it to the log when it cannot tell.
func TestRecentEventsKeepsAnUnbrokenRun(t *testing.T) {
	run := func(from, to int64) []storage.LoggedEvent {
		var out []storage.LoggedEvent
		for p := from; p <= to; p++ {
			out = append(out, storage.LoggedEvent{Position: p})
		}
		return out
	}
	positions := func(events []storage.LoggedEvent) string {
		ps := []int64{}
		for _, e := range events {
			ps = append(ps, e.Position)
		}
		return fmt.Sprint(ps)
	}
	var k recentEvents
	k.add(10, nil, false)
	if _, ok := k.after(10, logPage, time.Hour); ok {
		t.Error("before the tail read to the end, a reader at its start has nothing: want the log read")
	}
	k.add(10, run(11, 13), true)
	for _, c := range []struct {
		pos  int64
		want string
		ok   bool
	}{
		{9, "[]", false}, // behind the run
		{10, "[11 12 13]", true},
		{12, "[13]", true},
		{13, "[]", true},  // at its end, the tail read to the end just now
		{14, "[]", false}, // ahead of the tail
	} {
		got, ok := k.after(c.pos, logPage, time.Hour)
		if positions(got) != c.want || ok != c.ok {
			t.Errorf("after %d = %s, %v; want %s, %v", c.pos, positions(got), ok, c.want, c.ok)
		}
	}
	if _, ok := k.after(13, logPage, 0); ok {
		t.Error("at the end of the run, the tail's read too long ago: want the log read")
	}
	if got, _ := k.after(10, 2, time.Hour); positions(got) != "[11 12]" {
		t.Errorf("after 10, at most 2 = %s", positions(got))
	}
	// A run after a gap the tail skipped starts anew.
	k.add(13, run(20, 21), true)
	if _, ok := k.after(13, logPage, time.Hour); ok {
		t.Error("a reader before a skipped gap got an answer: want the log read, with its own wait for the gap")
	}
	if got, ok := k.after(19, logPage, time.Hour); positions(got) != "[20 21]" || !ok {
		t.Errorf("after 19 = %s, %v", positions(got), ok)
	}
	// Kept: recentKept at least, twice as many at most.
	for p := int64(21); p < 21+3*recentKept; p += logPage {
		k.add(p, run(p+1, p+logPage), false)
		if n := len(k.events); n < min(recentKept, int(p+logPage-19)) || n > 2*recentKept {
			t.Fatalf("%d events kept", n)
		}
	}
	last := int64(21 + 3*recentKept)
	if got, ok := k.after(last-recentKept, logPage, time.Hour); !ok || got[0].Position != last-recentKept+1 {
		t.Errorf("the last %d events are not all kept", recentKept)
	}
}
