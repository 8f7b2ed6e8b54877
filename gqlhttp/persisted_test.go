package gqlhttp

import (
	"testing"
	"time"
)

// TestRateLimit: the bucket of the writes allows perSecond events at once, then one more for each
// share of a second that passes, never more than perSecond in store; a
// clock that goes back gives nothing; a rate of zero allows nothing.
func TestRateLimit(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := newRateLimit(4)
	allowed := func(now time.Time, n int) int {
		got := 0
		for range n {
			if l != nil && l.AllowN(now, 1) {
				got++
			}
		}
		return got
	}
	for _, step := range []struct {
		at   time.Time
		want int
	}{
		{at, 4},
		{at, 0},
		{at.Add(500 * time.Millisecond), 2},
		{at.Add(400 * time.Millisecond), 0}, // back in time
		{at.Add(time.Hour), 4},              // a quiet hour stores no more than a second's
	} {
		if got := allowed(step.at, 10); got != step.want {
			t.Errorf("at %s: %d allowed, want %d", step.at.Sub(at), got, step.want)
		}
	}
	if newRateLimit(0) != nil || newRateLimit(-1) != nil {
		t.Error("a rate of none allowed an event")
	}
}
