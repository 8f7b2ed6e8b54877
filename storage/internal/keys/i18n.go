package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The prefixes of the keys of locales and translations.
const (
	PrefixLocale      = "LOCALE#"
	PrefixTranslation = "TRANSLATIONS#"
)

// LocaleCopy is the post-in-locale copy of a published post that has a
// locale.
func (s Space) LocaleCopy(postID, locale string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixLocale + locale}
}

// LocalePartition is the GSI1 partition of a locale's posts, newest
// first by PostSort.
func (s Space) LocalePartition(locale string) string { return s.prefix + PrefixLocale + locale }

// TranslationGroup is the item of a group of posts that translate one
// another.
func (s Space) TranslationGroup(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixTranslation + id, SK: PrefixTranslation + id}
}

// The sort keys of the locale's copies of a post in a category or a tag
// (locale-qualified lists): they hold the slug but not the locale, so a
// post's new locale overwrites its copies.
const (
	PrefixLocaleCategory = "LOCALECAT#"
	PrefixLocaleTag      = "LOCALETAG#"
)

// LocaleCategoryCopy is the copy of a published post with a locale in
// the list of its locale's posts of the category slug.
func (s Space) LocaleCategoryCopy(postID, slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixLocaleCategory + slug}
}

// LocaleTagCopy is the copy of a published post with a locale in the
// list of its locale's posts of the tag slug.
func (s Space) LocaleTagCopy(postID, slug string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + postID, SK: PrefixLocaleTag + slug}
}

// LocaleCategoryPartition is the GSI1 partition of the posts in locale of
// the category slug, newest first by PostSort.
func (s Space) LocaleCategoryPartition(locale, slug string) string {
	return s.LocalePartition(locale) + "#" + PrefixCategory + slug
}

// LocaleTagPartition is the GSI1 partition of the posts in locale of the
// tag slug, newest first by PostSort.
func (s Space) LocaleTagPartition(locale, slug string) string {
	return s.LocalePartition(locale) + "#" + PrefixTag + slug
}

// LocaleAuthorPartition is the GSI1 partition of the posts in locale of
// the author authorID (their author copies), newest first by PostSort.
func (s Space) LocaleAuthorPartition(locale, authorID string) string {
	return s.LocalePartition(locale) + "#" + PrefixAuthor + authorID
}

// LocaleCopiesMark is where the sweep that writes the locale copies of
// posts written before them is (storage/localecopies.go).
func (s Space) LocaleCopiesMark() dynamo.Key {
	return dynamo.Key{PK: s.prefix + "MIGRATION#LOCALECOPIES", SK: "MIGRATION#LOCALECOPIES"}
}

// PrefixLocalePage is the sort key of a published page's copy in its
// locale's list of pages.
const PrefixLocalePage = "LOCALEPAGE"

// LocalePageCopy is the copy of a published page that has a locale, in
// its locale's list of pages; one a page, whatever its locale, so a new
// locale overwrites it.
func (s Space) LocalePageCopy(pageID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPage + pageID, SK: PrefixLocalePage}
}

// LocalePagesPartition is the GSI1 partition of the published pages in
// locale, by PageSort.
func (s Space) LocalePagesPartition(locale string) string {
	return s.LocalePartition(locale) + "#PAGES"
}

// LocalePageCopiesMark is where the sweep that writes the locale copies
// of pages written before them is (storage/pagelocales.go).
func (s Space) LocalePageCopiesMark() dynamo.Key {
	return dynamo.Key{PK: s.prefix + "MIGRATION#LOCALEPAGECOPIES", SK: "MIGRATION#LOCALEPAGECOPIES"}
}
