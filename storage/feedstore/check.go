package feedstore

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// Items are the change feed's items as a check of the table finds them:
// leases, heartbeats, the event log's head and its events. Add each item
// of the table to it, then Check.
type Items struct {
	leases     []leaseItem
	heartbeats []heartbeatItem
	events     []eventItem
	head       *eventHeadItem
	// ttlLeases are the leases that carry the table's TTL attribute.
	ttlLeases []string
}

// Add decodes it, an item of the change feed of type typ (TypeLease,
// TypeHeartbeat, TypeEvent or TypeEventHead);
// it fails when the item does not decode.
func (f *Items) Add(typ string, it item) error {
	switch typ {
	case TypeLease:
		var l leaseItem
		if err := attributevalue.UnmarshalMap(it, &l); err != nil {
			return err
		}
		if _, ok := it["expiresAt"]; ok {
			f.ttlLeases = append(f.ttlLeases, l.SK)
		}
		f.leases = append(f.leases, l)
	case TypeHeartbeat:
		var hb heartbeatItem
		if err := attributevalue.UnmarshalMap(it, &hb); err != nil {
			return err
		}
		f.heartbeats = append(f.heartbeats, hb)
	case TypeEvent:
		var e eventItem
		if err := attributevalue.UnmarshalMap(it, &e); err != nil {
			return err
		}
		f.events = append(f.events, e)
	case TypeEventHead:
		f.head = &eventHeadItem{}
		return attributevalue.UnmarshalMap(it, f.head)
	}
	return nil
}

// Check reports leases and heartbeats that are malformed or would expire by TTL, and an
// event log with events past its head, without a TTL, at the wrong key,
// undecodable, repeated, or missing where TTL cannot have removed them
// yet (events expire oldest first: a missing position right after an
// event still alive is one that never came). now is Unix seconds.
func (f *Items) Check(now int64, badf func(string, ...any)) {
	var head int64
	if f.head != nil {
		head = f.head.Seq
		if k := eventLogHead(); f.head.PK != k.PK || f.head.SK != k.SK {
			badf("event log head at %s/%s", f.head.PK, f.head.SK)
		}
	}
	for _, sk := range f.ttlLeases {
		badf("lease %s has an expiresAt, which TTL would delete it by", sk)
	}
	for _, hb := range f.heartbeats {
		if k := heartbeatKey(hb.Owner); hb.Owner == "" || hb.PK != k.PK || hb.SK != k.SK || hb.ExpiresAt <= 0 {
			badf("heartbeat %s/%s of %q has wrong keys or no expiresAt", hb.PK, hb.SK, hb.Owner)
		}
	}
	for _, l := range f.leases {
		shard, isShard := strings.CutPrefix(l.SK, prefixShardLease)
		worker, isWorker := strings.CutPrefix(l.SK, prefixWorkerLease)
		switch {
		case l.PK != leasesPartition || (!isShard && !isWorker) || (isShard && shard == "") || (isWorker && worker == ""):
			badf("lease %s/%s has wrong keys", l.PK, l.SK)
		case l.Owner == "":
			badf("lease %s has no owner", l.SK)
		case isShard && l.Position != 0:
			badf("shard lease %s has a worker's position", l.SK)
		case isWorker && (l.Checkpoint != "" || l.Finished):
			badf("worker lease %s has a shard's checkpoint", l.SK)
		case isWorker && l.Position > head:
			badf("worker lease %s is at position %d, past the event log's head %d", l.SK, l.Position, head)
		}
	}
	if len(f.events) > 0 && f.head == nil {
		badf("the event log has %d events and no head", len(f.events))
	}
	slices.SortFunc(f.events, func(a, b eventItem) int { return cmp.Compare(a.Position, b.Position) })
	// The events, each at its position with its item's TTL.
	type logged struct {
		Logged
		expiresAt int64
	}
	var events []logged
	for _, it := range f.events {
		if k := eventKey(it.Position); it.PK != k.PK || it.SK != k.SK || it.Position < int64(max(1, len(it.Events))) {
			badf("event item %s/%s has position %d", it.PK, it.SK, it.Position)
		}
		if it.ExpiresAt <= 0 {
			badf("event item at %d has no expiresAt (TTL)", it.Position)
		}
		for _, e := range it.logged() {
			events = append(events, logged{e, it.ExpiresAt})
		}
	}
	ids := map[string]int64{}
	for i, e := range events {
		if i > 0 && e.Position <= events[i-1].Position {
			badf("the event log holds position %d twice", e.Position)
		}
		if e.Position > head {
			badf("event at %d is past the event log's head %d", e.Position, head)
		}
		var ev struct{ ID, Type string }
		if err := json.Unmarshal(e.Event, &ev); err != nil || ev.ID == "" || ev.Type == "" {
			badf("event at %d does not decode into an event: %v", e.Position, err)
		} else if at, dup := ids[ev.ID]; dup {
			badf("event %s is logged at %d and %d", ev.ID, at, e.Position)
		} else {
			ids[ev.ID] = e.Position
		}
		next := head + 1
		if i+1 < len(events) {
			next = events[i+1].Position
		}
		if next > e.Position+1 && e.expiresAt > now {
			badf("the event log misses positions %d to %d", e.Position+1, next-1)
		}
	}
}
