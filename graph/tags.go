package graph

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// Tags: a tag's page is the tag (one GetItem) and a page of its posts
// (one Query of its post-in-tag copies), read at once; the list of tags
// one Query a page; a post's tags come with the post.

// tagPostsKey names the read of a page of a tag's posts.
func tagPostsKey(slug string, p storage.PageArgs, per storage.Period) string {
	return listKey("tag-posts:"+slug, p, per)
}

// tag answers Query.tag, starting the read of its posts when they are
// selected.
func (r *Resolver) tag(ctx context.Context, slug string) (*storage.Tag, error) {
	slug, err := findable(slug)
	if err != nil {
		return nil, err
	}
	listAhead(ctx, "Tag", "posts",
		func(p storage.PageArgs, per storage.Period) string { return tagPostsKey(slug, p, per) },
		func(ctx context.Context, p storage.PageArgs, per storage.Period) (*storage.Result[*storage.Post], error) {
			return r.store.TagPosts(ctx, slug, p, per)
		})
	gqlhttp.Tag(ctx, frontend.TagTag(slug)) // found or not: its creation names it
	return r.store.GetTag(ctx, slug)
}

// tags answers Query.tags.
func (r *Resolver) tags(ctx context.Context, first *int, after *string, last *int, before *string) (*model.TagConnection, error) {
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	res, err := r.store.Tags(ctx, p)
	if err != nil {
		return nil, err
	}
	return &model.TagConnection{
		Edges:    edges(res, func(c string, n *storage.Tag) *model.TagEdge { return &model.TagEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(res),
	}, nil
}

// tagPosts answers Tag.posts, with totalCount from the tag's counts.
func (r *Resolver) tagPosts(ctx context.Context, t *storage.Tag, first *int, after *string, last *int, before *string, publishedAfter, publishedBefore *time.Time, locale *string) (*model.PostConnection, error) {
	p, err := pageOf(first, after, last, before)
	if err != nil {
		return nil, err
	}
	per := periodOf(publishedAfter, publishedBefore)
	if locale != nil {
		return r.localeList(ctx, frontend.TagTag(t.Slug), storage.LocaleList{Locale: *locale, Tag: t.Slug}, p, per)
	}
	res, err := readAhead(ctx, tagPostsKey(t.Slug, p, per), func() (*storage.Result[*storage.Post], error) {
		return r.store.TagPosts(ctx, t.Slug, p, per)
	})
	if err != nil {
		return nil, err
	}
	gqlhttp.Tag(ctx, frontend.TagTag(t.Slug)) // primePosts tags the posts
	r.primePosts(ctx, nil, "edges.node", res.Items)
	r.primeFullPosts(ctx, res.Items)
	count := model.Count(t.PostCount)
	if per != (storage.Period{}) {
		count = periodCount(t.Archive, per, func(ctx context.Context) (int, error) {
			n, err := r.store.CountTagPosts(ctx, t.Slug, per)
			return int(n), err
		})
	}
	return postConnection(res, count), nil
}

// postTags answers Post.tags: from the names the post carries when only
// they are selected of a published post, else read (one batch read for a
// page: primeCoAuthorsAndTags).
func (r *Resolver) postTags(ctx context.Context, p *storage.Post) ([]*storage.Tag, error) {
	if p.Status == storage.StatusPublished && selectsOnly(ctx, "slug", "name") {
		out := make([]*storage.Tag, len(p.Tags))
		for i, t := range p.Tags {
			out[i] = &storage.Tag{Slug: t.Slug, Name: t.Name}
		}
		return out, nil
	}
	l := loadersFor(ctx)
	l.ahead.await(primedTagsKey(p.ID))
	tags, errs := l.tags.LoadMany(ctx, tagSlugsOf(p.Tags))()
	return tags, errors.Join(errs...)
}

// renameTag answers Mutation.renameTag: admins only.
func (r *Resolver) renameTag(ctx context.Context, in model.RenameTagInput) (*model.RenameTagPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	t, err := r.store.RenameTag(ctx, storage.TagRename{
		Slug: in.Slug, Name: in.Name, ExpectedVersion: expectedVersionOf(in.ExpectedVersion),
		IdempotencyKey: idempotencyKey(ctx, in.IdempotencyKey),
	})
	if err != nil {
		return nil, err
	}
	return &model.RenameTagPayload{Tag: t}, nil
}

// mergeTags answers Mutation.mergeTags: admins only.
func (r *Resolver) mergeTags(ctx context.Context, in model.MergeTagsInput) (*model.MergeTagsPayload, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	t, err := r.store.MergeTags(ctx, storage.TagMerge{From: in.From, Into: in.Into, IdempotencyKey: idempotencyKey(ctx, in.IdempotencyKey)})
	if err != nil {
		return nil, err
	}
	return &model.MergeTagsPayload{Tag: t}, nil
}

func tagSlugsOf(refs []storage.TagRef) []string {
	out := make([]string, len(refs))
	for i, t := range refs {
		out[i] = t.Slug
	}
	return out
}

func primedTagsKey(postID string) string { return "primed-tags:" + postID }

// primeCoAuthorsAndTags starts the reads the authors and tags of posts
// (at path below the field being resolved) will make, one batch read
// each for all of them: those that select more than the names the posts
// carry, and those of drafts.
func (r *Resolver) primeCoAuthorsAndTags(ctx context.Context, satisfies []string, path string, posts []*storage.Post) {
	l := loadersFor(ctx)
	if sel, ok := selectionAt(ctx, satisfies, joinPath(path, "authors")); ok {
		beyondNames := !onlyOf(sel, "id", "name", "slug")
		var keys []string
		var read []*storage.Post
		for _, p := range posts {
			if beyondNames || !namesExact(p) || slices.Contains(sel, "slug") && !hasSlugs(p) {
				keys, read = append(keys, primedAuthorsKey(p.ID)), append(read, p)
			}
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			var ids []string
			for _, p := range pick(read, fresh) {
				for _, id := range p.AuthorIDs() {
					if !slices.Contains(ids, id) {
						ids = append(ids, id)
					}
				}
			}
			prime(ctx, "authors", l.authors, r.store.GetAuthors, ids)
		})
	}
	if sel, ok := selectionAt(ctx, satisfies, joinPath(path, "tags")); ok {
		beyondNames := !onlyOf(sel, "slug", "name")
		var keys []string
		var read []*storage.Post
		for _, p := range posts {
			if len(p.Tags) > 0 && (beyondNames || p.Status != storage.StatusPublished) {
				keys, read = append(keys, primedTagsKey(p.ID)), append(read, p)
			}
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			var slugs []string
			for _, p := range pick(read, fresh) {
				for _, t := range p.Tags {
					if !slices.Contains(slugs, t.Slug) {
						slugs = append(slugs, t.Slug)
					}
				}
			}
			prime(ctx, "tags", l.tags, r.store.GetTags, slugs)
		})
	}
}
