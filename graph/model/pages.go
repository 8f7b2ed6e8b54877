package model

import "github.com/blogql/blog/storage"

// SitePageConnection is a page of the list of static pages.
type SitePageConnection struct {
	Edges    []*SitePageEdge
	PageInfo *PageInfo
}

// SitePageEdge is a static page with its cursor.
type SitePageEdge struct {
	Cursor string
	Node   *storage.SitePage
}
