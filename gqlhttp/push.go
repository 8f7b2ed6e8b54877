package gqlhttp

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
)

// Answers pushed. A transport waits for a subscription's next answer in
// the handler of answers gqlgen's executor returns: a goroutine parked
// for as long as the subscription lasts, mostly idle. A resolver that
// knows when it has an answer to give says so instead (AnswerReady), and
// a transport that takes its answers that way runs the handler only
// then, in a goroutine that ends once the answers announced are sent: an
// idle subscription holds no goroutine there.

type pushKey struct{}

// push is what a transport gives a resolver through the context.
type push struct {
	announce func()
	used     atomic.Bool
}

// AnswerReady returns the function that a subscription's resolver, called
// in ctx, must call before each answer it sends on its channel and before
// it closes the channel; nil when the transport waits for the answers
// itself (nothing to call then). Once a resolver asked for it, the
// transport counts on the calls.
func AnswerReady(ctx context.Context) func() {
	p, ok := ctx.Value(pushKey{}).(*push)
	if !ok {
		return nil
	}
	p.used.Store(true)
	return p.announce
}

// pushed runs the answers of one operation as its resolver announces
// them: one goroutine at a time, while some are announced.
type pushed struct {
	// send sends an answer; false ends the answers (the stream failed).
	send func(*graphql.Response) bool
	// end is called, once, when the answers end: with true after the
	// last one (the handler returned nil), false when the stream failed.
	// A transport that has the operation's context end announces once
	// more (announce), so that its handler runs to its end.
	end  func(last bool)
	once sync.Once

	mu        sync.Mutex
	pending   int
	running   bool
	responses graphql.ResponseHandler
	ctx       context.Context
}

// withPush returns ctx for an operation whose answers p runs, and p,
// holding the announced answers until start.
func withPush(ctx context.Context) (context.Context, *pushed, *push) {
	p := &pushed{running: true}
	k := &push{announce: p.announce}
	return context.WithValue(ctx, pushKey{}, k), p, k
}

func (p *pushed) announce() {
	p.mu.Lock()
	p.pending++
	run := !p.running
	p.running = true
	p.mu.Unlock()
	if run {
		go p.run()
	}
}

// start takes the operation's answers from now on.
func (p *pushed) start(ctx context.Context, responses graphql.ResponseHandler) {
	p.mu.Lock()
	p.ctx, p.responses = ctx, responses
	p.running = p.pending > 0
	run := p.running
	p.mu.Unlock()
	if run {
		go p.run()
	}
}

func (p *pushed) run() {
	defer func() {
		if r := recover(); r != nil {
			logPanic(r)
			p.finish(false)
		}
	}()
	for {
		p.mu.Lock()
		// Once the operation's context ended, the handler is run to its
		// end (nil), for the middlewares that count operations.
		ended := p.ctx.Err() != nil
		if p.pending == 0 && !ended {
			p.running = false
			p.mu.Unlock()
			return
		}
		if p.pending > 0 {
			p.pending--
		}
		p.mu.Unlock()
		resp := p.responses(p.ctx)
		if resp == nil {
			p.finish(true)
			return
		}
		if ended {
			continue // no one wants it any more
		}
		if !p.send(resp) {
			p.finish(false)
			return
		}
	}
}

// finish ends the answers, once; a run stays marked running, so none
// starts after.
func (p *pushed) finish(last bool) { p.once.Do(func() { p.end(last) }) }
