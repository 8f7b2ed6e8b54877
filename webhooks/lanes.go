package webhooks

import (
	"context"
	"sync"

	"github.com/blogql/blog/storage"
)

// Each webhook has a lane of its own: a short queue of deliveries and at
// most opts.Concurrency attempts at once, so an endpoint that is slow or
// never answers holds up its own deliveries and nobody else's. A lane
// lives while it has work: its goroutines end when its queue is empty.
// What a full lane refuses stays in the outbox, due again once its claim
// lapses, and RetryDue offers it then; the outbox, not a lane, is what
// makes a delivery durable. A delivery waiting in a lane longer than its
// claim is claimed again by RetryDue, which gives the lane the claim
// that holds now.

// job is a delivery offered to a lane: the outbox item as last read
// (claimed) and its webhook as the list read with it said, nil when the
// list no longer had it.
type job struct {
	ctx  context.Context
	hook *storage.Webhook
	o    storage.OutboxItem
	// pos is the log position of the event HandleEvents handed over, 0
	// for a retry: until its first attempt is made, the worker's
	// checkpoint stays before it (hold).
	pos int64
}

// lane is one webhook's queue and the count of its running goroutines.
type lane struct {
	queue   []job
	queued  map[string]bool // event ids queued or being attempted
	running int
}

// lanes are the webhooks' lanes of one Service.
type lanes struct {
	mu     sync.Mutex
	byHook map[string]*lane
	owed   map[int64]int // log positions of the first attempts queued or under way
	wg     sync.WaitGroup
	per    int // attempts at once in one lane
	run    func(job)
}

// laneDepth is how many deliveries a lane holds, those being attempted
// included: more than a log page's events to one webhook, and at most a
// few MB of bodies.
const laneDepth = 512

func newLanes(per int, run func(job)) *lanes {
	return &lanes{byHook: map[string]*lane{}, owed: map[int64]int{}, per: per, run: run}
}

// offer gives j to its webhook's lane and reports whether the lane took
// it: a lane that is full does not, nor one that holds the delivery
// already, which takes j's claim in place of the one it had if the
// delivery is still waiting.
func (l *lanes) offer(j job) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byHook[j.o.WebhookID]
	if ln == nil {
		ln = &lane{queued: map[string]bool{}}
		l.byHook[j.o.WebhookID] = ln
	}
	if ln.queued[j.o.EventID] {
		for i := range ln.queue {
			if ln.queue[i].o.EventID == j.o.EventID {
				ln.queue[i].o = j.o
			}
		}
		return false
	}
	if len(ln.queued) >= laneDepth {
		return false
	}
	ln.queued[j.o.EventID] = true
	ln.queue = append(ln.queue, j)
	if j.pos > 0 {
		l.owed[j.pos]++
	}
	if ln.running < l.per {
		ln.running++
		l.wg.Add(1)
		go l.work(j.o.WebhookID, ln)
	}
	return true
}

// work attempts the jobs of the lane ln of the webhook id until its
// queue is empty.
func (l *lanes) work(id string, ln *lane) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(ln.queue) == 0 {
			ln.running--
			if ln.running == 0 {
				delete(l.byHook, id)
			}
			l.mu.Unlock()
			return
		}
		j := ln.queue[0]
		ln.queue = ln.queue[1:]
		l.mu.Unlock()
		l.run(j)
		l.mu.Lock()
		delete(ln.queued, j.o.EventID)
		if j.pos > 0 {
			if l.owed[j.pos]--; l.owed[j.pos] == 0 {
				delete(l.owed, j.pos)
			}
		}
		l.mu.Unlock()
	}
}

// hold returns where the worker's checkpoint may move once the events up
// to last were handled: last, or just before the earliest event whose
// first attempt is still queued or under way, so a server that takes the
// worker over after a crash handles it again and makes that attempt at
// once (unattempted) rather than when its claim lapses.
func (l *lanes) hold(last int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for pos := range l.owed {
		last = min(last, pos-1)
	}
	return last
}

// wait returns when every lane is empty.
func (l *lanes) wait() { l.wg.Wait() }
