package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGateUnderConcurrency: many requests of many keys, some of them
// cancelled while they wait, never run more than the slots at once; each
// either runs or gets ErrQueueFull or its context's error, and once all
// have ended the gate holds no key.
func TestGateUnderConcurrency(t *testing.T) {
	for _, share := range []int{0, 1, 2} {
		t.Run(fmt.Sprint("share=", share), func(t *testing.T) { gateUnderConcurrency(t, share) })
	}
}

func gateUnderConcurrency(t *testing.T, share int) {
	const slots = 3
	g := New(slots, 4, share)
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
	// Every slot is free again, to one key once the others' last second
	// has passed.
	g.now = func() time.Time { return time.Now().Add(sharedFor) }
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
	if full := New(1, 0, 0); full.Full("a") {
		t.Error("Full with a slot free")
	}
	for _, release := range releases {
		release()
	}
}

// TestGateShare: a key runs every slot while it is the only one; once
// another key is served, and for a second after its last admission, it
// runs at most its share, and its next request waits with slots free
// until one of its own ends.
func TestGateShare(t *testing.T) {
	now := time.Unix(0, 0)
	g := New(4, 8, 1)
	g.now = func() time.Time { return now }
	ctx := context.Background()
	enter := func(k string) func() {
		t.Helper()
		release, err := g.Enter(ctx, k)
		if err != nil {
			t.Fatalf("Enter %s: %v", k, err)
		}
		return release
	}
	// Alone, a takes every slot.
	var alone []func()
	for range 4 {
		alone = append(alone, enter("a"))
	}
	for _, release := range alone {
		release()
	}

	a1 := enter("a")
	b1 := enter("b")
	// a runs its share while b runs: its next request waits.
	waited := make(chan func())
	go func() { waited <- enter("a") }()
	for g.Waiting("a") == 0 {
		time.Sleep(time.Millisecond)
	}
	if g.Full("a") {
		t.Error("Full with room in a's queue")
	}
	b1()
	// b ended, but was admitted less than a second ago: a still waits.
	select {
	case <-waited:
		t.Fatal("a's second request ran beside its first while b was served within the second")
	case <-time.After(20 * time.Millisecond):
	}
	a1() // a's own end lets its next one on
	a2 := <-waited
	// A second after b's admission, a alone takes every slot again.
	now = now.Add(sharedFor)
	more := []func(){a2, enter("a"), enter("a"), enter("a")}
	if g.Waiting("a") != 0 {
		t.Error("a waits while alone")
	}
	for _, release := range more {
		release()
	}
	if n := g.Held(); n != 0 {
		t.Errorf("the gate holds %d keys after every request ended, want 0", n)
	}
}
