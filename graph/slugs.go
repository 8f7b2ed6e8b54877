package graph

import (
	"fmt"

	"github.com/blogql/blog/storage"
)

// Lookups by slug (post, page, author, category, tag, series) answer a
// slug that no item can have as they answer one that no item has: null
// with NOT_FOUND, before any read. A frontend passes a URL's segment on
// as a slug (/posts/Hello-World, /favicon.ico), and its route should
// answer 404 for it, not fail. Inputs that write a slug still refuse a
// malformed one with BAD_USER_INPUT.

// findable returns nil when slug can be an item's slug, else an error
// that is storage.ErrNotFound.
func findable(slug string) error {
	if storage.ValidSlug(slug) {
		return nil
	}
	return fmt.Errorf("slug %q: %w", slug, storage.ErrNotFound)
}
