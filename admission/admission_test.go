package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGateUnderConcurrency: many requests of many keys, some of them
// cancelled while they wait, never run more than the slots at once; each
// either runs or gets ErrQueueFull or its context's error, and once all
// have ended the gate holds no key.
func TestGateUnderConcurrency(t *testing.T) {
	const slots = 3
	g := New(slots, 4)
	var running, most atomic.Int64
	var ran, full, cancelled atomic.Int64
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%5 == 0 {
				cancel()
			}
			release, err := g.Enter(ctx, fmt.Sprint("pub", i%7))
			switch {
			case errors.Is(err, ErrQueueFull):
				full.Add(1)
				return
			case errors.Is(err, context.Canceled):
				cancelled.Add(1)
				return
			case err != nil:
				t.Errorf("Enter: %v", err)
				return
			}
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			ran.Add(1)
			running.Add(-1)
			release()
			release() // a second call gives nothing back
		})
	}
	wg.Wait()
	if m := most.Load(); m > slots {
		t.Errorf("%d requests ran at once, want at most %d", m, slots)
	}
	if total := ran.Load() + full.Load() + cancelled.Load(); total != 400 || ran.Load() == 0 {
		t.Errorf("ran %d, refused %d, cancelled %d: want 400 in all, some run", ran.Load(), full.Load(), cancelled.Load())
	}
	if n := g.Held(); n != 0 {
		t.Errorf("the gate holds %d keys after every request ended, want 0", n)
	}
	// Every slot is free again.
	var releases []func()
	for range slots {
		release, err := g.Enter(context.Background(), "after")
		if err != nil {
			t.Fatalf("a slot after the others ended: %v", err)
		}
		releases = append(releases, release)
	}
	if g.Full("other") {
		t.Error("Full with every slot taken but an empty queue")
	}
	if full := New(1, 0); full.Full("a") {
		t.Error("Full with a slot free")
	}
	for _, release := range releases {
		release()
	}
}
