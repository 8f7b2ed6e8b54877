package webhooks_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// TestPausedDeliveriesWaitThenGoOnce: while Options.Paused says the
// publication's deliveries wait, an event handled is written in the
// outbox and attempted never, and RetryDue claims nothing (ErrPaused),
// however often; once they no longer wait, RetryDue makes the delivery,
// once, at once.
func TestPausedDeliveriesWaitThenGoOnce(t *testing.T) {
	var paused atomic.Bool
	paused.Store(true)
	e := newEnv(t, func(o *webhooks.Options) {
		o.Paused = func(context.Context) (bool, error) { return paused.Load(), nil }
	})
	r := newReceiver(t)
	e.create(r.URL, storage.EventPostPublished)
	ev := e.published("f")
	e.handle(ev)
	e.handle(ev)
	for range 2 {
		if err := e.hooks.RetryDue(context.Background()); !errors.Is(err, webhooks.ErrPaused) {
			t.Fatalf("RetryDue while paused = %v, want ErrPaused", err)
		}
	}
	e.hooks.Wait()
	if got := r.deliveries(); len(got) != 0 {
		t.Fatalf("%d deliveries while paused, want none", len(got))
	}
	paused.Store(false)
	e.retry(e.hooks)
	e.retry(e.hooks)
	if got := r.deliveries(); len(got) != 1 {
		t.Errorf("%d deliveries once no longer paused, want 1", len(got))
	}
	e.consistent()
}
