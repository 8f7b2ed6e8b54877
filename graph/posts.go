package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/inflight"
	"github.com/blogql/blog/storage"
)

// sees reports whether the actor of ctx may read p: anyone a public post,
// only its author and admins a draft or a scheduled post.
func (r *Resolver) sees(ctx context.Context, p *storage.Post) bool {
	if p.VisibleAt(r.store.Now()) {
		return true
	}
	a := auth.ActorFrom(ctx)
	return slices.ContainsFunc(p.AuthorIDs(), a.Acts)
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
// fields. A post's primary author never changes; its co-authors do, so
// the store checks the writer (Actor) against the authors its write reads
// too, and a co-author removed in between gets FORBIDDEN. See retried for
// a post that is gone.
func (r *Resolver) ownPost(ctx context.Context, gid string, idemKey *string) (string, error) {
	return r.ownPostFor(ctx, gid, idemKey, false)
}

// ownPostFor is ownPost for any of the post's authors, or with
// primaryOnly for its primary author only (who alone, with admins,
// changes its co-authors).
func (r *Resolver) ownPostFor(ctx context.Context, gid string, idemKey *string, primaryOnly bool) (string, error) {
	a, err := author(ctx)
	if err != nil {
		return "", err
	}
	id, err := decodeIDOf("id", gid, kindPost)
	if err != nil || a.IsAdmin() {
		return id, err
	}
	p, err := r.store.ReadPostWithoutBody(ctx, id)
	if retried(err, idemKey) {
		return id, nil
	}
	if p, err = r.visible(ctx)(p, err); err != nil {
		return "", err
	}
	return id, actsForPost(ctx, p, primaryOnly)
}

// postVisible reports whether the actor of ctx may see the post with id,
// read as a check before a write is: false when it is gone.
func (r *Resolver) postVisible(ctx context.Context, id string) bool {
	p, err := r.store.ReadPostWithoutBody(ctx, id)
	return err == nil && r.sees(ctx, p)
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

// fullPost returns p when it is a post item, else (a summary from a list)
// the post item through the request's loader: one batch read for a page,
// which primeFullPosts makes beforehand when the page selects such fields.
func fullPost(ctx context.Context, p *storage.Post) (*storage.Post, error) {
	if !p.Summary {
		return p, nil
	}
	return loadersFor(ctx).posts.Load(ctx, p.ID)()
}

// answerBody returns ctx asking the store for the body of the post a
// mutation answers (its payload's post) when the selection shows its
// body, its HTML or its table of contents: read with the post in the
// write's own read, as of the write. A write that leaves the body alone
// reads the post without its body item otherwise, and answers it
// BodyUnread (fullBody reads the body when asked all the same).
func answerBody(ctx context.Context) context.Context {
	if graphql.GetFieldContext(ctx) != nil && graphql.AnyFieldRequested(ctx, "post.body", "post.bodyHtml", "post.toc") {
		return storage.AnswerWithBody(ctx)
	}
	return ctx
}

// fullBody returns p when it holds its body, its HTML and its table of
// contents, else the post through the request's loader (see fullPost).
func fullBody(ctx context.Context, p *storage.Post) (*storage.Post, error) {
	if !p.Summary && !p.BodyUnread {
		return p, nil
	}
	return loadersFor(ctx).posts.Load(ctx, p.ID)()
}

// getPost returns the post id for the post field: without its body item
// when the field's selection shows neither the body, its HTML nor its
// table of contents (one Query either way).
func (r *Resolver) getPost(ctx context.Context, id string) (*storage.Post, error) {
	if graphql.AnyFieldRequested(ctx, "body", "bodyHtml", "toc") {
		return r.store.GetPost(ctx, id)
	}
	return r.store.GetPostWithoutBody(ctx, id)
}

// fullPostFields are the fields of a post in a page of posts that only
// the post item has.
var fullPostFields = []string{
	"edges.node.body", "edges.node.bodyHtml", "edges.node.toc", "edges.node.seo", "edges.node.head", "edges.node.comments.totalCount",
}

// seoOf returns what search engines see of p: its SEO fields, each unset
// one standing in for by the post's title, excerpt or cover image.
func seoOf(p *storage.Post) *model.Seo {
	seo := &model.Seo{Title: p.SEO.Title, Description: p.SEO.Description, CanonicalURL: nonEmpty(p.SEO.CanonicalURL), OgImage: nonEmpty(p.SEO.OGImage), Noindex: p.SEO.NoIndex}
	if seo.Title == "" {
		seo.Title = p.Title
	}
	if seo.Description == "" {
		seo.Description = p.Excerpt
	}
	if seo.OgImage == nil && p.CoverImage != nil {
		seo.OgImage = &p.CoverImage.URL
	}
	return seo
}

// headings returns a post's table of contents as the schema lists it.
func headings(toc []storage.Heading) []*storage.Heading {
	out := make([]*storage.Heading, len(toc))
	for i := range toc {
		out[i] = &toc[i]
	}
	return out
}

// archiveOf returns a post count by month as the schema lists it.
func archiveOf(months []storage.ArchiveMonth) []*storage.ArchiveMonth {
	out := make([]*storage.ArchiveMonth, len(months))
	for i := range months {
		out[i] = &months[i]
	}
	return out
}

// primeFullPosts loads the full posts of a page of summaries in one batch
// read when the connection's selection needs what summaries lack: the
// body, its HTML and table of contents, the SEO fields, the thread count,
// the series. When it asks for the series, their items are read next, in
// one batch read too, so a list of cards with series badges makes two
// reads whatever the machine's load does to the loaders' batch windows.
// A post another list of the request is loading already (the same page
// under another alias) is waited for, not read again.
func (r *Resolver) primeFullPosts(ctx context.Context, page []*storage.Post) {
	series := graphql.AnyFieldRequested(ctx, "edges.node.series", "nodes.series")
	if len(page) == 0 || !series && !graphql.AnyFieldRequested(ctx, fullPostFields...) {
		return
	}
	var ids, keys []string
	for _, p := range page {
		if p.Summary {
			ids = append(ids, p.ID)
			keys = append(keys, primedFullPostKey(p.ID))
		}
	}
	l := loadersFor(ctx)
	get := chargedPosts(r.store.GetPosts)
	if series {
		get = r.withSeriesPrimed(page, get)
	}
	l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
		prime(ctx, "posts", l.posts, get, pick(ids, fresh))
	})
	for _, key := range keys {
		l.ahead.await(key)
	}
}

// withSeriesPrimed returns get priming, after its read, the series of
// the posts it read and of the full posts of page, in one batch read.
func (r *Resolver) withSeriesPrimed(page []*storage.Post, get func(context.Context, []string) ([]*storage.Post, []error)) func(context.Context, []string) ([]*storage.Post, []error) {
	return func(ctx context.Context, ids []string) ([]*storage.Post, []error) {
		posts, errs := get(ctx, ids)
		var slugs []string
		for _, p := range slices.Concat(page, posts) {
			if p != nil && !p.Summary && p.Series != "" && !slices.Contains(slugs, p.Series) {
				slugs = append(slugs, p.Series)
			}
		}
		if len(slugs) > 0 {
			l := loadersFor(ctx)
			prime(ctx, "series", l.series, r.store.GetManySeries, slugs)
		}
		return posts, errs
	}
}

// chargedPosts returns get charging the request the bodies and HTML it
// reads (inflight.Load), and reading nothing once the request has failed
// (its answer past the limit, or the memory budget spent): the failure
// is then every post's error.
func chargedPosts(get func(context.Context, []string) ([]*storage.Post, []error)) func(context.Context, []string) ([]*storage.Post, []error) {
	return func(ctx context.Context, ids []string) ([]*storage.Post, []error) {
		if err := inflight.Err(ctx); err != nil {
			return make([]*storage.Post, len(ids)), repeated(err, len(ids))
		}
		posts, errs := get(ctx, ids)
		n := 0
		for _, p := range posts {
			if p != nil {
				n += len(p.Body) + len(p.BodyHTML)
			}
		}
		if err := inflight.Load(ctx, n); err != nil {
			return make([]*storage.Post, len(ids)), repeated(err, len(ids))
		}
		return posts, errs
	}
}

// repeated returns a list of n errors err.
func repeated(err error, n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// answered returns s after charging the answer of the request its bytes
// (inflight.Answer), or the charge's error: the answer is past its
// limit, or the memory budget is spent.
func answered(ctx context.Context, s string) (string, error) {
	if err := inflight.Answer(ctx, len(s)); err != nil {
		return "", err
	}
	return s, nil
}

// primePosts starts the reads the posts at path (a dotted path of fields
// below the field being resolved, "" for its own value, whose type is
// one of satisfies when given) will make: the authors of those whose
// author selects more than the names a post carries (Post.author), and
// the categories of those whose categories are read (a draft's, or more
// than their names: Post.categories).
func (r *Resolver) primePosts(ctx context.Context, satisfies []string, path string, posts []*storage.Post) {
	tagPosts(ctx, posts...)
	if len(posts) == 0 {
		return
	}
	l := loadersFor(ctx)
	if sel, ok := selectionAt(ctx, satisfies, joinPath(path, "author")); ok {
		beyondNames := !onlyOf(sel, "id", "name", "slug")
		slug := slices.Contains(sel, "slug")
		var keys, ids []string
		for _, p := range posts {
			if beyondNames || slug && p.AuthorSlug == "" {
				keys, ids = append(keys, primedAuthorKey(p.AuthorID)), append(ids, p.AuthorID)
			}
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			prime(ctx, "authors", l.authors, r.store.GetAuthors, pick(ids, fresh))
		})
	}
	r.primeCoAuthorsAndTags(ctx, satisfies, path, posts)
	if names, _ := selectionAt(ctx, satisfies, path); slices.Contains(names, "viewCount") {
		keys, ids := make([]string, len(posts)), make([]string, len(posts))
		for i, p := range posts {
			keys[i], ids[i] = primedViewsKey(p.ID), p.ID
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			prime(ctx, "views", l.views, viewCountsOf(r.store), pick(ids, fresh))
		})
	}
	if sel, ok := selectionAt(ctx, satisfies, joinPath(path, "categories")); ok {
		beyondNames := !onlyOf(sel, "id", "slug", "name")
		var keys []string
		var read []*storage.Post
		for _, p := range posts {
			if len(p.Categories) > 0 && (beyondNames || p.Status != storage.StatusPublished) {
				keys, read = append(keys, primedCategoriesKey(p.ID)), append(read, p)
			}
		}
		l.primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
			var slugs []string
			for _, p := range pick(read, fresh) {
				for _, c := range p.Categories {
					if !slices.Contains(slugs, c.Slug) {
						slugs = append(slugs, c.Slug)
					}
				}
			}
			prime(ctx, "categories", l.categories, r.store.GetCategories, slugs)
		})
	}
}

// primedPost starts the reads of the fields of the post the field being
// resolved returns (primePosts), and returns it; satisfies as there.
func (r *Resolver) primedPost(ctx context.Context, satisfies []string) func(*storage.Post, error) (*storage.Post, error) {
	return func(p *storage.Post, err error) (*storage.Post, error) {
		if err == nil && p != nil {
			r.primePosts(ctx, satisfies, "", []*storage.Post{p})
		}
		return p, err
	}
}

// ownPostRef returns the storage reference for the unpublishPost and
// deletePost inputs once the actor of ctx may change the post; see
// ownPost for the errors.
func (r *Resolver) ownPostRef(ctx context.Context, id string, expectedVersion *int, idemKey *string) (storage.PostRef, error) {
	postID, err := r.ownPost(ctx, id, idemKey)
	if err != nil {
		return storage.PostRef{}, err
	}
	return storage.PostRef{
		ID:              postID,
		ExpectedVersion: expectedVersionOf(expectedVersion),
		IdempotencyKey:  idempotencyKey(ctx, idemKey),
		Actor:           actorOf(ctx),
	}, nil
}

// imageOf returns the storage image of an image input, or a
// *storage.ValidationError for a size given out of range.
func imageOf(in *model.ImageInput) (*storage.Image, error) {
	if in == nil {
		return nil, nil
	}
	img := &storage.Image{URL: in.URL, Alt: deref(in.Alt), Width: deref(in.Width), Height: deref(in.Height)}
	for field, v := range map[string]*int{"coverImage.width": in.Width, "coverImage.height": in.Height} {
		if v != nil && *v < 1 {
			return nil, &storage.ValidationError{Field: field, Reason: fmt.Sprintf("must be between 1 and %d pixels", storage.MaxImageSide)}
		}
	}
	return img, nil
}

// seoOfInput returns the SEO fields of a post's input.
func seoOfInput(in *model.SeoInput) storage.SEO {
	if in == nil {
		return storage.SEO{}
	}
	return storage.SEO{Title: deref(in.Title), Description: deref(in.Description), CanonicalURL: deref(in.CanonicalURL), OGImage: deref(in.OgImage), NoIndex: deref(in.Noindex)}
}

// seoPatch returns the changes an input makes to a post's SEO fields.
func seoPatch(in *model.SeoInput) *storage.SEOPatch {
	if in == nil {
		return nil
	}
	return &storage.SEOPatch{Title: in.Title, Description: in.Description, CanonicalURL: in.CanonicalURL, OGImage: in.OgImage, NoIndex: in.Noindex}
}

// newPost returns the storage input for createPost by the actor a, or a
// *storage.ValidationError for a bad cover image.
func newPost(ctx context.Context, a auth.Actor, input model.CreatePostInput) (storage.NewPost, error) {
	cover, err := imageOf(input.CoverImage)
	if err != nil {
		return storage.NewPost{}, err
	}
	coAuthors, err := coAuthorIDs("coAuthors", input.CoAuthors)
	if err != nil {
		return storage.NewPost{}, err
	}
	return storage.NewPost{
		CoAuthors:      coAuthors,
		Tags:           input.Tags,
		Locale:         deref(input.Locale),
		AuthorID:       a.ID,
		Title:          input.Title,
		Slug:           deref(input.Slug),
		Excerpt:        deref(input.Excerpt),
		Body:           deref(input.Body),
		Categories:     input.Categories,
		CoverImage:     cover,
		SEO:            seoOfInput(input.Seo),
		IdempotencyKey: idempotencyKey(ctx, input.IdempotencyKey),
		Admin:          a.IsAdmin(),
		Visibility:     visibilityOf(input.Visibility),
	}, nil
}

// postPatch returns the storage input for updatePost, or a
// *storage.ValidationError for a bad id or cover image.
func postPatch(ctx context.Context, input model.UpdatePostInput) (storage.PostPatch, error) {
	id, err := decodeIDOf("id", input.ID, kindPost)
	if err != nil {
		return storage.PostPatch{}, err
	}
	cover, err := imageOf(input.CoverImage.Value())
	if err != nil {
		return storage.PostPatch{}, err
	}
	patch := storage.PostPatch{
		ID:               id,
		ExpectedVersion:  int64(input.ExpectedVersion),
		Locale:           input.Locale,
		Title:            input.Title,
		Slug:             input.Slug,
		Excerpt:          input.Excerpt,
		Body:             input.Body,
		CoverImage:       cover,
		RemoveCoverImage: input.CoverImage.IsSet() && cover == nil,
		SEO:              seoPatch(input.Seo),
		IdempotencyKey:   idempotencyKey(ctx, input.IdempotencyKey),
		Admin:            auth.ActorFrom(ctx).IsAdmin(),
		Actor:            actorOf(ctx),
		EditorID:         auth.ActorFrom(ctx).ID,
	}
	if input.Categories != nil {
		patch.Categories = &input.Categories
	}
	if input.CoAuthors != nil {
		ids, err := coAuthorIDs("coAuthors", input.CoAuthors)
		if err != nil {
			return storage.PostPatch{}, err
		}
		patch.CoAuthors = &ids
	}
	if input.Tags != nil {
		patch.Tags = &input.Tags
	}
	if input.Visibility != nil {
		v := visibilityOf(input.Visibility)
		patch.Visibility = &v
	}
	return patch, nil
}
