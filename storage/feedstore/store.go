package feedstore

import (
	"sync/atomic"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Store reads and writes the change feed's items. It is safe for
// concurrent use; it holds no state between calls but the highest
// event-log position it has seen, which an append tries first.
type Store struct {
	db  *dynamo.Table
	now func() time.Time
	// logHead is the highest event-log position seen (eventlog.go), the
	// head an append tries first.
	logHead *atomic.Int64
}

// New returns the change feed's items of the table db, stamped with the
// time now returns.
func New(db *dynamo.Table, now func() time.Time) *Store {
	return &Store{db: db, now: now, logHead: new(atomic.Int64)}
}

// At returns a Store on the same table that takes the time from now and
// shares s's knowledge of the event log's head.
func (s *Store) At(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// Now returns the Store's current time, truncated to the millisecond the
// table stores.
func (s *Store) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

func ptr[T any](v T) *T { return &v }
