package storage

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Pages by locale: a published page with a locale stored has one more
// item, its copy in its locale's list (LOCALEPAGE in its partition, in
// GSI1 partition LOCALE#<locale>#PAGES by the order and id that PAGES
// lists it by), so LocalePages is one Query of that locale's pages alone,
// as Pages is of all of them. The copy is the whole page item but its
// membership of translations (transGroup, transVer), which links change
// without writing the copy: a page read from it says so (LocaleCopy),
// and its group is read from the page. Every write of the page writes
// the copy in its transaction: writePage (created, edited, published,
// unpublished, deleted; a new locale moves it, its sort key being the
// same in every locale), rerenderPage, and a link that stores the
// default locale of a page that had none (pageJoined). Pages without a
// locale stored are in no locale's list, as posts are.
//
// Pages written before the copies existed lack them: Check reports
// them, the page's next write adds its copy, and migrateLocalePageCopies
// (run by MigrateLocaleCopies) adds them all beside live servers.

const typeLocalePage = "localePage"

// localeCopy returns the copy of the page in its locale's list: nil for
// a draft or a page without a locale stored.
func (it pageItem) localeCopy(ks keys.Space) *pageItem {
	if it.Status != string(StatusPublished) || it.Locale == "" {
		return nil
	}
	k := ks.LocalePageCopy(it.ID)
	it.PK, it.SK, it.Type = k.PK, k.SK, typeLocalePage
	it.GSI1PK, it.GSI1SK = ks.LocalePagesPartition(it.Locale), keys.PageSort(it.Order, it.ID)
	it.TransGroup, it.TransVer = "", 0
	return &it
}

// writeLocalePageCopy adds to t the write that takes the locale copy of
// a page from before to after (nil: no page): a put of after's copy, or
// the deletion of before's when after has none. The page's own write in
// t is guarded, so the copy needs no condition of its own.
func writeLocalePageCopy(ks keys.Space, t *dynamo.Txn, before, after *pageItem) error {
	var had, has *pageItem
	if before != nil {
		had = before.localeCopy(ks)
	}
	if after != nil {
		has = after.localeCopy(ks)
	}
	switch {
	case has != nil:
		return t.Put(has, nil, dynamo.ErrRetry)
	case had != nil:
		return t.Delete(ks.LocalePageCopy(had.ID), nil, dynamo.ErrRetry)
	}
	return nil
}

// pageJoined adds to a link's transaction the locale copy of the page p
// (as read) when the link stores locale as its own, a page without one
// taking the default; and returns the condition that the page is still
// at the version and renderer the copy was made from (a re-render keeps
// the version). Nothing for a page whose locale stays.
func pageJoined(ks keys.Space, t *dynamo.Txn, p *transMember, locale string) (*expression.ConditionBuilder, error) {
	pg, ok := p.item.(*pageItem)
	if !ok || pg.Locale == locale {
		return nil, nil
	}
	after := *pg
	after.Locale = locale
	if err := writeLocalePageCopy(ks, t, pg, &after); err != nil {
		return nil, err
	}
	return ptr(condVersion(pg.Version).And(sameOrAbsent("renderVersion", pg.RenderVersion))), nil
}

// LocalePages returns the published pages of locale (canonicalised
// first; a *ValidationError when it is not BCP 47) by order then
// creation: one Query of the locale's GSI1 partition of pages. Pages
// without a locale stored are left out, though they read as the site's
// default locale. The pages are marked LocaleCopy: their translation
// group is the page's to tell.
func (s *Store) LocalePages(ctx context.Context, locale string, p PageArgs) (*Result[*SitePage], error) {
	locale, err := CanonicalLocale("locale", locale)
	if err != nil {
		return nil, err
	}
	return queryPage(ctx, s, listQuery{
		list: "locale-pages:" + locale, index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.LocalePagesPartition(locale))),
	}, p, func(it *pageItem) *SitePage {
		pg := it.page()
		pg.LocaleCopy = true
		return pg
	})
}

// checkLocalePages reports every page whose locale copy is missing, one
// it must not have (a draft's, a page's without a locale), one that
// disagrees with it, and every copy whose page is gone.
func checkLocalePages(ks keys.Space, pages, copies map[string]*pageItem) []string {
	var bad []string
	for id, pg := range pages {
		want, have := pg.localeCopy(ks), copies[id]
		switch {
		case want == nil && have != nil:
			bad = append(bad, fmt.Sprintf("page %s has a copy in the list of %s, which a draft or a page without a locale must not have", id, have.Locale))
		case want != nil && have == nil:
			bad = append(bad, fmt.Sprintf("page %s lacks its copy in the list of %s", id, want.Locale))
		case want != nil && !reflect.DeepEqual(*want, *have):
			bad = append(bad, fmt.Sprintf("page %s has a copy in the list of %s that disagrees with it", id, have.Locale))
		}
	}
	for id, c := range copies {
		if pages[id] == nil {
			bad = append(bad, fmt.Sprintf("page %s is gone, its copy in the list of %s is not", id, c.Locale))
		}
	}
	return bad
}

// migrateLocalePageCopies writes the locale copies that published pages
// with a locale written before them lack, as MigrateLocaleCopies does
// for posts (the same sweep, with a checkpoint of its own,
// LocalePageCopiesMark): it reads GSI1 partition PAGES a page at a time,
// and for each page with a locale reads the page and its copy (one
// consistent BatchGetItem), and when the copy is missing writes it in
// one TransactWriteItems that checks the page is still at the version and
// renderer read. It writes no version and no updatedAt. It returns how
// many copies it wrote.
func (s *Store) migrateLocalePageCopies(ctx context.Context) (int, error) {
	n := 0
	err := s.sweepGSI1(ctx, "locale copies of pages", s.ks.LocalePageCopiesMark(), s.ks.Partition(keys.PagesPartition),
		func(it map[string]types.AttributeValue) error {
			var pg struct {
				ID     string `dynamodbav:"id"`
				Locale string `dynamodbav:"locale"`
			}
			if err := attributevalue.UnmarshalMap(it, &pg); err != nil {
				return fmt.Errorf("decode page: %w", err)
			}
			if pg.Locale == "" {
				return nil
			}
			added, err := s.addLocalePageCopy(ctx, pg.ID)
			if added {
				n++
			}
			return err
		})
	return n, err
}

// addLocalePageCopy writes the locale copy the page id lacks, and
// reports whether it did: not for a page that is gone, a draft, one
// without a locale or one that has its copy.
func (s *Store) addLocalePageCopy(ctx context.Context, id string) (bool, error) {
	return dynamo.RetryWrite(ctx, func() (bool, error) {
		found, err := s.db.BatchGet(ctx, []key{s.ks.Page(id), s.ks.LocalePageCopy(id)}, true)
		if err != nil {
			return false, fmt.Errorf("locale copy of page %q: %w", id, err)
		}
		var pg pageItem
		switch err := dynamo.DecodeFound(found, s.ks.Page(id), &pg); {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("locale copy of page %q: %w", id, err)
		}
		c := pg.localeCopy(s.ks)
		if _, ok := found[s.ks.LocalePageCopy(id)]; ok || c == nil {
			return false, nil
		}
		t := s.db.NewTxn()
		if err := errors.Join(t.Put(c, ptr(dynamo.CondNotExists()), dynamo.ErrRetry),
			t.Check(s.ks.Page(id), condVersion(pg.Version).And(sameOrAbsent("renderVersion", pg.RenderVersion)), dynamo.ErrRetry)); err != nil {
			return false, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return false, fmt.Errorf("locale copy of page %q: %w", id, err)
		}
		return true, nil
	})
}
