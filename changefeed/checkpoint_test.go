package changefeed

import (
	"context"
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
