package storage

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"golang.org/x/text/language"

	"github.com/blogql/blog/storage/internal/keys"
)

// Locales: a post has a locale, a BCP 47 language tag kept in its
// canonical form (language.Parse: "EN-gb" is "en-GB"). A post written
// without one has none stored and reads as the site's default locale
// (Site.DefaultLocale), whichever it is then; linking it to a
// translation stores the default with its copies (translations.go,
// postlocalelink.go). A published post with a locale stored has one
// more copy, LOCALE#<locale> in its partition, in the GSI1 partition of
// its locale's list (LocalePosts),
// and one more in each of its categories and tags (LOCALECAT#<slug>,
// LOCALETAG#<slug>) in the GSI1 partition of that list in its locale;
// its author copies are in GSI1 too, in their author's list in its
// locale. So every list filtered by locale is one Query.

const (
	typeLocalePost         = "localePost"
	typeLocaleCategoryPost = "localeCategoryPost"
	typeLocaleTagPost      = "localeTagPost"
)

// MaxLocales is how many locales a site may list.
const MaxLocales = 50

// maxLocaleLength bounds a language tag, as BCP 47 recommends tags of
// at most 35 characters be kept.
const maxLocaleLength = 35

// CanonicalLocale returns the canonical form of the BCP 47 language tag
// v, or a *ValidationError on field when v is not one ("und", the tag of
// no language, is not one either).
func CanonicalLocale(field, v string) (string, error) {
	tag, err := language.Parse(v)
	if err != nil || len(v) > maxLocaleLength || tag == language.Und {
		return "", invalid(field, "%q is not a BCP 47 language tag such as en, pt-BR or zh-Hant", v)
	}
	return tag.String(), nil
}

// canonicalLocales returns the canonical forms of vs, refusing a tag
// given twice (in any form).
func canonicalLocales(field string, vs []string) ([]string, error) {
	if len(vs) > MaxLocales {
		return nil, invalid(field, "may hold at most %d locales", MaxLocales)
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		c, err := CanonicalLocale(field, v)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, c) {
			return nil, invalid(field, "holds %s twice", c)
		}
		out = append(out, c)
	}
	return out, nil
}

// DefaultLocale returns the site's default locale: the first of Locales,
// else Locale, else "".
func (s *Site) DefaultLocale() string {
	if len(s.Locales) > 0 {
		return s.Locales[0]
	}
	return s.Locale
}

// defaultLocale returns the site's default locale (no read once the
// server holds the settings).
func (s *Store) defaultLocale(ctx context.Context) (string, error) {
	site, err := s.Site(ctx)
	if err != nil {
		return "", err
	}
	return site.DefaultLocale(), nil
}

// localeCopy returns the post-in-locale copy of a published post.
func (it postItem) localeCopy(ks keys.Space) postItem {
	k := ks.LocaleCopy(it.ID, it.Locale)
	it = it.summary()
	it.PK, it.SK, it.Type = k.PK, k.SK, typeLocalePost
	it.GSI1PK, it.GSI1SK = ks.LocalePartition(it.Locale), keys.PostSort(it.publishedAt(), it.ID)
	return it
}

// localeListCopies returns the copies of a published post with a locale
// in its locale's lists of its categories and tags: none without a
// locale.
func (it postItem) localeListCopies(ks keys.Space) []postItem {
	if it.Locale == "" {
		return nil
	}
	sort := keys.PostSort(it.publishedAt(), it.ID)
	summary := it.summary()
	var out []postItem
	add := func(k key, typ, part string) {
		c := summary
		c.PK, c.SK, c.Type, c.GSI1PK, c.GSI1SK = k.PK, k.SK, typ, part, sort
		out = append(out, c)
	}
	for _, c := range it.Cats {
		add(ks.LocaleCategoryCopy(it.ID, c.Slug), typeLocaleCategoryPost, ks.LocaleCategoryPartition(it.Locale, c.Slug))
	}
	for _, t := range it.Tags {
		add(ks.LocaleTagCopy(it.ID, t.Slug), typeLocaleTagPost, ks.LocaleTagPartition(it.Locale, t.Slug))
	}
	return out
}

// LocalePosts returns the visible posts in locale (canonicalised first),
// newest first: one Query of the locale's GSI1 partition. Posts that
// have no locale stored (written without one) are left out, though they
// read as the site's default locale.
func (s *Store) LocalePosts(ctx context.Context, locale string, p PageArgs, per Period) (*Result[*Post], error) {
	return s.LocaleListPosts(ctx, LocaleList{Locale: locale}, p, per)
}

// postLocale returns the locale a post written with v has: v's
// canonical form, or "" (the site's default, whichever it is when the
// post is read) when v is empty. It reads nothing, so a write of a post
// costs no read of the settings.
func postLocale(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	return CanonicalLocale("locale", v)
}

// condTransVer holds when the post item's translation version is v.
func condTransVer(v int64) expression.ConditionBuilder {
	if v == 0 {
		return expression.Name("transVer").AttributeNotExists()
	}
	return expression.Name("transVer").Equal(expression.Value(v))
}

// LocaleList names a list of posts in one locale: a category's (by
// slug), a tag's (by slug), an author's (by id), or with none of them
// the whole blog's (LocalePosts).
type LocaleList struct {
	Locale           string
	Category, Tag    string
	Author           string
	IncludeScheduled bool // an author's list only: their scheduled posts too
}

// partition returns the GSI1 partition of l in locale, the name of its
// list (for its cursors) and the upper bound of its sort keys.
func (l LocaleList) partition(s *Store, locale string) (part, list, upper string) {
	upper = s.visibleBound()
	switch {
	case l.Category != "":
		return s.ks.LocaleCategoryPartition(locale, l.Category), "category-posts:" + l.Category + "@" + locale, upper
	case l.Tag != "":
		return s.ks.LocaleTagPartition(locale, l.Tag), "tag-posts:" + l.Tag + "@" + locale, upper
	case l.Author != "" && l.IncludeScheduled:
		return s.ks.LocaleAuthorPartition(locale, l.Author), "author-posts:" + l.Author + ":all@" + locale, keys.PrefixPost + "~"
	case l.Author != "":
		return s.ks.LocaleAuthorPartition(locale, l.Author), "author-posts:" + l.Author + "@" + locale, upper
	}
	return s.ks.LocalePartition(locale), "locale-posts:" + locale, upper
}

// LocaleListPosts returns a page of the list l in per, newest first: one
// Query of the list's own GSI1 partition in its locale (canonicalised
// first; a *ValidationError when it is not BCP 47). Posts without a
// locale stored are in no such list, as in LocalePosts.
func (s *Store) LocaleListPosts(ctx context.Context, l LocaleList, p PageArgs, per Period) (*Result[*Post], error) {
	locale, err := CanonicalLocale("locale", l.Locale)
	if err != nil {
		return nil, err
	}
	part, list, upper := l.partition(s, locale)
	lo, hi, list, empty, err := postRange(per, list, upper)
	if err != nil {
		return nil, err
	}
	return queryPage(ctx, s, listQuery{
		list:  list,
		index: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(part)).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
	}, p, (*postItem).post)
}

// CountLocaleListPosts counts the posts of the list l in per: a Query
// with Select COUNT of its partition (one a MB of keys), since no count
// is kept per locale.
func (s *Store) CountLocaleListPosts(ctx context.Context, l LocaleList, per Period) (int64, error) {
	locale, err := CanonicalLocale("locale", l.Locale)
	if err != nil {
		return 0, err
	}
	part, list, upper := l.partition(s, locale)
	lo, hi, _, empty, err := postRange(per, "", upper)
	if err != nil || empty {
		return 0, err
	}
	return s.count(ctx, list, true, expression.Key(keys.AttrGSI1PK).Equal(expression.Value(part)).
		And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi))))
}
