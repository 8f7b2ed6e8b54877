// Package dynamo holds the table primitives of package storage: the
// DynamoDB client, its retry policy and its one-pass decoding of the
// reads' answers (decode.go), request counting and observation,
// and the calls every operation of the store is built on (one item, a
// conditional put or update, a batch of items, items read together,
// a paged Query, and a transaction whose actions carry what their failed
// condition means). It knows nothing of posts or of any other item of the
// blog: keys are a partition and a sort key, items are attribute maps.
//
// Every DynamoDB request of the store passes through a Table, so a rule
// that must hold of every request (which keys it may touch) has one home.
package dynamo
