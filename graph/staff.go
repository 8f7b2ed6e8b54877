package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// A publication's staff. A token bound to a publication (its pub claim)
// names an account; its role is the account's in the publication's staff
// (storage/staff.go), read once a request and held by the server until
// the change feed brings a change of it (at most 5 seconds), never the
// token's alone. The role maps to the checks made of every actor
// (auth.Actor.InPublication): owners, admins and editors are admins,
// except where the publication is managed (manages), authors and
// contributors are authors, and contributors publish nothing. A token
// not bound to a publication is the default publication's: there it
// keeps its roles' meaning (an admin token administers as before and
// counts as an owner of the staff); on any other publication its staff
// roles (admin, author) are refused (errDefaultOnly), and a platform
// admin's token keeps only its platform role there.

// errOtherPublication is the error of a token bound to a publication used
// on another.
var errOtherPublication = fmt.Errorf("%w: the token is bound to another publication", auth.ErrForbidden)

// errOtherSession is the error of a reader session's token used on
// another publication than the one it was made on.
var errOtherSession = fmt.Errorf("%w: the session was made on another publication; sign in on this one", auth.ErrForbidden)

// errDefaultOnly is the error of a staff token bound to no publication
// used on a publication other than the default one.
var errDefaultOnly = fmt.Errorf("%w: the token is for the default publication; use a token bound to this publication", auth.ErrForbidden)

// errNotStaff is the error of a token bound to the publication whose
// account is not (or no more) on its staff.
var errNotStaff = fmt.Errorf("%w: the token's account is not on this publication's staff", auth.ErrForbidden)

// staffActor returns a with its role in the publication of store (whose
// slug is slug) when its token is bound to one: one GetItem of its
// membership, none while the server holds it. A token bound to another
// publication is errOtherPublication, one whose account is not on the
// staff errNotStaff, a reader session's made on another publication
// errOtherSession; a token bound to none is unboundActor's.
func staffActor(ctx context.Context, store *storage.Store, slug string, a auth.Actor) (auth.Actor, error) {
	if a.SessionPublication != "" && a.SessionPublication != store.Publication() {
		return a, errOtherSession
	}
	if !a.Scoped() {
		return unboundActor(store, a)
	}
	if a.Publication != store.Publication() && a.Publication != slug {
		return a, errOtherPublication
	}
	role, err := store.StaffRoleOf(ctx, a.ID)
	if err != nil {
		return a, err
	}
	if role == "" {
		return a, errNotStaff
	}
	return a.InPublication(strings.ToLower(string(role))), nil
}

// unboundActor returns the actor of a token bound to no publication on
// store's publication: as it is on the default publication, or when it
// has no staff role (a reader's); else a platform admin's without its
// staff roles, and errDefaultOnly for anyone else.
func unboundActor(store *storage.Store, a auth.Actor) (auth.Actor, error) {
	staff := a.IsAdmin() || a.HasRole(auth.RoleAuthor)
	switch {
	case !staff || store.Publication() == storage.DefaultPublication:
		return a, nil
	case !a.IsPlatformAdmin():
		return a, errDefaultOnly
	}
	a.Roles = slices.DeleteFunc(slices.Clone(a.Roles), func(r string) bool { return r == auth.RoleAdmin || r == auth.RoleAuthor })
	return a, nil
}

// withStaff gives the actor of a request whose token is bound to a
// publication its role there (staffActor). A token of another
// publication, or of an account not on the staff, is 403 with FORBIDDEN
// and the reason, whatever the request asks, and nothing is read or
// written; the staff failing to be read is 503.
func withStaff(store *storage.Store, slug string, logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := staffActor(r.Context(), store, slug, auth.ActorFrom(r.Context()))
		switch {
		case errors.Is(err, auth.ErrForbidden):
			gqlhttp.WriteError(w, http.StatusForbidden, err.Error(), CodeForbidden)
		case err != nil:
			logger.ErrorContext(r.Context(), "staff role not read", "err", err)
			gqlhttp.WriteError(w, http.StatusServiceUnavailable, internalMessage, CodeInternal)
		default:
			next.ServeHTTP(w, r.WithContext(auth.WithActor(r.Context(), a)))
		}
	})
}

// staffInit is init with the actor's role in the publication, as
// withStaff gives it to requests: a subscription's connection with a
// token of another publication is refused.
func staffInit(init func(context.Context, map[string]any) (context.Context, error), store *storage.Store, slug string) func(context.Context, map[string]any) (context.Context, error) {
	return func(ctx context.Context, payload map[string]any) (context.Context, error) {
		ctx, err := init(ctx, payload)
		if err != nil {
			return ctx, err
		}
		a, err := staffActor(ctx, store, slug, auth.ActorFrom(ctx))
		if err != nil {
			return ctx, err
		}
		return auth.WithActor(ctx, a), nil
	}
}

// staffManager returns the publication id or slug ref names and its
// Store, when the actor of ctx may manage its staff: a platform admin, an
// admin token bound to no publication for the default publication only
// (errDefaultOnly for another), or an owner or admin of it
// (through a token bound to it). It returns whether the actor may manage
// owners too; NOT_FOUND for no such publication. The request's own
// publication, by id, costs no read; another costs one GetItem by id, or
// three by slug.
func (r *Resolver) staffManager(ctx context.Context, ref string) (*storage.Store, bool, error) {
	a := auth.ActorFrom(ctx)
	if a.Anonymous() {
		return nil, false, errNoToken
	}
	st, slug := r.store, ""
	if ref != r.store.Publication() {
		p, err := r.store.GetPublication(ctx, ref)
		if errors.Is(err, storage.ErrNotFound) {
			p, err = r.store.PublicationBySlug(ctx, ref)
		}
		if err != nil {
			return nil, false, fmt.Errorf("publication %q: %w", ref, err)
		}
		if err := served(ctx, p); err != nil {
			return nil, false, err
		}
		if st, err = r.store.In(p.ID); err != nil {
			return nil, false, err
		}
		slug = p.Slug
	}
	if a.Scoped() && slug == "" && a.Publication != st.Publication() {
		// A token bound by slug, naming the host's own publication by id.
		p, err := r.store.GetPublication(ctx, st.Publication())
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, false, fmt.Errorf("publication %q: %w", ref, err)
		}
		if p != nil {
			slug = p.Slug
		}
	}
	owner := a.IsPlatformAdmin() || (a.IsAdmin() && !a.Scoped())
	switch {
	case a.Scoped() && a.Publication != st.Publication() && a.Publication != slug:
		return nil, false, errOtherPublication
	case !a.IsPlatformAdmin() && !a.Scoped() && a.IsAdmin() && st.Publication() != storage.DefaultPublication:
		return nil, false, errDefaultOnly
	case !owner && !a.Manages():
		return nil, false, fmt.Errorf("%w: only the publication's owners and admins manage its staff", auth.ErrForbidden)
	}
	return st, owner || a.PubRole == auth.PubOwner, nil
}

// errOwnersOnly is the error of an admin granting, changing or removing
// an owner.
var errOwnersOnly = fmt.Errorf("%w: only owners make, change or remove owners", auth.ErrForbidden)

func (r *Resolver) addPublicationMember(ctx context.Context, in model.AddPublicationMemberInput) (*model.PublicationMemberPayload, error) {
	st, owner, err := r.staffManager(ctx, in.Publication)
	if err != nil {
		return nil, err
	}
	if in.Role == storage.RoleOwner && !owner {
		return nil, errOwnersOnly
	}
	ns := storage.NewStaff{Role: in.Role}
	switch {
	case (in.Account == nil) == (in.Email == nil):
		return nil, &storage.ValidationError{Field: "account", Reason: "give exactly one of account and email"}
	case in.Account != nil:
		ns.AccountID = *in.Account
	default:
		if ns.AccountID, err = r.store.AccountIDByEmail(ctx, *in.Email); err != nil {
			return nil, err
		}
		ns.Email = strings.ToLower(*in.Email)
	}
	m, err := st.AddStaff(ctx, ns)
	if err != nil {
		return nil, err
	}
	return &model.PublicationMemberPayload{Member: m}, nil
}

func (r *Resolver) changePublicationMemberRole(ctx context.Context, in model.ChangePublicationMemberRoleInput) (*model.PublicationMemberPayload, error) {
	st, owner, err := r.staffManager(ctx, in.Publication)
	if err != nil {
		return nil, err
	}
	m, err := st.ChangeStaffRole(ctx, in.Account, in.Role, func(m *storage.StaffMember) error {
		if !owner && (m.Role == storage.RoleOwner || in.Role == storage.RoleOwner) {
			return errOwnersOnly
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &model.PublicationMemberPayload{Member: m}, nil
}

func (r *Resolver) removePublicationMember(ctx context.Context, in model.RemovePublicationMemberInput) (*model.PublicationMemberPayload, error) {
	st, owner, err := r.staffManager(ctx, in.Publication)
	if err != nil {
		return nil, err
	}
	m, err := st.RemoveStaff(ctx, in.Account, func(m *storage.StaffMember) error {
		if !owner && m.Role == storage.RoleOwner {
			return errOwnersOnly
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &model.PublicationMemberPayload{Member: m}, nil
}

func (r *Resolver) publicationMembers(ctx context.Context, ref string, first *int, after *string) (*model.PublicationMemberConnection, error) {
	st, _, err := r.staffManager(ctx, ref)
	if err != nil {
		return nil, err
	}
	p, err := pageOf(first, after, nil, nil)
	if err != nil {
		return nil, err
	}
	res, err := st.StaffMembers(ctx, p)
	if err != nil {
		return nil, err
	}
	return &model.PublicationMemberConnection{
		Edges: edges(res, func(c string, n *storage.StaffMember) *model.PublicationMemberEdge {
			return &model.PublicationMemberEdge{Cursor: c, Node: n}
		}),
		PageInfo: pageInfo(res),
	}, nil
}
