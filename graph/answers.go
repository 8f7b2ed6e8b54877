package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage"
)

// Answers kept in memory (gqlhttp's answer cache) carry the tags of what
// they show, named here where the blog's data is read: a post by the
// reads and loaders that hand it out (tagPosts), a list by the read of
// its page (its list tag beside its posts'), an author, category, tag,
// page, series or the site settings by the read of each. The tags are
// storage's (TagPost and the others), which the change feed's events name,
// so an event drops every answer that showed what it changed. What no tag
// names is not kept: operationTaggable below lists what is.

// TagReader tags answers that show the reader id's name or picture (a
// commenter): their profile is refreshed by each comment they write, whose
// event names them.
func TagReader(id string) string { return "reader:" + id }

// tagLive tags answers that show where the event log stands (liveCursor),
// in memory only: every event moves the log, and InvalidateAnswers drops
// them at each.
const tagLive = "live"

// tagLiveCursor tags the answer of ctx, which shows liveCursor, so that
// every event purges it, and so that it keeps the tags of the rest of
// its operation. Alone (with __typename at most), it is tagged with
// every section (frontend.EverySection), which every event names. Read
// with a page, as docs/live.md asks, it has the page's tags: a copy of
// the answer shows a cursor as old as the page, which a subscription
// after it replays from, missing nothing; and in memory, tagLive drops
// it at the next event, so that no server keeps a cursor the live window
// forgets.
func tagLiveCursor(ctx context.Context) {
	gqlhttp.TagPrivately(ctx, tagLive)
	oc := graphql.GetOperationContext(ctx)
	for _, f := range collectFields(oc, oc.Operation.SelectionSet, nil) {
		if f.Name != "liveCursor" && f.Name != "__typename" {
			return
		}
	}
	gqlhttp.Tag(ctx, frontend.EverySection...)
}

// tagPosts tags the answer of ctx with what posts show: each post, its
// comment count (TagCounts for a summary from a list, which holds the
// copy's count, TagComments for a post item), its authors', categories'
// and tags' names, and its series.
func tagPosts(ctx context.Context, posts ...*storage.Post) {
	tags := make([]string, 0, 3*len(posts)+2)
	// A page's posts share their authors and categories: each of their
	// tags is made once.
	var named []string
	once := func(kind, name string, tag func(string) string) {
		for i := 0; i+1 < len(named); i += 2 {
			if named[i] == kind && named[i+1] == name {
				return
			}
		}
		named = append(named, kind, name)
		tags = append(tags, tag(name))
	}
	ids := make([]string, 0, len(posts))
	for _, p := range posts {
		if p != nil {
			ids = append(ids, p.ID)
		}
	}
	own := frontend.PostTags(ids)
	for _, p := range posts {
		if p == nil {
			continue
		}
		tags, own = append(tags, own[0], own[1]), own[2:]
		once("author", p.AuthorID, frontend.TagAuthor)
		if !p.Summary {
			tags = append(tags, frontend.TagComments(p.ID))
		}
		for _, a := range p.CoAuthors {
			once("author", a.ID, frontend.TagAuthor)
		}
		for _, c := range p.Categories {
			once("category", c.Slug, frontend.TagCategory)
		}
		for _, t := range p.Tags {
			once("tag", t.Slug, frontend.TagTag)
		}
		if p.Series != "" {
			once("series", p.Series, frontend.TagSeries)
		}
	}
	gqlhttp.Tag(ctx, tags...)
}

// tagList tags the answer of ctx with a list, by the tag its changes are
// named by, and the posts of its page.
func tagList(ctx context.Context, list string, posts []*storage.Post) {
	gqlhttp.Tag(ctx, list)
	tagPosts(ctx, posts...)
}

// tagLoaded tags the answer of ctx with what a loader or a primed read
// returned.
func tagLoaded[V any](ctx context.Context, values []V) {
	for _, v := range values {
		switch v := any(v).(type) {
		case *storage.Post:
			tagPosts(ctx, v)
		case *storage.Author:
			if v != nil {
				gqlhttp.Tag(ctx, frontend.TagAuthor(v.ID))
			}
		case *storage.Category:
			if v != nil {
				gqlhttp.Tag(ctx, frontend.TagCategory(v.Slug))
			}
		case *storage.Tag:
			if v != nil {
				gqlhttp.Tag(ctx, frontend.TagTag(v.Slug))
			}
		case *storage.Comment:
			if v != nil {
				gqlhttp.Tag(ctx, frontend.TagComments(v.PostID))
			}
		case *storage.Commenter:
			switch {
			case v == nil:
			case v.Author != nil:
				gqlhttp.Tag(ctx, frontend.TagAuthor(v.Author.ID))
			case v.Reader != nil:
				// A reader's id is their token's subject, which no
				// answer shows: not in the headers.
				gqlhttp.TagPrivately(ctx, TagReader(v.Reader.ID))
			}
		case *storage.Series:
			if v != nil {
				gqlhttp.Tag(ctx, frontend.TagSeries(v.Slug))
			}
		case *storage.Stats:
			// The blog's counts and archive follow its posts, whose every
			// event names the feed.
			gqlhttp.Tag(ctx, frontend.TagFeed)
		default:
			gqlhttp.Untagged(ctx)
		}
	}
}

// tagged returns a function that tags the answer of ctx with tag when the
// read it is given succeeded, and returns what it was given.
func tagged[T any](ctx context.Context, tag func(T) string) func(T, error) (T, error) {
	return func(v T, err error) (T, error) {
		if err == nil {
			gqlhttp.Tag(ctx, tag(v))
		}
		return v, err
	}
}

// taggableRoots are the fields of Query whose reads tag what they show;
// untaggedFields are the fields of the types below them whose reads do
// not (revisions and drafts are their authors' alone). Every other field
// of Query is neither kept in memory nor by shared caches: node is read
// through every kind's loader, and the rest is for the signed-in. The
// lists of all of a kind are tagged with its section tag
// (sectionRoots), which every event about one of them names (a new
// member's too); a search with the search index's tag (search.go).
var (
	taggableRoots = map[string]bool{
		"liveCursor": true, "post": true, "posts": true, "archive": true, "author": true, "category": true,
		"tag": true, "page": true, "site": true, "featuredPosts": true, "series": true,
		"authors": true, "categories": true, "tags": true, "pages": true, "allSeries": true,
		"search": true, "postPage": true, "__typename": true,
	}
	sectionRoots = map[string]string{
		"authors": frontend.TagAuthors, "categories": frontend.TagCategories, "tags": frontend.TagTags,
		"pages": frontend.TagPages, "allSeries": frontend.TagAllSeries,
	}
	untaggedFields = map[string]bool{
		"Post.revisions": true, "Author.drafts": true,
	}
)

// taggedAnswers is the root field middleware that tags the answer to a
// list of sectionRoots with its section, and marks the answer to a query
// untagged when it selects a field outside taggableRoots or one of
// untaggedFields, wherever in the document.
func taggedAnswers(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	oc := graphql.GetOperationContext(ctx)
	fc := graphql.GetRootFieldContext(ctx)
	if oc.Operation.Operation == ast.Query && fc != nil && fc.Field.Field != nil {
		if !taggableRoots[fc.Field.Name] || !selectionTaggable(fc.Field.Selections, 0) {
			gqlhttp.Untagged(ctx)
		}
		gqlhttp.Tag(ctx, sectionRoots[fc.Field.Name])
	}
	return next(ctx)
}

// selectionTaggable reports whether set selects none of untaggedFields;
// depth bounds fragments that spread each other (validation refuses
// cycles, so the bound is only a guard).
func selectionTaggable(set ast.SelectionSet, depth int) bool {
	if depth > 64 {
		return false
	}
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil && untaggedFields[s.ObjectDefinition.Name+"."+s.Name] {
				return false
			}
			if !selectionTaggable(s.SelectionSet, depth+1) {
				return false
			}
		case *ast.InlineFragment:
			if !selectionTaggable(s.SelectionSet, depth+1) {
				return false
			}
		case *ast.FragmentSpread:
			if s.Definition == nil || !selectionTaggable(s.Definition.SelectionSet, depth+1) {
				return false
			}
		}
	}
	return true
}

// InvalidateAnswers returns what the change feed's events go to on every
// server: it drops from answers each answer tagged with one of an event's
// cache tags, and for a comment's event its post's comments and its
// reader's name (which its write refreshes), and at every event the
// answers that show the live cursor (tagLive). The counts its post's
// summaries show follow with the counts worker's post.counts.updated.
func InvalidateAnswers(answers *gqlhttp.AnswerCache) func([]storage.LoggedEvent) {
	return func(events []storage.LoggedEvent) {
		var tags []string
		if len(events) > 0 {
			tags = append(tags, tagLive)
		}
		for _, e := range events {
			tags = append(tags, e.Data.CacheTags...)
			if strings.HasPrefix(string(e.Type), "comment.") {
				tags = append(tags, frontend.TagComments(e.Data.PostID))
				if e.Data.ReaderID != "" {
					tags = append(tags, TagReader(e.Data.ReaderID))
				}
			}
		}
		answers.Invalidate(tags...)
	}
}

// authorTag returns the tag of the author a.
func authorTag(a *storage.Author) string { return frontend.TagAuthor(a.ID) }

// pageTag returns the tag of the static page p.
func pageTag(p *storage.SitePage) string { return frontend.TagPage(p.ID) }

// adjacentPost returns the post before or after p in the feed, or in the
// category slug: which one it is changes with any post's write, whose
// every event names the feed.
func (r *Resolver) adjacentPost(ctx context.Context, p *storage.Post, slug string, next bool) (*storage.Post, error) {
	gqlhttp.Tag(ctx, frontend.TagFeed)
	adj, err := r.store.AdjacentPost(ctx, p, slugs.Canonical(slug), next)
	tagPosts(ctx, adj)
	return adj, err
}

// unshownMutations change nothing any answer shows.
var unshownMutations = map[string]bool{
	"createPreviewLink": true, "createWebhook": true, "updateWebhook": true, "deleteWebhook": true,
	"rotateWebhookSecret": true, "redeliverWebhookEvent": true, "pingWebhook": true,
	// Views and reactions show only in answers never kept (volatile).
	"recordView": true, "react": true, "unreact": true,
}

// invalidateWritten returns the root field middleware that drops from
// answers, once a mutation's write is done and before its answer goes,
// what it may have changed, so that no answer this server sends after
// acknowledging a write misses it (other servers follow the change feed:
// InvalidateAnswers). A comment's write drops its post's comments and
// its writer's name (the counts in lists follow with the counts worker's
// event); any other write of the blog, whose
// events the translation computes from items the resolvers do not see,
// drops every answer. A failed write drops as much (a write that timed
// out may have been done), unless its error says it was refused before
// anything was written (refusedCodes), so that refused mutations, which
// anyone may send, cannot empty the cache.
func invalidateWritten(answers *gqlhttp.AnswerCache) graphql.RootFieldMiddleware {
	return func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation.Operation != ast.Mutation {
			return next(ctx)
		}
		before := len(graphql.GetErrors(ctx))
		defer func() {
			fc := graphql.GetRootFieldContext(ctx)
			if fc == nil || unshownMutations[fc.Field.Name] || refused(graphql.GetErrors(ctx)[before:]) {
				return
			}
			if tags, ok := commentWriteTags(ctx, fc.Field.Name, fc.Field.ArgumentMap(oc.Variables)); ok {
				answers.Invalidate(tags...)
				return
			}
			answers.InvalidateAll()
		}()
		return next(ctx)
	}
}

// commentWriteTags returns the tags of what the comment mutation field
// with args changes; false when field is no comment's write or its post
// is not known.
func commentWriteTags(ctx context.Context, field string, args map[string]any) ([]string, bool) {
	input, _ := args["input"].(map[string]any)
	var postID string
	switch field {
	case "addComment":
		gid, _ := input["postId"].(string)
		id, err := decodeIDOf("postId", gid, kindPost)
		if err != nil {
			return nil, false
		}
		postID = id
	case "updateComment", "deleteComment", "approveComment", "rejectComment":
		gid, _ := input["id"].(string)
		key, err := decodeCommentID("id", gid)
		if err != nil {
			return nil, false
		}
		postID = key.PostID
	default:
		return nil, false
	}
	tags := []string{frontend.TagComments(postID)}
	if a := auth.ActorFrom(ctx); !a.Anonymous() {
		tags = append(tags, TagReader(a.ID))
	}
	return tags, true
}

// bySlug returns a function that tags the answer of ctx with the author
// it is given, found by slug: one found by an earlier slug is not kept,
// since another author's write may take the slug over and no event of
// this one's would name it.
func bySlug(ctx context.Context, slug string) func(*storage.Author, error) (*storage.Author, error) {
	return func(a *storage.Author, err error) (*storage.Author, error) {
		if err == nil {
			gqlhttp.Tag(ctx, frontend.TagAuthor(a.ID))
			if a.Slug != slug {
				gqlhttp.Untagged(ctx)
			}
		}
		return a, err
	}
}

// refusedCodes are the codes of errors that refuse a write before it is
// made, or whose transaction was cancelled: nothing changed.
var refusedCodes = map[string]bool{
	CodeUnauthenticated: true, CodeForbidden: true, CodeBadUserInput: true,
	CodeNotFound: true, CodeConflict: true, CodeRateLimited: true,
}

// refused reports whether errs, the errors a mutation's root field added,
// include one of the field itself (not of its payload) that refused the
// write.
func refused(errs gqlerror.List) bool {
	for _, e := range errs {
		if code, _ := e.Extensions["code"].(string); len(e.Path) == 1 && refusedCodes[code] {
			return true
		}
	}
	return false
}
