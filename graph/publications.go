package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// platformAdmin returns nil when the actor of ctx is a platform admin (a
// token with the platform role), else an error wrapping
// auth.ErrUnauthenticated or auth.ErrForbidden.
func platformAdmin(ctx context.Context) error {
	a := auth.ActorFrom(ctx)
	switch {
	case a.Anonymous():
		return errNoToken
	case !a.IsPlatformAdmin():
		return fmt.Errorf("%w: platform admins only (a token with the %s role)", auth.ErrForbidden, auth.RolePlatform)
	}
	return nil
}

// publication answers Query.publication: by slug or by host, exactly one
// of them; none found is null.
func (r *Resolver) publication(ctx context.Context, slug, host *string) (*storage.Publication, error) {
	if (slug == nil) == (host == nil) {
		return nil, &storage.ValidationError{Field: "slug", Reason: "give exactly one of slug and host"}
	}
	var p *storage.Publication
	var err error
	if slug != nil {
		p, err = r.store.PublicationBySlug(ctx, *slug)
	} else {
		p, err = r.store.PublicationByHost(ctx, *host)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := served(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// served returns storage.ErrPublicationSuspended when p is suspended and
// the actor of ctx is not a platform admin, who reads and manages a
// suspended publication as any other.
func served(ctx context.Context, p *storage.Publication) error {
	if p.Suspended() && !auth.ActorFrom(ctx).IsPlatformAdmin() {
		return fmt.Errorf("publication %q: %w", p.Slug, storage.ErrPublicationSuspended)
	}
	return nil
}

// publicationLocales answers Publication.locales: through the request's
// loader, so a page of publications reads their settings in one
// BatchGetItem.
func (r *Resolver) publicationLocales(ctx context.Context, p *storage.Publication) ([]string, error) {
	return loadersFor(ctx).publicationLocales.Load(ctx, p.ID)()
}

// publications answers Query.publications, for platform admins.
func (r *Resolver) publications(ctx context.Context, first *int, after *string) (*model.PublicationConnection, error) {
	if err := platformAdmin(ctx); err != nil {
		return nil, err
	}
	p, err := pageOf(first, after, nil, nil)
	if err != nil {
		return nil, err
	}
	res, err := r.store.ListPublications(ctx, p)
	if err != nil {
		return nil, err
	}
	return &model.PublicationConnection{
		Edges: edges(res, func(c string, n *storage.Publication) *model.PublicationEdge {
			return &model.PublicationEdge{Cursor: c, Node: n}
		}),
		PageInfo: pageInfo(res),
	}, nil
}

func (r *Resolver) createPublication(ctx context.Context, in model.CreatePublicationInput) (*model.CreatePublicationPayload, error) {
	if err := platformAdmin(ctx); err != nil {
		return nil, err
	}
	np := storage.NewPublication{Slug: in.Slug, Title: in.Title, Hosts: in.Hosts}
	switch {
	case in.OwnerAccount != nil && in.OwnerEmail != nil:
		return nil, &storage.ValidationError{Field: "ownerAccount", Reason: "give at most one of ownerAccount and ownerEmail"}
	case in.OwnerAccount != nil:
		np.Owner = &storage.NewStaff{AccountID: *in.OwnerAccount}
	case in.OwnerEmail != nil:
		id, err := r.store.AccountIDByEmail(ctx, *in.OwnerEmail)
		if err != nil {
			return nil, fmt.Errorf("owner: %w", err)
		}
		np.Owner = &storage.NewStaff{AccountID: id, Email: strings.ToLower(*in.OwnerEmail)}
	}
	p, err := r.store.CreatePublication(ctx, np)
	if ve, ok := errors.AsType[*storage.ValidationError](err); ok && ve.Field == "account" {
		ve.Field = "ownerAccount"
	}
	if err != nil {
		return nil, err
	}
	return &model.CreatePublicationPayload{Publication: p}, nil
}

func (r *Resolver) addPublicationHost(ctx context.Context, in model.AddPublicationHostInput) (*model.AddPublicationHostPayload, error) {
	if err := platformAdmin(ctx); err != nil {
		return nil, err
	}
	p, err := r.store.AddPublicationHost(ctx, storage.PublicationHost{ID: in.ID, Host: in.Host})
	if err != nil {
		return nil, err
	}
	return &model.AddPublicationHostPayload{Publication: p}, nil
}

func (r *Resolver) removePublicationHost(ctx context.Context, in model.RemovePublicationHostInput) (*model.RemovePublicationHostPayload, error) {
	if err := platformAdmin(ctx); err != nil {
		return nil, err
	}
	p, err := r.store.RemovePublicationHost(ctx, storage.PublicationHost{ID: in.ID, Host: in.Host})
	if err != nil {
		return nil, err
	}
	return &model.RemovePublicationHostPayload{Publication: p}, nil
}

func (r *Resolver) setPublicationStatus(ctx context.Context, in model.SetPublicationStatusInput) (*model.SetPublicationStatusPayload, error) {
	if err := platformAdmin(ctx); err != nil {
		return nil, err
	}
	status, ok := publicationStatuses[in.Status]
	if !ok {
		return nil, &storage.ValidationError{Field: "status", Reason: "must be ACTIVE or SUSPENDED"}
	}
	p, err := r.store.SetPublicationStatus(ctx, in.ID, status)
	if err != nil {
		return nil, err
	}
	return &model.SetPublicationStatusPayload{Publication: p}, nil
}

// updatePublication renames the publication in.ID names, for those who
// manage its staff (staffManager): its owners and admins, and platform
// admins.
func (r *Resolver) updatePublication(ctx context.Context, in model.UpdatePublicationInput) (*model.UpdatePublicationPayload, error) {
	st, _, err := r.staffManager(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	p, err := r.store.SetPublicationTitle(ctx, st.Publication(), in.Title)
	if err != nil {
		return nil, err
	}
	return &model.UpdatePublicationPayload{Publication: p}, nil
}

// publicationStatuses maps the schema's statuses to the store's.
var publicationStatuses = map[model.PublicationStatus]string{
	model.PublicationStatusActive:    storage.PublicationActive,
	model.PublicationStatusSuspended: storage.PublicationSuspended,
}

// publicationStatus maps a publication's status to the schema's enum.
func publicationStatus(p *storage.Publication) (model.PublicationStatus, error) {
	for s, st := range publicationStatuses {
		if st == p.Status {
			return s, nil
		}
	}
	return "", fmt.Errorf("publication %q has status %q", p.ID, p.Status)
}
