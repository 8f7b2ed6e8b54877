package warm

import (
	"testing"
	"time"
)

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s after 10 s", what)
		}
	}
}

// A goroutine that has run a function runs the next one: none is made
// while one is idle.
func TestTheNextFunctionTakesAnIdleGoroutine(t *testing.T) {
	p := &pool{max: 4, idleFor: time.Hour}
	done := make(chan bool)
	p.Go(func() { done <- true })
	<-done
	eventually(t, "parked", func() bool { return p.parked() == 1 })

	release := make(chan bool)
	p.Go(func() { <-release; done <- true })
	if n := p.parked(); n != 0 {
		t.Errorf("%d goroutines idle while the second function runs, want 0: it did not take the idle one", n)
	}
	close(release)
	<-done
	eventually(t, "parked again", func() bool { return p.parked() == 1 })
}

// No more than max goroutines are kept, however many ran at once.
func TestKeepsNoMoreThanMax(t *testing.T) {
	p := &pool{max: 2, idleFor: time.Hour}
	release, done := make(chan bool), make(chan bool)
	for range 5 {
		p.Go(func() { <-release; done <- true })
	}
	close(release)
	for range 5 {
		<-done
	}
	eventually(t, "two parked", func() bool { return p.parked() == 2 })
	time.Sleep(10 * time.Millisecond) // the others have ended, not parked
	if n := p.parked(); n != 2 {
		t.Errorf("%d goroutines kept, want 2", n)
	}
}

// Idle goroutines end after idleFor, and the pool makes new ones after.
func TestIdleGoroutinesEnd(t *testing.T) {
	p := &pool{max: 4, idleFor: 20 * time.Millisecond}
	for range 2 {
		done := make(chan bool)
		for range 3 {
			p.Go(func() { done <- true })
		}
		for range 3 {
			<-done
		}
		eventually(t, "parked", func() bool { return p.parked() > 0 })
		eventually(t, "ended", func() bool { return p.parked() == 0 })
	}
}
