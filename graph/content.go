package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// fullPost returns p when it is a post item, else (a summary from a list)
// the post item through the request's loader: one batch read for a page,
// which primeFullPosts makes beforehand when the page selects such fields.
func fullPost(ctx context.Context, p *storage.Post) (*storage.Post, error) {
	if !p.Summary {
		return p, nil
	}
	return loadersFor(ctx).posts.Load(ctx, p.ID)()
}

// fullPostFields are the fields of a post in a page of posts that only
// the post item has.
var fullPostFields = []string{
	"edges.node.body", "edges.node.bodyHtml", "edges.node.toc", "edges.node.seo", "edges.node.comments.totalCount",
}

// seoOf returns what search engines see of p: its SEO fields, each unset
// one standing in for by the post's title, excerpt or cover image.
func seoOf(p *storage.Post) *model.Seo {
	seo := &model.Seo{Title: p.SEO.Title, Description: p.SEO.Description, CanonicalURL: nonEmpty(p.SEO.CanonicalURL), OgImage: nonEmpty(p.SEO.OGImage)}
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

// nonEmpty returns a pointer to s, or nil for the empty string.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// positive returns a pointer to n, or nil for zero (unknown).
func positive(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
