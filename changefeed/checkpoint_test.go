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
	took := make(chan int64, 100)
	for i := range workers {
		f.AddWorker(Worker{Name: fmt.Sprintf("w%d", i), Events: func(_ context.Context, events []storage.LoggedEvent) error {
			took <- events[len(events)-1].Position
			return nil
		}})
	}
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
	// write writes an event, waits until every worker took it, and
	// returns its position.
	write := func() int64 {
		t.Helper()
		e.write(1)
		var pos int64
		for range workers {
			select {
			case pos = <-took:
			case <-time.After(30 * time.Second):
				t.Fatal("a worker took no event of a write in 30 s")
			}
		}
		return pos
	}
	pos := write()
	e.eventually("every worker's checkpoint at the event", func() bool { return checkpoints(pos) == workers })

	before, start := counter.ByOperation()["Query"], time.Now()
	time.Sleep(2 * time.Second)
	queries, elapsed := counter.ByOperation()["Query"]-before, time.Since(start)
	// The tail's reads, and the coordinator's of the leases, at most.
	if most := int(elapsed/f.opts.TailEvery) + int(elapsed/f.opts.RenewEvery) + 4; queries > most {
		t.Errorf("%d Query calls in %s of an idle log, want at most %d: the tail's and the leases'", queries, elapsed.Round(time.Millisecond), most)
	}
	// A write after the idle spell reaches every worker.
	write()
}
