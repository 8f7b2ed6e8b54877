// Package live fans the change feed's events out to the subscriptions of
// one server. A Hub gets every batch the server reads from the event log
// (changefeed.Feed.Subscribe) and hands each subscriber the events it
// asked for through a queue of its own, bounded: a subscriber whose
// queue holds QueueLength events, as while it sends a burst that the
// tail read in pages, takes the next ones from the window once it has
// taken those, and one that falls out of the window is ended with
// ErrSlow, so a slow client never makes the server hold more. An idle
// subscriber costs no goroutine and no queue: the hub calls its notify
// function when it has something to take (Poll), and its queue holds
// only what it has not taken yet.
//
// The hub keeps the last Window events of the log in memory, shared by
// every subscriber: loaded from the table once when the server starts
// (Load), then from what it publishes. A subscription started after a
// position replays from that window, with no read of the table, and
// switches over to the live events under the same lock, so it gets every
// event once, in order, whichever server wrote it. A position older than
// the window is refused (ErrExpired): however often a client replays,
// the table is not read for it.
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
	"github.com/blogql/blog/storage/feedstore"
)

// Defaults of Options.
const (
	// DefaultQueueLength is how many events a subscriber's queue holds;
	// the window holds the next ones for it.
	DefaultQueueLength = 256
	// DefaultWindow is how many of the log's last events a hub keeps
	// for replays: about a kilobyte each, with the paths and cache tags
	// they name.
	DefaultWindow = 20000
)

// Errors that end a subscription, or refuse one.
var (
	// ErrSlow ends a subscription whose client did not keep up: the
	// window no longer holds the events it has to take next.
	ErrSlow = errors.New("the client did not keep up with the events")
	// ErrClosed ends every subscription when the server shuts down.
	ErrClosed = errors.New("the server is shutting down")
	// ErrExpired refuses a position older than the hub's window.
	ErrExpired = errors.New("the events after this cursor are no longer kept")
	// ErrAhead refuses a position the log has not reached.
	ErrAhead = errors.New("the cursor is past the end of the event log")
)

// Log is the event log a Hub loads its window from: StoreLog's.
type Log interface {
	EventsAfter(ctx context.Context, after int64, limit int) ([]storage.LoggedEvent, error)
	EventLogHead(ctx context.Context) (int64, error)
}

// StoreLog returns the event log of store's table: its events as the
// store decodes them, its head as the change feed's items keep it.
func StoreLog(store *storage.Store) Log { return storeLog{store} }

type storeLog struct{ store *storage.Store }

func (l storeLog) EventsAfter(ctx context.Context, after int64, limit int) ([]storage.LoggedEvent, error) {
	return l.store.EventsAfter(ctx, after, limit)
}

func (l storeLog) EventLogHead(ctx context.Context) (int64, error) {
	return l.store.Feed().EventLogHead(ctx)
}

// Options configure a Hub.
type Options struct {
	// QueueLength is how many events a subscriber's queue holds; zero
	// means DefaultQueueLength.
	QueueLength int
	// Window is how many of the log's last events the hub keeps for
	// replays; zero means DefaultWindow.
	Window int
}

// Hub fans events out to subscribers. Its zero value is not usable: use
// NewHub.
type Hub struct {
	log    Log
	queue  int
	size   int
	loaded chan struct{}

	mu     sync.Mutex
	subs   map[*Sub]struct{}
	closed bool
	// The window: base is the position before its first event, -1 until
	// Load or the first Publish sets it; window holds the events after
	// base, positions base+1, base+2… with no gap, at most size of them.
	// Its events are shared with the subscribers' queues.
	base   int64
	window []*storage.LoggedEvent
	// ready is set, and loaded closed, once base is known.
	ready bool
}

// NewHub returns a Hub whose window Load reads from log.
func NewHub(log Log, opts Options) *Hub {
	if opts.QueueLength <= 0 {
		opts.QueueLength = DefaultQueueLength
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	return &Hub{log: log, queue: opts.QueueLength, size: opts.Window, loaded: make(chan struct{}),
		subs: map[*Sub]struct{}{}, base: -1}
}

// Load reads the log's last events into the window: up to its size,
// from the oldest the log still holds, with one Query per
// feedstore.MaxEventsPage events. It returns the log's head it read to,
// after which the server's tail of the log must go on (changefeed
// Options.TailStart) for the window to have no gap. Once the window is
// set, it does nothing and returns the window's end.
func (h *Hub) Load(ctx context.Context) (int64, error) {
	h.mu.Lock()
	if h.ready {
		defer h.mu.Unlock()
		return h.lastLocked(), nil
	}
	h.mu.Unlock()
	// Every event up to the head is committed: a gap below it is what
	// TTL took, oldest first.
	head, err := h.log.EventLogHead(ctx)
	if err != nil {
		return 0, fmt.Errorf("load the live window: %w", err)
	}
	base := max(0, head-int64(h.size))
	var events []*storage.LoggedEvent
	for pos := base; pos < head; {
		page, err := h.log.EventsAfter(ctx, pos, feedstore.MaxEventsPage)
		if err != nil {
			return 0, fmt.Errorf("load the live window after %d: %w", pos, err)
		}
		if len(page) == 0 {
			break
		}
		for i := range page {
			e := &page[i]
			if e.Position > head {
				break
			}
			if e.Position != base+int64(len(events))+1 {
				base, events = e.Position-1, nil
			}
			events = append(events, e)
		}
		pos = page[len(page)-1].Position
	}
	if len(events) == 0 {
		base = head
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ready {
		return h.lastLocked(), nil
	}
	h.base, h.window = base, events
	h.trimLocked()
	h.setReadyLocked()
	return head, nil
}

// lastLocked returns the position of the window's last event.
func (h *Hub) lastLocked() int64 { return h.base + int64(len(h.window)) }

func (h *Hub) setReadyLocked() {
	if !h.ready {
		h.ready = true
		close(h.loaded)
	}
}

// trimLocked drops the window's oldest events past its size.
func (h *Hub) trimLocked() {
	if n := len(h.window) - h.size; n > 0 {
		clear(h.window[:n])
		h.window = h.window[n:]
		h.base += int64(n)
	}
}

// Publish hands events, a run of the log in order, to every subscriber
// whose filter takes them, and adds them to the window. It never blocks:
// a subscriber whose queue is full takes the next ones from the window
// once it has taken the queue (Poll). It is what the
// change feed calls; events must not change afterwards (subscribers and
// the window keep pointers into it).
func (h *Hub) Publish(events []storage.LoggedEvent) {
	if len(events) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ready || events[0].Position != h.lastLocked()+1 {
		// The tail skipped positions the log no longer holds: the
		// window starts again after them.
		clear(h.window)
		h.base, h.window = events[0].Position-1, h.window[:0]
		h.setReadyLocked()
	}
	for i := range events {
		h.window = append(h.window, &events[i])
	}
	h.trimLocked()
	for s := range h.subs {
		if s.behind {
			continue
		}
		for i := range events {
			e := &events[i]
			if e.Position <= s.pos || !s.match(e.Event) {
				continue
			}
			if len(s.queue) >= h.queue {
				s.behind, s.pos = true, e.Position-1
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

// Window returns the positions the window holds: the events after first
// up to last.
func (h *Hub) Window() (first, last int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.base, h.lastLocked()
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

	// replay, then queue, guarded by the hub's lock, hold pointers into
	// the batches published, which every subscriber and the window
	// share: 8 bytes an event, nil when the subscriber took them all.
	// replay holds what the subscription took from the window when it
	// started, queue what was published since: only queue is bounded.
	replay, queue []*storage.LoggedEvent
	// err, guarded by the hub's lock, is set when the hub ended the
	// subscription.
	err error
	// behind, guarded by the hub's lock, is set when the queue was full
	// as events came: the subscriber takes the window's events after pos
	// once it has taken the queue, and is live again when it reaches the
	// window's end.
	behind bool
	// pos, set before the subscription is registered, is the last
	// position it does not get: the one it starts after, or the
	// window's end its replay reached. Negative for one that started
	// live. For one behind, guarded by the hub's lock, the last position
	// it has queued or passed over.
	pos int64
}

// Subscribe starts a subscription to the events match takes: live from
// now when after is negative, else from after, which the window must
// still hold (ErrExpired) and the log have reached (ErrAhead). A
// position in the window costs no read of the log; one past its end, one
// read of the log's head. It returns ErrClosed when the hub is closed.
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
// must be quick, and not call the hub or the Sub. A subscription after a
// position waits, with ctx, until the window is loaded.
func (h *Hub) SubscribeNotify(ctx context.Context, after int64, match func(storage.Event) bool, notify func()) (*Sub, error) {
	s := &Sub{hub: h, match: match, notify: notify, pos: after}
	if after < 0 {
		h.mu.Lock()
		defer h.mu.Unlock()
		return s, h.registerLocked(s)
	}
	select {
	case <-h.loaded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.mu.Lock()
	if after <= h.lastLocked() {
		defer h.mu.Unlock()
		return s, h.replayLocked(s)
	}
	h.mu.Unlock()
	// Past what this server's tail has read: another server may have
	// read further. The events up to the head reach the queue.
	head, err := h.log.EventLogHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the cursor against the event log: %w", err)
	}
	if after > head {
		return nil, ErrAhead
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if after <= h.lastLocked() {
		return s, h.replayLocked(s)
	}
	return s, h.registerLocked(s)
}

// replayLocked queues for s the window's events after s.pos, and
// registers s: what is published from now on follows them.
func (h *Hub) replayLocked(s *Sub) error {
	if s.pos < h.base {
		return ErrExpired
	}
	for _, e := range h.window[s.pos-h.base:] {
		if s.match(e.Event) {
			s.replay = append(s.replay, e)
		}
	}
	s.pos = h.lastLocked()
	return h.registerLocked(s)
}

// catchUpLocked queues for s, which is behind, up to a queue of the
// window's events after s.pos, and makes it live again when that reaches
// the window's end. It ends s with ErrSlow when the window no longer
// holds the events after s.pos.
func (h *Hub) catchUpLocked(s *Sub) {
	if s.pos < h.base {
		h.endLocked(s, ErrSlow)
		return
	}
	for _, e := range h.window[s.pos-h.base:] {
		if len(s.queue) == h.queue {
			return
		}
		s.pos = e.Position
		if s.match(e.Event) {
			s.queue = append(s.queue, e)
		}
	}
	s.behind = false
}

func (h *Hub) registerLocked(s *Sub) error {
	if h.closed {
		return ErrClosed
	}
	h.subs[s] = struct{}{}
	return nil
}

// Close ends the subscription; Next then returns ErrClosed.
func (s *Sub) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.endLocked(s, ErrClosed)
}

// Next returns the subscription's next event, waiting for it: first
// those the replay took from the window, then the live ones, each once, in
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
// (notify then tells when there is). It reads nothing from the log.
// Poll, and Next, must not be called by two goroutines at once.
func (s *Sub) Poll(context.Context) (e storage.LoggedEvent, ok bool, err error) {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	q := &s.replay
	if len(*q) == 0 {
		q = &s.queue
	}
	if len(*q) == 0 && s.behind && s.err == nil {
		s.hub.catchUpLocked(s)
	}
	if len(*q) == 0 {
		return storage.LoggedEvent{}, false, s.err
	}
	p := (*q)[0]
	(*q)[0] = nil
	if *q = (*q)[1:]; len(*q) == 0 {
		*q = nil
	}
	return *p, true, nil
}
