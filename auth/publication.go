package auth

import "slices"

// Roles in a publication. A token bound to a publication (its pub claim)
// names an account of its staff; what the account may do there is its
// role in the publication's staff, no more than the role its token
// lists (a token may be narrower than its account, never wider). Each
// role may what the ones after it may, and more:
//
//	owner        the staff and the ownership: makes and removes owners
//	admin        settings, webhooks, pages, categories, tags, members: an admin of the publication
//	editor       every post and comment: edits, publishes, moderates
//	author       writes, publishes and moderates their own posts
//	contributor  writes drafts of their own; publishes nothing
const (
	PubOwner       = "owner"
	PubAdmin       = "admin"
	PubEditor      = "editor"
	PubAuthor      = "author"
	PubContributor = "contributor"
)

// PublicationRoles are the roles in a publication, from the most to the
// least trusted.
var PublicationRoles = []string{PubOwner, PubAdmin, PubEditor, PubAuthor, PubContributor}

// RankOf returns where role stands among PublicationRoles, 0 for owner,
// and len(PublicationRoles) for a role that is none of them.
func RankOf(role string) int {
	if i := slices.Index(PublicationRoles, role); i >= 0 {
		return i
	}
	return len(PublicationRoles)
}

// Scoped reports whether the actor's token is bound to a publication.
func (a Actor) Scoped() bool { return a.Publication != "" }

// InPublication returns the actor with the role role in its publication
// (the less trusted of role and the publication roles its token lists),
// and the global roles that role means to the checks made of every
// actor: owners, admins and editors are admins, authors and contributors
// authors. An empty role (no member of the staff) leaves a reader.
func (a Actor) InPublication(role string) Actor {
	best := len(PublicationRoles)
	for _, r := range a.Roles {
		best = min(best, RankOf(r))
	}
	if RankOf(role) > best {
		best = RankOf(role)
	}
	a.PubRole, a.Roles = "", []string{RoleReader}
	if best < len(PublicationRoles) {
		a.PubRole = PublicationRoles[best]
		a.Roles = []string{RoleAuthor}
		if best <= RankOf(PubEditor) {
			a.Roles = []string{RoleAdmin}
		}
	}
	return a
}

// Manages reports whether the actor may manage the publication's
// settings, webhooks, pages, categories, tags and members: an admin, as
// every token not bound to a publication with the admin role is, or an
// owner or admin of the publication.
func (a Actor) Manages() bool {
	return a.IsAdmin() && (!a.Scoped() || RankOf(a.PubRole) <= RankOf(PubAdmin))
}

// Publishes reports whether the actor may publish: anyone who writes but
// a contributor.
func (a Actor) Publishes() bool { return a.PubRole != PubContributor }
