package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/legacytest"
)

// TestMigratedBlog serves a blog written by the previous version, once
// migrated: authors are found by the slugs the migration gave them, posts
// show their rendered bodies, tables of contents and reading times, the
// archives count every post by month, scheduled ones when their time
// comes, and no page redirects. A second migration changes nothing a
// reader sees.
func TestMigratedBlog(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	b, err := legacytest.Write(ctx, s.db, s.table, s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, err = AuthorBySlug(ctx, s.client, "grace-hopper", ptr(5), nil, nil, nil, nil, nil)
	equal(t, "author page by slug before the migration", code(err), "NOT_FOUND")

	m, err := s.store.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "migrated to", m.To, storage.CurrentLayout)
	s.consistent()

	seen := func() string {
		t.Helper()
		var out []any
		for _, slug := range []string{"ada-lovelace", "ada-lovelace-2", "grace-hopper"} {
			out = append(out, ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, slug, ptr(5), nil, nil, nil, nil, nil)))
		}
		for _, slug := range []string{"intro", "tables", "compilers"} {
			out = append(out, ok[*PostContentResponse](t)(PostContent(ctx, s.client, slug)))
		}
		out = append(out, ok[*ArchiveResponse](t)(Archive(ctx, s.client, nil, nil)))
		j, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	before := seen()

	names := map[string]string{"ada-lovelace": "Ada Lovelace", "ada-lovelace-2": "Ada Lovelace", "grace-hopper": "Grace Hopper"}
	posts := map[string][]string{}
	for slug, name := range names {
		a := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, slug, ptr(5), nil, nil, nil, nil, nil)).Author
		// Found by its current slug: nothing to redirect to.
		equal(t, "slug of the author found by "+slug, a.Slug, slug)
		equal(t, "name of "+slug, a.Name, name)
		for _, e := range a.Posts.Edges {
			equal(t, "byline slug of "+e.Node.Slug, e.Node.Author.Slug, slug)
			if e.Node.WordCount == 0 || e.Node.ReadingTimeMinutes == 0 {
				t.Errorf("%s lists %s with %d words, %d minutes", slug, e.Node.Slug, e.Node.WordCount, e.Node.ReadingTimeMinutes)
			}
			posts[slug] = append(posts[slug], e.Node.Slug)
		}
		var months []string
		for _, am := range a.Archive {
			months = append(months, fmt.Sprintf("%04d-%02d:%d", am.Year, am.Month, am.PostCount))
		}
		posts[slug+" archive"] = months
	}
	now := s.clock.Now()
	month := func(back int, n int) string {
		return fmt.Sprintf("%s:%d", now.AddDate(0, -back, 0).Format("2006-01"), n)
	}
	want := map[string][]string{
		"ada-lovelace": {"tables", "intro"}, "ada-lovelace archive": {month(1, 1), month(2, 1)},
		"grace-hopper": {"compilers"}, "grace-hopper archive": {month(1, 1)},
	}
	for k, v := range want {
		if !slices.Equal(posts[k], v) {
			t.Errorf("%s: %q, want %q", k, posts[k], v)
		}
	}
	if len(posts["ada-lovelace-2"]) != 0 || len(posts["ada-lovelace-2 archive"]) != 0 {
		t.Errorf("ada-lovelace-2 shows %q", posts)
	}

	intro := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "intro")).Post
	equal(t, "slug of the post found by intro", intro.Slug, "intro")
	if !strings.Contains(intro.BodyHtml, `<h2 id="h-part-one">Part one</h2>`) || !strings.Contains(intro.BodyHtml, "<table>") {
		t.Errorf("intro's bodyHtml = %q", intro.BodyHtml)
	}
	var toc []string
	for _, h := range intro.Toc {
		toc = append(toc, fmt.Sprintf("%d %s #%s", h.Level, h.Text, h.Anchor))
	}
	if wantToc := []string{"1 Intro #h-intro", "2 Part one #h-part-one", "2 Part two #h-part-two"}; !slices.Equal(toc, wantToc) {
		t.Errorf("intro's toc = %q, want %q", toc, wantToc)
	}
	equal(t, "intro's reading time", intro.ReadingTimeMinutes, 1)
	equal(t, "intro's excerpt", intro.Excerpt != "", true)

	archive := func() []string {
		var out []string
		for _, am := range ok[*ArchiveResponse](t)(Archive(ctx, s.client, nil, nil)).Archive {
			out = append(out, fmt.Sprintf("%04d-%02d:%d", am.Year, am.Month, am.PostCount))
		}
		return out
	}
	if got, wantMonths := archive(), []string{month(1, 2), month(2, 1)}; !slices.Equal(got, wantMonths) {
		t.Errorf("the blog's archive: %q, want %q (legacy months %v)", got, wantMonths, b.Months)
	}

	// A second migration: one read, and every page as it was.
	var again *storage.Migration
	func() {
		ctx, counter := storage.WithRequestCounter(ctx)
		again = ok[*storage.Migration](t)(s.store.Migrate(ctx))
		equal(t, "requests of the second migration", fmt.Sprint(counter.ByOperation()), "map[GetItem:1]")
	}()
	equal(t, "second migration", fmt.Sprintf("%+v", *again), fmt.Sprintf("%+v", storage.Migration{From: storage.CurrentLayout, To: storage.CurrentLayout}))
	equal(t, "pages after a second migration", seen(), before)

	// The post scheduled by the previous version appears in its month
	// when its time comes, and goes live once the "schedule" worker's
	// first tick put it in the go-live index.
	equal(t, "schedule items added to the go-live index", ok[int](t)(s.store.IndexSchedule(ctx)), 1)
	s.clock.Advance(32 * 24 * time.Hour)
	ahead := now.AddDate(0, 1, 0).Format("2006-01")
	if got := archive(); len(got) == 0 || got[0] != ahead+":1" {
		t.Errorf("the blog's archive once the scheduled post's time came: %q, want %s:1 first", got, ahead)
	}
	s.consistent()
}
