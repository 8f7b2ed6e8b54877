package feedstore

import (
	"fmt"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Every key of the change feed's items is built here; storage/doc.go
// describes the layout.

const (
	attrPK = "PK"
	attrSK = "SK"

	leasesPartition   = "LEASES"
	eventLogPartition = "EVENTLOG"
	prefixShardLease  = "SHARD#"
	prefixWorkerLease = "WORKER#"
	prefixHeartbeat   = "SERVER#"
	prefixEvent       = "EVENT#"
	eventLogHeadKey   = "HEAD"
)

// The values of the type attribute of the change feed's items.
const (
	TypeLease     = "lease"
	TypeHeartbeat = "leaseHeartbeat"
	TypeEvent     = "event"
	TypeEventHead = "eventLogHead"
)

// key is the primary key of an item; item is an item as DynamoDB
// carries it.
type (
	key  = dynamo.Key
	item = dynamo.Item
)

// leaseKey is the lease of name (ShardLease, WorkerLease).
func leaseKey(name string) key { return key{PK: leasesPartition, SK: name} }

// heartbeatKey is the heartbeat of the server owner (leases.go).
func heartbeatKey(owner string) key { return key{PK: leasesPartition, SK: prefixHeartbeat + owner} }

// eventLogHead is the event log's head item: the last position used.
func eventLogHead() key { return key{PK: eventLogPartition, SK: eventLogHeadKey} }

// eventSortKey places an event at its position in the log: 20 digits, so
// string order is position order.
func eventSortKey(position int64) string { return fmt.Sprintf("%s%020d", prefixEvent, position) }

func eventKey(position int64) key { return key{PK: eventLogPartition, SK: eventSortKey(position)} }
