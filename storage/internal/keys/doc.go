// Package keys builds every key of the blog's items in the table: the
// attribute names of the primary key and of GSI1, the prefixes and fixed
// partitions of each kind of item, the builders of partition keys, sort
// keys and whole keys, comment ids (which carry the time that orders a
// comment's key), and the time format that makes string order time order.
//
// The table of items, with each one's PK, SK and GSI1 entry, is written
// once, in package storage's doc.go; the builders here follow it. Each
// builder is named for the item whose key it returns (Post, CategoryCopy,
// Held), for the sort key it returns with a Sort suffix (PostSort,
// DraftSort), and for the GSI1 or table partition it returns with a
// Partition suffix (CategoryPartition, DraftPartition).
//
// Every item of a publication lives in the publication's key space, a
// Space (space.go): the builders of its items are the Space's methods,
// and put "PUB#<pubId>#" before every partition key and GSI1 partition
// they return; sort keys are the same in every space. The few global
// items (Global: server keys, persisted queries, readers, the directory,
// the layout item, the change feed's items) have builders of their own
// that take no space.
//
// The package knows nothing of the domain: it imports no code of the
// store, only the table primitives' Key type. The change feed's own items
// (leases, the event log, webhooks and their outbox, the schedule) keep
// their keys beside their code.
package keys
