package tests

import (
	"context"
	"fmt"

	graphpkg "github.com/blogql/blog/graph"
)

// The mixed workload's static pages and site settings: admins write them,
// authors are refused (FORBIDDEN), pages take slugs of posts and of other
// pages now and then (CONFLICT), and every write with an expected version
// may meet another's (CONFLICT).

// mixPage is a static page as the clients know it.
type mixPage struct {
	gid, slug string
	version   int
}

func (c *mixClient) page() *mixPage {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pages) == 0 {
		return nil
	}
	return m.pages[c.rng.IntN(len(m.pages))]
}

// pageRefusals are the refusals of a write of a page: it may be deleted,
// and only admins write pages.
func (c *mixClient) pageRefusals(more ...string) []string {
	out := append([]string{graphpkg.CodeNotFound}, more...)
	if !c.user.admin {
		out = append(out, graphpkg.CodeForbidden)
	}
	return out
}

func pageResult(p PageParts) string {
	return fmt.Sprintf("%s %s v%d %s", p.Id, p.Slug, p.Version, p.Status)
}

func (m *mix) pageVersion(gid string, v int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.pages {
		if p.gid == gid {
			p.version = max(p.version, v)
		}
	}
}

func nextCreatePage(c *mixClient) *mixCall {
	m := c.m
	slug := "pg-" + c.tag()
	refusals := []string{}
	if c.rng.IntN(4) == 0 {
		// A slug a post or another page holds: SLUG_TAKEN, whichever.
		m.mu.Lock()
		switch {
		case len(m.posts) > 0 && c.rng.IntN(2) == 0:
			slug = m.posts[c.rng.IntN(len(m.posts))].slug
		case len(m.pages) > 0:
			slug = m.pages[c.rng.IntN(len(m.pages))].slug
		}
		m.mu.Unlock()
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	body := "# " + slug + "\n\nA page."
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := CreatePage(ctx, c.user.client, CreatePageInput{Title: "Page " + slug, Slug: slug, Body: &body, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		p := r.CreatePage.Page.PageParts
		m.mu.Lock()
		known := false
		for _, k := range m.pages {
			known = known || k.gid == p.Id
		}
		if !known {
			m.pages = append(m.pages, &mixPage{gid: p.Id, slug: p.Slug, version: p.Version})
		}
		m.mu.Unlock()
		return pageResult(p), nil
	}}
}

func nextUpdatePage(c *mixClient) *mixCall {
	m := c.m
	p := c.page()
	if p == nil {
		return nil
	}
	m.mu.Lock()
	in := UpdatePageInput{Id: p.gid, ExpectedVersion: p.version, Title: ptr("Title " + c.tag())}
	m.mu.Unlock()
	if c.rng.IntN(3) == 0 {
		in.Slug = ptr("pg-" + c.tag())
	}
	if c.rng.IntN(2) == 0 {
		in.Body = ptr("## Edited " + c.tag() + "\n\nText.")
		in.Order = ptr(c.rng.IntN(10))
	}
	return &mixCall{refusals: c.pageRefusals(graphpkg.CodeConflict), send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := UpdatePage(ctx, c.user.client, in)
		if err != nil {
			if v, ok := extension(err, "currentVersion").(float64); ok {
				m.pageVersion(p.gid, int(v))
			}
			return "", err
		}
		got := r.UpdatePage.Page.PageParts
		m.pageVersion(p.gid, got.Version)
		return pageResult(got), nil
	}}
}

func nextPublishPage(publish bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		p := c.page()
		if p == nil {
			return nil
		}
		if publish {
			return &mixCall{refusals: c.pageRefusals(), send: func(ctx context.Context, key *string) (string, error) {
				r, err := PublishPage(ctx, c.user.client, PublishPageInput{Id: p.gid, IdempotencyKey: key})
				if err != nil {
					return "", err
				}
				got := r.PublishPage.Page.PageParts
				m.pageVersion(p.gid, got.Version)
				return pageResult(got), nil
			}}
		}
		// A draft is not published: BAD_USER_INPUT, until another publishes it.
		return &mixCall{refusals: c.pageRefusals(graphpkg.CodeBadUserInput), flips: []string{graphpkg.CodeBadUserInput},
			send: func(ctx context.Context, key *string) (string, error) {
				r, err := UnpublishPage(ctx, c.user.client, UnpublishPageInput{Id: p.gid, IdempotencyKey: key})
				if err != nil {
					return "", err
				}
				got := r.UnpublishPage.Page.PageParts
				m.pageVersion(p.gid, got.Version)
				return pageResult(got), nil
			}}
	}
}

func nextDeletePage(c *mixClient) *mixCall {
	p := c.page()
	if p == nil {
		return nil
	}
	return &mixCall{refusals: c.pageRefusals(), send: func(ctx context.Context, key *string) (string, error) {
		r, err := DeletePage(ctx, c.user.client, DeletePageInput{Id: p.gid, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		return r.DeletePage.DeletedId, nil
	}}
}

func nextUpdateSite(c *mixClient) *mixCall {
	m := c.m
	m.mu.Lock()
	in := UpdateSiteInput{ExpectedVersion: m.siteVer, Title: ptr("Blog " + c.tag())}
	m.mu.Unlock()
	refusals := []string{graphpkg.CodeConflict}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := UpdateSite(ctx, c.user.client, in)
		v, ok := extension(err, "currentVersion").(float64)
		if err == nil {
			v, ok = float64(r.UpdateSite.Site.Version), true
		}
		if ok {
			m.mu.Lock()
			m.siteVer = max(m.siteVer, int(v))
			m.mu.Unlock()
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s v%d", r.UpdateSite.Site.Title, r.UpdateSite.Site.Version), nil
	}}
}
