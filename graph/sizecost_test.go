package graph

import (
	"context"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// textBytes is the most bytes the value of each text field of the schema
// can hold, from the limit that bounds it (storage's validation limits,
// markdown's rendering limits, the longest id, cursor or token that is
// read back), counted as withSizeCosts counts: a length in characters
// takes up to 4 bytes each, a URL, slug or anchor is ASCII. Every field of
// an object type whose scalar holds text (String, ID) needs an entry, so
// that a new one is weighed when it is added: one that can hold more than
// costBytes needs a size cost in withSizeCosts, or a page of a hundred of
// them passes the complexity limit whatever their size.
var textBytes = map[string]int{
	"Post.id":          maxGlobalIDLen,
	"Post.slug":        storage.MaxSlugLength,
	"Post.title":       4 * storage.MaxTitleLength,
	"Post.excerpt":     4 * storage.MaxExcerptLength, // or a derived one, shorter
	"Post.body":        storage.MaxBodyBytes,
	"Post.bodyHtml":    markdown.MaxHTMLBytes,
	"Image.url":        storage.MaxURLLength,
	"Image.alt":        4 * storage.MaxAltLength,
	"Seo.title":        4 * storage.MaxTitleLength,
	"Seo.description":  4 * max(storage.MaxSEODescription, storage.MaxExcerptLength), // or the post's excerpt
	"Seo.canonicalUrl": storage.MaxURLLength,
	"Seo.ogImage":      storage.MaxURLLength,
	"Heading.text":     4 * (markdown.MaxHeadingText + 1), // cut with "…"
	"Heading.anchor":   markdown.MaxAnchor + 32,           // a slug with a short prefix or "-N" suffix

	"Author.id":        maxGlobalIDLen,
	"Author.slug":      storage.MaxSlugLength,
	"Author.name":      4 * storage.MaxNameLength,
	"Author.bio":       4 * storage.MaxBioLength,
	"Author.avatarUrl": storage.MaxURLLength,

	"Category.id":          maxGlobalIDLen,
	"Category.slug":        storage.MaxSlugLength,
	"Category.name":        4 * storage.MaxNameLength,
	"Category.description": 4 * storage.MaxDescriptionLength,
	"Tag.slug":             storage.MaxSlugLength,
	"Tag.name":             4 * storage.MaxTagNameLength,

	"Publication.id":         36, // a UUID, or "default"
	"Publication.slug":       storage.MaxSlugBytes,
	"Publication.title":      4 * storage.MaxTitleLength,
	"Publication.hosts":      storage.MaxPublicationHosts * storage.MaxHostLength,
	"Publication.locales":    35, // each, a BCP 47 tag, as Site.locales
	"PublicationEdge.cursor": cursorBytes,

	"PublicationMemberEdge.cursor": cursorBytes,
	"PublicationMember.account":    storage.MaxIDLength,
	"PublicationMember.email":      storage.MaxEmailLength,

	"ViewsOnDay.date":      len("2006-01-02"),
	"ReferrerViews.domain": 253, // a DNS name (views.ReferrerDomain)

	"Comment.id":                            maxGlobalIDLen,
	"Comment.body":                          storage.MaxCommentBytes,
	"Commenter.name":                        4 * storage.MaxNameLength,
	"Commenter.avatarUrl":                   storage.MaxURLLength,
	"DeleteCommentPayload.deletedCommentId": maxGlobalIDLen,

	"CommentEvent.cursor":            64, // a sealed position: 16 bytes of tag and up to 23 of position, in base64
	"PostEvent.cursor":               64,
	"Query.liveCursor":               64,
	"PostEvent.postId":               maxGlobalIDLen,
	"CommentChangeEvent.cursor":      64,
	"CommentChangeEvent.commentId":   maxGlobalIDLen,
	"PageInfo.startCursor":           cursorBytes,
	"PageInfo.endCursor":             cursorBytes,
	"PostEdge.cursor":                cursorBytes,
	"AuthorEdge.cursor":              cursorBytes,
	"CommentEdge.cursor":             cursorBytes,
	"SearchEdge.cursor":              cursorBytes,
	"SearchResult.title":             search.MaxTitleHTMLBytes,
	"SearchResult.snippet":           search.MaxSnippetBytes,
	"SearchFacet.slug":               storage.MaxSlugLength,
	"TagEdge.cursor":                 cursorBytes,
	"CreatePreviewLinkPayload.token": maxPreviewLen,

	// Featured posts, series and revisions.
	"Series.slug":              storage.MaxSlugLength,
	"Series.title":             4 * storage.MaxTitleLength,
	"Series.description":       4 * storage.MaxExcerptLength,
	"DeleteSeriesPayload.slug": storage.MaxSlugLength,
	"SeriesEdge.cursor":        cursorBytes,
	"Revision.id":              maxGlobalIDLen,
	"Revision.changedFields":   len("coverImage"),
	"Revision.title":           4 * storage.MaxTitleLength,
	"Revision.excerpt":         4 * storage.MaxExcerptLength,
	"Revision.body":            storage.MaxBodyBytes,
	"RevisionEdge.cursor":      cursorBytes,

	"Webhook.id":                        maxGlobalIDLen,
	"Webhook.url":                       storage.MaxWebhookURLLength, // ASCII only
	"Webhook.events":                    webhooks.MaxEventTypeBytes,
	"Webhook.description":               4 * storage.MaxWebhookDescriptionRunes,
	"Webhook.disabledReason":            webhooks.MaxReasonBytes,
	"WebhookDelivery.eventId":           storage.MaxIDLength,
	"WebhookDelivery.eventType":         webhooks.MaxEventTypeBytes,
	"WebhookDelivery.error":             webhooks.MaxErrorBytes,
	"CreateWebhookPayload.secret":       webhooks.SecretLength,
	"RotateWebhookSecretPayload.secret": webhooks.SecretLength,
	"DeleteWebhookPayload.deletedId":    maxGlobalIDLen,

	// Pages and site.
	"Page.id":                     maxGlobalIDLen,
	"Page.slug":                   storage.MaxSlugLength,
	"Page.title":                  4 * storage.MaxTitleLength,
	"Page.body":                   storage.MaxBodyBytes,
	"Page.bodyHtml":               markdown.MaxHTMLBytes,
	"Page.parentId":               maxGlobalIDLen,
	"DeletePagePayload.deletedId": maxGlobalIDLen,
	"SitePageEdge.cursor":         cursorBytes,
	"MenuItem.label":              4 * storage.MaxLabelLength,
	"MenuItem.slug":               storage.MaxSlugLength,
	"MenuItem.url":                storage.MaxURLLength,
	"MenuItem.path":               storage.MaxURLLength + 200, // a pattern with a slug, or the URL
	"Menu.name":                   4 * storage.MaxLabelLength,
	"SocialAccount.network":       4 * storage.MaxLabelLength,
	"SocialAccount.url":           storage.MaxURLLength,
	"Site.title":                  4 * storage.MaxTitleLength,
	"Site.description":            4 * storage.MaxDescriptionLength,
	"Site.logoUrl":                storage.MaxURLLength,
	"Site.iconUrl":                storage.MaxURLLength,
	"Site.locale":                 35,
	"Site.timezone":               64,
	"Site.locales":                35, // each, a BCP 47 tag
	"Post.locale":                 35,
	"Page.locale":                 35,
	"Translation.locale":          35,
	"PageTranslation.locale":      35,
	"LocalizedSite.locale":        35,
	"LocalizedSite.title":         4 * storage.MaxTitleLength,
	"LocalizedSite.description":   4 * storage.MaxDescriptionLength,
	"Site.url":                    storage.MaxURLLength,
	"Site.postPath":               storage.MaxURLLength,
	"Site.pagePath":               storage.MaxURLLength,
	"Author.website":              storage.MaxURLLength,
	"Author.location":             4 * storage.MaxLabelLength,

	// Heads (head.go).
	"Head.title":        4 * storage.MaxTitleLength,
	"Head.description":  maxHeadTextBytes,
	"Head.canonicalUrl": maxHeadURLBytes,
	"Head.robots":       len("index, follow, max-image-preview:large"),
	"Head.jsonLd":       maxHeadJSONLDBytes,
	"MetaTag.attribute": len("property"),
	"MetaTag.key":       len("article:published_time"),
	"MetaTag.content":   maxHeadTextBytes,

	// Readers' sign-in (signin.go).
	"Account.id":              36, // a UUID
	"Account.email":           storage.MaxEmailLength,
	"ReaderSession.id":        36,
	"ReaderSession.userAgent": 4 * storage.MaxUserAgentLength,
	"OutboxEmail.id":          32,
	"OutboxEmail.to":          storage.MaxEmailLength,
	"OutboxEmail.subject":     4*storage.MaxTitleLength + len("Your sign-in link for "),
	"OutboxEmail.kind":        len("sign-in"),
	"OutboxEmail.state":       len(storage.MailPending),
	"OutboxEmail.transport":   len("local"),
	"OutboxEmail.text":        storage.MaxMailBodyBytes,
	"OutboxEmail.html":        storage.MaxMailBodyBytes,
	"OutboxEmail.lastError":   storage.MaxMailErrorBytes,
	// A JWT of a UUID subject and session, the reader role and the
	// configured issuer and audience.
	"ReaderSessionPayload.accessToken":  1000,
	"ReaderSessionPayload.refreshToken": 36 + 1 + 36 + 1 + 43,
	"ReaderSessionPayload.redirectTo":   storage.MaxURLLength,
	"SignOutPayload.sessionId":          36,
	// The media library (graph/media.go).
	"Image.placeholder":                media.MaxPlaceholderBytes,
	"Image.dominantColor":              len("#rrggbb"),
	"Image.srcset":                     maxSrcsetBytes,
	"Image.sizes":                      len("(max-width: 1920px) 100vw, 1920px"),
	"Media.id":                         storage.MaxIDLength,
	"Media.filename":                   media.MaxFilenameBytes,
	"Media.uploadedBy":                 auth.MaxSubjectLength,
	"MediaEdge.cursor":                 cursorBytes,
	"MemberEdge.cursor":                cursorBytes,
	"Member.accountId":                 36, // a UUID, as Account.id
	"DeleteMyAccountPayload.accountId": 36, // a UUID, as Account.id
	"Member.email":                     storage.MaxEmailLength,
	"Member.newsletters":               storage.MaxIDLength,
	"Upload.id":                        storage.MaxIDLength,
	"Upload.url":                       maxUploadURLBytes,
	"HttpHeader.name":                  len("Content-Length"),
	"HttpHeader.value":                 32, // a content type of the library, or a length
	"DeleteMediaPayload.deletedId":     storage.MaxIDLength,
}

// fixedSize are the scalars whose values are short whatever they hold;
// every other scalar (String, ID, and any new one) is text.
var fixedSize = map[string]bool{"Int": true, "Float": true, "Boolean": true, "DateTime": true}

// cursorBytes bounds a cursor: storage reads back none longer.
const cursorBytes = 1024

// TestLargeTextFieldsHaveSizeCosts fails when a field of the schema that
// can hold text has no declared size, or can hold more than costBytes and
// costs less than sizeCost gives for its size.
func TestLargeTextFieldsHaveSizeCosts(t *testing.T) {
	var costs ComplexityRoot
	withComplexity(&costs)
	es := NewExecutableSchema(Config{Complexity: costs})
	schema := es.Schema()
	seen := map[string]bool{}
	for _, def := range schema.Types {
		if def.BuiltIn || def.Kind != ast.Object {
			continue
		}
		for _, f := range def.Fields {
			if typ := schema.Types[f.Type.Name()]; typ.Kind != ast.Scalar || fixedSize[typ.Name] {
				continue
			}
			field := def.Name + "." + f.Name
			seen[field] = true
			size, ok := textBytes[field]
			if !ok {
				t.Errorf("%s holds text of no declared size: add the limit that bounds it to textBytes, and a size cost in withSizeCosts if it passes %d bytes", field, costBytes)
				continue
			}
			if size <= costBytes {
				continue
			}
			want := sizeCost(size)(0)
			got, ok := es.Complexity(context.Background(), def.Name, f.Name, 0, map[string]any{})
			if !ok || got < want {
				t.Errorf("%s can hold %d bytes but costs %d: give it sizeCost in withSizeCosts (%d)", field, size, max(got, 1), want)
			}
		}
	}
	for field := range textBytes {
		if !seen[field] {
			t.Errorf("textBytes names %s, which is no text field of the schema", field)
		}
	}
}
