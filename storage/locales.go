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
// translation stores the default (translations.go). A published post
// with a locale stored has one more copy, LOCALE#<locale> in its
// partition, in the GSI1 partition of its locale's list (LocalePosts).

const typeLocalePost = "localePost"

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

// LocalePosts returns the visible posts in locale (canonicalised first),
// newest first: one Query of the locale's GSI1 partition. Posts that
// have no locale stored (written without one) are left out, though they
// read as the site's default locale.
func (s *Store) LocalePosts(ctx context.Context, locale string, p PageArgs, per Period) (*Result[*Post], error) {
	locale, err := CanonicalLocale("locale", locale)
	if err != nil {
		return nil, err
	}
	lo, hi, list, empty, err := postRange(per, "locale-posts:"+locale, s.visibleBound())
	if err != nil {
		return nil, err
	}
	return queryPage(ctx, s, listQuery{
		list:  list,
		index: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.LocalePartition(locale))).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
	}, p, (*postItem).post)
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
