package graph

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

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
	if err == nil && !a.IsAdmin() {
		err = fmt.Errorf("%w: admins only", auth.ErrForbidden)
	}
	return err
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

// asSubject turns storage's complaint about an author id the caller never
// typed, the token's subject, into what it means: the token is not one of
// an author.
func asSubject(err error) error {
	if ve, ok := errors.AsType[*storage.ValidationError](err); ok && ve.Field == "authorId" {
		return fmt.Errorf("%w: the token's subject is not an author", auth.ErrForbidden)
	}
	return err
}

// sees reports whether the actor of ctx may read p: anyone a public post,
// only its author and admins a draft or a scheduled post.
func (r *Resolver) sees(ctx context.Context, p *storage.Post) bool {
	return p.VisibleAt(r.store.Now()) || auth.ActorFrom(ctx).Acts(p.AuthorID)
}

// visible returns a filter for a post read and its error: it passes the
// post when the actor of ctx may see it, else returns ErrNotFound.
func (r *Resolver) visible(ctx context.Context) func(*storage.Post, error) (*storage.Post, error) {
	return func(p *storage.Post, err error) (*storage.Post, error) {
		if err != nil {
			return nil, err
		}
		if !r.sees(ctx, p) {
			return nil, fmt.Errorf("post %q: %w", p.ID, storage.ErrNotFound)
		}
		return p, nil
	}
}

// ownPost returns the id of the post the global id gid names once the
// actor of ctx may change it: its author or an admin. Others get FORBIDDEN
// for a public post and NOT_FOUND for one they cannot see; a bad id is a
// *storage.ValidationError, after the anonymous got UNAUTHENTICATED.
// Admins need no read. The post is read with ConsistentRead, not through
// the request's loader: a post written a moment ago must be found, and the
// loader would keep the post as it was before the write for the payload's
// fields. A post's author never changes, so the check cannot go stale
// before the write. See retried for a post that is gone.
func (r *Resolver) ownPost(ctx context.Context, gid string, idemKey *string) (string, error) {
	a, err := author(ctx)
	if err != nil {
		return "", err
	}
	id, err := decodeIDOf("id", gid, kindPost)
	if err != nil || a.IsAdmin() {
		return id, err
	}
	p, err := r.store.ReadPost(ctx, id)
	if retried(err, idemKey) {
		return id, nil
	}
	if p, err = r.visible(ctx)(p, err); err != nil {
		return "", err
	}
	return id, actsFor(ctx, p.AuthorID, "the post's author")
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

// writer sets who writes the comment in: an actor with the author or
// admin role writes as the author its subject names, and any other actor,
// or one whose subject names no author, as a reader shown by its token's
// name and picture. A reader's comment is held and counted as the
// resolver's CommentPolicy says; an admin's never is.
func (r *Resolver) writer(a auth.Actor, in *storage.NewComment) {
	in.Reader = readerProfile(a)
	if a.IsAuthor() {
		in.AuthorID = a.ID
	}
	in.Rules = r.readers
	if a.IsAdmin() {
		in.Rules = storage.ReaderRules{Unchecked: true}
	}
}

// readerProfile returns the reader the token of a signs in, as its claims
// show them.
func readerProfile(a auth.Actor) *storage.ReaderProfile {
	return &storage.ReaderProfile{ID: a.ID, Name: a.Name, AvatarURL: a.Picture}
}

// asReader turns storage's complaint about a reader id the caller never
// typed, the token's subject, into what it means: the token cannot sign
// in a reader.
func asReader(err error) error {
	if ve, ok := errors.AsType[*storage.ValidationError](err); ok && ve.Field == "readerId" {
		return fmt.Errorf("%w: the token's subject cannot be a reader's id (%s)", auth.ErrForbidden, ve.Reason)
	}
	return err
}

// writes reports whether the actor a wrote the comment c: an author's
// comment needs a token that may act as that author, a reader's the
// reader's subject.
func writes(a auth.Actor, c *storage.Comment) bool {
	switch {
	case a.Anonymous():
		return false
	case c.AuthorID != "":
		return a.IsAuthor() && a.ID == c.AuthorID
	}
	return c.ReaderID == a.ID
}

// seesComment reports whether the actor of ctx may read the comment c of
// the post p it may read: anyone a published comment, only its writer and
// the post's moderators (its author and admins) a pending or rejected one.
func seesComment(ctx context.Context, c *storage.Comment, p *storage.Post) bool {
	a := auth.ActorFrom(ctx)
	return c.Status == storage.CommentPublished || writes(a, c) || a.Acts(p.AuthorID)
}

// seenComment returns a filter for a comment read and its error: it
// passes the comment when the actor of ctx may see it on the post p,
// else returns ErrNotFound, so a held comment's existence does not leak.
func (r *Resolver) seenComment(ctx context.Context, p *storage.Post) func(*storage.Comment, error) (*storage.Comment, error) {
	return func(c *storage.Comment, err error) (*storage.Comment, error) {
		if err != nil {
			return nil, err
		}
		if !seesComment(ctx, c, p) {
			return nil, fmt.Errorf("comment %q: %w", c.ID, storage.ErrNotFound)
		}
		return c, nil
	}
}

// commentRight is what a comment mutation needs of its actor.
type commentRight int

const (
	// mayEdit: the comment's writer or an admin.
	mayEdit commentRight = iota
	// mayDelete: the comment's writer, the post's author or an admin.
	mayDelete
	// mayModerate: the post's author or an admin.
	mayModerate
)

// commentFor returns the comment the global id gid names once the actor
// of ctx has the right to change it, even when the post went back to
// being a draft. hidden is true when the actor may change the comment but
// not see its post (a writer whose comment is on a post that is a draft
// again): what is written is then not shown. The anonymous get UNAUTHENTICATED; those who may see the
// comment but not change it FORBIDDEN; the others, who may not see its
// post or, held, the comment itself, NOT_FOUND. Admins need no read. The
// comment and its post are read as ownPost reads a post, and one that is
// gone lets a retry with an idempotency key through (see retried).
func (r *Resolver) commentFor(ctx context.Context, gid string, idemKey *string, right commentRight) (key storage.CommentKey, hidden bool, err error) {
	a, err := signedIn(ctx)
	if err != nil {
		return storage.CommentKey{}, false, err
	}
	key, err = decodeCommentID("id", gid)
	if err != nil || a.IsAdmin() {
		return key, false, err
	}
	c, p, err := r.store.ReadComment(ctx, key)
	switch {
	case retried(err, idemKey):
		// A retry of a delete that happened: whether the post is visible
		// is read again for the answer.
		return key, !r.postVisible(ctx, key.PostID), nil
	case err != nil:
		return key, false, err
	}
	writer, moderator := writes(a, c), a.Acts(p.AuthorID)
	allowed := map[commentRight]bool{
		mayEdit:     writer,
		mayDelete:   writer || moderator,
		mayModerate: moderator,
	}[right]
	switch {
	case allowed:
		return key, !moderator && !r.sees(ctx, p), nil
	case !writer && !moderator && (!r.sees(ctx, p) || c.Status != storage.CommentPublished):
		return key, false, fmt.Errorf("comment %q: %w", key.CommentID, storage.ErrNotFound)
	}
	who := map[commentRight]string{
		mayEdit:     "the comment's writer or an admin",
		mayDelete:   "the comment's writer, the post's author or an admin",
		mayModerate: "the post's author or an admin",
	}[right]
	return key, false, fmt.Errorf("%w: only %s may do this", auth.ErrForbidden, who)
}

// postShownAfterWrite reports whether a mutation's payload may show the
// comment it wrote on the post with id, when the payload asks for the
// comment's post: the post is read after the write into the request's
// loader (primed: no batch window), so the post field reads the same post
// and a post deleted or hidden meanwhile hides the comment instead of
// failing that field. A payload that does not ask for the post needs no
// read.
func (r *Resolver) postShownAfterWrite(ctx context.Context, id string) bool {
	if !graphql.FieldRequested(ctx, "comment.post") {
		return true
	}
	l := loadersFor(ctx)
	l.primeAhead(ctx, []string{primedPostKey(id)}, func(ctx context.Context, _ []int) {
		prime(ctx, "posts", l.posts, r.store.GetPosts, []string{id})
	})
	l.ahead.await(primedPostKey(id))
	p, err := l.posts.Load(ctx, id)()
	return err == nil && r.sees(ctx, p)
}

// postVisible reports whether the actor of ctx may see the post with id,
// read as a check before a write is: false when it is gone.
func (r *Resolver) postVisible(ctx context.Context, id string) bool {
	p, err := r.store.ReadPost(ctx, id)
	return err == nil && r.sees(ctx, p)
}
