package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The publications' directory: the platform's publications, each with
// its slug and the hosts it is served at. Its items are global (no
// publication's key space holds them), so any Store reads and writes
// them: the directory item PUBLICATION#<id>, in GSI1 partition
// PUBLICATIONS by slug for the list, and one claim item for the slug
// (PUBLICATIONSLUG#<slug>) and for each host (HOST#<host>) that names the
// publication. A claim is put under attribute_not_exists in the same
// transaction as the directory item, so a slug or a host belongs to one
// publication, and a write that would take one already taken writes
// nothing.

// Publication is one blog of the platform.
type Publication struct {
	ID    string
	Slug  string
	Title string
	// Hosts are the domain names the publication is served at, in the
	// order they were added.
	Hosts     []string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

// PublicationActive is the status of a publication that is served;
// PublicationSuspended (publicationstatus.go) of one that is not.
const PublicationActive = "active"

// NewPublication is the input of CreatePublication.
type NewPublication struct {
	Slug  string
	Title string
	Hosts []string
	// Owner, when given, is made the publication's first owner in the
	// same transaction (its Role is ignored).
	Owner *NewStaff
}

// PublicationHost names a host of a publication, for AddPublicationHost
// and RemovePublicationHost.
type PublicationHost struct {
	ID   string
	Host string
}

// The claims' item types; the directory item is typePublication.
const (
	typePublicationSlug = "publicationSlug"
	typePublicationHost = "publicationHost"
)

// publicationItem is a publication's directory item.
type publicationItem struct {
	PK        string   `dynamodbav:"PK"`
	SK        string   `dynamodbav:"SK"`
	GSI1PK    string   `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK    string   `dynamodbav:"GSI1SK,omitempty"`
	Type      string   `dynamodbav:"type"`
	ID        string   `dynamodbav:"id"`
	Slug      string   `dynamodbav:"slug"`
	Title     string   `dynamodbav:"title,omitempty"`
	Hosts     []string `dynamodbav:"hosts,omitempty"`
	Status    string   `dynamodbav:"status,omitempty"`
	CreatedAt string   `dynamodbav:"createdAt"`
	UpdatedAt string   `dynamodbav:"updatedAt,omitempty"`
	Version   int64    `dynamodbav:"version"`
}

func newPublicationItem(p *Publication) publicationItem {
	k := keys.Directory(p.ID)
	return publicationItem{
		PK: k.PK, SK: k.SK, GSI1PK: keys.PublicationsPartition, GSI1SK: p.Slug,
		Type: typePublication, ID: p.ID, Slug: p.Slug, Title: p.Title, Hosts: p.Hosts, Status: p.Status,
		CreatedAt: keys.Time(p.CreatedAt), UpdatedAt: keys.Time(p.UpdatedAt), Version: p.Version,
	}
}

// publication returns the item's publication. A directory item the
// layout migration wrote has no status, title or version: it is active.
func (it *publicationItem) publication() *Publication {
	p := &Publication{ID: it.ID, Slug: it.Slug, Title: it.Title, Hosts: it.Hosts, Status: it.Status,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt), Version: it.Version}
	if p.Status == "" {
		p.Status = PublicationActive
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	return p
}

// claimItem gives a slug or a host to one publication.
type claimItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	PublicationID string `dynamodbav:"publicationId"`
	CreatedAt     string `dynamodbav:"createdAt"`
}

func newClaim(k key, typ, pubID string, at time.Time) claimItem {
	return claimItem{PK: k.PK, SK: k.SK, Type: typ, PublicationID: pubID, CreatedAt: keys.Time(at)}
}

// taken is the error of a slug or host another publication holds.
func taken(field, v string) error {
	return invalid(field, "%q is taken by another publication", v)
}

// CreatePublication creates a publication, its slug's claim, its hosts'
// claims and its posts' counter in one transaction, with its first
// owner's membership and the owners' count when in.Owner is given. A bad slug, title, host
// or owner's account id is a *ValidationError, and so is a slug or a
// host another publication holds (a race lost to another
// CreatePublication too); nothing is written then.
func (s *Store) CreatePublication(ctx context.Context, in NewPublication) (*Publication, error) {
	if err := firstErr(validateSlug("slug", in.Slug), validateLine("title", in.Title, MaxTitleLength), validateHosts(in.Hosts)); err != nil {
		return nil, err
	}
	now := s.Now()
	p := &Publication{ID: newID(), Slug: in.Slug, Title: in.Title, Hosts: slices.Clone(in.Hosts),
		Status: PublicationActive, CreatedAt: now, UpdatedAt: now, Version: 1}
	// The new publication's Store writes the transaction: the directory
	// and the claims are global items, the owner's membership is in its
	// key space, which the tenant guard of s's would refuse.
	ps, err := s.In(p.ID)
	if err != nil {
		return nil, err
	}
	t := ps.db.NewTxn()
	errs := []error{
		t.Put(newPublicationItem(p), ptr(dynamo.CondNotExists()), ErrAlreadyExists),
		t.Put(newClaim(keys.PublicationSlug(p.Slug), typePublicationSlug, p.ID, now), ptr(dynamo.CondNotExists()), taken("slug", p.Slug)),
	}
	for _, h := range p.Hosts {
		errs = append(errs, t.Put(newClaim(keys.Host(h), typePublicationHost, p.ID, now), ptr(dynamo.CondNotExists()), taken("hosts", h)))
	}
	// A new publication has no posts: its counter starts at 0, so its
	// first post need not count them (quotas.go).
	errs = append(errs, t.Put(postUsageItem{PK: ps.ks.PostUsage().PK, SK: ps.ks.PostUsage().SK, Type: typePostUsage, Posts: new(int64(0))}, nil, nil))
	if in.Owner != nil {
		owner := *in.Owner
		owner.Role = RoleOwner
		_, err := ps.putStaff(t, owner, now)
		errs = append(errs, err)
	}
	if err := firstErr(errs...); err != nil {
		return nil, err
	}
	if err := ps.db.Exec(ctx, t); err != nil {
		return nil, fmt.Errorf("create publication %q: %w", p.Slug, err)
	}
	return p, nil
}

// validateHosts checks the hosts of a new publication: each a host
// (validateHost), none twice, at most MaxPublicationHosts.
func validateHosts(hosts []string) error {
	if len(hosts) > MaxPublicationHosts {
		return invalid("hosts", "must be at most %d", MaxPublicationHosts)
	}
	for i, h := range hosts {
		if err := validateHost("hosts", h); err != nil {
			return err
		}
		if slices.Contains(hosts[:i], h) {
			return invalid("hosts", "names %q twice", h)
		}
	}
	return nil
}

// AddPublicationHost gives the publication in.ID the host in.Host: the
// host's claim and the directory item change in one transaction, on the
// condition that the directory item is as it was read. A host the
// publication has already is no change. A bad host, or one another
// publication holds, is a *ValidationError; a missing publication is
// ErrNotFound.
func (s *Store) AddPublicationHost(ctx context.Context, in PublicationHost) (*Publication, error) {
	if err := validateHost("host", in.Host); err != nil {
		return nil, err
	}
	return dynamo.RetryWrite(ctx, func() (*Publication, error) {
		it, err := s.publicationItem(ctx, in.ID, true)
		if err != nil {
			return nil, err
		}
		p := it.publication()
		if slices.Contains(p.Hosts, in.Host) {
			return p, nil
		}
		if len(p.Hosts) >= MaxPublicationHosts {
			return nil, invalid("host", "a publication has at most %d hosts", MaxPublicationHosts)
		}
		now := s.Now()
		t := s.db.NewTxn()
		err = firstErr(
			t.Put(newClaim(keys.Host(in.Host), typePublicationHost, p.ID, now), ptr(dynamo.CondNotExists()), taken("host", in.Host)),
			s.setHosts(t, it, append(slices.Clone(p.Hosts), in.Host), now),
		)
		if err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, fmt.Errorf("add host %q to publication %q: %w", in.Host, in.ID, err)
		}
		p.Hosts, p.UpdatedAt, p.Version = append(p.Hosts, in.Host), now, it.Version+1
		return p, nil
	})
}

// RemovePublicationHost takes the host in.Host from the publication
// in.ID: its claim is deleted and the directory item changes in one
// transaction. A host the publication does not have is ErrNotFound.
func (s *Store) RemovePublicationHost(ctx context.Context, in PublicationHost) (*Publication, error) {
	return dynamo.RetryWrite(ctx, func() (*Publication, error) {
		it, err := s.publicationItem(ctx, in.ID, true)
		if err != nil {
			return nil, err
		}
		p := it.publication()
		i := slices.Index(p.Hosts, in.Host)
		if i < 0 {
			return nil, fmt.Errorf("publication %q has no host %q: %w", in.ID, in.Host, ErrNotFound)
		}
		now := s.Now()
		t := s.db.NewTxn()
		hosts := slices.Delete(slices.Clone(p.Hosts), i, i+1)
		err = firstErr(
			t.Delete(keys.Host(in.Host), ptr(expression.Name("publicationId").Equal(expression.Value(p.ID))), nil),
			s.setHosts(t, it, hosts, now),
		)
		if err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, fmt.Errorf("remove host %q from publication %q: %w", in.Host, in.ID, err)
		}
		p.Hosts, p.UpdatedAt, p.Version = hosts, now, it.Version+1
		return p, nil
	})
}

// setHosts adds to t the update of it's hosts, on the condition that its
// version is the one read (else dynamo.ErrRetry: read again).
func (s *Store) setHosts(t *dynamo.Txn, it *publicationItem, hosts []string, now time.Time) error {
	var upd expression.UpdateBuilder
	if len(hosts) == 0 {
		upd = upd.Remove(expression.Name("hosts"))
	} else {
		upd = upd.Set(expression.Name("hosts"), expression.Value(hosts))
	}
	return s.versioned(t, it, upd, now)
}

// publicationItem reads the directory item of the publication id: one
// GetItem. A missing one, or an id that no publication can have, is
// ErrNotFound.
func (s *Store) publicationItem(ctx context.Context, id string, consistent bool) (*publicationItem, error) {
	if _, err := keys.In(id); err != nil {
		return nil, fmt.Errorf("publication %q: %w", id, ErrNotFound)
	}
	it := &publicationItem{}
	if err := s.db.Get(ctx, keys.Directory(id), consistent, it); err != nil {
		return nil, fmt.Errorf("publication %q: %w", id, err)
	}
	return it, nil
}

// GetPublication returns the publication id: one GetItem. A missing one
// is ErrNotFound.
func (s *Store) GetPublication(ctx context.Context, id string) (*Publication, error) {
	it, err := s.publicationItem(ctx, id, false)
	if err != nil {
		return nil, err
	}
	return it.publication(), nil
}

// CurrentPublication is GetPublication read strongly consistently, so a
// site built after the change feed's publication.updated shows that
// write, not the one before it, for as long as the site is held.
func (s *Store) CurrentPublication(ctx context.Context, id string) (*Publication, error) {
	it, err := s.publicationItem(ctx, id, true)
	if err != nil {
		return nil, err
	}
	return it.publication(), nil
}

// PublicationBySlug returns the publication whose slug is slug: two
// GetItems (the claim, then the directory item). None is ErrNotFound.
func (s *Store) PublicationBySlug(ctx context.Context, slug string) (*Publication, error) {
	id, err := s.claimOf(ctx, keys.PublicationSlug(slug), false)
	if err != nil {
		return nil, fmt.Errorf("publication slug %q: %w", slug, err)
	}
	return s.GetPublication(ctx, id)
}

// PublicationIDBySlug returns the id of the publication whose slug is
// slug: one strongly consistent GetItem of the slug's claim, so a lookup
// made after the change feed's publication.updated sees its write (the
// router holds what it returns until the next). None is ErrNotFound.
func (s *Store) PublicationIDBySlug(ctx context.Context, slug string) (string, error) {
	id, err := s.claimOf(ctx, keys.PublicationSlug(slug), true)
	if err != nil {
		return "", fmt.Errorf("publication slug %q: %w", slug, err)
	}
	return id, nil
}

// PublicationIDByHost returns the id of the publication served at host:
// one strongly consistent GetItem of the host's claim, as
// PublicationIDBySlug. None is ErrNotFound.
func (s *Store) PublicationIDByHost(ctx context.Context, host string) (string, error) {
	id, err := s.claimOf(ctx, keys.Host(host), true)
	if err != nil {
		return "", fmt.Errorf("host %q: %w", host, err)
	}
	return id, nil
}

// PublicationByHost returns the publication served at host: two GetItems
// (the claim, then the directory item). None is ErrNotFound.
func (s *Store) PublicationByHost(ctx context.Context, host string) (*Publication, error) {
	id, err := s.claimOf(ctx, keys.Host(host), false)
	if err != nil {
		return nil, fmt.Errorf("host %q: %w", host, err)
	}
	return s.GetPublication(ctx, id)
}

// claimOf returns the publication id of the claim k, read strongly
// consistently when consistent is true.
func (s *Store) claimOf(ctx context.Context, k key, consistent bool) (string, error) {
	var c claimItem
	if err := s.db.Get(ctx, k, consistent, &c); err != nil {
		return "", err
	}
	return c.PublicationID, nil
}

// ListPublications returns the platform's publications by slug: a Query
// of GSI1 partition PUBLICATIONS.
func (s *Store) ListPublications(ctx context.Context, p PageArgs) (*Result[*Publication], error) {
	return queryPage(ctx, s, listQuery{
		list: "publications", index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(keys.PublicationsPartition)),
	}, p, (*publicationItem).publication)
}

// ensureDirectory puts the Store's own publication in the directory when
// it is not there whole: the directory item (which the layout migration
// writes without the GSI1 attributes of the list) and its slug's claim.
// It is idempotent and costs two GetItems when there is nothing to do; servers that race each write the same items.
func (s *Store) ensureDirectory(ctx context.Context) error {
	id := s.ks.ID()
	it := &publicationItem{ID: id, Slug: id, Title: id, CreatedAt: keys.Time(s.Now())}
	if err := s.db.Get(ctx, keys.Directory(id), true, it); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("read the directory: %w", err)
	}
	slugKey := keys.PublicationSlug(it.Slug)
	var claim claimItem
	err := s.db.Get(ctx, slugKey, true, &claim)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("read the directory: %w", err)
	}
	haveSlug := err == nil
	if it.GSI1PK != "" && haveSlug {
		return nil
	}
	t := s.db.NewTxn()
	if it.GSI1PK == "" {
		p := it.publication()
		if err := t.Put(newPublicationItem(p), ptr(expression.AttributeNotExists(expression.Name(keys.AttrGSI1PK))), nil); err != nil {
			return err
		}
	}
	if !haveSlug {
		cond := dynamo.CondNotExists().Or(expression.Name("publicationId").Equal(expression.Value(id)))
		if err := t.Put(newClaim(slugKey, typePublicationSlug, id, keys.ParseTime(it.CreatedAt)), &cond, nil); err != nil {
			return err
		}
	}
	if err := s.db.Exec(ctx, t); err != nil && !errors.Is(err, dynamo.ErrRetry) {
		return fmt.Errorf("write the directory: %w", err)
	}
	return nil
}
