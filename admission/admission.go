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
// first), then the key whose head has waited longest. A key's queue holds at most the
// Gate's bound: past it Enter fails at once with ErrQueueFull. A request
// whose context ends while it waits leaves its queue.
//
// Invariants, kept under Gate.mu:
//
//   - running is the sum of every key's running, and at most slots.
//   - A request waits only while every slot is taken: a slot given back
//     is handed to a waiting request before anyone else may take it.
//   - A key is held while it has requests running or waiting, and ready
//     holds the keys with waiting requests: a Gate holds nothing of the
//     keys it served before, whatever their number.
package admission

import (
	"container/heap"
	"context"
	"errors"
	"sync"
)

// ErrQueueFull is a request whose key's queue was full.
var ErrQueueFull = errors.New("too many of this site's requests are waiting to run, try again later")

// Gate admits requests to a bounded number of slots. A nil *Gate admits
// every request at once.
type Gate struct {
	slots, queue int

	mu      sync.Mutex
	running int
	keys    map[string]*key // running or waiting
	ready   keyHeap         // the keys with waiting requests
	seq     uint64          // of the next waiter
	turn    uint64          // of the last admission
}

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
// taken is refused).
func New(slots, queue int) *Gate {
	return &Gate{slots: max(1, slots), queue: max(0, queue), keys: map[string]*key{}}
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
// is taken and k's queue is full. It is a cheap check before a request
// costs anything; Enter decides.
func (g *Gate) Full(k string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running < g.slots {
		return false
	}
	st := g.keys[k]
	return g.queue == 0 || st != nil && len(st.waiting) >= g.queue
}

// Enter takes a slot for a request of k, waiting in k's queue while
// every slot is taken, and returns the function that gives it back,
// which the caller must call once when the request ends. It returns
// ErrQueueFull when k's queue is full, or ctx's error when ctx ends
// first; the request then holds nothing.
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
	if g.running < g.slots {
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
// waiting requests, the key with the fewest running first.
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
