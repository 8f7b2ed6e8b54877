package routing

import (
	"slices"
	"strings"

	"github.com/blogql/blog/storage"
)

// Forget drops what the router holds of the publications events change:
// for each publication.updated (a publication created or removed, or its
// hosts, slug, title or status changed), the answers of the hosts it left
// and of those the platform's pattern made of the slugs it left, the
// answers of its hosts and its pattern host unless they already name it
// (an event that changes none of them, such as one the server's own start
// wrote, costs no lookup), and its built handler. The change feed's
// Subscribe calls it on every server; it returns at once. A lookup under
// way for a host dropped is not kept (otter discards a value loaded across
// an invalidation), and the next is made again, after the write.
func (rt *Router) Forget(events []storage.LoggedEvent) {
	for _, e := range events {
		if e.Type != storage.EventPublicationUpdated {
			continue
		}
		for _, h := range e.Data.PreviousHosts {
			rt.hosts.Invalidate(strings.ToLower(h))
		}
		for _, slug := range e.Data.PreviousSlugs {
			if h, ok := rt.opts.Pattern.Host(slug); ok {
				rt.hosts.Invalidate(h)
			}
		}
		current := slices.Clone(e.Data.Hosts)
		if h, ok := rt.opts.Pattern.Host(e.Data.Slug); ok && !slices.Contains(e.Data.PreviousSlugs, e.Data.Slug) {
			current = append(current, h)
		}
		for _, h := range current {
			h = strings.ToLower(h)
			if id, held := rt.hosts.GetIfPresent(h); !held || id != e.Publication || e.Publication == "" {
				rt.hosts.Invalidate(h)
			}
		}
		if e.Publication != "" {
			rt.sites.Invalidate(e.Publication)
		}
	}
}
