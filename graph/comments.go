package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

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

// commentsKey names the read of a page of a post's comments.
func commentsKey(postID string, p storage.PageArgs) string {
	return listKey("comments:"+postID, p, storage.Period{})
}

// commentsAhead starts the read of the comments of the post with id, when
// the post field being resolved selects them, beside the read of the
// post, and the read of their writers that this server remembers from the
// last time it read the same page (commenterHints). Only for a post its
// slug's reservation says is public: a hidden post's comments are never
// read, so that its answer costs the requests and read units of a missing
// post's (storage.PostSlug.PublicAt). When the post turns out hidden after
// all (it changed between the two reads), the comments and their writers
// are dropped unseen.
func (r *Resolver) commentsAhead(ctx context.Context, postID string) {
	args, ok := childArgs(ctx, "Post", "comments")
	if !ok {
		return
	}
	p, _, ok := listArgs(args)
	if !ok {
		return
	}
	startAhead(ctx, commentsKey(postID, p), func(ctx context.Context) (*storage.Result[*storage.Comment], error) {
		return r.store.Comments(ctx, postID, p)
	})
	own, replies := commentWritersShown(ctx, "comments")
	r.primeWriters(ctx, r.commenterHints.get(commentersKey(postID, p, own, replies)))
}

// commentWritersShown reports which writers the comment connection at
// path (below the field being resolved; "" for the field itself) shows:
// those of its comments, and those of the first replies each comment
// carries.
func commentWritersShown(ctx context.Context, path string) (own, replies bool) {
	at := func(paths ...string) []string {
		for i := range paths {
			paths[i] = joinPath(path, paths[i])
		}
		return paths
	}
	own = graphql.AnyFieldRequested(ctx, at("edges.node.author", "edges.node.commenter")...)
	replies = graphql.AnyFieldRequested(ctx, at("edges.node.replies.author", "edges.node.replies.commenter",
		"edges.node.replyConnection.edges.node.author", "edges.node.replyConnection.edges.node.commenter")...)
	return own, replies
}

// commentWriters returns, once each, who wrote the comments of page that
// are not deleted (when own) and the first replies they carry (when
// replies), in the order they appear.
func commentWriters(page []*storage.Comment, own, replies bool) []storage.Writer {
	var writers []storage.Writer
	add := func(cs []*storage.Comment) {
		for _, c := range cs {
			if w := c.Writer(); !c.Deleted && !slices.Contains(writers, w) {
				writers = append(writers, w)
			}
		}
	}
	if own {
		add(page)
	}
	if replies {
		for _, c := range page {
			add(c.Replies)
		}
	}
	return writers
}

// primeComments starts the read of who wrote a page of comments, and the
// first replies each carries, in one BatchGetItem (one more for each 100
// commenters past the first 100), when the page's selection shows them,
// and returns them. The first replies need no read of their own: every
// comment carries them.
func (r *Resolver) primeComments(ctx context.Context, page []*storage.Comment) []storage.Writer {
	own, replies := commentWritersShown(ctx, "")
	writers := commentWriters(page, own, replies)
	r.primeWriters(ctx, writers)
	return writers
}

// primeWriters starts the read of the writers no read was started for in
// this request yet (primeCommenters), in the background; Comment.author
// and Comment.commenter wait for it.
func (r *Resolver) primeWriters(ctx context.Context, writers []storage.Writer) {
	if len(writers) == 0 {
		return
	}
	keys := make([]string, len(writers))
	for i, w := range writers {
		keys[i] = primedWriterKey(w)
	}
	loadersFor(ctx).primeAhead(ctx, keys, func(ctx context.Context, fresh []int) {
		r.primeCommenters(ctx, pick(writers, fresh))
	})
}

// primePage loads what a page of comments from anywhere asks for: their
// commenters and their posts, one BatchGetItem each.
func (r *Resolver) primePage(ctx context.Context, page []*storage.Comment) {
	r.primeComments(ctx, page)
	if len(page) > 0 && graphql.FieldRequested(ctx, "edges.node.post") {
		var ids []string
		for _, c := range page {
			if !slices.Contains(ids, c.PostID) {
				ids = append(ids, c.PostID)
			}
		}
		prime(ctx, "posts", loadersFor(ctx).posts, r.store.GetPosts, ids)
	}
}

// primeCommenters reads writers in one BatchGetItem per 100 and primes the
// commenters loader with all of them and the authors loader with the
// authors among them, so `author` and `commenter` share the read.
func (r *Resolver) primeCommenters(ctx context.Context, writers []storage.Writer) {
	if len(writers) == 0 {
		return
	}
	l := loadersFor(ctx)
	l.observe("commenters", len(writers), false)
	got, errs := r.store.GetCommenters(ctx, writers)
	for i, w := range writers {
		if errs[i] != nil {
			continue // the fields' own loads report it
		}
		l.commenters.Prime(ctx, w, got[i])
		if got[i].Author != nil {
			l.authors.Prime(ctx, w.AuthorID, got[i].Author)
		}
	}
}

// primeWritten starts the reads the comment a mutation wrote will make in
// its payload's comment field (primeComment).
func (r *Resolver) primeWritten(ctx context.Context, c *storage.Comment) {
	r.primeComment(ctx, nil, "comment", c)
}

// primeComment starts the reads the comment at path (as in primePosts)
// will make: its writer (Comment.author and Comment.commenter), the
// writers of the replies it carries, and its post (Comment.post).
func (r *Resolver) primeComment(ctx context.Context, satisfies []string, path string, c *storage.Comment) {
	l := loadersFor(ctx)
	selects := func(field string) bool {
		_, ok := selectionAt(ctx, satisfies, joinPath(path, field))
		return ok
	}
	var writers []storage.Writer
	if !c.Deleted && (selects("author") || selects("commenter")) {
		writers = append(writers, c.Writer())
	}
	// The first page of its thread is carried by the comment (ReplyPage):
	// its writers are read with the comment's own.
	if firstRepliesShowWriters(ctx, satisfies, path) {
		for _, rep := range c.Replies {
			if w := rep.Writer(); !rep.Deleted && !slices.Contains(writers, w) {
				writers = append(writers, w)
			}
		}
	}
	r.primeWriters(ctx, writers)
	if selects("post") {
		l.primeOne(ctx, primedPostKey(c.PostID), func(ctx context.Context) {
			prime(ctx, "posts", l.posts, r.store.GetPosts, []string{c.PostID})
		})
	}
}

// firstRepliesShowWriters reports whether the comment at path (as in
// primeComment) shows the writers of the first page of its thread, the
// replies it carries: in its replies, or in a replyConnection that asks
// for no later page.
func firstRepliesShowWriters(ctx context.Context, satisfies []string, path string) bool {
	fields, ok := fieldsAt(ctx, satisfies, path)
	if !ok {
		return false
	}
	oc := graphql.GetOperationContext(ctx)
	writers := func(fs []graphql.CollectedField) bool {
		return slices.ContainsFunc(fs, func(f graphql.CollectedField) bool { return f.Name == "author" || f.Name == "commenter" })
	}
	below := func(f graphql.CollectedField, name string) []graphql.CollectedField {
		var out []graphql.CollectedField
		for _, g := range collectFields(oc, f.Selections, nil) {
			if g.Name == name {
				out = append(out, collectFields(oc, g.Selections, nil)...)
			}
		}
		return out
	}
	for _, f := range fields {
		switch f.Name {
		case "replies":
			if writers(collectFields(oc, f.Selections, nil)) {
				return true
			}
		case "replyConnection":
			args := f.ArgumentMap(oc.Variables)
			if args["after"] == nil && args["before"] == nil && args["last"] == nil {
				for _, e := range below(f, "edges") {
					if e.Name == "node" && writers(collectFields(oc, e.Selections, nil)) {
						return true
					}
				}
			}
		}
	}
	return false
}

// newComment returns the storage input for addComment, but for who writes
// it and its idempotency key. It returns a *storage.ValidationError for a
// bad id, or for a parent that is a comment of another post.
func newComment(in model.AddCommentInput) (storage.NewComment, error) {
	postID, err := decodeIDOf("postId", in.PostID, kindPost)
	if err != nil {
		return storage.NewComment{}, err
	}
	c := storage.NewComment{
		PostID: postID,
		Body:   in.Body,
	}
	if in.ParentID != nil {
		parent, err := decodeCommentID("parentId", *in.ParentID)
		if err != nil {
			return storage.NewComment{}, err
		}
		if parent.PostID != postID {
			return storage.NewComment{}, &storage.ValidationError{Field: "parentId", Reason: "is not a comment of this post"}
		}
		c.ParentID = parent.CommentID
	}
	return c, nil
}

// commentEdit returns the storage input for updateComment with body, but
// for which comment and its idempotency key: a signed-in actor that is not
// an admin edits with the profile its token shows and the readers' rules
// (the resolver's CommentPolicy); an admin's edit carries neither.
func (r *Resolver) commentEdit(ctx context.Context, body string) storage.CommentEdit {
	edit := storage.CommentEdit{Body: body}
	if a := auth.ActorFrom(ctx); !a.Anonymous() && !a.IsAdmin() {
		edit.Reader, edit.Rules = readerProfile(a), r.readers
	}
	return edit
}
