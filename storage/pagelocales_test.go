package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/internal/migrations"
	"github.com/blogql/blog/storage/legacytest"
)

// localePageIDs returns the ids of the pages LocalePages lists for
// locale, in order.
func (e *env) localePageIDs(locale string) string {
	e.t.Helper()
	var ids []string
	for _, p := range must[*storage.Result[*storage.SitePage]](e.t)(e.store.LocalePages(context.Background(), locale, storage.PageArgs{Limit: 100})).Items {
		ids = append(ids, p.ID)
	}
	return strings.Join(ids, ",")
}

// TestMigrateLocalePageCopies turns published pages with a locale back
// into what was written before the lists of a locale's pages existed:
// the checker reports each, the sweep gives them their copies (a draft
// and a page without a locale none), first stopped half-way as a crash
// would, then to the end, with no new version; the lists answer them and
// the checker finds nothing.
func TestMigrateLocalePageCopies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var fr, published []string
	for i, locale := range []string{"fr", "en", "", "fr", "fr"} {
		p := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: fmt.Sprint("Page ", i), Slug: fmt.Sprint("page-", i), Body: "Texte", Locale: locale}))
		p = must[*storage.SitePage](t)(e.store.PublishPage(ctx, storage.PageRef{ID: p.ID}))
		if locale != "" {
			published = append(published, p.ID)
		}
		if locale == "fr" {
			fr = append(fr, p.ID)
		}
	}
	must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: "Brouillon", Slug: "brouillon", Locale: "fr"}))
	equal(t, "fr pages as written", e.localePageIDs("fr"), strings.Join(fr, ","))
	versions := map[string]int64{}
	for _, id := range published {
		versions[id] = must[*storage.SitePage](t)(e.store.GetPage(ctx, id)).Version
	}

	equal(t, "copies deleted", must[int](t)(legacytest.WithoutLocalePageCopies(ctx, e.client, e.table)), len(published))
	bad := strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	equal(t, "pages reported without their copy", strings.Count(bad, "lacks its copy in the list of"), len(published))
	equal(t, "fr pages without copies", e.localePageIDs("fr"), "")

	stopped := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithMigrationStop(1, 2))
	first, err := stopped.MigrateLocaleCopies(ctx)
	if !errors.Is(err, migrations.ErrStopped) || first.Pages == 0 {
		t.Fatalf("migrate = %+v, %v; want some pages done and the sweep stopped", first, err)
	}
	m := must[storage.LocaleCopies](t)(e.store.MigrateLocaleCopies(ctx))
	equal(t, "pages given their copy", first.Pages+m.Pages, len(published))
	equal(t, "fr pages after the sweep", e.localePageIDs("fr"), strings.Join(fr, ","))
	equal(t, "en pages after the sweep", e.localePageIDs("en"), published[1])
	for _, id := range published {
		equal(t, "version of "+id, must[*storage.SitePage](t)(e.store.GetPage(ctx, id)).Version, versions[id])
	}
	e.consistent()
}

// TestCheckFindsLocalePageCopiesAdrift changes a page's copy behind its
// back, leaves a copy to a deleted page and gives a draft one: the
// checker reports each.
func TestCheckFindsLocalePageCopiesAdrift(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var ids []string
	for i := range 3 {
		p := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: fmt.Sprint("Page ", i), Slug: fmt.Sprint("page-", i), Body: "Texte", Locale: "fr"}))
		ids = append(ids, must[*storage.SitePage](t)(e.store.PublishPage(ctx, storage.PageRef{ID: p.ID})).ID)
	}
	e.consistent()
	scan := must[*dynamodb.ScanOutput](t)(e.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)}))
	copies := map[string]map[string]types.AttributeValue{}
	for _, it := range scan.Items {
		if sk, ok := it["SK"].(*types.AttributeValueMemberS); ok && sk.Value == "LOCALEPAGE" {
			copies[it["id"].(*types.AttributeValueMemberS).Value] = it
		}
	}
	equal(t, "copies", len(copies), 3)
	// A stale title; a page deleted without its copy (put back after);
	// a draft with a copy (its copy put back after the unpublishing).
	copies[ids[0]]["title"] = &types.AttributeValueMemberS{Value: "Ancien titre"}
	must[*storage.SitePage](t)(e.store.DeletePage(ctx, storage.PageRef{ID: ids[1]}))
	must[*storage.SitePage](t)(e.store.UnpublishPage(ctx, storage.PageRef{ID: ids[2]}))
	for _, id := range ids {
		must[*dynamodb.PutItemOutput](t)(e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: copies[id]}))
	}
	bad := strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	for _, want := range []string{
		"page " + ids[0] + " has a copy in the list of fr that disagrees with it",
		"page " + ids[1] + " is gone, its copy in the list of fr is not",
		"page " + ids[2] + " has a copy in the list of fr, which a draft or a page without a locale must not have",
	} {
		if !strings.Contains(bad, want) {
			t.Errorf("the checker found %q, want %q among it", bad, want)
		}
	}
}
