package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/blogql/blog/storage/feedstore"
)

// The domain's side of the change feed's event log: the log itself
// (package feedstore, reached by Store.Feed) keeps each event as its
// JSON; the events it keeps are the ones EventsOf makes, encoded on the
// way in and decoded on the way out here.

// RecordEvents are the events of one stream record, Sequence its
// sequence number.
type RecordEvents struct {
	Sequence string
	Events   []Event
}

// Append is a batch of a shard's records to log: their events, in order,
// and the shard's checkpoint at the last one (feedstore.Append).
type Append struct {
	// Shard is the shard the records come from, whose lease Owner holds
	// and whose checkpoint moves with the append. Empty, the append
	// moves no checkpoint and needs no lease: for a reader of the stream
	// that keeps its own (an AWS Lambda's event source mapping), which
	// may log a record's events again when it retries a batch.
	Shard, Owner string
	Records      []RecordEvents
	// Finished marks the shard read to its end once the batch is in.
	Finished bool
	// Retention is how long the events stay in the log; zero means
	// feedstore.DefaultEventRetention.
	Retention time.Duration
}

// AppendEvents logs the events of a.Records as feedstore's AppendEvents
// does, with its requests, and returns the events as logged. It fails
// when an event does not encode (nothing is written then), with
// feedstore.ErrLeaseLost when the shard's lease is not a.Owner's, and
// with ErrBusy when the log's head kept moving.
func (s *Store) AppendEvents(ctx context.Context, a Append) ([]LoggedEvent, error) {
	fa := feedstore.Append{Shard: a.Shard, Owner: a.Owner, Finished: a.Finished, Retention: a.Retention,
		Records: make([]feedstore.Record, len(a.Records))}
	var events []Event
	for i, r := range a.Records {
		fa.Records[i] = feedstore.Record{Sequence: r.Sequence, Events: make([]json.RawMessage, len(r.Events))}
		for j, e := range r.Events {
			raw, err := json.Marshal(e)
			if err != nil {
				return nil, fmt.Errorf("append events of shard %s: encode event %s: %w", a.Shard, e.ID, err)
			}
			fa.Records[i].Events[j] = raw
			events = append(events, e)
		}
	}
	// The log keeps the events in order: the i-th logged is events[i].
	got, err := s.feed.AppendEvents(ctx, fa)
	if got == nil {
		return nil, err
	}
	logged := make([]LoggedEvent, len(got))
	for i, l := range got {
		logged[i] = LoggedEvent{Position: l.Position, Event: events[i]}
	}
	return logged, err
}

// EventsAfter returns up to limit events of the log after position after
// (0: from the oldest kept), in order, as feedstore's EventsAfter does,
// with its request. It fails when an event does not decode, and when
// limit is not 1 to feedstore.MaxEventsPage.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]LoggedEvent, error) {
	got, err := s.feed.EventsAfter(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	events := make([]LoggedEvent, 0, len(got))
	for _, l := range got {
		e := LoggedEvent{Position: l.Position}
		if err := json.Unmarshal(l.Event, &e.Event); err != nil {
			return events, fmt.Errorf("decode event at %d: %w", l.Position, err)
		}
		events = append(events, e)
	}
	return events, nil
}
