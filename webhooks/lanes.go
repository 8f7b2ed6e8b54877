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
// lapses (see queueClaim), and RetryDue offers it then; the outbox, not a
// lane, is what makes a delivery durable.

// job is a delivery offered to a lane: the outbox item as last read
// (claimed) and its webhook as the list read with it said, nil when the
// list no longer had it.
type job struct {
	ctx  context.Context
	hook *storage.Webhook
	o    storage.OutboxItem
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
	wg     sync.WaitGroup
	per    int // attempts at once in one lane
	depth  int // jobs a lane holds, running ones included
	run    func(job)
}

func newLanes(per int, run func(job)) *lanes {
	return &lanes{byHook: map[string]*lane{}, per: per, depth: laneDepth(per), run: run}
}

// laneDepth is how many deliveries a lane holds, those being attempted
// included: twice what it attempts at once.
func laneDepth(per int) int { return 2 * per }

// offer gives j to its webhook's lane and reports whether the lane took
// it: a lane that holds the delivery already, or is full, does not.
func (l *lanes) offer(j job) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byHook[j.o.WebhookID]
	if ln == nil {
		ln = &lane{queued: map[string]bool{}}
		l.byHook[j.o.WebhookID] = ln
	}
	if ln.queued[j.o.EventID] || len(ln.queued) >= l.depth {
		return false
	}
	ln.queued[j.o.EventID] = true
	ln.queue = append(ln.queue, j)
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
		l.mu.Unlock()
	}
}

// wait returns when every lane is empty.
func (l *lanes) wait() { l.wg.Wait() }
