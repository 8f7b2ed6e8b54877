// Package auth verifies the bearer tokens of API requests and carries who
// sent a request, the Actor, through its context.
//
// Tokens are JWTs: HS256 signed with a shared secret, or RS256 and ES256
// signed by an identity provider that publishes its keys as a JWKS. The
// subject (sub) names the principal and the roles claim lists its roles:
// "admin", "author", "reader". "author" writes as the author whose id is
// the subject. "admin" is a principal of its own: it administers the blog
// whatever its subject, and writes a post only as its subject, which must
// then be an author. Any other signed-in person is a reader, shown by the
// standard claims name and picture. Other roles may be added; an actor has
// those its token lists. Issuer, audience and expiry are checked.
package auth

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Sentinel errors. Callers compare with errors.Is.
var (
	// ErrUnauthenticated means the request carries no valid token where
	// one is needed, or carries an invalid one.
	ErrUnauthenticated = errors.New("authentication required")
	// ErrForbidden means the actor is known but may not do what it asked.
	ErrForbidden = errors.New("not allowed")
)

// Roles a token's roles claim may list.
const (
	// RoleAdmin may do every administrative action, whatever its subject.
	RoleAdmin = "admin"
	// RoleAuthor may write posts and comments as itself.
	RoleAuthor = "author"
	// RoleReader may comment, and edit and delete its own comments. A
	// token with no other role is a reader's too.
	RoleReader = "reader"
	// RolePlatform may create publications and give them hosts: the
	// platform's operators. Only the staff key signs it; it grants
	// nothing inside a publication (that takes admin).
	RolePlatform = "platform"
)

// Actor is who sent a request: the token's subject (an author's id, or a
// reader's), its roles, and the display name and picture URL its name and
// picture claims give, empty when absent. The zero Actor is anonymous.
// Expires is when the token expires (its exp claim), zero for none: a
// subscription ends then.
type Actor struct {
	ID      string
	Roles   []string
	Name    string
	Picture string
	Expires time.Time
	// Session is the id of the reader session a token of the reader key
	// was issued for (its sid claim); empty for any other token.
	Session string
	// SessionPublication is the publication a reader session's token
	// was issued on (its pub claim), empty for a token of no session or
	// issued before sessions named one; such a token is refused on any
	// other publication.
	SessionPublication string
	// Publication is the publication a staff token is bound to (its pub
	// claim, an id or a slug), empty for a token valid on any; PubRole
	// is the actor's role there once read from its staff (InPublication).
	Publication string
	PubRole     string
}

// Anonymous reports whether the request came without a token.
func (a Actor) Anonymous() bool { return a.ID == "" }

// HasRole reports whether the actor's token lists role.
func (a Actor) HasRole(role string) bool { return !a.Anonymous() && slices.Contains(a.Roles, role) }

// IsAdmin reports whether the actor has the admin role.
func (a Actor) IsAdmin() bool { return a.HasRole(RoleAdmin) }

// IsPlatformAdmin reports whether the actor has the platform role.
func (a Actor) IsPlatformAdmin() bool { return a.HasRole(RolePlatform) }

// IsAuthor reports whether the actor may write as the author its subject
// names: with the author role, or as an admin (the write then still needs
// the subject to be an author).
func (a Actor) IsAuthor() bool { return a.HasRole(RoleAuthor) || a.IsAdmin() }

// Acts reports whether the actor may act for the author authorID: it is
// that author, or an admin.
func (a Actor) Acts(authorID string) bool {
	return a.IsAdmin() || (a.IsAuthor() && a.ID == authorID)
}

type actorKey struct{}

// WithActor returns a copy of ctx that carries a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, or the anonymous Actor when it
// carries none.
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}
