// Package live fans the change feed's events out to the subscriptions of
// one server. A Hub gets every batch the server reads from the event log
// (changefeed.Feed.Subscribe) and hands each subscriber the events it
// asked for through a queue of its own, bounded: a subscriber that falls
// QueueLength events behind is ended with ErrSlow, so a slow client never
// makes the server hold more. An idle subscriber costs no goroutine and
// no queue: the hub calls its notify function when it has something to
// take (Poll), and its queue holds only what it has not taken yet. A subscription started after a position
// first replays the log from there (storage.Store.EventsAfter), then goes
// live: it switches over by position, so it gets every event once, in
// order, whichever server wrote it.
//
// The package knows nothing of GraphQL: what an event means to a
// subscriber, and whether the subscriber may see it, is its caller's.
package live

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blogql/blog/storage"
)

// DefaultQueueLength is how many events a subscriber may fall behind
// before it is ended with ErrSlow.
const DefaultQueueLength = 256

// replayPage is how many events one read of the log takes when replaying.
const replayPage = 100

// Errors that end a subscription, or refuse one.
var (
	// ErrSlow ends a subscription whose client did not keep up.
	ErrSlow = errors.New("the client did not keep up with the events")
	// ErrClosed ends every subscription when the server shuts down.
	ErrClosed = errors.New("the server is shutting down")
	// ErrExpired refuses a position older than the log keeps.
	ErrExpired = errors.New("the events after this cursor are no longer kept")
	// ErrAhead refuses a position the log has not reached.
	ErrAhead = errors.New("the cursor is past the end of the event log")
)

// Log is the event log a Hub replays from: *storage.Store.
type Log interface {
	EventsAfter(ctx context.Context, after int64, limit int) ([]storage.LoggedEvent, error)
	EventLogHead(ctx context.Context) (int64, error)
}

// Hub fans events out to subscribers. Its zero value is not usable: use
// NewHub.
type Hub struct {
	log   Log
	queue int

	mu     sync.Mutex
	subs   map[*Sub]struct{}
	closed bool
}

// NewHub returns a Hub that replays from log, with queues of queueLength
// events (zero: DefaultQueueLength).
func NewHub(log Log, queueLength int) *Hub {
	if queueLength <= 0 {
		queueLength = DefaultQueueLength
	}
	return &Hub{log: log, queue: queueLength, subs: map[*Sub]struct{}{}}
}

// Publish hands events, a run of the log in order, to every subscriber
// whose filter takes them. It never blocks: a subscriber whose queue is
// full is ended with ErrSlow. It is what the change feed calls; events
// must not change afterwards (subscribers keep pointers into it).
func (h *Hub) Publish(events []storage.LoggedEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		for i := range events {
			e := &events[i]
			if !s.match(e.Event) {
				continue
			}
			if len(s.queue) >= h.queue {
				h.endLocked(s, ErrSlow)
				break
			}
			s.queue = append(s.queue, e)
			if len(s.queue) == 1 {
				s.notify()
			}
		}
	}
}

// Subscribers returns how many subscriptions are open.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Close ends every subscription with ErrClosed and refuses new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.endLocked(s, ErrClosed)
	}
}

func (h *Hub) endLocked(s *Sub, err error) {
	if s.err == nil {
		s.err = err
		s.notify()
	}
	delete(h.subs, s)
}

// Sub is one subscription: Poll, or Next, gives its events.
type Sub struct {
	hub   *Hub
	match func(storage.Event) bool
	// notify is called, under the hub's lock, when the queue gets its
	// first event and when the hub ends the subscription.
	notify func()
	// signal wakes Next, for a Sub of Subscribe.
	signal chan struct{}

	// queue, guarded by the hub's lock, holds pointers into the batches
	// published, which every subscriber shares: 8 bytes an event queued,
	// nil when the subscriber took them all.
	queue []*storage.LoggedEvent
	// err, guarded by the hub's lock, is set when the hub ended the
	// subscription.
	err error

	// pos is the last position of the log the subscription went past,
	// negative before the first event of one that started live.
	pos int64
	// replaying is true until the replay read the log to its end;
	// joined once the first live event was taken.
	replaying, joined bool
	// pending are events read from the log, to give before the queue.
	pending []storage.LoggedEvent
}

// Subscribe starts a subscription to the events match takes: live from
// now when after is negative, else from after, which the log must still
// hold (ErrExpired) and have reached (ErrAhead). It checks after with one
// read of the log, or two. It returns ErrClosed when the hub is closed.
// match runs under the hub's lock: it must be quick. Next gives the
// subscription's events.
func (h *Hub) Subscribe(ctx context.Context, after int64, match func(storage.Event) bool) (*Sub, error) {
	signal := make(chan struct{}, 1)
	s, err := h.SubscribeNotify(ctx, after, match, func() {
		select {
		case signal <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, err
	}
	s.signal = signal
	return s, nil
}

// SubscribeNotify is Subscribe for a caller that takes the events with
// Poll when notify tells it to: notify is called when an event is queued
// for a subscriber that had none, and when the hub ends the subscription.
// It runs under the hub's lock, maybe before SubscribeNotify returns: it
// must be quick, and not call the hub or the Sub.
func (h *Hub) SubscribeNotify(ctx context.Context, after int64, match func(storage.Event) bool, notify func()) (*Sub, error) {
	s := &Sub{hub: h, match: match, notify: notify, pos: after}
	if after >= 0 {
		if err := h.check(ctx, after); err != nil {
			return nil, err
		}
		s.replaying = true
	}
	// Registered before the replay reads the log: what is published from
	// now on is queued, and Next drops what the replay already gave.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	h.subs[s] = struct{}{}
	return s, nil
}

// check returns nil when the log holds the events after position after.
func (h *Hub) check(ctx context.Context, after int64) error {
	head, err := h.log.EventLogHead(ctx)
	if err != nil {
		return err
	}
	if after > head {
		return ErrAhead
	}
	if after == head {
		return nil
	}
	events, err := h.log.EventsAfter(ctx, after, 1)
	if err != nil {
		return err
	}
	if len(events) == 0 || events[0].Position != after+1 {
		return ErrExpired
	}
	return nil
}

// Close ends the subscription; Next then returns ErrClosed.
func (s *Sub) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.endLocked(s, ErrClosed)
}

// Next returns the subscription's next event, waiting for it: first
// those the replay reads from the log, then the live ones, each once, in
// the log's order. It returns ctx's error when ctx ends first, and the
// error that ended the subscription (ErrSlow, ErrClosed) once the events
// queued before it are given. It is for a Sub of Subscribe.
func (s *Sub) Next(ctx context.Context) (storage.LoggedEvent, error) {
	for {
		e, ok, err := s.Poll(ctx)
		if ok || err != nil {
			return e, err
		}
		select {
		case <-s.signal:
		case <-ctx.Done():
			return storage.LoggedEvent{}, ctx.Err()
		}
	}
}

// Poll returns the subscription's next event, as Next does, without
// waiting for one: ok is false, with a nil error, when there is none yet
// (notify then tells when there is). Replaying reads the log, with ctx.
// Poll, and Next, must not be called by two goroutines at once.
func (s *Sub) Poll(ctx context.Context) (e storage.LoggedEvent, ok bool, err error) {
	for {
		if len(s.pending) > 0 {
			e := s.pending[0]
			if s.pending = s.pending[1:]; len(s.pending) == 0 {
				s.pending = nil
			}
			return e, true, nil
		}
		if s.replaying {
			n, err := s.readLog(ctx, -1)
			if err != nil {
				return storage.LoggedEvent{}, false, err
			}
			s.replaying = n == replayPage
			continue
		}
		e, ok, err := s.take()
		if !ok {
			return storage.LoggedEvent{}, false, err
		}
		if s.pos >= 0 && e.Position <= s.pos {
			continue // the replay gave it already
		}
		if s.pos >= 0 && !s.joined && e.Position > s.pos+1 {
			// The first live event after a replay: what was written
			// between the replay's end and it comes from the log.
			for s.pos < e.Position-1 {
				n, err := s.readLog(ctx, e.Position)
				if err != nil {
					return storage.LoggedEvent{}, false, err
				}
				if n < replayPage {
					break
				}
			}
		}
		s.joined = true
		s.pos = e.Position
		s.pending = append(s.pending, e)
	}
}

// take returns the next event of the queue, without waiting; the events
// queued before the subscription ended come before its error, and ok is
// false with a nil error when the queue is empty.
func (s *Sub) take() (storage.LoggedEvent, bool, error) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if len(s.queue) == 0 {
		return storage.LoggedEvent{}, false, s.err
	}
	e := s.queue[0]
	if s.queue = s.queue[1:]; len(s.queue) == 0 {
		s.queue = nil
	}
	return *e, true, nil
}

// readLog reads one page of the log after s.pos, up to position before
// (exclusive) when it is not negative, moves s.pos past it and keeps the
// events s takes in s.pending. It returns how many events the page had.
func (s *Sub) readLog(ctx context.Context, before int64) (int, error) {
	events, err := s.hub.log.EventsAfter(ctx, s.pos, replayPage)
	if err != nil {
		return 0, fmt.Errorf("replay the event log after %d: %w", s.pos, err)
	}
	for _, e := range events {
		if before >= 0 && e.Position >= before {
			return 0, nil
		}
		s.pos = e.Position
		if s.match(e.Event) {
			s.pending = append(s.pending, e)
		}
	}
	return len(events), nil
}
