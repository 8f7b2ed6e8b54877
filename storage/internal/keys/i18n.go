package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The prefixes of the keys of locales and translations.
const (
	PrefixLocale      = "LOCALE#"
	PrefixTranslation = "TRANSLATIONS#"
)

// LocaleCopy is the post-in-locale copy of a published post that has a
// locale.
func LocaleCopy(postID, locale string) dynamo.Key {
	return dynamo.Key{PK: PrefixPost + postID, SK: PrefixLocale + locale}
}

// LocalePartition is the GSI1 partition of a locale's posts, newest
// first by PostSort.
func LocalePartition(locale string) string { return PrefixLocale + locale }

// TranslationGroup is the item of a group of posts that translate one
// another.
func TranslationGroup(id string) dynamo.Key {
	return dynamo.Key{PK: PrefixTranslation + id, SK: PrefixTranslation + id}
}
