package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/internal/migrations"
	"github.com/blogql/blog/storage/legacytest"
)

// TestMigrateLocaleCopies turns posts with a locale back into what was
// written before the lists of a locale's posts by category, tag and
// author existed, runs the sweep that writes their copies, first stopped
// half-way as a crash would, then to the end: the lists answer every
// post, the checker finds nothing, no post got a new version, and a
// run after it costs one GetItem.
func TestMigrateLocaleCopies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	var de, withLocale []string
	for i, locale := range []string{"de", "de", "en", "", "de", "de", "de"} {
		p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: fmt.Sprint("Post ", i),
			Slug: fmt.Sprint("post-", i), Body: "Text", Locale: locale, Categories: []string{"go"}, Tags: []string{"berlin"},
			CoAuthors: []string{"bob"}}))
		p = e.publish(p, start.Add(-time.Duration(i+1)*time.Hour))
		if locale != "" {
			withLocale = append(withLocale, p.ID)
		}
		if locale == "de" {
			de = append(de, p.ID)
		}
	}
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: de[0], AuthorID: "ada", Body: "Gut"}))
	versions := map[string]int64{}
	for _, id := range withLocale {
		versions[id] = must[*storage.Post](t)(e.store.GetPost(ctx, id)).Version
	}
	lists := map[string]storage.LocaleList{
		"category":  {Locale: "de", Category: "go"},
		"tag":       {Locale: "de", Tag: "berlin"},
		"author":    {Locale: "de", Author: "ada"},
		"co-author": {Locale: "de", Author: "bob"},
	}
	answer := func(l storage.LocaleList) string {
		var got []string
		for _, p := range must[*storage.Result[*storage.Post]](t)(e.store.LocaleListPosts(ctx, l, storage.PageArgs{Limit: 20}, storage.Period{})).Items {
			got = append(got, p.ID)
		}
		return strings.Join(got, ",")
	}

	if n := must[int](t)(legacytest.WithoutLocaleCopies(ctx, e.client, e.table)); n == 0 {
		t.Fatal("no post turned back")
	}
	bad := must[[]string](t)(e.store.Check(ctx))
	if !strings.Contains(strings.Join(bad, "\n"), "lacks its copy") {
		t.Fatalf("the checker on posts without their locale copies: %q, want them reported", bad)
	}
	for name, l := range lists {
		equal(t, name+" list before", answer(l), "")
	}

	stopped := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithMigrationStop(1, 3))
	first, err := stopped.MigrateLocaleCopies(ctx)
	if !errors.Is(err, migrations.ErrStopped) {
		t.Fatalf("migrate = %v, want it stopped", err)
	}
	m := must[storage.LocaleCopies](t)(e.store.MigrateLocaleCopies(ctx))
	// Each post: one category copy, one tag copy, two author copies.
	equal(t, "posts given copies", first.Posts+m.Posts, len(withLocale))
	equal(t, "copies written", first.Copies+m.Copies, 4*len(withLocale))
	if first.Posts == 0 || m.Posts == 0 {
		t.Errorf("posts given copies before the stop and after: %d and %d, want some in each", first.Posts, m.Posts)
	}
	for name, l := range lists {
		equal(t, name+" list after", answer(l), strings.Join(de, ","))
	}
	e.consistent()
	for _, id := range withLocale {
		equal(t, "version of "+id, must[*storage.Post](t)(e.store.GetPost(ctx, id)).Version, versions[id])
	}
	n := counted(func(ctx context.Context) { must[storage.LocaleCopies](t)(e.store.MigrateLocaleCopies(ctx)) })
	equal(t, "requests of a run after the end", fmt.Sprint(n), "map[GetItem:2]")
}

// TestMigrateLocaleCopiesInEveryPublication turns back a post with a
// locale in another publication than the Store's and one in the
// Store's, edited while the sweep is about to run: the sweep of every
// publication gives both their copies, keeps the edit, and the checker
// finds nothing.
func TestMigrateLocaleCopiesInEveryPublication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pub := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "beta", Title: "Beta"}))
	beta := must[*storage.Store](t)(e.store.In(pub.ID))
	var posts []*storage.Post
	for _, s := range []*storage.Store{e.store, beta} {
		must[*storage.Author](t)(s.CreateAuthor(ctx, storage.NewAuthor{ID: "ada", Name: "Ada"}))
		must[*storage.Category](t)(s.CreateCategory(ctx, storage.NewCategory{Slug: "go", Name: "Go"}))
		p := must[*storage.Post](t)(s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Hallo", Slug: "hallo", Body: "Text", Locale: "de", Categories: []string{"go"}}))
		posts = append(posts, must[*storage.Post](t)(s.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Hour)})))
	}
	must[int](t)(legacytest.WithoutLocaleCopies(ctx, e.client, e.table))
	// An edit after the copies went: written by this version, it gives
	// the post its copies, which the sweep finds there.
	must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: posts[0].ID, ExpectedVersion: posts[0].Version, Title: ptr("Hallo, Welt")}))

	m := must[storage.LocaleCopies](t)(e.store.MigrateAllLocaleCopies(ctx))
	equal(t, "posts given copies", m.Posts, 1)
	for i, s := range []*storage.Store{e.store, beta} {
		res := must[*storage.Result[*storage.Post]](t)(s.LocaleListPosts(ctx, storage.LocaleList{Locale: "de", Category: "go"}, storage.PageArgs{Limit: 5}, storage.Period{}))
		if len(res.Items) != 1 || res.Items[0].ID != posts[i].ID {
			t.Errorf("publication %d: the go category in de lists %v, want its post", i, res.Items)
		}
		if bad := must[[]string](t)(s.Check(ctx)); len(bad) > 0 {
			t.Errorf("publication %d: %q", i, bad)
		}
	}
	equal(t, "title kept", must[*storage.Post](t)(e.store.GetPost(ctx, posts[0].ID)).Title, "Hallo, Welt")
}

// TestMigrateLocaleCopiesBesideWriters runs the sweep while editors
// rename posts and move them to another locale and readers comment:
// whatever order they land in, every post ends with the copies its last
// write gives it, the lists of both locales answer it where it is, and
// the checker finds nothing.
func TestMigrateLocaleCopiesBesideWriters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	var ids []string
	for i := range 8 {
		p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: fmt.Sprint("Post ", i),
			Slug: fmt.Sprint("post-", i), Body: "Text", Locale: "de", Categories: []string{"go"}, Tags: []string{"berlin"}}))
		ids = append(ids, e.publish(p, start.Add(-time.Duration(i+1)*time.Hour)).ID)
	}
	must[int](t)(legacytest.WithoutLocaleCopies(ctx, e.client, e.table))
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := e.store.MigrateLocaleCopies(ctx); err != nil {
			t.Error(err)
		}
	})
	for i, id := range ids {
		wg.Go(func() {
			patch := storage.PostPatch{ID: id, Title: ptr(fmt.Sprint("Beitrag ", i))}
			if i%2 == 1 {
				patch.Locale = ptr("fr")
			}
			if err := e.updateUntilDone(patch); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := e.store.AddComment(ctx, storage.NewComment{PostID: id, AuthorID: "ada", Body: "Gut"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	e.consistent()
	for _, l := range []string{"de", "fr"} {
		res := must[*storage.Result[*storage.Post]](t)(e.store.LocaleListPosts(ctx, storage.LocaleList{Locale: l, Tag: "berlin"}, storage.PageArgs{Limit: 20}, storage.Period{}))
		equal(t, "posts of tag berlin in "+l, len(res.Items), 4)
	}
}
