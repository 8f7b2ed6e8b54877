package dynamotest

import (
	"sync/atomic"
	"time"
)

// Start is when every test clock starts.
var Start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a test's clock: it stands still until the test sets or
// advances it. Give its Now to both the store (storage.WithClock) and the
// engine (ClientConfig), so items expire by the time they were written
// with. It is safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// NewClock returns a clock that reads t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.Set(t)
	return c
}

// Now returns the clock's time, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
