// Package feedstore holds the change feed's own items in the blog's
// table: the leases that say which server reads which shard of the
// table's stream and runs which worker, the servers' heartbeats, and the
// event log every server tails. It is built on the table primitives
// (package dynamo) and knows nothing of the blog's items: an event is
// kept as the JSON its writer gives, and package storage, which makes
// the events, reads them back.
//
// Its items live in two partitions of their own, LEASES and EVENTLOG
// (keys.go); storage/doc.go describes them with the rest of the table.
//
// # Leases and the event log
//
// Leases (leases.go) say which server reads a shard or runs a worker:
// the item LEASES/SHARD#<shardId> or LEASES/WORKER#<name> with its owner,
// held while the owner's heartbeat LEASES/SERVER#<owner> has not expired
// (its leaseUntil, Unix milliseconds; its expiresAt lets TTL remove the
// heartbeat of a server gone for a day) and the lease is not released.
// A server renews its one heartbeat (Heartbeat), not each lease, so a
// fleet's idle writes do not grow with its shards and workers.
// TakeLease writes the lease when it is absent, released or the taker's
// own, and otherwise takes it over in a transaction that checks its
// owner's heartbeat expired; ReleaseLease and every checkpoint are
// conditioned on the owner, so a server that lost a lease (it paused
// past its heartbeat's expiry and another took over) fails its next
// write with ErrLeaseLost and stops. A shard's lease keeps its checkpoint (the
// sequence number of the last record logged) and finished (the shard is
// closed and read to its end); a worker's its position (the last event
// it handled). A finished shard's lease is deleted once the stream no
// longer lists the shard.
//
// AppendEvents writes a batch of a shard's records in one
// TransactWriteItems: the lease's checkpoint update (condition: owner),
// the head's update from seq to seq+n (condition: seq as read) and the n
// events at seq+1..seq+n, packed into items of up to 64 KB of JSON (a
// write bills each item's kilobytes, not a unit an event). So positions are dense and committed in order,
// and a record's events enter the log exactly once: a takeover reads on
// from the checkpoint the same transaction moved. A batch past one
// transaction's 98 events or 3 MB is cut into several, between records;
// a batch without events only moves the checkpoint; when another shard's
// holder moved the head first, the transaction is built again on the new
// head, which the cancellation returns (the store tries the highest
// position it has seen first, so a server that reads the log needs no
// read of the head to append). Events expire by TTL after the
// retention (DefaultEventRetention, 24 h; the server's -event-retention).
package feedstore
