package graph

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
)

// Who may do what. Reading published content needs no token. Every
// mutation needs an actor with a role (UNAUTHENTICATED without a token,
// FORBIDDEN without a role); which actor may change what is checked before
// the write is sent, so a refused mutation writes nothing. Admins are a
// principal of their own: every administrative action (authors,
// categories, anyone's posts and comments, moderation) is theirs whatever
// their subject, while a post is written as the token's subject, which
// must be an author (FORBIDDEN otherwise, see asSubject). Any signed-in
// actor that is not an author is a reader: it may comment, and edit and
// delete its own comments; a pending or rejected comment is NOT_FOUND for
// anyone but its writer, the post's author and admins. A draft or a
// scheduled post is NOT_FOUND, not FORBIDDEN, for anyone but its author
// and admins, so its existence does not leak.

// withActor attaches the actor of every request's bearer token to its
// context. A request without a token is anonymous. A request whose token
// is invalid gets 401 with an UNAUTHENTICATED error, whatever it asks,
// reads included: a client that sends a token expects to act as someone,
// and answering it as the anonymous would hide the failure; an empty
// Authorization header is such a token. Two Authorization headers are 400.
// When the identity provider's keys cannot be fetched, the answer is 503.
func withActor(v *auth.Verifier, logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		actor, err := v.Authenticate(r)
		switch {
		case errors.Is(err, auth.ErrAmbiguousCredentials):
			gqlhttp.WriteError(w, http.StatusBadRequest, "send one Authorization header", CodeBadRequest)
		case errors.Is(err, auth.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			gqlhttp.WriteError(w, http.StatusUnauthorized, err.Error(), CodeUnauthenticated)
		case err != nil:
			logger.ErrorContext(r.Context(), "token not verified", "err", err)
			gqlhttp.WriteError(w, http.StatusServiceUnavailable, internalMessage, CodeInternal)
		default:
			next.ServeHTTP(w, r.WithContext(auth.WithActor(r.Context(), actor)))
		}
	})
}

var errNoToken = fmt.Errorf(`%w: send "Authorization: Bearer <token>"`, auth.ErrUnauthenticated)

// author returns the actor of ctx when it may write as an author. It
// returns an error wrapping auth.ErrUnauthenticated for the anonymous and
// auth.ErrForbidden for an actor with neither role.
func author(ctx context.Context) (auth.Actor, error) {
	a := auth.ActorFrom(ctx)
	switch {
	case a.Anonymous():
		return a, errNoToken
	case !a.IsAuthor():
		return a, fmt.Errorf("%w: the token has neither the author nor the admin role", auth.ErrForbidden)
	}
	return a, nil
}

// admin returns nil when the actor of ctx is an admin, else an error as
// author does, or one wrapping auth.ErrForbidden.
func admin(ctx context.Context) error {
	a, err := author(ctx)
	if err == nil && !a.Manages() {
		err = fmt.Errorf("%w: admins only", auth.ErrForbidden)
	}
	return err
}

// publisher returns nil unless the actor of ctx is a contributor of the
// publication, who writes drafts only: then an error wrapping
// auth.ErrForbidden.
func publisher(ctx context.Context) error {
	if !auth.ActorFrom(ctx).Publishes() {
		return fmt.Errorf("%w: a contributor writes drafts only; an author or editor publishes them", auth.ErrForbidden)
	}
	return nil
}

// actsFor returns nil when the actor of ctx may act for the author
// authorID: it is that author, or an admin. Otherwise it returns an error
// as admin does; what names who may.
func actsFor(ctx context.Context, authorID, what string) error {
	a, err := author(ctx)
	if err == nil && !a.Acts(authorID) {
		err = fmt.Errorf("%w: only %s or an admin may do this", auth.ErrForbidden, what)
	}
	return err
}

// idempotencyKey returns the key the store records a mutation under: the
// client's key k scoped to the actor of ctx, a hash of both, so that keys
// of different users never meet and no one gets another's recorded result
// by sending their key. An empty key stays empty; an invalid one goes to
// the store as it is, which refuses it naming the field.
func idempotencyKey(ctx context.Context, k *string) string {
	key := deref(k)
	if key == "" || !storage.ValidIdempotencyKey(key) {
		return key
	}
	sum := sha256.Sum256([]byte(auth.ActorFrom(ctx).ID + "\n" + key))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// retried reports whether a check that found nothing (err) should let the
// write go on to the store anyway: when the request has an idempotency
// key, what it wants gone may be gone because it was sent before, and its
// retry must get the recorded result. The store replays it, or finds
// nothing either and says so; it writes nothing to what does not exist.
func retried(err error, key *string) bool {
	return errors.Is(err, storage.ErrNotFound) && deref(key) != ""
}

// signedIn returns the actor of ctx, or an error wrapping
// auth.ErrUnauthenticated for the anonymous.
func signedIn(ctx context.Context) (auth.Actor, error) {
	a := auth.ActorFrom(ctx)
	if a.Anonymous() {
		return a, errNoToken
	}
	return a, nil
}
