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
