package changefeed

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// Shards that split and records that age out of the stream. DynamoDB
// Local splits shards on its own schedule and keeps its records as long
// as it likes, so these run on the embedded engine, whose clock the test
// moves: it opens a new shard, the child of the last, four hours after
// the last opened, and trims records after 24 hours.

// TestChildShardWaitsForItsParent writes in one shard, then in its child:
// the parent's events are logged first, and the parent's lease is marked
// finished.
func TestChildShardWaitsForItsParent(t *testing.T) {
	clock := dynamotest.NewClock(time.Now().UTC())
	e := newEnvOn(t, dynamotest.EmbeddedConfig(t, clock.Now), storage.WithClock(clock.Now))
	e.write(3)
	clock.Advance(5 * time.Hour)
	e.write(3) // in a new shard, the child of the first
	e.run(e.feed("a"))
	e.eventually("6 events logged", func() bool { return e.head() == 6 })
	all := e.logged()
	if !slices.IsSortedFunc(all, func(a, b storage.LoggedEvent) int { return a.Time.Compare(b.Time) }) ||
		all[2].Time.Equal(all[3].Time) {
		t.Errorf("the child's events are not after the parent's: %v", all)
	}
	leases, err := e.store.Feed().Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	finished := 0
	for _, l := range leases {
		if l.Finished {
			finished++
		}
	}
	if len(leases) != 2 || finished != 1 {
		t.Errorf("leases %+v, want the parent's finished and the child's open", leases)
	}
	e.consistent()
}

// TestCheckpointPastTheRetention lets the stream trim the records after a
// shard's checkpoint while no server ran: the next reads on from the
// oldest record kept.
func TestCheckpointPastTheRetention(t *testing.T) {
	clock := dynamotest.NewClock(time.Now().UTC())
	e := newEnvOn(t, dynamotest.EmbeddedConfig(t, clock.Now), storage.WithClock(clock.Now))
	stop := e.run(e.feed("a"))
	e.write(2)
	e.eventually("2 events logged", func() bool { return e.head() == 2 })
	stop()
	e.write(2) // lost: trimmed before any server reads them
	clock.Advance(25 * time.Hour)
	e.write(2)
	e.run(e.feed("b"))
	e.eventually("the 2 events kept logged", func() bool { return e.head() == 4 })
	if len(e.logged()) != 4 {
		t.Errorf("the log holds %d events, want 4", len(e.logged()))
	}
}

// TestChildShardStartsWhenItsParentEnds: the child of a shard read to
// its end is taken at once, not at the next renewal, which with this
// RenewEvery would come in a minute.
func TestChildShardStartsWhenItsParentEnds(t *testing.T) {
	clock := dynamotest.NewClock(time.Now().UTC())
	e := newEnvOn(t, dynamotest.EmbeddedConfig(t, clock.Now), storage.WithClock(clock.Now))
	e.write(2)
	clock.Advance(5 * time.Hour)
	e.write(2) // in a new shard, the child of the first
	e.run(New(e.store, e.streams, Options{
		Owner: "a", LeaseDuration: 10 * time.Minute, RenewEvery: time.Minute,
		PollEvery: 50 * time.Millisecond, TailEvery: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}))
	e.eventually("the child's events logged", func() bool { return e.head() == 4 })
	e.consistent()
}
