package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// authorPostsKey names the read of a page of an author's posts, with the
// scheduled ones or without.
func authorPostsKey(id string, own bool, p storage.PageArgs, per storage.Period) string {
	return listKey(fmt.Sprintf("author-posts:%s:%t", id, own), p, per)
}

// authorPostsAhead starts the read of the author's posts, when the author
// field being resolved selects them.
func (r *Resolver) authorPostsAhead(ctx context.Context, authorID string, own bool) {
	if !storage.ValidID(authorID) {
		return
	}
	listAhead(ctx, "Author", "posts",
		func(p storage.PageArgs, per storage.Period) string { return authorPostsKey(authorID, own, p, per) },
		func(ctx context.Context, p storage.PageArgs, per storage.Period) (*storage.Result[*storage.Post], error) {
			return r.store.AuthorPosts(ctx, authorID, p, per, own)
		})
}

// authorPostsCount returns the Counter of an author's posts in per, with
// the scheduled ones for the author themself (own) and admins.
func (r *Resolver) authorPostsCount(a *storage.Author, per storage.Period, own bool) model.Counter {
	switch {
	case per == (storage.Period{}) && own:
		return model.Count(a.PostCount + a.ScheduledCount)
	case per == (storage.Period{}):
		return model.Count(a.PostCount)
	case own:
		return r.countPosts(a.ID, "", per, true)
	}
	return periodCount(a.Archive, per, r.countPosts(a.ID, "", per, false))
}

// authorPatch returns the storage input for updateAuthor of the author
// with id.
func authorPatch(ctx context.Context, id string, input model.UpdateAuthorInput) storage.AuthorPatch {
	return storage.AuthorPatch{
		ID:              id,
		ExpectedVersion: expectedVersionOf(input.ExpectedVersion),
		Slug:            input.Slug,
		Name:            input.Name,
		Bio:             input.Bio,
		AvatarURL:       input.AvatarURL,
		Website:         input.Website,
		Location:        input.Location,
		Social:          socialOf(input.SocialLinks),
		IdempotencyKey:  idempotencyKey(ctx, input.IdempotencyKey),
		Admin:           auth.ActorFrom(ctx).IsAdmin(),
	}
}

// postAuthorAtHand reports whether a post's author, selected by field,
// is answered from the post alone: the post carries its author's id,
// name and slug. Post.author answers it so then, and the executor
// resolves the field on the post's goroutine rather than one of its own
// (internal/leanexec).
func postAuthorAtHand(oc *graphql.OperationContext, field graphql.CollectedField, obj *storage.Post) bool {
	return selectsOnlyOf(oc, field, "id", "name") || obj.AuthorSlug != "" && selectsOnlyOf(oc, field, "id", "name", "slug")
}
