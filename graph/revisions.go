package graph

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Revisions are read by the post's authors and admins only, and restored
// by them.

// kindRevision names a post's revision in its global id, whose key is
// "<postId>:<number>".
const kindRevision kind = "Revision"

func revisionGID(r *storage.Revision) string {
	return encodeID(kindRevision, r.PostID+":"+strconv.FormatInt(r.N, 10))
}

// decodeRevisionID returns the post and number of the revision id s, or a
// *storage.ValidationError on field.
func decodeRevisionID(field, s string) (string, int64, error) {
	bad := &storage.ValidationError{Field: field, Reason: "is not a revision id"}
	if len(s) > maxGlobalIDLen {
		return "", 0, bad
	}
	raw, err := idEncoding.DecodeString(s)
	if err != nil || idEncoding.EncodeToString(raw) != s {
		return "", 0, bad
	}
	rest, ok := strings.CutPrefix(string(raw), string(kindRevision)+":")
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 1 {
		return "", 0, bad
	}
	n, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || n < 1 {
		return "", 0, bad
	}
	return rest[:i], n, nil
}

// postRevisions answers Post.revisions: FORBIDDEN for anyone but the
// post's authors and admins, before any read.
func (r *Resolver) postRevisions(ctx context.Context, obj *storage.Post, first *int, after *string, last *int, before *string) (*model.RevisionConnection, error) {
	if err := actsForPost(ctx, obj, false); err != nil {
		return nil, err
	}
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	res, err := r.store.Revisions(ctx, obj.ID, p)
	if err != nil {
		return nil, err
	}
	full, err := fullPost(ctx, obj)
	if err != nil {
		return nil, err
	}
	if names, _ := selectionAt(ctx, nil, "edges.node"); slices.Contains(names, "body") {
		// A revision whose edit left the body as it was does not hold it.
		if err := r.store.RevisionBodies(ctx, obj.ID, res.Items, full.Revisions); err != nil {
			return nil, err
		}
	}
	return &model.RevisionConnection{
		Edges: edges(res, func(c string, n *storage.Revision) *model.RevisionEdge {
			return &model.RevisionEdge{Cursor: c, Node: n}
		}),
		PageInfo:   pageInfo(res),
		TotalCount: int(min(full.Revisions, storage.MaxRevisions)),
	}, nil
}

func (r *Resolver) revisionEditor(ctx context.Context, rev *storage.Revision) (*storage.Author, error) {
	if rev.EditorID == "" {
		return nil, nil
	}
	if selectsOnly(ctx, "id") {
		return &storage.Author{ID: rev.EditorID}, nil
	}
	a, err := loadersFor(ctx).authors.Load(ctx, rev.EditorID)()
	if err != nil {
		// An editor gone (an admin whose subject is no author) is unknown.
		return nil, nil
	}
	return a, nil
}

func revisionSeo(rev *storage.Revision) *model.Seo {
	return &model.Seo{Title: rev.SEO.Title, Description: rev.SEO.Description,
		CanonicalURL: nonEmpty(rev.SEO.CanonicalURL), OgImage: nonEmpty(rev.SEO.OGImage), Noindex: rev.SEO.NoIndex}
}

// restorePostRevision answers Mutation.restorePostRevision. A revision
// of another post is BAD_USER_INPUT before anything is read.
func (r *Resolver) restorePostRevision(ctx context.Context, input model.RestorePostRevisionInput) (*model.RestorePostRevisionPayload, error) {
	if _, err := author(ctx); err != nil {
		return nil, err
	}
	postID, err := decodeIDOf("postId", input.PostID, kindPost)
	if err != nil {
		return nil, err
	}
	revPost, n, err := decodeRevisionID("revisionId", input.RevisionID)
	if err != nil {
		return nil, err
	}
	if revPost != postID {
		return nil, &storage.ValidationError{Field: "revisionId", Reason: "is a revision of another post"}
	}
	if _, err := r.ownPost(ctx, input.PostID, input.IdempotencyKey); err != nil {
		return nil, err
	}
	a := auth.ActorFrom(ctx)
	p, err := r.store.RestorePostRevision(ctx, storage.RestoreRevision{
		PostID: postID, N: n, ExpectedVersion: int64(input.ExpectedVersion), EditorID: a.ID,
		IdempotencyKey: idempotencyKey(ctx, input.IdempotencyKey), Admin: a.IsAdmin(),
	})
	if err != nil {
		return nil, fmt.Errorf("restore revision: %w", err)
	}
	r.primePosts(ctx, nil, "post", []*storage.Post{p})
	return &model.RestorePostRevisionPayload{Post: p}, nil
}
