package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/demo"
)

// The tenant-isolation sweep: on the demo platform, one publication (A)
// gets a distinctive item of every kind, and every read and every
// mutation the schema has is tried on the other (B) with A's ids, slugs,
// tokens and previews. Nothing of A may show (its marker is searched for
// in every answer), A's ids are NOT_FOUND, BAD_USER_INPUT or FORBIDDEN,
// and A reads the same afterwards. The sweep runs both ways: Field Notes
// against the default publication, and the default against Field Notes.

// isoSide is one publication of the sweep and what was made on it.
type isoSide struct {
	name, host, slug, staff string
	writer                  string // the subject of the author made on the side
	marker                  string // in every title, name, body and description made on the side

	post, draft, scheduled, page, author, category, comment, media, webhook string
	categorySlug, tagSlug, seriesSlug, postSlug, draftSlug, pageSlug        string
	authorSlug, previewToken, readerSession, readerRefresh                  string
	liveCursor                                                              string // the event log's position before the side's items
	postVersion, pageVersion                                                int
}

// makeIsoSide makes, through s's host as its staff, an author, a
// category, a published, a draft and a scheduled post with a tag, a
// series, a comment, a reaction, a page, a media item, a webhook, the
// settings' description, a preview link and a reader's session, all
// carrying s's marker, and reads their ids.
func makeIsoSide(t *testing.T, base string, s *isoSide, platformAdmin string) {
	t.Helper()
	m, p := s.marker, strings.ToLower(s.name)
	do := func(query string, vars map[string]any, out any) {
		t.Helper()
		_, body := gqlVars(t, base, s.host, query, vars, s.staff)
		dataOf(t, s.name+": "+query, body, out)
	}
	var live struct{ LiveCursor string }
	do(`{ liveCursor }`, nil, &live)
	s.liveCursor = live.LiveCursor
	var author struct {
		CreateAuthor struct{ Author struct{ ID, Slug string } }
	}
	do(`mutation($in: CreateAuthorInput!) { createAuthor(input: $in) { author { id slug } } }`,
		map[string]any{"in": map[string]any{"subject": s.writer, "name": m + " Writer", "slug": "iso-writer-" + p}}, &author)
	s.author, s.authorSlug = author.CreateAuthor.Author.ID, author.CreateAuthor.Author.Slug

	var cat struct {
		CreateCategory struct{ Category struct{ ID string } }
	}
	s.categorySlug = "iso-cat-" + p
	do(`mutation($in: CreateCategoryInput!) { createCategory(input: $in) { category { id } } }`,
		map[string]any{"in": map[string]any{"slug": s.categorySlug, "name": m + " Category", "description": m}}, &cat)
	s.category = cat.CreateCategory.Category.ID

	s.tagSlug = "isotag" + p
	create := func(slug string) (string, int) {
		var made struct {
			CreatePost struct {
				Post struct {
					ID      string
					Version int
				}
			}
		}
		do(`mutation($in: CreatePostInput!) { createPost(input: $in) { post { id version } } }`, map[string]any{"in": map[string]any{
			"title": m + " " + slug, "slug": slug, "body": "The " + m + " body.", "excerpt": m, "categories": []string{s.categorySlug}, "tags": []string{s.tagSlug},
		}}, &made)
		return made.CreatePost.Post.ID, made.CreatePost.Post.Version
	}
	s.postSlug, s.draftSlug = "iso-post-"+p, "iso-draft-"+p
	s.post, _ = create(s.postSlug)
	s.draft, _ = create(s.draftSlug)
	s.scheduled, _ = create("iso-later-" + p)
	var published struct {
		PublishPost struct{ Post struct{ Version int } }
	}
	do(`mutation($id: ID!) { publishPost(input: {id: $id}) { post { version } } }`, map[string]any{"id": s.post}, &published)
	s.postVersion = published.PublishPost.Post.Version
	do(`mutation($id: ID!) { publishPost(input: {id: $id, at: "2099-01-01T00:00:00Z"}) { post { id } } }`, map[string]any{"id": s.scheduled}, &struct{}{})

	s.seriesSlug = "iso-series-" + p
	do(`mutation($in: CreateSeriesInput!) { createSeries(input: $in) { series { slug } } }`,
		map[string]any{"in": map[string]any{"slug": s.seriesSlug, "title": m + " Series", "description": m}}, &struct{}{})
	do(`mutation($in: AddPostToSeriesInput!) { addPostToSeries(input: $in) { series { slug } } }`,
		map[string]any{"in": map[string]any{"seriesSlug": s.seriesSlug, "postId": s.post}}, &struct{}{})

	var comment struct {
		AddComment struct{ Comment struct{ ID string } }
	}
	do(`mutation($id: ID!, $body: String!) { addComment(input: {postId: $id, body: $body}) { comment { id } } }`, map[string]any{"id": s.post, "body": m + " comment"}, &comment)
	s.comment = comment.AddComment.Comment.ID
	do(`mutation($id: ID!) { react(input: {subjectId: $id, kind: CLAP}) { __typename } }`, map[string]any{"id": s.post}, &struct{}{})

	var page struct {
		CreatePage struct {
			Page struct {
				ID      string
				Version int
			}
		}
	}
	s.pageSlug = "iso-page-" + p
	do(`mutation($in: CreatePageInput!) { createPage(input: $in) { page { id version } } }`,
		map[string]any{"in": map[string]any{"slug": s.pageSlug, "title": m + " Page", "body": m + " page body."}}, &page)
	s.page = page.CreatePage.Page.ID
	var pagePublished struct {
		PublishPage struct{ Page struct{ Version int } }
	}
	do(`mutation($id: ID!) { publishPage(input: {id: $id}) { page { version } } }`, map[string]any{"id": s.page}, &pagePublished)
	s.pageVersion = pagePublished.PublishPage.Page.Version

	s.media, _, _ = uploadAt(t, base, s.host, s.staff)
	do(`mutation($id: ID!, $alt: String!) { updateMedia(input: {id: $id, alt: $alt}) { media { id } } }`, map[string]any{"id": s.media, "alt": m + " picture"}, &struct{}{})

	var hook struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	do(`mutation($d: String!) { createWebhook(input: {url: "http://127.0.0.1:9/hook", events: ["post.published"], description: $d}) { webhook { id } } }`, map[string]any{"d": m + " hook"}, &hook)
	s.webhook = hook.CreateWebhook.Webhook.ID

	var site struct{ Site struct{ Version int } }
	do(`{ site { version } }`, nil, &site)
	do(`mutation($v: Int!, $d: String!) { updateSite(input: {expectedVersion: $v, description: $d}) { site { version } } }`, map[string]any{"v": site.Site.Version, "d": m + " blog"}, &struct{}{})

	var preview struct {
		CreatePreviewLink struct{ Token string }
	}
	do(`mutation($id: ID!) { createPreviewLink(input: {postId: $id}) { token } }`, map[string]any{"id": s.draft}, &preview)
	s.previewToken = preview.CreatePreviewLink.Token

	email := "iso-" + p + "@example.com"
	s.readerSession, s.readerRefresh = signInAt(t, base, s.host, isoFrontend+"/welcome", email, pubsiteTokens{adminA: platformAdmin})
	_, body := gqlVars(t, base, s.host, `mutation($id: ID!) { react(input: {subjectId: $id, kind: INSIGHTFUL}) { __typename } }`, map[string]any{"id": s.post}, s.readerSession)
	dataOf(t, s.name+": a reader's reaction", body, &struct{}{})
}

// isoFrontend is the origin of the frontend both publications' sign-in
// links lead to (the sites' own origins name the server's port only on
// the embedded engine).
const isoFrontend = "http://frontend.example"

// isoOp is one request of the sweep: the root fields it covers, its
// query and variables, and which token sends it.
type isoOp struct {
	fields []string
	query  string
	vars   map[string]any
	as     string // "staff" (B's), "anon", "foreignStaff" (A's), "foreignReader" (A's reader)
}

// isoLikeMissing are the variables, by mutation, naming what exists
// nowhere: a mutation here answers an id of another publication as it
// answers these, rather than with an error.
var isoLikeMissing = map[string]map[string]any{
	"signOut":    {"t": "AAAA.BBBB.CCCC"},
	"recordView": {"post": isoMissingPost},
}

// isoReads are the reads tried on B with A's ids and slugs.
func isoReads(a *isoSide) []isoOp {
	ids := map[string]any{"post": a.post, "draft": a.draft, "sched": a.scheduled, "page": a.page, "author": a.author, "cat": a.category, "comment": a.comment, "media": a.media}
	return []isoOp{
		{[]string{"post"}, `query($post: ID!, $draft: ID!, $sched: ID!) { a: post(id: $post) { title } b: post(id: $draft) { title } c: post(id: $sched) { title } }`, ids, "staff"},
		{[]string{"post"}, fmt.Sprintf(`{ a: post(slug: %q) { title } b: post(slug: %q) { title } }`, a.postSlug, a.draftSlug), nil, "staff"},
		{[]string{"post"}, `query($t: String!) { post(previewToken: $t) { title body } }`, map[string]any{"t": a.previewToken}, "anon"},
		{[]string{"node"}, `query($post: ID!, $draft: ID!, $page: ID!, $author: ID!, $cat: ID!, $comment: ID!, $media: ID!) {
			a: node(id: $post) { id } b: node(id: $draft) { id } c: node(id: $page) { id } d: node(id: $author) { id }
			e: node(id: $cat) { id } f: node(id: $comment) { id } g: node(id: $media) { id } }`, ids, "staff"},
		{[]string{"posts", "featuredPosts"}, `{ posts(first: 100) { edges { node { title } } } featuredPosts(first: 100) { edges { node { title } } } }`, nil, "staff"},
		{[]string{"postPage"}, fmt.Sprintf(`{ a: postPage(number: 1, size: 100) { nodes { title } } b: postPage(number: 1, category: %q) { nodes { title } } c: postPage(number: 1, tag: %q) { nodes { title } } }`, a.categorySlug, a.tagSlug), nil, "staff"},
		{[]string{"archive"}, fmt.Sprintf(`query($author: ID!) { a: archive { month } b: archive(author: $author) { month } c: archive(category: %q) { month } d: archive(authorSlug: %q) { month } }`, a.categorySlug, a.authorSlug), ids, "staff"},
		{[]string{"author", "viewer"}, fmt.Sprintf(`query($author: ID!) { a: author(id: $author) { name } b: author(slug: %q) { name } viewer { name } }`, a.authorSlug), ids, "staff"},
		{[]string{"authors"}, `{ authors(first: 100) { edges { node { name drafts(first: 100) { edges { node { title } } } } } } }`, nil, "staff"},
		{[]string{"category"}, fmt.Sprintf(`query($cat: ID!) { a: category(id: $cat) { name } b: category(slug: %q) { name } }`, a.categorySlug), ids, "staff"},
		{[]string{"categories"}, `{ categories { name description } }`, nil, "staff"},
		{[]string{"moderationQueue"}, `{ moderationQueue(first: 100) { edges { node { body } } } }`, nil, "staff"},
		{[]string{"search"}, `query($q: String!) { search(query: $q, first: 50) { edges { node { __typename ... on Post { title } } } } }`, map[string]any{"q": a.marker}, "staff"},
		{[]string{"webhooks"}, `{ webhooks { id description url } }`, nil, "staff"},
		{[]string{"tag"}, fmt.Sprintf(`{ tag(slug: %q) { name posts(first: 10) { edges { node { title } } } } }`, a.tagSlug), nil, "staff"},
		{[]string{"tags"}, `{ tags(first: 100) { edges { node { name } } } }`, nil, "staff"},
		{[]string{"page"}, fmt.Sprintf(`query($page: ID!) { a: page(id: $page) { title } b: page(slug: %q) { title } }`, a.pageSlug), ids, "staff"},
		{[]string{"pages"}, `{ a: pages(first: 100) { edges { node { title } } } b: pages(first: 100, drafts: true) { edges { node { title } } } }`, nil, "staff"},
		{[]string{"site"}, `{ site { title description } }`, nil, "staff"},
		{[]string{"series"}, fmt.Sprintf(`{ series(slug: %q) { title } }`, a.seriesSlug), nil, "staff"},
		{[]string{"allSeries"}, `{ allSeries(first: 100) { edges { node { title } } } }`, nil, "staff"},
		{[]string{"media", "mediaUsage"}, `{ media(first: 100) { edges { node { id image { alt } } } } mediaUsage { __typename } }`, nil, "staff"},
		{[]string{"popularPosts"}, `{ a: popularPosts(period: DAY, first: 100) { post { title } } b: popularPosts(period: ALL_TIME, first: 100) { post { title } } }`, nil, "staff"},
		{[]string{"members"}, `{ members(first: 100) { edges { node { email } } } }`, nil, "staff"},
		{[]string{"publication"}, fmt.Sprintf(`{ a: publication(slug: %q) { id slug title } b: publication(host: %q) { id slug title } }`, a.slug, strings.Split(a.host, ":")[0]), nil, "staff"},
		{[]string{"account"}, `{ account { id email } }`, nil, "foreignReader"},
		{[]string{"posts"}, `{ posts(first: 100) { edges { node { title } } } drafts: authors(first: 100) { edges { node { drafts(first: 100) { edges { node { title } } } } } } }`, nil, "foreignStaff"},
	}
}

// isoReadsElsewhere are the root fields not in isoReads, and why.
var isoReadsElsewhere = map[string]string{
	"liveCursor":         "a position in the event log, no content",
	"outboxEmails":       "refused to anyone but the platform (TestPublicationReadersAndMedia)",
	"publications":       "the platform's directory, refused to a publication's staff (TestPublicationsOverGraphQL)",
	"publicationMembers": "tried in the mutations' sweep with A's slug",
}

// isoMutations are the mutations tried on B with A's ids.
func isoMutations(a, b *isoSide) []isoOp {
	v := map[string]any{"post": a.post, "draft": a.draft, "page": a.page, "author": a.author, "cat": a.category, "comment": a.comment,
		"media": a.media, "hook": a.webhook, "bpost": b.post, "bpage": b.page, "pv": a.postVersion, "gv": a.pageVersion, "bpv": b.postVersion, "bgv": b.pageVersion}
	op := func(field, query string) isoOp {
		decls := isoVarDecls(query)
		if decls != "" {
			decls = "(" + decls + ")"
		}
		return isoOp{[]string{field}, "mutation" + decls + " { " + query + " }", v, "staff"}
	}
	return []isoOp{
		op("updateAuthor", `updateAuthor(input: {id: $author, name: "Taken"}) { author { id } }`),
		op("updateCategory", `updateCategory(input: {id: $cat, name: "Taken"}) { category { id } }`),
		op("updatePost", `updatePost(input: {id: $post, expectedVersion: $pv, title: "Taken"}) { post { id } }`),
		op("updatePost", `updatePost(input: {id: $bpost, expectedVersion: $bpv, coverMediaId: $media}) { post { id } }`),
		op("publishPost", `publishPost(input: {id: $draft}) { post { id } }`),
		op("unpublishPost", `unpublishPost(input: {id: $post}) { post { id } }`),
		op("deletePost", `deletePost(input: {id: $post}) { post { id } }`),
		op("setPostFeatured", `setPostFeatured(input: {id: $post, featured: true}) { post { id } }`),
		op("restorePostRevision", `restorePostRevision(input: {postId: $post, revisionId: $post, expectedVersion: $pv}) { post { id } }`),
		op("addComment", `addComment(input: {postId: $post, body: "Taken"}) { comment { id } }`),
		op("addComment", `addComment(input: {postId: $bpost, parentId: $comment, body: "Taken"}) { comment { id } }`),
		op("updateComment", `updateComment(input: {id: $comment, body: "Taken"}) { comment { id } }`),
		op("deleteComment", `deleteComment(input: {id: $comment}) { deletedCommentId }`),
		op("approveComment", `approveComment(input: {id: $comment}) { comment { id } }`),
		op("rejectComment", `rejectComment(input: {id: $comment}) { comment { id } }`),
		op("createPreviewLink", `createPreviewLink(input: {postId: $draft}) { token }`),
		op("react", `react(input: {subjectId: $post, kind: CLAP}) { __typename }`),
		op("unreact", `unreact(input: {subjectId: $post, kind: CLAP}) { __typename }`),
		op("linkTranslation", `linkTranslation(input: {postId: $bpost, translationId: $post}) { __typename }`),
		op("linkTranslation", `linkTranslation(input: {postId: $post, translationId: $bpost}) { __typename }`),
		op("unlinkTranslation", `unlinkTranslation(input: {postId: $post}) { __typename }`),
		op("updatePage", `updatePage(input: {id: $page, expectedVersion: $gv, title: "Taken"}) { page { id } }`),
		op("updatePage", `updatePage(input: {id: $bpage, expectedVersion: $bgv, parentId: $page}) { page { id } }`),
		op("publishPage", `publishPage(input: {id: $page}) { page { id } }`),
		op("unpublishPage", `unpublishPage(input: {id: $page}) { page { id } }`),
		op("deletePage", `deletePage(input: {id: $page}) { deletedId }`),
		op("linkPageTranslation", `linkPageTranslation(input: {pageId: $bpage, translationId: $page}) { __typename }`),
		op("unlinkPageTranslation", `unlinkPageTranslation(input: {pageId: $page}) { __typename }`),
		op("updateWebhook", `updateWebhook(input: {id: $hook, enabled: false}) { webhook { id } }`),
		op("deleteWebhook", `deleteWebhook(input: {id: $hook}) { deletedId }`),
		op("rotateWebhookSecret", `rotateWebhookSecret(input: {id: $hook}) { secret }`),
		op("pingWebhook", `pingWebhook(input: {id: $hook}) { __typename }`),
		op("redeliverWebhookEvent", `redeliverWebhookEvent(input: {webhookId: $hook, eventId: "0"}) { __typename }`),
		op("updateMedia", `updateMedia(input: {id: $media, alt: "Taken"}) { media { id } }`),
		op("deleteMedia", `deleteMedia(input: {id: $media, force: true}) { deletedId }`),
		op("completeUpload", `completeUpload(input: {id: $media}) { media { id } }`),
		op("updateSeries", fmt.Sprintf(`updateSeries(input: {slug: %q, title: "Taken"}) { series { slug } }`, a.seriesSlug)),
		op("deleteSeries", fmt.Sprintf(`deleteSeries(input: {slug: %q}) { slug }`, a.seriesSlug)),
		op("addPostToSeries", fmt.Sprintf(`addPostToSeries(input: {seriesSlug: %q, postId: $post}) { series { slug } }`, a.seriesSlug)),
		op("removePostFromSeries", fmt.Sprintf(`removePostFromSeries(input: {seriesSlug: %q, postId: $post}) { series { slug } }`, a.seriesSlug)),
		op("moveSeriesPost", fmt.Sprintf(`moveSeriesPost(input: {seriesSlug: %q, postId: $post, position: 0}) { series { slug } }`, a.seriesSlug)),
		op("renameTag", fmt.Sprintf(`renameTag(input: {slug: %q, name: "Taken"}) { tag { slug } }`, a.tagSlug)),
		op("mergeTags", fmt.Sprintf(`mergeTags(input: {from: %q, into: "taken"}) { tag { slug } }`, a.tagSlug)),
		op("addPublicationHost", fmt.Sprintf(`addPublicationHost(input: {id: %q, host: "taken.example"}) { publication { id } }`, a.slug)),
		op("removePublicationHost", fmt.Sprintf(`removePublicationHost(input: {id: %q, host: %q}) { publication { id } }`, a.slug, a.host)),
		op("setPublicationStatus", fmt.Sprintf(`setPublicationStatus(input: {id: %q, status: SUSPENDED}) { __typename }`, a.slug)),
		op("updatePublication", fmt.Sprintf(`updatePublication(input: {id: %q, title: "Taken"}) { __typename }`, a.slug)),
		op("setPublicationLimits", fmt.Sprintf(`setPublicationLimits(input: {id: %q, posts: 1}) { __typename }`, a.slug)),
		op("addPublicationMember", fmt.Sprintf(`addPublicationMember(input: {publication: %q, account: "taken", role: ADMIN}) { __typename }`, a.slug)),
		op("changePublicationMemberRole", fmt.Sprintf(`changePublicationMemberRole(input: {publication: %q, account: %q, role: CONTRIBUTOR}) { __typename }`, a.slug, a.writer)),
		op("removePublicationMember", fmt.Sprintf(`removePublicationMember(input: {publication: %q, account: %q}) { __typename }`, a.slug, a.writer)),
		{[]string{"publicationMembers"}, fmt.Sprintf(`{ publicationMembers(publication: %q, first: 10) { edges { node { __typename } } } }`, a.slug), nil, "staff"},
		{[]string{"refreshSession"}, `mutation($t: String!) { refreshSession(input: {refreshToken: $t}) { accessToken } }`, map[string]any{"t": a.readerRefresh}, "anon"},
		{[]string{"signOut"}, `mutation($t: String!) { signOut(input: {refreshToken: $t}) { __typename } }`, map[string]any{"t": a.readerRefresh}, "anon"},
		{[]string{"recordView"}, `mutation($post: ID!) { recordView(input: {postId: $post}) { counted } }`, map[string]any{"post": a.post}, "anon"},
		{[]string{"setReplyNotifications"}, `mutation { setReplyNotifications(input: {enabled: false}) { __typename } }`, nil, "foreignReader"},
		{[]string{"setNewsletterSubscription"}, `mutation { setNewsletterSubscription(input: {subscribed: false}) { __typename } }`, nil, "foreignReader"},
		{[]string{"deleteMyAccount"}, fmt.Sprintf(`mutation { deleteMyAccount(input: {email: "iso-%s@example.com"}) { __typename } }`, strings.ToLower(a.name)), nil, "foreignReader"},
		{[]string{"createPost"}, `mutation { createPost(input: {title: "Taken", slug: "taken"}) { post { id } } }`, nil, "foreignStaff"},
	}
}

// isoMutationsElsewhere are the mutations not in isoMutations, and why.
var isoMutationsElsewhere = map[string]string{
	"createAuthor": "takes no id of a publication", "createCategory": "takes no id of a publication",
	"createPage": "takes no id of a publication", "createSeries": "takes no id of a publication",
	"createWebhook": "takes no id of a publication", "createUpload": "takes no id of a publication",
	"updateSite": "takes no id of a publication", "requestSignInLink": "takes no id (TestPublicationReadersAndMedia)",
	"completeSignIn": "takes an emailed code", "revokeSession": "a reader's own sessions", "createPublication": "the platform's",
}

// isoVarDecls declares the variables query uses, from their names.
func isoVarDecls(query string) string {
	types := map[string]string{"pv": "Int!", "gv": "Int!", "bpv": "Int!", "bgv": "Int!"}
	var decls []string
	for _, name := range []string{"post", "draft", "page", "author", "cat", "comment", "media", "hook", "bpost", "bpage", "pv", "gv", "bpv", "bgv"} {
		if strings.Contains(query, "$"+name+",") || strings.Contains(query, "$"+name+"}") || strings.Contains(query, "$"+name+" ") {
			typ := types[name]
			if typ == "" {
				typ = "ID!"
			}
			decls = append(decls, "$"+name+": "+typ)
		}
	}
	return strings.Join(decls, ", ")
}

// isoMissingPost is the global id of a post no publication has.
var isoMissingPost = base64.RawURLEncoding.EncodeToString([]byte("Post:01ISOMISSING0000000000000"))

// isoAnswer returns the data and the error codes of a GraphQL answer,
// without its extensions (what it cost).
func isoAnswer(body string) string {
	var r struct {
		Data   json.RawMessage
		Errors []struct {
			Extensions struct{ Code string }
		}
	}
	_ = json.Unmarshal([]byte(body), &r)
	out := string(r.Data)
	for _, e := range r.Errors {
		out += " " + e.Extensions.Code
	}
	return out
}

// isoSubscription is a subscription tried on B with A's ids or cursor.
type isoSubscription struct {
	query string
	vars  map[string]any
}

// isoSubscriptions are the subscriptions tried on B: every field of
// Subscription is named in one.
func isoSubscriptions(a *isoSide) []isoSubscription {
	return []isoSubscription{
		{`subscription($id: ID!) { commentAdded(postId: $id) { cursor } }`, map[string]any{"id": a.post}},
		{`subscription($id: ID!) { commentUpdated(postId: $id) { cursor } }`, map[string]any{"id": a.post}},
		{`subscription($id: ID!) { postUpdated(id: $id) { cursor } }`, map[string]any{"id": a.post}},
		{`subscription($id: ID!) { postUpdated(id: $id) { cursor } }`, map[string]any{"id": a.draft}},
		{`subscription($after: String) { postPublished(after: $after) { post { title } } }`, map[string]any{"after": a.liveCursor}},
		{`subscription($after: String) { moderationQueueChanged(after: $after) { comment { body } } }`, map[string]any{"after": a.liveCursor}},
	}
}

// isoFirstEvent subscribes to query over server-sent events at host and
// returns the first message, an event or an error; the stream is closed
// after it.
func isoFirstEvent(t *testing.T, base, host, query string, vars map[string]any, auth string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	// The deadline only keeps a subscription that was wrongly accepted,
	// and so sends nothing, from holding the test.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	name, value, _ := strings.Cut(auth, ": ")
	req.Header.Set(name, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(data) != "" {
			return data
		}
	}
	return "no event: " + fmt.Sprint(sc.Err())
}

// isoCost returns the DynamoDB requests and read units of an answer.
func isoCost(body string) string {
	var r struct {
		Extensions struct{ Cost json.RawMessage }
	}
	_ = json.Unmarshal([]byte(body), &r)
	return string(r.Extensions.Cost)
}

// isoMissing returns a global id of gid's kind that names nothing: gid
// with the last character of its id changed.
func isoMissing(t *testing.T, gid string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(gid)
	if err != nil || len(b) < 2 {
		t.Fatalf("%q is not a global id", gid)
	}
	last := &b[len(b)-1]
	if *last == '0' {
		*last = '1'
	} else {
		*last = '0'
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// isoCodes are the answers an id of another publication may get.
var isoCodes = []string{"NOT_FOUND", "BAD_USER_INPUT", "FORBIDDEN", "UNAUTHENTICATED"}

// isoSweep runs the reads and mutations on b with a's ids, and the
// routes of b's host, and checks that nothing of a answers.
func isoSweep(t *testing.T, base string, a, b *isoSide) {
	tokens := map[string]string{"staff": b.staff, "foreignStaff": a.staff, "foreignReader": a.readerSession}
	leaks := func(body string) bool {
		lower := strings.ToLower(body)
		if strings.Contains(lower, strings.ToLower(a.marker)) {
			return true
		}
		for _, id := range []string{a.post, a.draft, a.scheduled, a.page, a.author, a.category, a.comment, a.media, a.webhook} {
			if strings.Contains(body, `"`+id+`"`) {
				return true
			}
		}
		return false
	}
	send := func(o isoOp) string {
		var headers []string
		if tok := tokens[o.as]; tok != "" {
			headers = append(headers, tok)
		}
		_, body := gqlVars(t, base, b.host, o.query, o.vars, headers...)
		return body
	}
	t.Run("reads", func(t *testing.T) {
		for _, o := range isoReads(a) {
			as := []string{o.as}
			if o.as == "staff" {
				as = append(as, "anon") // the answer cache's side
			}
			for _, who := range as {
				o.as = who
				if body := send(o); leaks(body) || strings.Contains(body, "INTERNAL") {
					t.Errorf("%v as %s: %.500s, want nothing of %s", o.fields, o.as, body, a.name)
				}
			}
		}
	})
	t.Run("mutations", func(t *testing.T) {
		for _, o := range isoMutations(a, b) {
			body := send(o)
			if missing := isoLikeMissing[o.fields[0]]; missing != nil {
				like := send(isoOp{query: o.query, vars: missing, as: o.as})
				if leaks(body) || isoAnswer(body) != isoAnswer(like) {
					t.Errorf("%v as %s: %.500s, want what a missing item gets: %.500s", o.fields, o.as, body, like)
				}
				continue
			}
			if leaks(body) || !slices.Contains(isoCodes, errorCode(body)) {
				t.Errorf("%v as %s: %.500s, want NOT_FOUND, BAD_USER_INPUT or FORBIDDEN", o.fields, o.as, body)
			}
		}
	})
	t.Run("an id of A costs what a missing id does", func(t *testing.T) {
		// The reads of one item each, whose requests do not hang on how
		// the loaders' batches fall; the others are compared by answer.
		for _, c := range []struct {
			query, id string
			costs     bool
		}{
			{`query($id: ID!) { post(id: $id) { title } }`, a.post, true},
			{`query($id: ID!) { post(id: $id) { title } }`, a.draft, true},
			{`query($id: ID!) { page(id: $id) { title } }`, a.page, true},
			{`query($id: ID!) { author(id: $id) { name } }`, a.author, true},
			{`query($id: ID!) { category(id: $id) { name } }`, a.category, false},
			{`query($id: ID!) { node(id: $id) { id } }`, a.comment, false},
			{`query($id: ID!) { node(id: $id) { id } }`, a.media, false},
		} {
			_, foreign := gqlVars(t, base, b.host, c.query, map[string]any{"id": c.id}, b.staff)
			_, missing := gqlVars(t, base, b.host, c.query, map[string]any{"id": isoMissing(t, c.id)}, b.staff)
			if isoAnswer(foreign) != isoAnswer(missing) || (c.costs && isoCost(foreign) != isoCost(missing)) {
				t.Errorf("%s with A's id: %.300s\nwith a missing id: %.300s", c.query, foreign, missing)
			}
		}
	})
	t.Run("A's cursors on B", func(t *testing.T) {
		for _, q := range []string{
			`posts(first: 1%s) { pageInfo { endCursor } }`,
			`tags(first: 1%s) { pageInfo { endCursor } }`,
			`allSeries(first: 1%s) { pageInfo { endCursor } }`,
			`media(first: 1%s) { pageInfo { endCursor } }`,
			`pages(first: 1%s) { pageInfo { endCursor } }`,
			`authors(first: 1%s) { pageInfo { endCursor } }`,
			`members(first: 1%s) { pageInfo { endCursor } }`,
		} {
			_, body := graphQLAt(t, base, a.host, "{ "+fmt.Sprintf(q, "")+" }", a.staff)
			var page map[string]struct{ PageInfo struct{ EndCursor string } }
			if err := json.Unmarshal([]byte(body), &struct{ Data any }{&page}); err != nil || errorCode(body) != "" {
				t.Fatalf("%s on A: %.300s", q, body)
			}
			for _, p := range page {
				if p.PageInfo.EndCursor == "" {
					continue
				}
				after := fmt.Sprintf(q, fmt.Sprintf(", after: %q", p.PageInfo.EndCursor))
				_, body := graphQLAt(t, base, b.host, "{ "+after+" }", b.staff)
				if leaks(body) || errorCode(body) != "BAD_USER_INPUT" {
					t.Errorf("%s on B: %.300s, want BAD_USER_INPUT", after, body)
				}
			}
		}
	})
	t.Run("subscriptions", func(t *testing.T) {
		for _, c := range isoSubscriptions(a) {
			first := isoFirstEvent(t, base, b.host, c.query, c.vars, b.staff)
			if leaks(first) || !slices.Contains(isoCodes, errorCode(first)) {
				t.Errorf("%s on B with A's %v: %.300s, want NOT_FOUND or BAD_USER_INPUT", c.query, c.vars, first)
			}
		}
	})
	t.Run("A's reader is still signed in on A", func(t *testing.T) {
		_, body := gqlVars(t, base, a.host, `mutation($t: String!) { refreshSession(input: {refreshToken: $t}) { accessToken refreshToken } }`,
			map[string]any{"t": a.readerRefresh})
		var done struct {
			RefreshSession struct{ AccessToken, RefreshToken string }
		}
		if errorCode(body) != "" || json.Unmarshal([]byte(body), &struct{ Data any }{&done}) != nil || done.RefreshSession.RefreshToken == "" {
			t.Fatalf("refreshSession on A after the sweep = %.300s, want a new token", body)
		}
		a.readerSession, a.readerRefresh = "Authorization: Bearer "+done.RefreshSession.AccessToken, done.RefreshSession.RefreshToken
	})
	t.Run("routes", func(t *testing.T) {
		paths := []string{"/feed.xml", "/atom.xml", "/feed.json", "/sitemap.xml", "/members.csv",
			"/categories/" + a.categorySlug + "/feed.xml", "/tags/" + a.tagSlug + "/feed.xml", "/series/" + a.seriesSlug + "/feed.xml",
			"/authors/" + a.authorSlug + "/feed.xml", "/v/" + rawPostID(t, a.post), "/me/export"}
		for _, path := range paths {
			for _, who := range []string{b.staff, a.staff, a.readerSession} {
				code, _, body := (request{url: base + path, host: b.host, headers: []string{who}}).do(t)
				if leaks(body) || code >= 500 {
					t.Errorf("%s%s: %d %.300s, want nothing of %s", b.host, path, code, body, a.name)
				}
			}
		}
	})
}

// isoSnapshot returns what a's staff reads of a's items.
func isoSnapshot(t *testing.T, base string, a *isoSide) string {
	t.Helper()
	_, body := gqlVars(t, base, a.host, `query($post: ID!, $draft: ID!, $page: ID!) {
		post(id: $post) { title version status featured comments(first: 10) { edges { node { id body status } } } }
		draft: post(id: $draft) { title version status }
		page(id: $page) { title version }
		webhooks { id description enabled }
		media(first: 100) { edges { node { id image { alt } } } }
		series(slug: "`+a.seriesSlug+`") { title posts(first: 10) { totalCount } }
		tag(slug: "`+a.tagSlug+`") { name }
		category(slug: "`+a.categorySlug+`") { name }
	}`, map[string]any{"post": a.post, "draft": a.draft, "page": a.page}, a.staff)
	if errorCode(body) != "" || !strings.Contains(body, a.marker) {
		t.Fatalf("%s reads its own items: %.600s", a.name, body)
	}
	return isoAnswer(body)
}

func TestTenantIsolationSweep(t *testing.T) {
	args, env, _ := platformBackend(t)
	base, _, stop := startServer(t, append(args, "-webhooks-allow-private-unsafe", "-webhooks-allow-http=true", "-cors-origins", isoFrontend, "-site-url", "http://blog.example"), env)
	defer stop()
	p := port(t, base)
	platformAdmin := platformToken(t, "admin", "ops")
	notes := &isoSide{name: "Notes", host: demo.NotesHost + ":" + p, slug: demo.NotesSlug, marker: "Zqxnotes", writer: "iso-notes",
		staff: pubToken(t, "owner", demo.NotesOwner, demo.NotesSlug)}
	def := &isoSide{name: "Default", host: "localhost:" + p, slug: "default", marker: "Zqxdefault", writer: "ops", staff: platformAdmin}
	makeIsoSide(t, base, notes, platformAdmin)
	makeIsoSide(t, base, def, platformAdmin)

	t.Run("every root field is swept", func(t *testing.T) {
		sdl, err := os.ReadFile("schema.graphqls")
		if err != nil {
			t.Fatal(err)
		}
		schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(sdl)})
		swept := map[string]bool{}
		for _, o := range append(isoReads(notes), isoMutations(notes, def)...) {
			for _, f := range o.fields {
				swept[f] = true
			}
		}
		for _, c := range isoSubscriptions(notes) {
			for _, f := range schema.Subscription.Fields {
				if strings.Contains(c.query, "{ "+f.Name+"(") {
					swept[f.Name] = true
				}
			}
		}
		for typ, elsewhere := range map[*ast.Definition]map[string]string{schema.Query: isoReadsElsewhere, schema.Mutation: isoMutationsElsewhere, schema.Subscription: nil} {
			for _, f := range typ.Fields {
				if !strings.HasPrefix(f.Name, "__") && !swept[f.Name] && elsewhere[f.Name] == "" {
					t.Errorf("%s.%s is in no tenant-isolation sweep: add it to isolation_test.go", typ.Name, f.Name)
				}
			}
		}
	})

	for _, c := range []struct{ a, b *isoSide }{{notes, def}, {def, notes}} {
		t.Run(c.a.name+" on "+c.b.name, func(t *testing.T) {
			before := isoSnapshot(t, base, c.a)
			isoSweep(t, base, c.a, c.b)
			if after := isoSnapshot(t, base, c.a); after != before {
				t.Errorf("%s changed:\nbefore %s\nafter  %s", c.a.name, before, after)
			}
		})
	}
}
