package changefeed

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// The tests run on the DynamoDB internal/dynamotest chooses, on a table
// with a stream, with the real clock and short leases: they wait for
// what a user of the feed observes (the log's head, a subscriber's or a
// worker's events) with a deadline, never for a time.

type env struct {
	t       testing.TB
	client  *dynamodb.Client
	table   string
	store   *storage.Store
	streams *dynamodbstreams.Client
	authors int
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, dynamotest.ClientConfig(t, nil))
}

// newEnvOn returns an env on the DynamoDB of cfg; the store's clock is
// now, when given.
func newEnvOn(t testing.TB, cfg storage.ClientConfig, opts ...storage.Option) *env {
	t.Helper()
	ctx := context.Background()
	client, err := storage.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	streams, err := storage.NewStreamsClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, client, "feed")
	store := storage.New(client, table, append(opts, storage.WithStream())...)
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, client: client, table: table, store: store, streams: streams}
}

// storeAhead returns a store on the table whose clock is d ahead of now:
// a server to which every other's heartbeat looks expired.
func (e *env) storeAhead(d time.Duration) *storage.Store {
	return storage.New(e.client, e.table, storage.WithStream(), storage.WithClock(func() time.Time { return time.Now().Add(d) }))
}

// feed returns a Feed of owner on the table, with short leases.
func (e *env) feed(owner string) *Feed {
	return New(e.store, e.streams, Options{
		Owner: owner, LeaseDuration: 2 * time.Second, RenewEvery: 300 * time.Millisecond,
		PollEvery: 50 * time.Millisecond, TailEvery: 50 * time.Millisecond, ReadGap: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// run runs f until the returned stop is called (or the test ends).
func (e *env) run(f *Feed) (stop func()) { return e.runIn(context.Background(), f) }

// runIn runs f with a context derived from parent until the returned stop
// is called (or the test ends).
func (e *env) runIn(parent context.Context, f *Feed) (stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.Run(ctx); err != nil {
			e.t.Error(err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	e.t.Cleanup(stop)
	return stop
}

// write makes n writes that mean one event each: an author created,
// then its bio changed. It returns the author's id.
func (e *env) write(n int) string {
	e.t.Helper()
	ctx := context.Background()
	e.authors++
	id := fmt.Sprintf("author-%d", e.authors)
	if _, err := e.store.CreateAuthor(ctx, storage.NewAuthor{ID: id, Slug: id, Name: "Ada"}); err != nil {
		e.t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		bio := fmt.Sprintf("bio %d", i)
		if _, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: id, Bio: &bio}); err != nil {
			e.t.Fatal(err)
		}
	}
	return id
}

// eventually polls cond until it holds, failing the test after a while.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) head() int64 {
	e.t.Helper()
	h, err := e.store.Feed().EventLogHead(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// logged returns the whole log, failing the test when its positions are
// not dense from 1 or an event id is there twice.
func (e *env) logged() []storage.LoggedEvent {
	e.t.Helper()
	all, err := e.store.EventsAfter(context.Background(), 0, feedstore.MaxEventsPage)
	if err != nil {
		e.t.Fatal(err)
	}
	ids := map[string]bool{}
	for i, ev := range all {
		if ev.Position != int64(i+1) || ids[ev.ID] {
			e.t.Fatalf("event %d at %d (%s): positions must be dense and ids logged once", i, ev.Position, ev.ID)
		}
		ids[ev.ID] = true
	}
	return all
}

func (e *env) consistent() {
	e.t.Helper()
	bad, err := e.store.Check(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range bad {
		e.t.Error("invariant:", b)
	}
}

// collector keeps what a subscriber or a worker got.
type collector struct {
	mu     sync.Mutex
	events []storage.LoggedEvent
}

func (c *collector) add(events []storage.LoggedEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, events...)
}

func (c *collector) got() []storage.LoggedEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

func positions(events []storage.LoggedEvent) []int64 {
	var out []int64
	for _, e := range events {
		out = append(out, e.Position)
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for p := from; p <= to; p++ {
		out = append(out, p)
	}
	return out
}

func TestWritesReachSubscribersInOrder(t *testing.T) {
	e := newEnv(t)
	f := e.feed("a")
	var sub collector
	f.Subscribe(sub.add)
	e.run(f)
	author := e.write(5)
	e.eventually("5 events at the subscriber", func() bool { return len(sub.got()) >= 5 })
	got := sub.got()
	if !slices.Equal(positions(got), span(1, 5)) {
		t.Fatalf("the subscriber got positions %v", positions(got))
	}
	for _, ev := range got {
		if ev.Type != storage.EventAuthorUpdated || ev.Data.AuthorID != author {
			t.Errorf("event %+v, want author.updated of %s", ev, author)
		}
	}
	if all := e.logged(); !slices.EqualFunc(all, got, func(a, b storage.LoggedEvent) bool { return a.ID == b.ID && a.Position == b.Position }) {
		t.Errorf("the log holds %v, the subscriber got %v", all, got)
	}
	e.consistent()
}

func TestRestartResumesFromTheCheckpoint(t *testing.T) {
	e := newEnv(t)
	stop := e.run(e.feed("a"))
	e.write(3)
	e.eventually("3 events logged", func() bool { return e.head() == 3 })
	stop()
	e.write(2)
	// A new server starts after the first stopped: it reads on from the
	// shard's checkpoint; a subscriber gets what is logged from now on.
	f := e.feed("b")
	var sub collector
	f.Subscribe(sub.add)
	e.run(f)
	e.eventually("the 2 new events at the subscriber", func() bool { return len(sub.got()) >= 2 })
	if len(e.logged()) != 5 || !slices.Equal(positions(sub.got()), span(4, 5)) {
		t.Errorf("log of %d events; the subscriber got %v", len(e.logged()), positions(sub.got()))
	}
	e.consistent()
}

func TestTwoServersLogEachRecordOnceThroughACrash(t *testing.T) {
	e := newEnv(t)
	a, b := e.feed("a"), e.feed("b")
	stops := map[string]func(){"a": e.run(a), "b": e.run(b)}
	feeds := map[string]*Feed{"a": a, "b": b}
	e.write(4)
	e.eventually("4 events logged", func() bool { return e.head() == 4 })

	// The holder of the shard crashes: it stops without releasing its
	// leases. The other takes them over once they expire.
	leases, err := e.store.Feed().Leases(context.Background())
	if err != nil || len(leases) == 0 {
		t.Fatalf("leases %v, %v", leases, err)
	}
	crashed := leases[0].Owner
	feeds[crashed].abandon = true
	stops[crashed]()
	e.write(4)
	e.eventually("8 events logged", func() bool { return e.head() == 8 })
	if len(e.logged()) != 8 {
		t.Errorf("the log holds %d events, want 8", len(e.logged()))
	}
	leases, _ = e.store.Feed().Leases(context.Background())
	for _, l := range leases {
		if l.Owner == crashed && !l.Finished {
			t.Errorf("lease %s still %s's", l.Name, crashed)
		}
	}
	e.consistent()
}

func TestWorkerGetsEveryEventOnceAndResumes(t *testing.T) {
	e := newEnv(t)
	var got collector
	worker := Worker{Name: "test", Events: func(_ context.Context, events []storage.LoggedEvent) error {
		got.add(events)
		return nil
	}}
	f := e.feed("a")
	f.AddWorker(worker)
	stop := e.run(f)
	e.write(4)
	e.eventually("4 events at the worker", func() bool { return len(got.got()) >= 4 })
	stop()
	e.write(2)
	g := e.feed("b")
	g.AddWorker(worker)
	e.run(g)
	e.eventually("6 events at the worker", func() bool { return len(got.got()) >= 6 })
	if !slices.Equal(positions(got.got()), span(1, 6)) {
		t.Errorf("the worker got positions %v", positions(got.got()))
	}
	e.consistent()
}

func TestWorkerGetsAFailedBatchAgain(t *testing.T) {
	e := newEnv(t)
	var got collector
	failed := false
	f := e.feed("a")
	f.AddWorker(Worker{Name: "flaky", Events: func(_ context.Context, events []storage.LoggedEvent) error {
		if !failed {
			failed = true
			return fmt.Errorf("injected")
		}
		got.add(events)
		return nil
	}})
	e.run(f)
	e.write(1)
	e.eventually("the event at the worker", func() bool { return len(got.got()) >= 1 })
	if !slices.Equal(positions(got.got()), []int64{1}) {
		t.Errorf("the worker got %v", positions(got.got()))
	}
}

func TestWorkerTicksOnOneServer(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	ticks := map[string]int{}
	for _, owner := range []string{"a", "b"} {
		f := e.feed(owner)
		f.AddWorker(Worker{Name: "sweeper", Every: 20 * time.Millisecond, Tick: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			ticks[owner]++
			return nil
		}})
		e.run(f)
	}
	e.eventually("5 ticks", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ticks["a"]+ticks["b"] >= 5
	})
	mu.Lock()
	defer mu.Unlock()
	if ticks["a"] > 0 && ticks["b"] > 0 {
		t.Errorf("both servers ticked: %v", ticks)
	}
}

// TestLostLeaseStopsTheShard takes a shard's lease from the server
// reading it, as a server does that finds its heartbeat expired (its
// clock an hour ahead): the first server's appends fail their condition
// and it stops reading the shard; the new holder logs what follows, each
// record once. The new holder's heartbeat lasts an hour, so the first
// server cannot take the lease back, however the two are scheduled.
func TestLostLeaseStopsTheShard(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.run(e.feed("a"))
	e.write(2)
	e.eventually("2 events logged", func() bool { return e.head() == 2 })
	leases, err := e.store.Feed().Leases(ctx)
	if err != nil || len(leases) != 1 {
		t.Fatalf("leases %v, %v", leases, err)
	}
	name := leases[0].Name
	ahead := e.storeAhead(time.Hour)
	if _, err := ahead.Feed().Heartbeat(ctx, "b", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := ahead.Feed().TakeLease(ctx, name, "b"); err != nil {
		t.Fatal(err)
	}
	e.write(3)
	b := e.feed("b")
	b.opts.LeaseDuration, b.opts.RenewEvery = time.Hour, time.Minute
	e.run(b)
	e.eventually("5 events logged", func() bool { return e.head() == 5 })
	if len(e.logged()) != 5 {
		t.Errorf("the log holds %d events", len(e.logged()))
	}
	leases, err = e.store.Feed().Leases(ctx)
	if err != nil || len(leases) != 1 || leases[0].Owner != "b" {
		t.Errorf("leases %+v, %v: want the shard's b's", leases, err)
	}
	e.consistent()
}

// TestTakeoverComesWhenTheLeaseExpires crashes the server holding every
// lease: the other takes them over as soon as they expire, not at its
// next round, which with its long RenewEvery would come in a minute.
func TestTakeoverComesWhenTheLeaseExpires(t *testing.T) {
	e := newEnv(t)
	a := New(e.store, e.streams, Options{
		Owner: "a", LeaseDuration: time.Second, RenewEvery: 300 * time.Millisecond,
		PollEvery: 50 * time.Millisecond, TailEvery: 50 * time.Millisecond, ReadGap: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	stopA := e.run(a)
	e.write(2)
	e.eventually("2 events logged", func() bool { return e.head() == 2 })
	a.abandon = true
	stopA()

	b := New(e.store, e.streams, Options{
		Owner: "b", LeaseDuration: 10 * time.Minute, RenewEvery: time.Minute,
		PollEvery: 50 * time.Millisecond, TailEvery: 50 * time.Millisecond, ReadGap: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	e.run(b)
	e.write(2)
	e.eventually("the 2 events written after the crash logged", func() bool { return e.head() == 4 })
	leases, err := e.store.Feed().Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if !l.Finished && l.Owner != "b" {
			t.Errorf("lease %s is %s's, want b's", l.Name, l.Owner)
		}
	}
	e.consistent()
}

// TestASlowWorkerKeepsItsLease: a worker whose Events takes longer than a
// lease lasts (a webhook endpoint may take 15 s an attempt) keeps its
// lease, renewed by the coordinator apart from the work, and another
// server never runs it meanwhile.
func TestASlowWorkerKeepsItsLease(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var got collector
	a := e.feed("a")
	a.AddWorker(Worker{Name: "slow", Events: func(ctx context.Context, events []storage.LoggedEvent) error {
		once.Do(func() { close(entered) })
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		got.add(events)
		return nil
	}})
	e.run(a)
	e.write(1)
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker got no events in 30 s")
	}
	b := e.feed("b")
	var other collector
	b.AddWorker(Worker{Name: "slow", Events: func(_ context.Context, events []storage.LoggedEvent) error {
		other.add(events)
		return nil
	}})
	e.run(b)
	// Blocked for two lease durations, a still holds the lease.
	blocked := time.Now()
	lease := feedstore.WorkerLease("slow")
	e.eventually("the lease renewed two lease durations after the worker blocked", func() bool {
		leases, err := e.store.Feed().Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases {
			if l.Name == lease && l.Owner != "a" {
				t.Fatalf("the lease of the blocked worker went to %q", l.Owner)
			}
			if l.Name == lease && l.Until.After(blocked.Add(2*a.opts.LeaseDuration)) {
				return true
			}
		}
		return false
	})
	close(release)
	e.eventually("the event at the worker", func() bool { return len(got.got()) == 1 })
	if n := len(other.got()); n != 0 {
		t.Errorf("the other server's worker got %d events", n)
	}
}

func TestAHeldCheckpointGivesTheEventsAgain(t *testing.T) {
	e := newEnv(t)
	position := func() int64 {
		leases, err := e.store.Feed().Leases(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leases {
			if l.Name == feedstore.WorkerLease("held") {
				return l.Position
			}
		}
		return -1
	}
	// The worker owes work for the first event of each batch while owe
	// is set, and does it when owe is cleared.
	var owe atomic.Bool
	var first atomic.Int64
	var got collector
	f := e.feed("a")
	f.AddWorker(Worker{Name: "held", Events: func(_ context.Context, events []storage.LoggedEvent) error {
		got.add(events)
		if first.Load() == 0 {
			first.Store(events[0].Position)
		}
		return nil
	}, Hold: func(last int64) int64 {
		if owe.Load() {
			return min(last, first.Load()-1)
		}
		return last
	}})
	owe.Store(true)
	stop := e.run(f)
	e.write(4)
	e.eventually("4 events at the worker", func() bool { return len(got.got()) >= 4 })
	if p := position(); p > 0 {
		t.Errorf("the checkpoint moved to %d, past the event the worker owes work for", p)
	}
	owe.Store(false)
	e.eventually("the checkpoint at 4 once the log is quiet and the work done", func() bool { return position() == 4 })
	first.Store(0)
	owe.Store(true)
	e.write(2)
	e.eventually("6 events at the worker", func() bool { return len(got.got()) >= 6 })
	stop()
	if p := position(); p != 4 {
		t.Errorf("the checkpoint is at %d, want 4 (held before event 5)", p)
	}

	var again collector
	g := e.feed("b")
	g.AddWorker(Worker{Name: "held", Events: func(_ context.Context, events []storage.LoggedEvent) error {
		again.add(events)
		return nil
	}})
	e.run(g)
	e.eventually("the events held given again", func() bool { return len(again.got()) >= 2 })
	if !slices.Equal(positions(again.got()), span(5, 6)) {
		t.Errorf("the next holder got positions %v, want 5 and 6", positions(again.got()))
	}
}
