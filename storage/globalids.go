package storage

import "github.com/blogql/blog/frontend"

// The global ids GraphQL answers carry (frontend.GlobalID), as methods of
// the types that have one: computed from the object alone, they are served
// as the object's own fields, without a resolver of their own.

// GlobalID returns the post's global id.
func (p *Post) GlobalID() string { return frontend.PostGlobalID(p.ID) }

// GlobalID returns the author's global id.
func (a *Author) GlobalID() string { return frontend.AuthorGlobalID(a.ID) }

// GlobalID returns the category's global id, which names its slug.
func (c *Category) GlobalID() string { return frontend.GlobalID(frontend.TypeCategory, c.Slug) }

// GlobalID returns the comment's global id, which names its post too.
func (c *Comment) GlobalID() string { return frontend.CommentGlobalID(c.PostID, c.ID) }

// GlobalID returns the page's global id.
func (p *SitePage) GlobalID() string { return frontend.PageGlobalID(p.ID) }
