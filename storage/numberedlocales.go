package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/blogql/blog/storage/internal/keys"
)

// Numbered pages in one locale. A list of posts in a locale (the whole
// blog's, a category's, a tag's, an author's: locales.go) is a GSI1
// partition of its own, LOCALE#<locale> followed by the list's name, so
// it gets a page index as every list does (numbered.go): the pages worker
// rebuilds the lists in the locale a post has and had, besides the lists
// without a locale, and page n is the same two reads as without a locale.
// A month's list has no locale of its own.

// LocalePageList returns the name of the list in locale (canonicalised
// first) of the list named list (FeedPartition, CategoryListPartition,
// TagListPartition or AuthorListPartition), which NumberedPosts takes: a
// *ValidationError when locale is not BCP 47 or list is a month's.
func LocalePageList(locale, list string) (string, error) {
	c, err := CanonicalLocale("locale", locale)
	if err != nil {
		return "", err
	}
	if strings.Contains(list, monthSep) {
		return "", invalid("locale", "cannot go with a month")
	}
	return localeList(c, list), nil
}

// listInLocale returns the list named list in locale (LocalePageList),
// or list itself when locale is "".
func listInLocale(list, locale string) (string, error) {
	if locale == "" {
		return list, nil
	}
	return LocalePageList(locale, list)
}

// localeList returns the list in the canonical locale of the list named
// list; its name is its GSI1 partition in the publication's space, as
// keys.Space.LocalePartition and the others build it.
func localeList(locale, list string) string {
	if list == keys.FeedPartition {
		return keys.PrefixLocale + locale
	}
	return keys.PrefixLocale + locale + "#" + list
}

// withoutLocale returns the list named list without its locale: list
// itself when it has none.
func withoutLocale(list string) string {
	rest, ok := strings.CutPrefix(list, keys.PrefixLocale)
	if !ok {
		return list
	}
	if _, l, ok := strings.Cut(rest, "#"); ok {
		return l
	}
	return keys.FeedPartition
}

// siteLocaleLists returns the lists of lists in each of the site's
// locales, for SyncAllPages; months have none.
func (s *Store) siteLocaleLists(ctx context.Context, lists []string) ([]string, error) {
	site, err := s.Site(ctx)
	if err != nil {
		return nil, fmt.Errorf("sync all pages: %w", err)
	}
	var out []string
	for _, l := range site.Locales {
		for _, list := range lists {
			if !strings.Contains(list, monthSep) {
				out = append(out, localeList(l, list))
			}
		}
	}
	return out, nil
}
