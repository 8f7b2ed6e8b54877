// Package changefeed runs the blog's change feed in the server: it reads
// the table's DynamoDB stream under leases held in the table, turns each
// record into domain events (storage.EventsWith), appends them to the
// event log in the table (storage.Store.AppendEvents), and hands the log
// to every server's subscribers and to workers that run on one server of
// the fleet at a time.
//
// The fleet shares the work through leases (storage/feedstore/leases.go), one per
// stream shard and one per worker: a server takes the free ones about
// every RenewEvery, renews its heartbeat, which holds all those it took
// (one write, however many), and stops the work of a lease it lost. A
// shard's lease carries its checkpoint, moved in the same transaction
// that appends the shard's events, so a record's events are logged
// exactly once whoever reads the shard; a child shard is read only once
// its parent is finished (or gone from the stream), so a key's records
// are logged in the order they were written. A server that crashes
// leaves its heartbeat to expire (LeaseDuration) and another takes its
// leases over then: a server's next round comes at the first expiry of
// another's heartbeat, when that is sooner than RenewEvery. A clean
// shutdown releases them at once. An Exclusive feed, the only server of
// its table, writes no heartbeat at all.
//
// An idle shard costs reads only: the checkpoint moves with the events
// it logs; past records without events, at most once a CheckpointEvery
// (Options.CheckpointEvery);
// past the feed's own writes (leases, heartbeats, the event log), never,
// since each such move would be a write that comes back on the stream.
//
// Every server tails the log from the head it found at start, with one
// Query about every TailEvery (at once after it appended itself), and
// calls its subscribers with each batch. A worker reads the log from its
// lease's checkpoint, from the tail's last events (recentEvents) while it
// is among them, and once it has read all of it and owes no
// checkpoint, again when this server appended or its tail read events,
// or after WorkerIdlePoll: a server's workers cost few reads. It
// gets every event at least once, in order, and
// the checkpoint moves only after its Events returned nil, and no further
// than its Hold allows (a worker that does its work later, coalesced).
package changefeed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// Defaults of Options.
const (
	DefaultLeaseDuration = 30 * time.Second
	DefaultRenewEvery    = 10 * time.Second
	DefaultPollEvery     = 250 * time.Millisecond
	// DefaultReadGap keeps a shard's reads within DynamoDB Streams'
	// limit of five GetRecords a second a shard.
	DefaultReadGap   = 200 * time.Millisecond
	DefaultTailEvery = 500 * time.Millisecond
	// WorkerIdlePoll is how long a worker that has read the whole log
	// and owes no checkpoint waits for its tail's news before it reads
	// the log anyway.
	WorkerIdlePoll = 10 * time.Second
	// DefaultAppendGap is the least time between two appends of a
	// shard's events: each append writes the shard's checkpoint and the
	// log's head besides its events, so in a burst of writes the events
	// of a quarter of a second share them.
	DefaultAppendGap = 250 * time.Millisecond
	// CheckpointEvery is the most often a shard's checkpoint moves past
	// records without events, unless Options say otherwise: it stays
	// near what was read, so a server that takes the shard over reads
	// little again, and writes at most once a minute a shard for it.
	CheckpointEvery = time.Minute
	// DefaultWorkerCheckpointEvery is the most often a worker's
	// checkpoint moves: each move is a write, which a comment a second,
	// or one every few seconds, would otherwise pay once a worker.
	DefaultWorkerCheckpointEvery = 10 * time.Second
)

// Options configure a Feed. Zero values take the defaults.
type Options struct {
	// Owner names this server in the leases it holds; it must differ
	// between servers. Default: NewOwner().
	Owner string
	// Paths builds the paths in events; nil means frontend.DefaultPaths.
	Paths *frontend.Paths
	// Retention is how long an event stays in the log
	// (feedstore.DefaultEventRetention).
	Retention time.Duration
	// LeaseDuration is how long a server's heartbeat, and so every lease
	// it holds, lasts unless renewed: how long the fleet waits for a
	// crashed server's work. RenewEvery is how often the heartbeat is
	// renewed (one write) and free leases taken; it must be well under
	// LeaseDuration.
	LeaseDuration, RenewEvery time.Duration
	// Exclusive says this server is the only one that uses the table (the
	// embedded engine's data file is locked to one process): a lease it
	// finds is its own or a dead process's, so it takes them all and
	// writes no heartbeat.
	Exclusive bool
	// PollEvery is the wait between reads of a shard that had no new
	// records; TailEvery between reads of the log that found nothing new.
	PollEvery, TailEvery time.Duration
	// ReadGap is the least time between two reads of a shard
	// (DefaultReadGap). Only a stream without DynamoDB Streams' limits,
	// the embedded engine's, may be read more often.
	ReadGap time.Duration
	// AppendGap is the least time between two appends of a shard's
	// events (DefaultAppendGap): after an append, the shard is read again
	// once it has passed, so the first write after a quiet spell is
	// logged at once and those of a burst together.
	AppendGap time.Duration
	// CheckpointEvery is the most often a shard's checkpoint moves past
	// records without events (default CheckpointEvery). A server goes
	// idle, writing nothing, once its checkpoint has moved past the last
	// such record: within CheckpointEvery of the last write.
	CheckpointEvery time.Duration
	// WorkerCheckpointEvery is the most often a worker's checkpoint
	// moves (DefaultWorkerCheckpointEvery): while events keep coming, and
	// once the log has been quiet for a second (or for
	// WorkerCheckpointEvery when that is shorter), when it moves to what
	// the worker has done; and when the worker stops. A server that takes
	// the lease over after a crash gives the events since to Events
	// again, as it does those a Hold kept back.
	WorkerCheckpointEvery time.Duration
	// Logger gets the feed's warnings; nil means slog.Default().
	Logger *slog.Logger
	// NoShards makes this server read no shard of the stream: something
	// else appends to the log (an AWS Lambda on the stream). It still
	// tails the log and runs workers.
	NoShards bool
	// TailStart returns the position the tail of the log starts after:
	// what a subscriber read of the log before the feed runs
	// (live.Hub.Load). Nil means the log's head when the feed starts.
	TailStart func(ctx context.Context) (int64, error)
}

// Worker is work that runs on one server of the fleet at a time: the
// holder of its lease, feedstore.WorkerLease(Name).
type Worker struct {
	// Name names its lease and its checkpoint.
	Name string
	// Events, when set, gets every logged event in order from the
	// worker's checkpoint, at least once: the checkpoint moves past a
	// batch only when Events returned nil, and a batch that failed is
	// given again. A worker's first checkpoint is the start of the log
	// (the oldest event kept).
	Events func(ctx context.Context, events []storage.LoggedEvent) error
	// Tick, when set, runs every Every while this server holds the lease.
	Tick  func(ctx context.Context) error
	Every time.Duration
	// Hold, when set, is asked where the checkpoint may move once Events
	// took the events up to last: last, or an earlier position when the
	// worker still owes work for an event it took (work it does later,
	// in Tick). The checkpoint moves as far as Hold allows, after Events
	// and when the log is quiet, so a server that takes the lease over
	// gives that event to Events again.
	Hold func(last int64) int64
}

// Feed is one server's part of the change feed.
type Feed struct {
	store   *storage.Store
	streams *dynamodbstreams.Client
	opts    Options
	paths   frontend.Paths
	log     *slog.Logger
	workers []Worker
	running atomic.Bool

	mu      sync.Mutex
	subs    map[int]func([]storage.LoggedEvent)
	nextSub int

	// appended fires after this server appended to the log; logged when
	// its tail read events, whoever appended them; finished when the
	// work of a lease ended by itself (a shard read to its end).
	appended, logged, finished signal
	// recent is the run of events the tail read last, for the workers.
	recent recentEvents
	// abandon makes Run end without releasing its leases, as a crash
	// would (tests).
	abandon bool
}

// New returns a Feed on store's table, reading its stream through
// streams (storage.NewStreamsClient).
func New(store *storage.Store, streams *dynamodbstreams.Client, opts Options) *Feed {
	if opts.Owner == "" {
		opts.Owner = NewOwner()
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.RenewEvery <= 0 {
		opts.RenewEvery = min(DefaultRenewEvery, opts.LeaseDuration/3)
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = DefaultPollEvery
	}
	if opts.TailEvery <= 0 {
		opts.TailEvery = DefaultTailEvery
	}
	if opts.ReadGap <= 0 {
		opts.ReadGap = DefaultReadGap
	}
	if opts.AppendGap <= 0 {
		opts.AppendGap = DefaultAppendGap
	}
	if opts.Retention <= 0 {
		opts.Retention = feedstore.DefaultEventRetention
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = CheckpointEvery
	}
	if opts.WorkerCheckpointEvery <= 0 {
		opts.WorkerCheckpointEvery = DefaultWorkerCheckpointEvery
	}
	f := &Feed{store: store, streams: streams, opts: opts, paths: frontend.DefaultPaths,
		log: opts.Logger, subs: map[int]func([]storage.LoggedEvent){}}
	if opts.Paths != nil {
		f.paths = *opts.Paths
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	f.log = f.log.With("owner", opts.Owner)
	return f
}

// NewOwner returns a name for this server in leases: its host name,
// process id and a random suffix, so that a restarted process is another
// owner.
func NewOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Owner returns the name this Feed holds leases under.
func (f *Feed) Owner() string { return f.opts.Owner }

// AddWorker adds w, to run on whichever server holds its lease. It must
// be called before Run; it panics on a worker without a name, without
// Events and Tick, with Tick but no Every, or added twice.
func (f *Feed) AddWorker(w Worker) {
	switch {
	case f.running.Load():
		panic("changefeed: AddWorker after Run")
	case w.Name == "" || (w.Events == nil && w.Tick == nil) || (w.Tick != nil && w.Every <= 0):
		panic(fmt.Sprintf("changefeed: worker %q needs a name, Events or Tick, and Every with Tick", w.Name))
	}
	for _, o := range f.workers {
		if o.Name == w.Name {
			panic(fmt.Sprintf("changefeed: worker %q added twice", w.Name))
		}
	}
	f.workers = append(f.workers, w)
}

// Subscribe makes fn get every batch of events this server reads from
// the log, in order, from the head when Run started; it returns the
// function that stops it. fn runs on the feed's tail, one batch at a
// time: it must return quickly (hand work to a goroutine of its own).
func (f *Feed) Subscribe(fn func([]storage.LoggedEvent)) (cancel func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.nextSub
	f.nextSub++
	f.subs[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs, id)
	}
}

func (f *Feed) publish(events []storage.LoggedEvent) {
	f.mu.Lock()
	subs := make([]func([]storage.LoggedEvent), 0, len(f.subs))
	for _, fn := range f.subs {
		subs = append(subs, fn)
	}
	f.mu.Unlock()
	for _, fn := range subs {
		fn(events)
	}
}

// Run runs this server's part of the feed until ctx ends: the tail of
// the log, and the shards and workers whose leases it takes. On the way
// out it stops them and releases its leases. It returns nil when ctx
// ended, and an error only when it was already running.
func (f *Feed) Run(ctx context.Context) error {
	if !f.running.CompareAndSwap(false, true) {
		return errors.New("changefeed: Run called twice")
	}
	start := f.store.Feed().EventLogHead
	if f.opts.TailStart != nil {
		start = f.opts.TailStart
	}
	var head int64
	err := retry(ctx, f.log, "read the event log's head", func() (err error) {
		head, err = start(ctx)
		return err
	})
	if err != nil {
		return nil
	}
	f.log.Info("change feed started", "log_head", head, "workers", len(f.workers))
	var wg sync.WaitGroup
	wg.Go(func() { f.tail(ctx, head) })
	f.coordinate(ctx)
	wg.Wait()
	return nil
}

// retry runs op until it succeeds or ctx ends (then it returns ctx's
// error), logging its failures and waiting longer after each, up to 5 s.
func retry(ctx context.Context, log *slog.Logger, what string, op func() error) error {
	wait := 100 * time.Millisecond
	for {
		err := op()
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("change feed: "+what+" failed; trying again", "error", err, "in", wait)
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// sleep waits d, and returns false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// signal wakes every goroutine waiting on it when it fires.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next fire.
func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}
