package graph

import (
	"fmt"

	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage"
)

// Lookups by slug (post, page, author, category, tag, series) answer a
// slug that no item can have as they answer one that no item has: null
// with NOT_FOUND, before any read. A frontend passes a URL's segment on
// as a slug (/posts/Hello-World, /favicon.ico), and its route should
// answer 404 for it, not fail. Inputs that write a slug still refuse a
// malformed one with BAD_USER_INPUT.

// A slug looked up is first made canonical (slugs.Canonical: NFC, lower
// case), so a decomposed or upper-case form finds the item, whose slug
// field then shows the stored form: a frontend redirects to it as it does
// for an old slug.

// findable returns slug in its canonical form when that can be an item's
// slug, else an error that is storage.ErrNotFound.
func findable(slug string) (string, error) {
	if c := slugs.Canonical(slug); storage.ValidSlug(c) {
		return c, nil
	}
	return "", fmt.Errorf("slug %q: %w", slug, storage.ErrNotFound)
}
