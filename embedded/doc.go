// Package embedded is a DynamoDB-compatible database in the process: the
// blog's embedded backend, on a data file that survives restarts, or in
// memory for tests.
//
// It answers DynamoDB's JSON protocol (X-Amz-Target DynamoDB_20120810.Op,
// and DynamoDBStreams_20120810.Op for DynamoDB Streams,
// application/x-amz-json-1.0, errors as {"__type", "Message"} with
// DynamoDB's statuses, the body's CRC32 in X-Amz-Crc32) as an
// http.RoundTripper, so the real aws-sdk-go-v2 client talks to it with no
// network and the store keeps one code path for every backend; and as an
// http.Handler, for clients in other processes. DynamoDB's own behaviour is
// the specification, and DynamoDB Local is the judge: the differential
// suite (diff_*_test.go) makes the same calls on both and compares every
// part of the answers, including capacity, errors and their messages, and
// runs random sequences of operations whose seed it prints when they
// differ.
//
// # Design
//
// The data lives in one bbolt file (go.etcd.io/bbolt: a copy-on-write
// B+tree with ACID transactions, one writer and any number of readers,
// each reader on a consistent snapshot; the store of etcd). It is the
// ordered, transactional key-value store the engine needs and nothing
// more: one file, no background compaction, no second process.
//
//   - keys.go encodes keys so that byte order is DynamoDB's order: a Query
//     is one range scan of the table's or an index's tree, a Scan segment a
//     contiguous range of partition hashes;
//   - store.go lays out the file (a bucket per table with its items, one
//     per index, and its TTL entries) and writes every item change together
//     with its index and TTL entries;
//   - commit.go is the one write path: requests run in bbolt write
//     transactions, those that arrive while one commits share the next
//     (group commit, so concurrent writers share a sync), and each is
//     answered only once its transaction is on disk; it is also the one
//     place that sees every committed change, with the item before and
//     after, in commit order;
//   - streams.go is DynamoDB Streams: applyChange, in the transaction of
//     each change, appends its record (INSERT, MODIFY or REMOVE, with the
//     keys and the images of the stream's view type) to the table's
//     stream, under a sequence number of 21 digits whose byte order is
//     commit order, so an acknowledged write always has its record, after
//     a crash too, and a failed one never has; a write that leaves the
//     item as it was writes none. Records are cut into shards that close
//     after four hours, each the parent of the next; ops_streams.go reads
//     them (shard iterators are tokens of the stream, the shard, the next
//     sequence number and their time). A table without a stream pays one
//     lookup of an absent key per change;
//   - reads (GetItem, BatchGetItem, Query, Scan, TransactGetItems) run in
//     bbolt read transactions and never wait for a writer (bbolt pauses
//     readers only to map a file grown past its mapping, which starts at
//     1 GB);
//   - codec.go is the stored form of items; answers are written from it
//     without building values (wire.go, codec.go); expressions are lexed,
//     parsed into the trees of node.go, checked and evaluated by lex.go,
//     parse.go, check.go, eval.go and update.go;
//     numbers (number.go) are exact decimals of 38 digits.
//
// Open takes a data file and locks it: a second process gets ErrLocked
// after Options.LockTimeout, never a shared file. OpenMemory is for tests:
// a file that is removed as soon as it is open (in /dev/shm when there is
// one) and never synced, so nothing is left behind and nothing waits for a
// disk. A dropped Engine closes itself when it is collected.
//
// # Operations
//
// CreateTable (hash and range keys of S, N or B; global and local secondary
// indexes with projections ALL, KEYS_ONLY or INCLUDE; either billing
// mode; StreamSpecification), DescribeTable (ACTIVE at once, with live
// item counts and sizes, LatestStreamArn and LatestStreamLabel), ListTables
// (Limit, ExclusiveStartTableName), DeleteTable, UpdateTable (the stream
// settings only: enable with a view type, disable), UpdateTimeToLive,
// DescribeTimeToLive.
//
// GetItem (ConsistentRead, ProjectionExpression or AttributesToGet),
// PutItem, UpdateItem and DeleteItem (ConditionExpression, ReturnValues,
// ReturnValuesOnConditionCheckFailure), BatchGetItem (100 keys,
// projections, ConsistentRead per table), BatchWriteItem (25 puts and
// deletes), Query (on the table or an index; KeyConditionExpression with
// =, <, <=, >, >=, BETWEEN and begins_with on the sort key;
// FilterExpression, ProjectionExpression, Select, ScanIndexForward, Limit,
// ExclusiveStartKey, the 1 MB page), Scan (the same, with Segment and
// TotalSegments), TransactWriteItems (ConditionCheck, Put, Update, Delete;
// 100 actions, 4 MB, one action per item, cancellation reasons in action
// order with their codes and, when asked, the item; ClientRequestToken kept
// for ten minutes, IdempotentParameterMismatchException for another
// request with it), TransactGetItems. ReturnConsumedCapacity TOTAL and
// INDEXES on every read and write.
//
// Expressions: comparisons (= <> < <= > >=), BETWEEN, IN, AND, OR, NOT,
// parentheses, attribute_exists, attribute_not_exists, attribute_type,
// begins_with, contains and size; SET with + and -, if_not_exists and
// list_append, REMOVE, ADD and DELETE; #name and :value placeholders,
// nested paths a.b and a[0]; DynamoDB's reserved words; every error with
// DynamoDB's message, syntax errors with the token and its neighbours.
// Values: all ten types; empty strings, binaries, lists and maps outside
// keys; sets never empty; numbers of 38 digits from 1E-130 to
// 9.99…E+125, returned in DynamoDB's plain form, with exact arithmetic.
// Limits as DynamoDB's: items of 400 KB, partition keys of 2048 bytes and
// sort keys of 1024, pages of 1 MB.
//
// DynamoDB Streams: ListStreams (TableName, Limit,
// ExclusiveStartStreamArn), DescribeStream (the shards with their
// SequenceNumberRange and ParentShardId; Limit, ExclusiveStartShardId,
// ShardFilter CHILD_SHARDS),
// GetShardIterator (TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER,
// AFTER_SEQUENCE_NUMBER; iterators good for 15 minutes, then
// ExpiredIteratorException) and GetRecords (Limit up to 1,000, 1 MB of
// records, NextShardIterator until a closed shard is read to its end).
// Records are DynamoDB's: eventID, eventName, eventVersion 1.1,
// eventSource aws:dynamodb, awsRegion, and ApproximateCreationDateTime,
// Keys, NewImage and OldImage as the view type (KEYS_ONLY, NEW_IMAGE,
// OLD_IMAGE, NEW_AND_OLD_IMAGES) says, SequenceNumber, SizeBytes and
// StreamViewType; deletions by TTL carry userIdentity (Service,
// dynamodb.amazonaws.com). Records are kept for Options.StreamRetention
// (24 hours by default): older ones are never returned (a position before
// them is TrimmedDataAccessException) and the TTL sweeper deletes them.
//
// Consumed capacity is billed as DynamoDB bills it (capacity.go): 4 KB read
// units, halved for eventually consistent reads, summed over what a Query
// or Scan read before filtering; 1 KB write units of the larger of the item
// before and after, and of each index entry that changes; twice that in
// transactions.
//
// Expired items (TTL) are deleted in the background every
// Options.TTLInterval (30 s by default), as DynamoDB deletes them, except
// those expired more than five years ago; expired idempotency tokens go
// with them.
//
// Not supported, and refused with a ValidationException or
// UnknownOperationException: the legacy parameters (Expected,
// AttributeUpdates, ConditionalOperator, KeyConditions, QueryFilter,
// ScanFilter), PartiQL, UpdateTable of anything but StreamSpecification,
// backups, global tables, tags and imports/exports.
// ReturnItemCollectionMetrics is accepted and answers nothing. Request
// signatures are not checked: the engine is in the process, or on
// loopback, of its only user.
//
// # Differences from DynamoDB
//
// Accepted on purpose:
//
//   - Every read is strongly consistent, index queries included: a
//     write shows in every read that starts after it is acknowledged.
//     DynamoDB's eventually consistent reads and its indexes may lag.
//   - Writes never conflict: they are serialized, so there is no
//     TransactionConflict, TransactionInProgressException or throttling.
//     BatchWriteItem is atomic and never leaves UnprocessedItems;
//     BatchGetItem leaves UnprocessedKeys only past 16 MB of answer.
//   - Scan visits partitions in the order of a hash (FNV-1a) of their
//     partition key, and segment i of n is the i-th n-th of the hash range;
//     DynamoDB's and DynamoDB Local's hashes are their own. Items with equal
//     index keys come in the order of their table keys; DynamoDB leaves it
//     open (DynamoDB Local orders them by its hash).
//   - Expired items are deleted within one TTLInterval; DynamoDB takes up
//     to a few days.
//   - Tables are ACTIVE as soon as they are created, and DescribeTable's
//     counts are exact (DynamoDB refreshes them every six hours).
//   - A stream is ENABLED at once, and a record is readable as soon as its
//     write is acknowledged.
//   - A disabled stream stays readable (DISABLED, its last shard closed)
//     for the retention, beside a new one, as in DynamoDB; but a deleted
//     table's streams go with it (DynamoDB keeps them for 24 hours), and so
//     do their iterators (ResourceNotFoundException).
//   - One shard is open at a time; it closes, and its child opens, with
//     the first record written four hours or more after it opened (an idle
//     shard stays open; DynamoDB's split and close on their own as it
//     scales). A stream's sequence numbers start at 1 and count its
//     records, as DynamoDB Local's do; DynamoDB's are larger and sparse.
//   - ApproximateCreationDateTime is the commit's time in whole seconds
//     (DynamoDB Local rounds it down to the minute).
//
// Where DynamoDB Local, the reference, differs from DynamoDB, the engine
// follows DynamoDB Local when that is all that is known:
//
//   - disabling a stream that is already disabled succeeds;
//   - error messages are DynamoDB Local's (e.g. "Type mismatch for key"
//     without naming it, "Query condition missed key schema element");
//   - UPDATED_OLD and UPDATED_NEW return the whole top-level attribute of
//     each nested path updated;
//   - a Query of a table whose page reaches its Limit on the item that is
//     the inclusive bound of the key condition (<=, >= descending,
//     BETWEEN, or the one item of a table without a sort key) has no
//     LastEvaluatedKey; any other page that reaches its Limit has one;
//   - a Query or Scan that reads nothing bills 0 units.
//
// and follows DynamoDB where DynamoDB Local is evidently wrong (the
// differential suite compares everything else of these answers):
//
//   - a sum or difference is returned in canonical form (1, where
//     DynamoDB Local returns 1.00 for 0.25 + 0.75);
//   - a transaction of several actions bills each action; DynamoDB Local
//     adds up only the distinct unit counts among them;
//   - deleting a missing item bills one unit in BatchWriteItem (DynamoDB
//     Local: two) and two in a transaction (DynamoDB Local: one), and
//     DeleteItem reports capacity only when asked;
//   - a ConditionCheck on an item another action of the transaction
//     writes is refused, as DynamoDB refuses it; DynamoDB Local runs both;
//   - a delete that finds its item gone writes no stream record, as in
//     DynamoDB, also when another delete of it removed it a moment before;
//     DynamoDB Local, when two deletes of one item race, writes a REMOVE
//     for each, the loser's with its keys alone;
//   - an empty map in a stream record's image is {} (DynamoDB Local writes
//     it as an empty list, leaves it out when it is nested, or writes
//     another value of the record in its place).
package embedded
