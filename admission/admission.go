// Package admission bounds the requests a server executes at once and
// admits the waiting ones fairly across keys (a server's publications),
// so a flood of one publication's requests leaves another's waiting for
// about one of them to finish, not for all of them.
//
// A Gate has a number of slots. A request takes a slot (Enter) before it
// runs and gives it back when it ends. While every slot is taken, it
// waits in its key's queue; a slot given back goes to the head of the
// queue of the key with the fewest requests running, among equals the
// key whose last request was admitted longest ago (a key with none
// first), then the key whose head has waited longest. A key's queue
// holds at most the Gate's bound: past it Enter fails at once with
// ErrQueueFull. A request whose context ends while it waits leaves its
// queue.
//
// Fair turns are not enough when the requests are work for the CPU: a
// flood of one key that holds every slot keeps every core busy, and
// another key's request then waits for the CPU at every step, not only
// for a slot (Go's scheduler looks for network events less often while
// every core has work). So a Gate may have a share: while it is shared
// (another key has requests running or waiting, or had one admitted in
// the last second), a key runs at most share requests at once, and its
// other requests wait although slots are free. A gate with one busy key
// gives it every slot.
//
// Invariants, kept under Gate.mu:
//
//   - running is the sum of every key's running, and at most slots.
//   - A request waits only while every slot is taken or its key runs
//     its share: a slot given back is handed to a waiting request of a
//     key below its share before anyone else may take it. A key waiting
//     for its share runs at least one request, whose end lets it on.
//   - A key is held while it has requests running or waiting, and ready
//     holds the keys with waiting requests: a Gate holds nothing of the
//     keys it served before, whatever their number.
package admission

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// ErrQueueFull is a request whose key's queue was full.
var ErrQueueFull = errors.New("too many of this site's requests are waiting to run, try again later")

// Gate admits requests to a bounded number of slots. A nil *Gate admits
// every request at once.
type Gate struct {
	slots, queue, share int
	now                 func() time.Time

	mu      sync.Mutex
	running int
	keys    map[string]*key // running or waiting
	ready   keyHeap         // the keys with waiting requests
	seq     uint64          // of the next waiter
	turn    uint64          // of the last admission
	recent  [2]admitted     // the last two distinct keys admitted, latest first
}

// admitted is the last admission of a key.
type admitted struct {
	name string
	at   time.Time
}

// sharedFor is how long after a key's last admission the gate stays
// shared: a client that sends its next request when the last one is
// answered finds its share held for it.
const sharedFor = time.Second

// key is the state of one key's requests.
type key struct {
	name    string
	running int
	turn    uint64    // the Gate's turn when a request of the key was last admitted; 0: none yet
	waiting []*waiter // oldest first
	index   int       // in ready; -1 when not in it
}

// waiter is a request waiting for a slot: ready is closed when it has
// one (granted, set under Gate.mu).
type waiter struct {
	seq     uint64
	granted bool
	ready   chan struct{}
}

// New returns a gate of slots slots (at least one) whose keys' queues
// hold at most queue requests each (none: a request finding every slot
// taken is refused), and whose keys run at most share requests each
// while it is shared (0 or less: no share).
func New(slots, queue, share int) *Gate {
	return &Gate{slots: max(1, slots), queue: max(0, queue), share: max(0, share), now: time.Now, keys: map[string]*key{}}
}

// capped reports whether st runs its share while the gate is shared.
func (g *Gate) capped(st *key) bool {
	if g.share == 0 || st.running < g.share {
		return false
	}
	if len(g.keys) > 1 {
		return true
	}
	other := g.recent[0]
	if other.name == st.name {
		other = g.recent[1]
	}
	return other.name != "" && g.now().Sub(other.at) < sharedFor
}

// Slots returns the gate's slots.
func (g *Gate) Slots() int { return g.slots }

// Queue returns the bound of each key's queue.
func (g *Gate) Queue() int { return g.queue }

// Waiting returns the requests of k waiting for a slot.
func (g *Gate) Waiting(k string) int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.keys[k]; st != nil {
		return len(st.waiting)
	}
	return 0
}

// Held returns the keys the gate holds: those with requests running or
// waiting.
func (g *Gate) Held() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.keys)
}

// Full reports whether a request of k would be refused now: every slot
// is taken, or k runs its share, and k's queue is full. It is a cheap
// check before a request costs anything; Enter decides.
func (g *Gate) Full(k string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.keys[k]
	if g.running < g.slots && (st == nil || !g.capped(st)) {
		return false
	}
	return g.queue == 0 || st != nil && len(st.waiting) >= g.queue
}

// Enter takes a slot for a request of k, waiting in k's queue while
// every slot is taken or k runs its share, and returns the function that
// gives it back, which the caller must call once when the request ends.
// It returns ErrQueueFull when k's queue is full, or ctx's error when
// ctx ends first; the request then holds nothing.
func (g *Gate) Enter(ctx context.Context, k string) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	g.mu.Lock()
	st := g.keys[k]
	if st == nil {
		st = &key{name: k, index: -1}
		g.keys[k] = st
	}
	if g.running < g.slots && !g.capped(st) {
		g.admit(st)
		g.mu.Unlock()
		return g.releaser(st), nil
	}
	if len(st.waiting) >= g.queue {
		g.drop(st)
		g.mu.Unlock()
		return nil, ErrQueueFull
	}
	w := &waiter{seq: g.seq, ready: make(chan struct{})}
	g.seq++
	st.waiting = append(st.waiting, w)
	if st.index < 0 {
		heap.Push(&g.ready, st)
	}
	g.mu.Unlock()

	select {
	case <-w.ready:
		return g.releaser(st), nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if w.granted {
		// The slot came as the context ended: give it on.
		g.mu.Unlock()
		g.release(st)
		return nil, ctx.Err()
	}
	for i, o := range st.waiting {
		if o == w {
			st.waiting = append(st.waiting[:i], st.waiting[i+1:]...)
			break
		}
	}
	if len(st.waiting) == 0 {
		heap.Remove(&g.ready, st.index)
	} else {
		heap.Fix(&g.ready, st.index)
	}
	g.drop(st)
	g.mu.Unlock()
	return nil, ctx.Err()
}

// releaser returns the function that gives st's slot back, once.
func (g *Gate) releaser(st *key) func() {
	var once sync.Once
	return func() { once.Do(func() { g.release(st) }) }
}

// release gives a slot of st back and hands the free slots to the
// waiting requests, the key with the fewest running first, as long as it
// is below its share (the keys after it run as many or more).
func (g *Gate) release(st *key) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st.running--
	g.running--
	if st.index >= 0 {
		heap.Fix(&g.ready, st.index)
	}
	for g.running < g.slots && len(g.ready) > 0 {
		next := g.ready[0]
		if g.capped(next) {
			break
		}
		w := next.waiting[0]
		next.waiting[0] = nil
		next.waiting = next.waiting[1:]
		w.granted = true
		close(w.ready)
		g.admit(next)
		if len(next.waiting) == 0 {
			heap.Remove(&g.ready, next.index)
		} else {
			heap.Fix(&g.ready, next.index)
		}
	}
	g.drop(st)
}

// admit gives st a slot.
func (g *Gate) admit(st *key) {
	g.running++
	g.turn++
	st.running++
	st.turn = g.turn
	if g.share > 0 {
		if g.recent[0].name != st.name {
			g.recent[1] = g.recent[0]
		}
		g.recent[0] = admitted{st.name, g.now()}
	}
}

// drop forgets st when it has nothing running or waiting.
func (g *Gate) drop(st *key) {
	if st.running == 0 && len(st.waiting) == 0 {
		delete(g.keys, st.name)
	}
}

// keyHeap orders the keys with waiting requests by the requests they
// have running, then by their last admission, then by how long their
// oldest has waited.
type keyHeap []*key

func (h keyHeap) Len() int { return len(h) }

func (h keyHeap) Less(i, j int) bool {
	if h[i].running != h[j].running {
		return h[i].running < h[j].running
	}
	if h[i].turn != h[j].turn {
		return h[i].turn < h[j].turn
	}
	return h[i].waiting[0].seq < h[j].waiting[0].seq
}

func (h keyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *keyHeap) Push(x any) {
	st := x.(*key)
	st.index = len(*h)
	*h = append(*h, st)
}

func (h *keyHeap) Pop() any {
	old := *h
	st := old[len(old)-1]
	old[len(old)-1] = nil
	st.index = -1
	*h = old[:len(old)-1]
	return st
}
