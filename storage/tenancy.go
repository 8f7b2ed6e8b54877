package storage

import "github.com/blogql/blog/storage/internal/dynamo"

// ErrOutsideSpace means a request named a key outside its publication's
// key space: the tenant guard refused it before it reached DynamoDB, and
// nothing was read or written. It is a bug of the caller, never an
// answer a client caused, and reaches a client as an internal error.
var ErrOutsideSpace = dynamo.ErrOutsideSpace

// TenantViolations returns how many requests the tenant guard refused
// since the process started, over every Store (metrics exports it).
func TenantViolations() int64 { return dynamo.Violations() }

// Publication returns the id of the publication the Store serves.
func (s *Store) Publication() string { return s.ks.ID() }

// Ours reports whether the event e is of the Store's publication: the
// change feed carries every publication's events, and what follows one
// publication acts on its own. An event logged before the table had
// publications (without one) is the default publication's.
func (s *Store) Ours(e Event) bool {
	if e.Publication == "" {
		return s.ks.ID() == DefaultPublication
	}
	return e.Publication == s.ks.ID()
}
