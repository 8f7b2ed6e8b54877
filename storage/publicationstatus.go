package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// What a platform operator changes of a publication besides its hosts:
// its status (SetPublicationStatus) and its title (SetPublicationTitle).
// Each is one conditional UpdateItem of the directory item, on the
// version read, so concurrent writers of the item (another status, a
// host added) each see the other's write or retry; a change to what the
// item already holds writes nothing, so a retried call is no change. The
// write's record is the change feed's publication.updated
// (publicationevents.go), which drops the publication's hosts and site
// on every server. A publication's slug never changes.

// PublicationSuspended is the status of a publication a platform operator
// stopped serving: its hosts refuse the public and its staff, and its
// background work (webhook deliveries, scheduled posts) waits until it is
// active again.
const PublicationSuspended = "suspended"

// Suspended reports whether the publication is suspended.
func (p *Publication) Suspended() bool { return p.Status == PublicationSuspended }

// Suspended reports whether the Store's publication is suspended: one
// strongly consistent GetItem of its directory item. A publication
// missing from the directory (the default one before its first start) is
// not. It returns the error of the read.
func (s *Store) Suspended(ctx context.Context) (bool, error) {
	it, err := s.publicationItem(ctx, s.ks.ID(), true)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return it.publication().Suspended(), nil
}

// SetPublicationStatus gives the publication id the status (PublicationActive
// or PublicationSuspended) and returns it: one strongly consistent
// GetItem and one conditional UpdateItem, none when it has the status
// already. Another status is a *ValidationError; the server's default
// publication, which serves the platform's own hosts, cannot be suspended
// (a *ValidationError too); a missing publication is ErrNotFound.
func (s *Store) SetPublicationStatus(ctx context.Context, id, status string) (*Publication, error) {
	switch {
	case status != PublicationActive && status != PublicationSuspended:
		return nil, invalid("status", "must be %s or %s", PublicationActive, PublicationSuspended)
	case status == PublicationSuspended && id == DefaultPublication:
		return nil, invalid("id", "the default publication serves the platform's own hosts and cannot be suspended")
	}
	return s.changePublication(ctx, id, "status", func(p *Publication) (expression.UpdateBuilder, bool) {
		if p.Status == status {
			return expression.UpdateBuilder{}, false
		}
		p.Status = status
		return expression.Set(expression.Name("status"), expression.Value(status)), true
	})
}

// SetPublicationTitle gives the publication id the title and returns it,
// as SetPublicationStatus does. A title that is empty, more than one line
// or longer than MaxTitleLength is a *ValidationError, and nothing is
// written.
func (s *Store) SetPublicationTitle(ctx context.Context, id, title string) (*Publication, error) {
	if err := validateLine("title", title, MaxTitleLength); err != nil {
		return nil, err
	}
	return s.changePublication(ctx, id, "title", func(p *Publication) (expression.UpdateBuilder, bool) {
		if p.Title == title {
			return expression.UpdateBuilder{}, false
		}
		p.Title = title
		return expression.Set(expression.Name("title"), expression.Value(title)), true
	})
}

// changePublication reads the directory item of the publication id, asks
// change what to set of it (false: nothing, and nothing is written) and
// writes that with the version and time, on the condition that the
// version is the one read; a write lost to another is read and made again.
func (s *Store) changePublication(ctx context.Context, id, what string, change func(*Publication) (expression.UpdateBuilder, bool)) (*Publication, error) {
	if _, err := keys.In(id); err != nil {
		return nil, fmt.Errorf("publication %q: %w", id, ErrNotFound)
	}
	return dynamo.RetryWrite(ctx, func() (*Publication, error) {
		it, err := s.publicationItem(ctx, id, true)
		if err != nil {
			return nil, err
		}
		p := it.publication()
		upd, ok := change(p)
		if !ok {
			return p, nil
		}
		now := s.Now()
		t := s.db.NewTxn()
		if err := s.versioned(t, it, upd, now); err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, fmt.Errorf("set the %s of publication %q: %w", what, id, err)
		}
		p.UpdatedAt, p.Version = now, it.Version+1
		return p, nil
	})
}

// versioned adds to t the update upd of it with its next version and the
// time now, on the condition that its version is the one read (else
// dynamo.ErrRetry: read again).
func (s *Store) versioned(t *dynamo.Txn, it *publicationItem, upd expression.UpdateBuilder, now time.Time) error {
	upd = upd.Set(expression.Name("version"), expression.Value(it.Version+1)).
		Set(expression.Name("updatedAt"), expression.Value(keys.Time(now)))
	cond := expression.Name("version").Equal(expression.Value(it.Version))
	if it.Version == 0 {
		cond = expression.Name("version").AttributeNotExists().Or(cond)
	}
	return t.Update(keys.Directory(it.ID), upd, &cond, nil)
}
