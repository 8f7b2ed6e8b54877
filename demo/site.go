package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/blogql/blog/storage"
)

// The demo's static pages and site settings, so the playground has a
// page(slug:) to read, pages for a menu, and a site with menus.

// demoPage is a static page of the demo blog; parent names another's slug.
type demoPage struct {
	slug, title, body, parent string
	order                     int
}

var demoPages = []demoPage{
	{slug: "about", title: "About", order: 0, body: "# About this blog\n\n" +
		"Notes on building services with Go and DynamoDB, written by the people who run them.\n\n" +
		"## Who writes here\n\nFive engineers who like small, boring, dependable systems.\n\n" +
		"## How we publish\n\nEvery post is reviewed before it goes out; corrections are noted at the end of a post."},
	{slug: "team", title: "The team", parent: "about", order: 1, body: "# The team\n\n" +
		"Each author has a page listing their posts: follow a byline from any post."},
	{slug: "contact", title: "Contact", order: 2, body: "# Contact\n\n" +
		"Found a mistake or want to suggest a topic? Leave a comment under any post."},
}

// demoSite are the demo blog's settings.
func demoSite() storage.SitePatch {
	menus := []storage.Menu{
		{Name: "main", Items: []storage.MenuItem{
			{Label: "About", Kind: storage.LinkPage, Slug: "about"},
			{Label: "Go", Kind: storage.LinkCategory, Slug: "go"},
			{Label: "DynamoDB", Kind: storage.LinkCategory, Slug: "dynamodb"},
			{Label: "Contact", Kind: storage.LinkPage, Slug: "contact"},
		}},
		{Name: "footer", Items: []storage.MenuItem{
			{Label: "Feed", Kind: storage.LinkURL, URL: "/feed.xml"},
			{Label: "Sitemap", Kind: storage.LinkURL, URL: "/sitemap.xml"},
		}},
	}
	social := []storage.SocialAccount{{Network: "GitHub", URL: "https://github.com/blogql"}}
	return storage.SitePatch{
		Title:       new("Notes on Go and DynamoDB"),
		Description: new("Building dependable services with Go and Amazon DynamoDB."),
		Locale:      new("en"),
		Timezone:    new("UTC"),
		Menus:       &menus,
		Social:      &social,
	}
}

// seedSite creates the demo's pages that are missing (published) and the
// site settings when they were never set: a second run writes nothing,
// and settings or pages changed since are left alone.
func seedSite(ctx context.Context, store *storage.Store) error {
	ids := map[string]string{}
	for _, dp := range demoPages {
		p, err := store.GetPageBySlug(ctx, dp.slug)
		switch {
		case err == nil:
			ids[dp.slug] = p.ID
			continue
		case !errors.Is(err, storage.ErrNotFound):
			return fmt.Errorf("read page %q: %w", dp.slug, err)
		}
		p, err = store.CreatePage(ctx, storage.NewPage{Slug: dp.slug, Title: dp.title, Body: dp.body, Order: dp.order, ParentID: ids[dp.parent]})
		if errors.Is(err, storage.ErrSlugTaken) {
			continue // a draft page, or a post, holds it: left alone
		}
		if err != nil {
			return fmt.Errorf("create page %q: %w", dp.slug, err)
		}
		ids[dp.slug] = p.ID
		if _, err := store.PublishPage(ctx, storage.PageRef{ID: p.ID}); err != nil {
			return fmt.Errorf("publish page %q: %w", dp.slug, err)
		}
	}
	site, err := store.Site(ctx)
	if err != nil {
		return fmt.Errorf("read site settings: %w", err)
	}
	if site.Version > 0 {
		return nil
	}
	if _, err := store.UpdateSite(ctx, demoSite()); err != nil && !errors.Is(err, storage.ErrVersionConflict) {
		return fmt.Errorf("write site settings: %w", err)
	}
	return nil
}
