package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// Co-authors: a post's authors are its primary author and its
// co-authors. Every one of them may read its drafts and edit it; only the
// primary author and admins change who its co-authors are.

func primedAuthorsKey(postID string) string { return "primed-authors:" + postID }

// hasSlugs reports whether every author a post carries has a slug (items
// written before authors had slugs have none).
func hasSlugs(p *storage.Post) bool {
	for _, a := range p.Authors() {
		if a.Slug == "" {
			return false
		}
	}
	return true
}

// postAuthors answers Post.authors: from the names the post carries when
// only they are selected of a published post, else read (one batch read
// for a page: primeCoAuthorsAndTags). A draft's co-authors are read, as a
// rename reaches the drafts of the primary author only (namesExact).
func (r *Resolver) postAuthors(ctx context.Context, p *storage.Post) ([]*storage.Author, error) {
	if namesExact(p) && (selectsOnly(ctx, "id", "name") || hasSlugs(p) && selectsOnly(ctx, "id", "name", "slug")) {
		refs := p.Authors()
		out := make([]*storage.Author, len(refs))
		for i, a := range refs {
			out[i] = &storage.Author{ID: a.ID, Name: a.Name, Slug: a.Slug}
		}
		return out, nil
	}
	l := loadersFor(ctx)
	l.ahead.await(primedAuthorsKey(p.ID))
	authors, errs := l.authors.LoadMany(ctx, p.AuthorIDs())()
	return authors, errors.Join(errs...)
}

// namesExact reports whether the authors' names p carries are current:
// always for a published post, for a draft when it has no co-authors
// (a rename rewrites the drafts of its author, not those they co-wrote).
func namesExact(p *storage.Post) bool {
	return p.Status == storage.StatusPublished || len(p.CoAuthors) == 0
}

// actsForPost returns nil when the actor of ctx may change the post p:
// one of its authors, or an admin; with primaryOnly, its primary author
// or an admin. Otherwise it returns an error as actsFor does.
func actsForPost(ctx context.Context, p *storage.Post, primaryOnly bool) error {
	a, err := author(ctx)
	if err != nil || a.IsAdmin() {
		return err
	}
	if primaryOnly {
		if !a.Acts(p.AuthorID) {
			return fmt.Errorf("%w: only the post's primary author or an admin may change its co-authors", auth.ErrForbidden)
		}
		return nil
	}
	for _, id := range p.AuthorIDs() {
		if a.Acts(id) {
			return nil
		}
	}
	return fmt.Errorf("%w: only the post's authors or an admin may do this", auth.ErrForbidden)
}

// coAuthorIDs decodes the global ids of co-authors given in field.
func coAuthorIDs(field string, gids []string) ([]string, error) {
	ids := make([]string, len(gids))
	for i, gid := range gids {
		id, err := decodeIDOf(field, gid, kindAuthor)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// actorOf returns the author a post write of ctx's actor is made for,
// whom storage checks against the post's authors as the write reads them
// (storage.ErrNotPostAuthor): empty for an admin, who may write any post.
func actorOf(ctx context.Context) string {
	a := auth.ActorFrom(ctx)
	if a.IsAdmin() {
		return ""
	}
	return a.ID
}
