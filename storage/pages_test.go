package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

func (e *env) page(slug string) *storage.SitePage {
	e.t.Helper()
	return must[*storage.SitePage](e.t)(e.store.CreatePage(context.Background(), storage.NewPage{
		Title: "Title " + slug, Slug: slug, Body: "# " + slug + "\n\nAbout " + slug + ".",
	}))
}

func pageSlugs(res *storage.Result[*storage.SitePage]) string {
	var out []string
	for _, p := range res.Items {
		out = append(out, p.Slug)
	}
	return strings.Join(out, " ")
}

// TestPages checks a page's life: a draft, rendered as posts are,
// published, renamed with its old slug redirecting, listed by order in
// one Query, and deleted with its slugs.
func TestPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	about := e.page("about")
	equal(t, "status", about.Status, storage.StatusDraft)
	if !strings.Contains(about.BodyHTML, `<h1 id="h-about">about</h1>`) || len(about.TOC) != 1 {
		t.Errorf("rendered body %q, toc %v: want the posts' rendering", about.BodyHTML, about.TOC)
	}
	contact := e.page("contact")
	e.consistent()

	drafts := must[*storage.Result[*storage.SitePage]](t)(e.store.Pages(ctx, storage.PageArgs{Limit: 10}, true))
	equal(t, "drafts", pageSlugs(drafts), "about contact")
	published := must[*storage.Result[*storage.SitePage]](t)(e.store.Pages(ctx, storage.PageArgs{Limit: 10}, false))
	equal(t, "published", pageSlugs(published), "")

	about = must[*storage.SitePage](t)(e.store.PublishPage(ctx, storage.PageRef{ID: about.ID, ExpectedVersion: about.Version}))
	contact = must[*storage.SitePage](t)(e.store.PublishPage(ctx, storage.PageRef{ID: contact.ID}))
	must[*storage.SitePage](t)(e.store.UpdatePage(ctx, storage.PagePatch{ID: contact.ID, ExpectedVersion: contact.Version, Order: ptr(0)}))
	about = must[*storage.SitePage](t)(e.store.UpdatePage(ctx, storage.PagePatch{
		ID: about.ID, ExpectedVersion: about.Version, Slug: ptr("about-us"), Order: ptr(1),
	}))
	e.consistent()
	published = must[*storage.Result[*storage.SitePage]](t)(e.store.Pages(ctx, storage.PageArgs{Limit: 10}, false))
	equal(t, "published by order", pageSlugs(published), "contact about-us")
	equal(t, "stats", must[*storage.Stats](t)(e.store.Stats(ctx)).PageCount, int64(2))
	for _, slug := range []string{"about", "about-us"} {
		p := must[*storage.SitePage](t)(e.store.GetPageBySlug(ctx, slug))
		equal(t, "page by "+slug, p.ID+" "+p.Slug, about.ID+" about-us")
	}
	if _, err := e.store.GetPostBySlug(ctx, "about-us"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("post by a page's slug: err = %v, want not found", err)
	}

	t.Run("a stale version is a conflict, and writes nothing", func(t *testing.T) {
		_, err := e.store.UpdatePage(ctx, storage.PagePatch{ID: about.ID, ExpectedVersion: about.Version - 1, Title: ptr("X")})
		var conflict *storage.ConflictError
		if !errors.As(err, &conflict) || conflict.CurrentVersion != about.Version {
			t.Errorf("err = %v, want a conflict naming version %d", err, about.Version)
		}
	})

	t.Run("a parent must be a top-level page", func(t *testing.T) {
		team := must[*storage.SitePage](t)(e.store.CreatePage(ctx, storage.NewPage{Title: "Team", Slug: "team", ParentID: about.ID}))
		equal(t, "parent", team.ParentID, about.ID)
		_, err := e.store.CreatePage(ctx, storage.NewPage{Title: "Deep", Slug: "deep", ParentID: team.ID})
		wantField(t, err, "parentId")
		_, err = e.store.UpdatePage(ctx, storage.PagePatch{ID: about.ID, ExpectedVersion: about.Version, ParentID: ptr(team.ID)})
		wantField(t, err, "parentId")
		_, err = e.store.CreatePage(ctx, storage.NewPage{Title: "Lost", Slug: "lost", ParentID: "no-such-page"})
		wantField(t, err, "parentId")
		e.consistent()
		must[*storage.SitePage](t)(e.store.DeletePage(ctx, storage.PageRef{ID: team.ID}))
	})

	t.Run("deleting a page frees its slugs", func(t *testing.T) {
		must[*storage.SitePage](t)(e.store.DeletePage(ctx, storage.PageRef{ID: about.ID}))
		for _, slug := range []string{"about", "about-us"} {
			if _, err := e.store.GetPageBySlug(ctx, slug); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("page by %s: err = %v, want not found", slug, err)
			}
		}
		e.consistent()
		equal(t, "stats", must[*storage.Stats](t)(e.store.Stats(ctx)).PageCount, int64(1))
		e.page("about")
		e.consistent()
	})
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	var ve *storage.ValidationError
	if !errors.As(err, &ve) || ve.Field != field {
		t.Errorf("err = %v, want invalid %s", err, field)
	}
}

// TestPagesAndPostsShareSlugs checks that a page and a post never hold
// one slug, current or old, and that a refused write writes nothing.
func TestPagesAndPostsShareSlugs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	post := e.post("ada", "hello")
	post = e.slug(post, "hello-world") // "hello" redirects to the post
	page := e.page("about")
	page = must[*storage.SitePage](t)(e.store.UpdatePage(ctx, storage.PagePatch{ID: page.ID, ExpectedVersion: page.Version, Slug: ptr("about-us")}))
	e.consistent()

	for _, slug := range []string{"hello", "hello-world"} {
		if _, err := e.store.CreatePage(ctx, storage.NewPage{Title: "T", Slug: slug}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("a page on a post's slug %q: err = %v, want slug taken", slug, err)
		}
		if _, err := e.store.UpdatePage(ctx, storage.PagePatch{ID: page.ID, ExpectedVersion: page.Version, Slug: ptr(slug)}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("a page renamed to a post's slug %q: err = %v, want slug taken", slug, err)
		}
	}
	for _, slug := range []string{"about", "about-us"} {
		if _, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: slug, Admin: true}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("a post on a page's slug %q: err = %v, want slug taken", slug, err)
		}
		if _, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: post.ID, ExpectedVersion: post.Version, Slug: ptr(slug), Admin: true}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("a post renamed to a page's slug %q: err = %v, want slug taken", slug, err)
		}
	}
	e.consistent()
	equal(t, "post by its old slug", must[string](t)(e.bySlug("hello")), post.ID+" hello-world")
	equal(t, "page by its old slug", must[*storage.SitePage](t)(e.store.GetPageBySlug(ctx, "about")).ID, page.ID)
	drafts := must[*storage.Result[*storage.SitePage]](t)(e.store.Pages(ctx, storage.PageArgs{Limit: 10}, true))
	equal(t, "pages", pageSlugs(drafts), "about-us")
}

// TestPageRaces runs two writers of one page, and a page and a post
// racing for one slug: one of each wins, and the table stays consistent.
func TestPageRaces(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	page := e.page("about")
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = e.store.UpdatePage(ctx, storage.PagePatch{ID: page.ID, ExpectedVersion: page.Version, Title: ptr("Writer " + string(rune('A'+i)))})
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			var conflict *storage.ConflictError
			switch {
			case err == nil:
				wins++
			case !errors.As(err, &conflict):
				t.Fatalf("round %d: err = %v, want a conflict", round, err)
			}
		}
		equal(t, "writers that won", wins, 1)
		page = must[*storage.SitePage](t)(e.store.GetPage(ctx, page.ID))
		equal(t, "version", page.Version, int64(round+2))
	}
	for round := range 5 {
		slug := "contested-" + string(rune('a'+round))
		var wg sync.WaitGroup
		var pageErr, postErr error
		wg.Go(func() { _, pageErr = e.store.CreatePage(ctx, storage.NewPage{Title: "P", Slug: slug}) })
		wg.Go(func() { _, postErr = e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "P", Slug: slug}) })
		wg.Wait()
		if (pageErr == nil) == (postErr == nil) {
			t.Fatalf("round %d: page err %v, post err %v: want exactly one to win", round, pageErr, postErr)
		}
		for _, err := range []error{pageErr, postErr} {
			if err != nil && !errors.Is(err, storage.ErrSlugTaken) {
				t.Fatalf("round %d: loser's err = %v, want slug taken", round, err)
			}
		}
	}
	e.consistent()
}

// TestSiteSettings checks the site item: versions, validation that
// writes nothing, and the server's copy that reads cost nothing.
func TestSiteSettings(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := must[*storage.Site](t)(e.store.Site(ctx))
	equal(t, "version before any write", s.Version, int64(0))
	menus := []storage.Menu{{Name: "main", Items: []storage.MenuItem{
		{Label: "About", Kind: storage.LinkPage, Slug: "about"},
		{Label: "Go", Kind: storage.LinkCategory, Slug: "go"},
		{Label: "Contact", Kind: storage.LinkURL, URL: "/contact"},
	}}}
	s = must[*storage.Site](t)(e.store.UpdateSite(ctx, storage.SitePatch{
		ExpectedVersion: 0, Title: ptr("Notes"), URL: ptr("https://notes.example.com"), PostPath: ptr("/{yyyy}/{slug}"),
		Timezone: ptr("Europe/Berlin"), Locale: ptr("en-GB"), Menus: &menus,
		Social: &[]storage.SocialAccount{{Network: "GitHub", URL: "https://github.com/notes"}},
	}))
	equal(t, "version", s.Version, int64(1))
	equal(t, "menu", len(s.Menus[0].Items), 3)

	cctx, counter := storage.WithRequestCounter(ctx)
	read := must[*storage.Site](t)(e.store.Site(cctx))
	equal(t, "title", read.Title, "Notes")
	equal(t, "requests of a held site", counter.Total(), 0)

	if _, err := e.store.UpdateSite(ctx, storage.SitePatch{ExpectedVersion: 0, Title: ptr("Stale")}); !errors.Is(err, storage.ErrVersionConflict) {
		t.Errorf("stale version: err = %v, want a conflict", err)
	}
	for field, in := range map[string]storage.SitePatch{
		"timezone":               {ExpectedVersion: 1, Timezone: ptr("Mars/Olympus")},
		"locale":                 {ExpectedVersion: 1, Locale: ptr("not a locale")},
		"postPath":               {ExpectedVersion: 1, PostPath: ptr("/posts")},
		"url":                    {ExpectedVersion: 1, URL: ptr("ftp://x")},
		"menus[0].items[0].kind": {ExpectedVersion: 1, Menus: &[]storage.Menu{{Name: "m", Items: []storage.MenuItem{{Label: "x", Kind: "FOLDER"}}}}},
		"menus[0].items[0].slug": {ExpectedVersion: 1, Menus: &[]storage.Menu{{Name: "m", Items: []storage.MenuItem{{Label: "x", Kind: storage.LinkPage}}}}},
		"social[0].url":          {ExpectedVersion: 1, Social: &[]storage.SocialAccount{{Network: "X"}}},
	} {
		_, err := e.store.UpdateSite(ctx, in)
		wantField(t, err, field)
	}
	equal(t, "version after refused writes", must[*storage.Site](t)(e.store.Site(ctx)).Version, int64(1))

	t.Run("of two writers of one version, one wins and the other learns the new version", func(t *testing.T) {
		cur := must[*storage.Site](t)(e.store.Site(ctx)).Version
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = e.store.UpdateSite(ctx, storage.SitePatch{ExpectedVersion: cur, Description: ptr(fmt.Sprint("writer ", i))})
			})
		}
		wg.Wait()
		var conflict *storage.ConflictError
		switch {
		case errs[0] == nil && errors.As(errs[1], &conflict), errs[1] == nil && errors.As(errs[0], &conflict):
			equal(t, "the version the loser learns", conflict.CurrentVersion, cur+1)
		default:
			t.Fatalf("errs %v: want one success and one conflict", errs)
		}
	})

	t.Run("another server's copy is dropped by site.updated", func(t *testing.T) {
		fresh := storage.New(e.client, e.table)
		equal(t, "another server reads it", must[*storage.Site](t)(fresh.Site(ctx)).Title, "Notes")
		must[*storage.Site](t)(e.store.UpdateSite(ctx, storage.SitePatch{ExpectedVersion: 2, Title: ptr("Renamed")}))
		equal(t, "before the event", must[*storage.Site](t)(fresh.Site(ctx)).Title, "Notes")
		fresh.ForgetSite([]storage.LoggedEvent{{Event: storage.Event{Type: storage.EventSiteUpdated}}})
		equal(t, "after the event", must[*storage.Site](t)(fresh.Site(ctx)).Title, "Renamed")
	})
	e.consistent()
}
