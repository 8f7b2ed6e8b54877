package dynamo

import "errors"

// Errors of the primitives that package storage passes on to its callers
// as its own sentinels (storage.ErrNotFound, storage.ErrBusy,
// storage.ErrUnavailable are these values).
var (
	// ErrNotFound means the item asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable means DynamoDB throttled the call, failed with a server
	// error or could not be reached, on every attempt the retry policy
	// allows (see NewClient).
	ErrUnavailable = errors.New("the database is unavailable, try again")
	// ErrBusy means the write met concurrent writes to the same items on every
	// attempt; nothing was written and the caller may try again.
	ErrBusy = errors.New("too many concurrent writes to the same items, try again")
)

// Outcomes of a cancelled transaction that callers turn into a retry or
// an error of their own.
var (
	// ErrRetry means state read before the transaction changed under it;
	// the caller reads again and rebuilds the transaction. It is what a
	// failed condition means when its action says nothing else.
	ErrRetry = errors.New("state changed during write")
	// ErrIdempotencyUsed means the idempotency record already exists: an
	// action that failed with it explains every other failure of its
	// transaction.
	ErrIdempotencyUsed = errors.New("idempotency key used")
)
