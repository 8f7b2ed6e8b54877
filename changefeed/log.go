package changefeed

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// Reading the event log: the tail every server runs for its subscribers,
// and the workers.

const (
	// logPage is how many events one read of the log asks for.
	logPage = 100
	// gapWait is how long a reader waits for a missing position before
	// it skips it. A position is missing for a moment when a Query sees
	// part of an append's transaction (DynamoDB isolates a transaction
	// from a Query item by item only); for good when TTL removed it.
	gapWait = 2 * time.Second
)

// logReader reads the log after pos, contiguously: it gives events only
// in an unbroken run of positions after pos.
type logReader struct {
	store *storage.Store
	log   *slog.Logger
	pos   int64
	// recent, when set, is the tail's last run of events, read instead
	// of the log while pos is within it (a worker's reader); fresh is
	// how recently the tail must have read the log to its end for a
	// reader at the end of the run to have nothing newer.
	recent *recentEvents
	fresh  time.Duration
	// gapAfter is the pos at which a missing position was first seen,
	// and gapSince when; waiting says the last read waits for it.
	gapAfter int64
	gapSince time.Time
	waiting  bool
}

// read returns the next run of events after r.pos (without moving
// r.pos: advance does), empty when there is none yet.
func (r *logReader) read(ctx context.Context) ([]storage.LoggedEvent, error) {
	r.waiting = false
	if r.recent != nil {
		if events, ok := r.recent.after(r.pos, logPage, r.fresh); ok {
			return events, nil
		}
	}
	events, err := r.store.EventsAfter(ctx, r.pos, logPage)
	if err != nil || len(events) == 0 {
		return nil, err
	}
	if events[0].Position != r.pos+1 {
		if r.gapSince.IsZero() || r.gapAfter != r.pos {
			r.gapAfter, r.gapSince, r.waiting = r.pos, time.Now(), true
			return nil, nil
		}
		if time.Since(r.gapSince) < gapWait {
			r.waiting = true
			return nil, nil
		}
		if r.pos > 0 {
			r.log.Warn("change feed: events missing from the log (past its retention): skipped", "after", r.pos, "next", events[0].Position)
		}
	}
	n := 1
	for n < len(events) && events[n].Position == events[n-1].Position+1 {
		n++
	}
	return events[:n], nil
}

func (r *logReader) advance(events []storage.LoggedEvent) {
	r.pos = events[len(events)-1].Position
	r.gapSince = time.Time{}
}

// recentKept is how many of the events the tail read last a server
// keeps for its workers (recentEvents), at least and twice at most: a
// few pages. A worker further behind reads the log itself.
const recentKept = 5 * logPage

// recentEvents is the unbroken run of events this server's tail read
// last, recentKept of them or more. A worker on the server reads it
// instead of the log while its position is within it, so a batch of
// events costs one Query of the log, the tail's, however many workers
// follow it here; events are shared, as the subscribers share them, and
// read only.
type recentEvents struct {
	mu sync.Mutex
	// from is the position before events[0] (the tail's start while
	// there is none).
	from   int64
	events []storage.LoggedEvent
	// readAt is when the tail last read the log to its end: nothing
	// after the run was in the log then.
	readAt time.Time
}

// add records the tail's read after pos: events (none at the log's end),
// and whether it read to the end.
func (k *recentEvents) add(pos int64, events []storage.LoggedEvent, atEnd bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(events) > 0 {
		if pos != k.from+int64(len(k.events)) || events[0].Position != pos+1 {
			// A run after a skipped gap, or after a start: anew.
			k.from, k.events = events[0].Position-1, nil
		}
		k.events = append(k.events, events...)
		if n := len(k.events) - recentKept; n > recentKept {
			// The last recentKept to the front, now and then: the
			// readers have copies.
			k.from += int64(n)
			copy(k.events, k.events[n:])
			clear(k.events[recentKept:])
			k.events = k.events[:recentKept]
		}
	} else if pos != k.from+int64(len(k.events)) {
		k.from, k.events = pos, nil
	}
	if atEnd {
		k.readAt = time.Now()
	}
}

// after returns up to n events after pos from the run, and true, when
// the run has them, or has none after pos and the tail read the log to
// its end within fresh; false when the log must be read.
func (k *recentEvents) after(pos int64, n int, fresh time.Duration) ([]storage.LoggedEvent, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	last := k.from + int64(len(k.events))
	switch {
	case pos < k.from || pos > last:
		return nil, false
	case pos == last:
		return nil, !k.readAt.IsZero() && time.Since(k.readAt) < fresh
	}
	i := int(pos - k.from)
	return slices.Clone(k.events[i:min(len(k.events), i+n)]), true
}

// tail reads the log from head on and publishes each run of events to
// the subscribers, and keeps the last for this server's workers
// (f.recent), until ctx ends.
func (f *Feed) tail(ctx context.Context, head int64) {
	r := &logReader{store: f.store, log: f.log, pos: head}
	f.recent.add(head, nil, false)
	for {
		woken := f.appended.wait()
		pos := r.pos
		events, err := r.read(ctx)
		if err != nil && ctx.Err() == nil {
			f.log.Warn("change feed: read the event log", "after", r.pos, "error", err)
		}
		if err == nil && !r.waiting {
			f.recent.add(pos, events, len(events) < logPage)
		}
		if len(events) > 0 {
			r.advance(events)
			f.publish(events)
			f.logged.fire()
			if len(events) == logPage {
				continue
			}
		}
		if !wait(ctx, woken, f.opts.TailEvery) {
			return
		}
	}
}

// wait waits d or until woken, and returns false when ctx ended first.
func wait(ctx context.Context, woken <-chan struct{}, d time.Duration) bool {
	return waitEither(ctx, woken, nil, d)
}

// waitEither waits d or until woken or logged (nil: never), and returns
// false when ctx ended first.
func waitEither(ctx context.Context, woken, logged <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-woken:
	case <-logged:
	case <-t.C:
	}
	return true
}

// runWorker runs w under its lease l until ctx ends or the lease is
// lost: Tick every w.Every, and Events with the log from the lease's
// checkpoint.
func (f *Feed) runWorker(ctx context.Context, w Worker, l feedstore.Lease) error {
	ctx, cancel := context.WithCancel(ctx)
	var ticking sync.WaitGroup
	// A tick still running when the lease is released could overlap the
	// next holder's: the worker ends with its last tick.
	defer ticking.Wait()
	defer cancel()
	if w.Tick != nil {
		ticking.Go(func() {
			t := time.NewTicker(w.Every)
			defer t.Stop()
			for {
				if err := w.Tick(ctx); err != nil && ctx.Err() == nil {
					f.log.Warn("change feed: worker's tick failed", "worker", w.Name, "error", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	if w.Events == nil {
		<-ctx.Done()
		return nil
	}
	r := &logReader{store: f.store, log: f.log.With("worker", w.Name), pos: l.Position,
		recent: &f.recent, fresh: 2 * f.opts.TailEvery}
	// saved is the checkpoint as stored: r.pos, or before it where Hold
	// keeps it, or where the worker was when it last moved while events
	// kept coming; moved is when it last moved, lastEvents when the
	// worker last got events.
	saved := l.Position
	var moved, lastEvents time.Time
	quiet := min(time.Second, f.opts.WorkerCheckpointEvery)
	checkpoint := func(ctx context.Context, last int64) error {
		pos := last
		if w.Hold != nil {
			pos = min(w.Hold(last), last)
		}
		if pos <= saved {
			return nil
		}
		if err := f.store.Feed().CheckpointWorker(ctx, feedstore.WorkerLease(w.Name), f.opts.Owner, pos); err != nil {
			return err
		}
		saved, moved = pos, time.Now()
		return nil
	}
	// The worker's last checkpoint, when it stops with its lease held.
	defer func() {
		if r.pos > saved && !f.abandon {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := checkpoint(ctx, r.pos); err != nil && !errors.Is(err, feedstore.ErrLeaseLost) {
				f.log.Warn("change feed: worker's last checkpoint", "worker", w.Name, "error", err)
			}
		}
	}()
	failures := 0
	for {
		woken, logged := f.appended.wait(), f.logged.wait()
		events, err := r.read(ctx)
		if err == nil && len(events) == 0 && r.pos > saved && time.Since(lastEvents) >= quiet && time.Since(moved) >= f.opts.WorkerCheckpointEvery {
			// Quiet: what Hold kept back may have been done since. A
			// checkpoint moved less than WorkerCheckpointEvery ago waits:
			// events a few seconds apart share a move.
			err = checkpoint(ctx, r.pos)
			if errors.Is(err, feedstore.ErrLeaseLost) {
				return err
			}
		}
		if err == nil && len(events) > 0 {
			if err = w.Events(ctx, events); err == nil {
				lastEvents = time.Now()
				if time.Since(moved) >= f.opts.WorkerCheckpointEvery {
					err = checkpoint(ctx, events[len(events)-1].Position)
				}
				if errors.Is(err, feedstore.ErrLeaseLost) {
					return err
				}
			}
			if err == nil {
				r.advance(events)
				failures = 0
				if len(events) == logPage {
					continue
				}
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		d := f.opts.TailEvery
		switch {
		case err != nil:
			failures++
			d = min(time.Duration(failures)*time.Second, 30*time.Second)
			f.log.Warn("change feed: worker's events failed; trying again", "worker", w.Name, "after", r.pos, "in", d, "error", err)
			woken, logged = nil, nil
		case len(events) == 0 && r.pos <= saved:
			// Read to the end, nothing owed: the tail reads the log for
			// every reader of this server, and tells.
			d = WorkerIdlePoll
		}
		if !waitEither(ctx, woken, logged, d) {
			return nil
		}
	}
}
