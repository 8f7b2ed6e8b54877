package storage

import (
	"errors"
	"fmt"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Every error the Store returns that a caller may act on is here: a
// sentinel, compared with errors.Is, or a type that carries details and
// wraps one, read with errors.As. graph/errors.go maps each sentinel to
// one extensions.code, so a new one needs a row there.

// Sentinel errors returned by the Store. Callers compare with errors.Is.
var (
	// ErrNotFound means the item asked for does not exist (or is not visible).
	ErrNotFound = dynamo.ErrNotFound
	// ErrVersionConflict means the item changed since the version the caller
	// expected; nothing was written.
	ErrVersionConflict = errors.New("version conflict")
	// ErrSlugTaken means another post (or, for an author's slug, another
	// author) holds the slug as its current one.
	ErrSlugTaken = errors.New("slug taken")
	// ErrInvalidInput means the input failed validation; nothing was written.
	ErrInvalidInput = errors.New("invalid input")
	// ErrPublicationSuspended means the publication is suspended
	// (publicationstatus.go): what was asked of it is refused, and
	// nothing was read or written.
	ErrPublicationSuspended = errors.New("the publication is suspended")
	// ErrAlreadyExists means an author or category with that id or slug exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrIdempotencyMismatch means an idempotency key was reused with a
	// different request.
	ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request")
	// ErrUnavailable means DynamoDB throttled the call, failed with a server
	// error or could not be reached, on every attempt the retry policy
	// allows (see NewClient). The call may or may not have taken effect; a
	// write retried with the same idempotency key takes effect once.
	ErrUnavailable = dynamo.ErrUnavailable
	// ErrRateLimited means a reader added as many comments as a minute
	// allows; nothing was written. It comes as a *RateLimitError.
	ErrRateLimited = errors.New("too many comments in a minute")
	// ErrDuplicateComment means the same reader sent the same comment to
	// the same place less than a minute ago; nothing was written.
	ErrDuplicateComment = errors.New("the same comment was sent less than a minute ago")
	// ErrNotPending means a moderation decision was asked for a comment
	// that is already published; nothing was written.
	ErrNotPending = errors.New("the comment is not pending")
	// ErrBusy means the write met concurrent writes to the same items on every
	// attempt; nothing was written and the caller may try again.
	ErrBusy = dynamo.ErrBusy
)

// RateLimitError is returned with ErrRateLimited and says when the next
// comment will be accepted.
type RateLimitError struct {
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("too many comments in a minute, try again in %s", e.RetryAfter)
}

// Unwrap makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// ValidationError names the field that failed validation. It wraps
// ErrInvalidInput.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidInput) true.
func (e *ValidationError) Unwrap() error { return ErrInvalidInput }

// invalid returns a *ValidationError of field whose reason is format
// with args.
func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ConflictError is returned with ErrVersionConflict and carries the current
// version of the item, so a client can re-read and retry.
type ConflictError struct {
	CurrentVersion int64
}

func (e *ConflictError) Error() string { return "version conflict" }

// Unwrap makes errors.Is(err, ErrVersionConflict) true.
func (e *ConflictError) Unwrap() error { return ErrVersionConflict }

// Errors of readers' sign-in and sessions (signin.go, sessions.go).
var (
	// ErrSignInInvalid means a sign-in link or code is unknown, expired,
	// used already or withdrawn; nothing was written.
	ErrSignInInvalid = errors.New("the sign-in link or code is invalid, expired or used")
	// ErrSignInLimited means a sign-in email would pass a rate limit;
	// nothing was written. It comes as a *SignInLimitError.
	ErrSignInLimited = errors.New("too many sign-in emails")
	// ErrSessionInvalid means a refresh token names no live session.
	ErrSessionInvalid = errors.New("the session is not valid: sign in again")
	// ErrSessionElsewhere means a refresh token of a session made on
	// another publication; nothing was written.
	ErrSessionElsewhere = errors.New("the session was made on another publication: sign in on this one")
	// ErrRefreshReused means a refresh token that was already exchanged
	// came again: the session is revoked, as whoever holds the token may
	// not be its reader.
	ErrRefreshReused = errors.New("the refresh token was used before: the session is revoked, sign in again")
	// ErrAccountClosed means the reader's account is being deleted or was
	// deleted: its tokens sign in nobody, and nothing was written.
	ErrAccountClosed = errors.New("the account was deleted: sign in again")
)

// SignInLimitError is returned with ErrSignInLimited: which limit
// (EMAIL: the address had SignInEmailsPerHour emails; CLIENT: the client
// mailed as many addresses as it may) and when to try again.
type SignInLimitError struct {
	Limit      string
	RetryAfter time.Duration
}

func (e *SignInLimitError) Error() string {
	if e.Limit == "EMAIL" {
		return fmt.Sprintf("at most %d sign-in emails an hour go to one address, try again in %s", SignInEmailsPerHour, e.RetryAfter)
	}
	return fmt.Sprintf("this client sent sign-in emails to as many addresses as an hour allows, try again in %s", e.RetryAfter)
}

// Unwrap makes errors.Is(err, ErrSignInLimited) true.
func (e *SignInLimitError) Unwrap() error { return ErrSignInLimited }
