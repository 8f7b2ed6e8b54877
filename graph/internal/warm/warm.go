// Package warm runs functions on goroutines that are kept once they
// return, so that the next function starts on the stack the last one
// grew.
//
// A new goroutine starts with a small stack and copies it to one twice
// the size each time a call goes deeper than it holds. Resolving a
// post's fields, or reading through the AWS SDK, goes 8 to 32 KB deep:
// on a category page, whose posts are resolved on a goroutine each and
// whose reads ahead run on their own, copying stacks took a tenth of the
// CPU. A kept goroutine copies its stack again only after the garbage
// collector has shrunk it, and ends when no function came for a while.
package warm

import (
	"sync"
	"time"
)

// pool keeps up to max idle goroutines, each for up to idleFor.
type pool struct {
	max     int
	idleFor time.Duration

	mu       sync.Mutex
	idle     []*worker // the most recently parked last
	sweeping bool      // a sweep is scheduled
}

type worker struct {
	work  chan func() // one function, or nil to end
	since time.Time   // parked since
}

// shared keeps enough goroutines for 16 category pages at a time, and
// none a second after the last request.
var shared = &pool{max: 256, idleFor: time.Second}

// Go runs f on a goroutine of the process's pool.
func Go(f func()) { shared.Go(f) }

// Go runs f on an idle kept goroutine, or on a new one when none is
// idle: it never waits for one. As with a go statement, a panic in f
// ends the process.
func (p *pool) Go(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.work <- f
		return
	}
	p.mu.Unlock()
	go p.run(f)
}

// parked is the number of idle kept goroutines.
func (p *pool) parked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

func (p *pool) run(f func()) {
	w := &worker{work: make(chan func(), 1)}
	for f != nil {
		f()
		f = nil // an idle goroutine holds nothing of the last function's
		if !p.park(w) {
			return
		}
		f = <-w.work
	}
}

// park puts w among the idle goroutines, unless max are idle already.
func (p *pool) park(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= p.max {
		return false
	}
	w.since = time.Now()
	p.idle = append(p.idle, w)
	if !p.sweeping {
		p.sweeping = true
		time.AfterFunc(p.idleFor, p.sweep)
	}
	return true
}

// sweep ends the goroutines idle for idleFor or longer, and schedules
// itself again while any stay idle: an idle process keeps none.
func (p *pool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(p.idle) && time.Since(p.idle[n].since) >= p.idleFor {
		p.idle[n].work <- nil // buffered, and the worker waits for work
		n++
	}
	kept := copy(p.idle, p.idle[n:])
	clear(p.idle[kept:])
	p.idle = p.idle[:kept]
	if len(p.idle) == 0 {
		p.sweeping = false
		return
	}
	time.AfterFunc(p.idleFor-time.Since(p.idle[0].since), p.sweep)
}
