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
	ids := map[string]int64{}
	for i, e := range f.events {
		if k := eventKey(e.Position); e.PK != k.PK || e.SK != k.SK || e.Position < 1 {
			badf("event %s/%s has position %d", e.PK, e.SK, e.Position)
		}
		if e.Position > head {
			badf("event at %d is past the event log's head %d", e.Position, head)
		}
		if e.ExpiresAt <= 0 {
			badf("event at %d has no expiresAt (TTL)", e.Position)
		}
		var ev struct{ ID, Type string }
		if err := json.Unmarshal([]byte(e.Event), &ev); err != nil || ev.ID == "" || ev.Type == "" {
			badf("event at %d does not decode into an event: %v", e.Position, err)
		} else if at, dup := ids[ev.ID]; dup {
			badf("event %s is logged at %d and %d", ev.ID, at, e.Position)
		} else {
			ids[ev.ID] = e.Position
		}
		next := head + 1
		if i+1 < len(f.events) {
			next = f.events[i+1].Position
		}
		if next > e.Position+1 && e.ExpiresAt > now {
			badf("the event log misses positions %d to %d", e.Position+1, next-1)
		}
	}
}
