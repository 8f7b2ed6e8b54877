package graph

import (
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
)

// The size of answers, before execution: fields whose values can be large
// cost what they can hold (sizeCost), so a post's body costs 101 like 101
// fields and the complexity limit admits one page of 100 posts with their
// bodies (the largest listing the design has) and refuses many of them;
// an operation reserves costBytes of the server's memory budget for each
// unit of its complexity (gqlhttp.Options.ComplexityBytes). During
// execution a post's body and HTML are charged to the request as they are
// read and answered (chargedPosts, answered in posts.go), which stops the
// request at the response limit (gqlhttp.MaxResponseBytes).

// costBytes is how much of an answer one unit of cost stands for, what a
// small field (an id, a date, a name, a cursor) may take: a field that can
// hold 10 KB (a comment's body) costs what 10 small ones do.
const costBytes = 1024

// sizeCost returns the complexity of a field whose value may take maxBytes
// in an answer: 1, and 1 more for every costBytes it may hold.
func sizeCost(maxBytes int) func(int) int {
	cost := 1 + maxBytes/costBytes
	return func(int) int { return cost }
}

// withSizeCosts gives the large fields of the schema their cost. Lengths in
// characters take up to 4 bytes each.
func withSizeCosts(c *ComplexityRoot) {
	c.Post.Body = sizeCost(storage.MaxBodyBytes)
	c.Post.BodyHTML = sizeCost(markdown.MaxHTMLBytes)
	c.Post.Excerpt = sizeCost(4 * storage.MaxExcerptLength)
	c.Post.Title = sizeCost(4 * storage.MaxTitleLength)
	c.Publication.Title = sizeCost(4 * storage.MaxTitleLength)
	c.Publication.Hosts = sizeCost(storage.MaxPublicationHosts * storage.MaxHostLength)
	c.Comment.Body = sizeCost(storage.MaxCommentBytes)
	c.Author.Bio = sizeCost(4 * storage.MaxBioLength)
	c.Author.AvatarURL = sizeCost(4 * storage.MaxURLLength)
	c.Category.Description = sizeCost(4 * storage.MaxDescriptionLength)
	c.SearchResult.Title = sizeCost(search.MaxTitleHTMLBytes)
	c.Page.Body = sizeCost(storage.MaxBodyBytes)
	c.Page.BodyHTML = sizeCost(markdown.MaxHTMLBytes)
	c.Site.Description = sizeCost(4 * storage.MaxDescriptionLength)
	c.LocalizedSite.Description = sizeCost(4 * storage.MaxDescriptionLength)
	c.Revision.Body = sizeCost(storage.MaxBodyBytes)
	c.SearchResult.Snippet = sizeCost(search.MaxSnippetBytes)
	c.Seo.Description = sizeCost(4 * max(storage.MaxSEODescription, storage.MaxExcerptLength))
	c.Image.Alt = sizeCost(4 * storage.MaxAltLength)
	c.Webhook.Description = sizeCost(4 * storage.MaxWebhookDescriptionRunes)
	c.Webhook.URL = sizeCost(storage.MaxWebhookURLLength)
	c.MenuItem.Path = sizeCost(storage.MaxURLLength + 200)
	url := sizeCost(storage.MaxURLLength)
	c.Image.URL, c.Seo.CanonicalURL, c.Seo.OgImage = url, url, url
	c.Author.Website, c.Commenter.AvatarURL, c.SocialAccount.URL, c.MenuItem.URL = url, url, url, url
	c.ReaderSessionPayload.RedirectTo = url
	c.Site.URL, c.Site.LogoURL, c.Site.IconURL, c.Site.PostPath, c.Site.PagePath = url, url, url, url, url
	c.Head.JSONLd = sizeCost(maxHeadJSONLDBytes)
	c.Head.Description = sizeCost(maxHeadTextBytes)
	c.Head.CanonicalURL = sizeCost(maxHeadURLBytes)
	c.MetaTag.Content = sizeCost(maxHeadTextBytes)
	c.OutboxEmail.Text, c.OutboxEmail.HTML = sizeCost(storage.MaxMailBodyBytes), sizeCost(storage.MaxMailBodyBytes)
	c.Image.Placeholder = sizeCost(media.MaxPlaceholderBytes)
	c.Image.Srcset = func(int, *model.ImageFormat) int { return sizeCost(maxSrcsetBytes)(0) }
	c.Upload.URL = sizeCost(maxUploadURLBytes)
}

// The media library's longest texts: a srcset lists every width's URL
// (storage.MaxURLLength bounds the server's public URL), and a presigned
// URL adds its signature's query to the bucket's endpoint.
const (
	maxSrcsetBytes    = 6 * (storage.MaxURLLength + 64)
	maxUploadURLBytes = storage.MaxURLLength + 1024
)
