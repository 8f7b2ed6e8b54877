package embedded

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The write path: every change goes through committer.do, which runs
// requests in bbolt write transactions, many at once (group commit), and
// answers each only once its transaction is on disk.
//
// Invariants:
//   - one transaction at a time: a request's function runs inside the
//     write transaction, alone, after every request committed before it
//     and before every later one, so requests are serializable in commit
//     order and a function may read and then decide;
//   - a request's function reads through w.tx and writes only through the
//     writer; what it collected reaches the transaction only when it
//     returns nil, so a request that fails (a failed condition, a bad
//     input) changes nothing, whatever the others in its batch do;
//   - do returns only after the transaction holding the request is
//     committed and (for a file) synced, or failed: an acknowledged write
//     survives a crash of the process or the machine;
//   - the requests waiting while one transaction commits form the next
//     one, so concurrent writers share a commit and its syncs; a lone
//     writer waits for nobody;
//   - after a commit, and before any request of it is answered, the
//     changes of its items are handed to store.onCommit in commit order:
//     the one place that sees every change, as a change feed needs.

// maxBatch bounds the requests of one transaction, so that one commit does
// not make its first requests wait for very many others.
const maxBatch = 256

// commitFn is a request's work inside a write transaction.
type commitFn func(w *writer) error

// pending is a request waiting for its transaction.
type pending struct {
	fn   commitFn
	err  error
	done chan bool // false: committed (see err); true: lead the next batch
}

// committer groups concurrent requests into transactions. The request
// that finds it idle leads: it commits everything queued meanwhile, then
// hands the lead to the first request queued after, if any.
type committer struct {
	s     *store
	mu    sync.Mutex
	queue []*pending
	busy  bool
}

// do runs fn in a write transaction and returns its error once the
// transaction is durable. An *apiError from fn is the request's own
// failure; any other error is the engine's.
func (c *committer) do(fn commitFn) error {
	p := &pending{fn: fn, done: make(chan bool, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	lead := !c.busy
	c.busy = true
	c.mu.Unlock()
	if !lead {
		if !<-p.done {
			return p.err
		}
	}
	for {
		c.mu.Lock()
		n := min(len(c.queue), maxBatch)
		batch := c.queue[:n:n]
		c.queue = c.queue[n:]
		c.mu.Unlock()

		c.commit(batch)
		mine := false
		for _, q := range batch {
			if q == p {
				mine = true
				continue
			}
			q.done <- false
		}

		c.mu.Lock()
		if len(c.queue) == 0 {
			c.busy = false
			c.mu.Unlock()
			return p.err
		}
		if mine {
			next := c.queue[0]
			c.mu.Unlock()
			next.done <- true
			return p.err
		}
		c.mu.Unlock()
	}
}

// commit runs a batch in one transaction. When the transaction fails, each
// request is run again alone, so one request's fault fails only itself.
func (c *committer) commit(batch []*pending) {
	changes, after, err := c.run(batch)
	if err != nil && len(batch) > 1 {
		for _, q := range batch {
			c.commit([]*pending{q})
		}
		return
	}
	if err != nil {
		batch[0].err = fmt.Errorf("commit: %w", err)
		return
	}
	if f := c.s.onCommit.Load(); f != nil && len(changes) > 0 {
		(*f)(changes)
	}
	for _, f := range after {
		f()
	}
}

// run executes a batch's functions in one bbolt transaction and commits
// it. It returns the batch's item changes and post-commit functions.
func (c *committer) run(batch []*pending) (changes []itemChange, after []func(), err error) {
	err = c.s.db.Update(func(tx *bolt.Tx) error {
		changes, after = nil, nil
		now := c.s.now()
		for _, q := range batch {
			w := &writer{tx: tx, now: now}
			q.err = call(q.fn, w)
			var apiErr *apiError
			if errors.As(q.err, &apiErr) {
				continue
			}
			if q.err != nil {
				return q.err
			}
			if err := w.apply(); err != nil {
				return err
			}
			changes = append(changes, w.changes...)
			after = append(after, w.after...)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return changes, after, nil
}

// call runs fn, turning a panic into an error so that the requests
// waiting on the batch are still answered.
func call(fn commitFn, w *writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in a write: %v", r)
		}
	}()
	return fn(w)
}
