// Package live fans the change feed's events out to the subscriptions of
// one server. A Hub gets every batch the server reads from the event log
// (changefeed.Feed.Subscribe) and hands each subscriber the events it
// asked for through a queue of its own, bounded: a subscriber that falls
// QueueLength events behind is ended with ErrSlow, so a slow client never
// makes the server hold more. A subscription started after a position
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
			select {
			case s.queue <- e:
			default:
				h.endLocked(s, ErrSlow)
			}
			if s.err != nil {
				break
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
		close(s.ended)
	}
	delete(h.subs, s)
}

// Sub is one subscription: Next gives its events.
type Sub struct {
	hub   *Hub
	match func(storage.Event) bool
	// queue holds pointers into the batches published, which every
	// subscriber shares: 8 bytes an event queued.
	queue chan *storage.LoggedEvent
	// ended is closed, and err set, when the hub ended the subscription.
	ended chan struct{}
	err   error

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
// match runs under the hub's lock: it must be quick.
func (h *Hub) Subscribe(ctx context.Context, after int64, match func(storage.Event) bool) (*Sub, error) {
	s := &Sub{hub: h, match: match, queue: make(chan *storage.LoggedEvent, h.queue), ended: make(chan struct{}), pos: after}
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
// queued before it are given.
func (s *Sub) Next(ctx context.Context) (storage.LoggedEvent, error) {
	for {
		if len(s.pending) > 0 {
			e := s.pending[0]
			s.pending = s.pending[1:]
			return e, nil
		}
		if s.replaying {
			n, err := s.readLog(ctx, -1)
			if err != nil {
				return storage.LoggedEvent{}, err
			}
			s.replaying = n == replayPage
			continue
		}
		e, err := s.receive(ctx)
		if err != nil {
			return storage.LoggedEvent{}, err
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
					return storage.LoggedEvent{}, err
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

// receive returns the next event of the queue, waiting for it; the
// events queued before the subscription ended come before its error.
func (s *Sub) receive(ctx context.Context) (storage.LoggedEvent, error) {
	select {
	case e := <-s.queue:
		return *e, nil
	default:
	}
	select {
	case e := <-s.queue:
		return *e, nil
	case <-s.ended:
		select {
		case e := <-s.queue:
			return *e, nil
		default:
			return storage.LoggedEvent{}, s.err
		}
	case <-ctx.Done():
		return storage.LoggedEvent{}, ctx.Err()
	}
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
