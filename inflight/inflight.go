// Package inflight bounds the memory of the requests a server answers at
// once. Every request that builds a large answer (a GraphQL operation, a
// feed, a sitemap) holds a Meter in its context, which counts the bytes
// of the large strings it loads (a post's body and its HTML) and of those
// it puts in its answer, as they come, and holds that many bytes of the
// server's Budget:
//
//   - Before it starts, a request reserves an estimate of what it will
//     hold (Reserve), waiting in a queue for at most Budget's wait while
//     the budget is spent; past it the request fails with ErrBusy and
//     builds nothing.
//   - As it runs, every charge past its reservation takes more of the
//     budget without waiting (a request that waited holding bytes could
//     hold up the one that would free them); when none is left, it fails
//     with ErrBusy.
//   - Its answer may count at most the meter's limit of answered bytes:
//     the charge that passes it fails with ErrTooLarge, and so does every
//     charge and load after it, so the request stops building instead of
//     finishing an answer that is dropped.
//
// A request gives everything back when it ends (Meter.Done). A request
// that reserves more than an eighth of the budget waits while it would
// take the budget past three quarters: the last quarter is kept for the
// small requests of ordinary pages, which large ones never queue
// behind.
//
// The budget counts the bytes of strings, not the memory the process
// takes to hold and encode them, which is a few times more: size it from
// the memory the server may use on top of its idle heap.
package inflight

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Errors of a Meter's charges.
var (
	// ErrBusy is a request that does not fit in the budget: too many
	// large requests are in flight.
	ErrBusy = errors.New("the server is busy with other large requests, try again later")
	// ErrTooLarge is a request whose answer passed its limit.
	ErrTooLarge = errors.New("the answer would be larger than its limit")
)

// DefaultBudget is the budget of a server of a small instance, 64 MiB:
// the process then takes about 150 to 250 MB more than idle at worst
// (BENCHMARKS.md).
const DefaultBudget = 64 << 20

// DefaultWait is how long a request waits for its reservation before it
// is refused.
const DefaultWait = 2 * time.Second

// Budget is the bytes that the requests in flight may hold between them.
// A nil *Budget holds nothing back: every reservation fits.
type Budget struct {
	limit  int64
	wait   time.Duration
	parent *Budget // a share's (Share)

	mu    sync.Mutex
	used  int64
	freed chan struct{} // closed, and replaced, when bytes are given back
}

// NewBudget returns a budget of limit bytes whose requests wait at most
// wait for their reservation.
func NewBudget(limit int64, wait time.Duration) *Budget {
	return &Budget{limit: limit, wait: wait, freed: make(chan struct{})}
}

// Share returns a budget of at most limit bytes of b, for one
// publication's requests: what they take is taken from the share and
// from b, so the requests of one publication hold at most limit bytes
// and leave the rest of b to the others. Its requests wait for the share
// for at most b's wait, then for b as b's own do.
func (b *Budget) Share(limit int64) *Budget {
	s := NewBudget(min(limit, b.limit), b.wait)
	s.parent = b
	return s
}

// Limit returns the bytes of the budget.
func (b *Budget) Limit() int64 { return b.limit }

// Wait returns the longest a request waits for its reservation.
func (b *Budget) Wait() time.Duration { return b.wait }

// Used returns the bytes the requests in flight hold now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// large reports whether a reservation of n bytes must leave the last
// quarter of the budget to small ones.
func (b *Budget) large(n int64) bool { return n > b.limit/8 }

// ceiling returns how far a reservation of n bytes may fill the budget.
func (b *Budget) ceiling(n int64) int64 {
	if b.large(n) {
		return b.limit - b.limit/4
	}
	return b.limit
}

// acquire takes n bytes, waiting until they fit for at most the budget's
// wait or until ctx ends; false when they did not fit in time.
func (b *Budget) acquire(ctx context.Context, n int64) bool {
	if !b.acquireOwn(ctx, n) {
		return false
	}
	if b.parent != nil && !b.parent.acquire(ctx, n) {
		b.releaseOwn(n)
		return false
	}
	return true
}

// acquireOwn is acquire of b alone, without its parent.
func (b *Budget) acquireOwn(ctx context.Context, n int64) bool {
	var timeout <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+n <= b.ceiling(n) {
			b.used += n
			b.mu.Unlock()
			return true
		}
		freed := b.freed
		b.mu.Unlock()
		if timeout == nil {
			if b.wait <= 0 {
				return false
			}
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// tryAcquire takes n bytes when they fit in the whole budget now, and
// in its parent's.
func (b *Budget) tryAcquire(n int64) bool {
	if !b.tryAcquireOwn(n) {
		return false
	}
	if b.parent != nil && !b.parent.tryAcquire(n) {
		b.releaseOwn(n)
		return false
	}
	return true
}

// tryAcquireOwn is tryAcquire of b alone.
func (b *Budget) tryAcquireOwn(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// release gives n bytes back, to its parent too, and wakes the requests
// waiting.
func (b *Budget) release(n int64) {
	b.releaseOwn(n)
	if b.parent != nil {
		b.parent.release(n)
	}
}

// releaseOwn is release of b alone.
func (b *Budget) releaseOwn(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// Meter counts what one request holds. Its methods may be called from
// every goroutine of the request.
type Meter struct {
	budget *Budget
	limit  int64

	mu       sync.Mutex
	held     int64 // taken from the budget
	charged  int64 // loaded and answered
	answered int64
	err      error
}

type meterKey struct{}

// Start returns ctx with a new Meter that holds bytes of b (nil: of no
// budget) and lets the answer count at most limit bytes (0: no limit),
// and the Meter, whose Done the caller must call when the request ends.
func Start(ctx context.Context, b *Budget, limit int64) (context.Context, *Meter) {
	m := &Meter{budget: b, limit: limit}
	return context.WithValue(ctx, meterKey{}, m), m
}

// From returns the Meter of ctx, or nil when it has none.
func From(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Reserve takes n bytes of the budget for the request of ctx before it
// starts, waiting for them as Budget says; it returns ErrBusy when they
// did not fit in time. A reservation larger than a large request may
// ever take is cut to that. Without a Meter or a budget it returns nil.
func Reserve(ctx context.Context, n int64) error {
	m := From(ctx)
	if m == nil || m.budget == nil || n <= 0 {
		return nil
	}
	n = min(n, m.budget.ceiling(n))
	if !m.budget.acquire(ctx, n) {
		return m.fail(ErrBusy)
	}
	m.mu.Lock()
	m.held += n
	m.mu.Unlock()
	return nil
}

// Load charges the request of ctx n bytes it has read and holds: it
// returns ErrBusy when the budget cannot hold them, or the error the
// request failed with before. Without a Meter it returns nil.
func Load(ctx context.Context, n int) error {
	return From(ctx).charge(int64(n), false)
}

// Answer charges the request of ctx n bytes it puts in its answer: it
// returns ErrTooLarge when the answer passes its limit, ErrBusy when the
// budget cannot hold them, or the error the request failed with before.
// Without a Meter it returns nil.
func Answer(ctx context.Context, n int) error {
	return From(ctx).charge(int64(n), true)
}

// Err returns what the request of ctx failed with (ErrTooLarge, ErrBusy),
// or nil: once it is set, the request's work is wasted.
func Err(ctx context.Context) error {
	m := From(ctx)
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *Meter) charge(n int64, answered bool) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.charged += n
	if answered {
		m.answered += n
		if m.limit > 0 && m.answered > m.limit {
			m.err = ErrTooLarge
			return m.err
		}
	}
	if m.budget == nil || m.charged <= m.held {
		return nil
	}
	more := m.charged - m.held
	if !m.budget.tryAcquire(more) {
		m.err = ErrBusy
		return m.err
	}
	m.held += more
	return nil
}

func (m *Meter) fail(err error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
	return m.err
}

// Answered returns the bytes the request charged to its answer.
func (m *Meter) Answered() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answered
}

// Charged returns the bytes the request loaded and answered.
func (m *Meter) Charged() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.charged
}

// Done gives back what the request held of the budget. The request must
// hold none of what it charged any more.
func (m *Meter) Done() {
	m.mu.Lock()
	held := m.held
	m.held = 0
	m.mu.Unlock()
	if m.budget != nil {
		m.budget.release(held)
	}
}
