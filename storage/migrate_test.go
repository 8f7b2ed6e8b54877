package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/legacytest"
)

// legacyBlog writes the blog of package legacytest into e's table, in
// layout 1. The checker of the store, which reads the publication's items
// alone, sees none of it until the migration moves it in (layout 5).
func (e *env) legacyBlog() *legacytest.Blog {
	e.t.Helper()
	b := must[*legacytest.Blog](e.t)(legacytest.Write(context.Background(), e.client, e.table, e.clock.Now()))
	equal(e.t, "layout of the legacy blog", must[int](e.t)(e.store.LayoutVersion(context.Background())), 1)
	return b
}

// migrated checks what Migrate must have made of the legacy blog b: the
// invariant checker finds nothing, authors have slugs and are found by
// them, posts carry their rendered bodies and their author's slug, the
// archives count every post, threads carry their first replies.
func (e *env) migrated(b *legacytest.Blog) {
	e.t.Helper()
	ctx := context.Background()
	e.consistent()
	equal(e.t, "layout", must[int](e.t)(e.store.LayoutVersion(ctx)), storage.CurrentLayout)

	var slugs []string
	for id, name := range b.Authors {
		a := must[*storage.Author](e.t)(e.store.GetAuthor(ctx, id))
		if a.Slug == "" {
			e.t.Errorf("author %s has no slug", id)
			continue
		}
		slugs = append(slugs, a.Slug)
		equal(e.t, "author by slug "+a.Slug, must[*storage.Author](e.t)(e.store.GetAuthorBySlug(ctx, a.Slug)).Name, name)
	}
	slices.Sort(slugs)
	equalSlices(e.t, "author slugs", slugs, []string{"ada-lovelace", "ada-lovelace-2", "grace-hopper"})
	// Of two authors of one name, the older (here, of one time, the first
	// by id) has the slug without a number.
	equal(e.t, "ada's slug", must[*storage.Author](e.t)(e.store.GetAuthor(ctx, "ada")).Slug, "ada-lovelace")

	intro := must[*storage.Post](e.t)(e.store.GetPostBySlug(ctx, "intro"))
	if !strings.Contains(intro.BodyHTML, `<h2 id="h-part-one">Part one</h2>`) || !strings.Contains(intro.BodyHTML, "<table>") {
		e.t.Errorf("intro's HTML = %q", intro.BodyHTML)
	}
	var anchors []string
	for _, h := range intro.TOC {
		anchors = append(anchors, h.Anchor)
	}
	equalSlices(e.t, "intro's table of contents", anchors, []string{"h-intro", "h-part-one", "h-part-two"})
	if intro.WordCount == 0 || intro.ReadingMinutes == 0 || intro.Excerpt == "" {
		e.t.Errorf("intro: %d words, %d minutes, excerpt %q", intro.WordCount, intro.ReadingMinutes, intro.Excerpt)
	}
	ada := must[*storage.Author](e.t)(e.store.GetAuthor(ctx, "ada"))
	equal(e.t, "intro's byline slug", intro.AuthorSlug, ada.Slug)
	listed := must[*storage.Result[*storage.Post]](e.t)(e.store.AuthorPosts(ctx, "ada", storage.PageArgs{Limit: 10}, storage.Period{}, false))
	for _, p := range listed.Items {
		if p.AuthorSlug != ada.Slug || p.WordCount == 0 {
			e.t.Errorf("ada's list shows %s with byline slug %q and %d words", p.Slug, p.AuthorSlug, p.WordCount)
		}
	}

	now := e.clock.Now().Format("2006-01")
	months := map[string]int64{}
	for _, m := range must[*storage.Stats](e.t)(e.store.Stats(ctx)).Archive {
		months[fmt.Sprintf("%04d-%02d", m.Year, m.Month)] = m.PostCount
	}
	for month, n := range b.Months {
		if month > now {
			n = 0 // scheduled: not shown yet
		}
		equal(e.t, "the blog's posts in "+month, months[month], int64(n))
	}
	equal(e.t, "months of grace's archive", len(must[*storage.Author](e.t)(e.store.GetAuthor(ctx, "grace")).Archive), 1)

	for _, pk := range []string{"AUTHOR#ada", "AUTHOR#lovelace", "AUTHOR#grace", "CAT#go", "CAT#aws", "STATS"} {
		out := must[*dynamodb.GetItemOutput](e.t)(e.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pubPrefix + pk}, "SK": &types.AttributeValueMemberS{Value: pk}},
		}))
		if m, ok := out.Item["scheduled"].(*types.AttributeValueMemberM); ok && m.Value["-"] != nil {
			e.t.Errorf("%s keeps the entry - in its scheduled map", pk)
		}
		for _, name := range []string{"bio", "avatarUrl", "description"} {
			if _, ok := out.Item[name]; ok && pk != "AUTHOR#ada" && pk != "AUTHOR#grace" {
				e.t.Errorf("%s keeps its cleared %s", pk, name)
			}
		}
	}

	// Slugs held, no redirects: each post and author holds its one slug.
	holders := map[string]string{"AUTHOR#ada": "ada-lovelace", "AUTHOR#lovelace": "ada-lovelace-2", "AUTHOR#grace": "grace-hopper"}
	for slug, id := range b.Posts {
		holders["POST#"+id] = slug
	}
	for pk, slug := range holders {
		out := must[*dynamodb.GetItemOutput](e.t)(e.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pubPrefix + pk}, "SK": &types.AttributeValueMemberS{Value: pk}},
		}))
		var held []string
		if l, ok := out.Item["slugs"].(*types.AttributeValueMemberL); ok {
			for _, v := range l.Value {
				if sv, ok := v.(*types.AttributeValueMemberS); ok {
					held = append(held, sv.Value)
				}
			}
		}
		equalSlices(e.t, "slugs of "+pk, held, []string{slug})
	}

	comments := must[*storage.Result[*storage.Comment]](e.t)(e.store.Comments(ctx, b.Posts["intro"], storage.PageArgs{Limit: 10}))
	for _, c := range comments.Items {
		if c.ID != b.Thread {
			continue
		}
		var carried []string
		for _, r := range c.Replies {
			carried = append(carried, r.ID)
		}
		equalSlices(e.t, "replies the thread carries", carried, b.Replies[:storage.MaxReplyPage])
		// The first page of the thread is what it carries: no request.
		n := counted(func(ctx context.Context) {
			page := must[*storage.Result[*storage.Comment]](e.t)(e.store.ReplyPage(ctx, c, storage.PageArgs{Limit: storage.MaxReplyPage}))
			equal(e.t, "first page of the thread", len(page.Items), storage.MaxReplyPage)
		})
		equal(e.t, "requests of the thread's first page", len(n), 0)
	}
}

// TestMigrateLayout1 migrates a blog written by the previous version:
// afterwards it is in the current layout and consistent, and a second
// run costs one GetItem.
func TestMigrateLayout1(t *testing.T) {
	e := newEnv(t)
	b := e.legacyBlog()
	m := must[*storage.Migration](t)(e.store.Migrate(context.Background()))
	equal(t, "from", m.From, 1)
	equal(t, "to", m.To, storage.CurrentLayout)
	equal(t, "authors given slugs", m.Authors, 3)
	equal(t, "posts written again", m.Posts, 5)
	equal(t, "comments written again", m.Comments, 16)
	equal(t, "scheduled posts given their go-live marker", m.Scheduled, 1)
	equal(t, "posts not rendered", len(m.Unrendered), 0)
	e.migrated(b)

	var again *storage.Migration
	n := counted(func(ctx context.Context) { again = must[*storage.Migration](t)(e.store.Migrate(ctx)) })
	equal(t, "requests of a migration with nothing to do", fmt.Sprint(n), "map[GetItem:1]")
	equal(t, "second run", fmt.Sprintf("%+v", *again), fmt.Sprintf("%+v", storage.Migration{From: storage.CurrentLayout, To: storage.CurrentLayout}))

	// Without the layout item (lost, or a run stopped just before writing
	// it) the next run goes through the whole table and finds everything
	// done: it writes nothing but the layout item.
	layout := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "LAYOUT"}, "SK": &types.AttributeValueMemberS{Value: "LAYOUT"}}
	must[*dynamodb.DeleteItemOutput](t)(e.client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(e.table), Key: layout}))
	before := e.snapshotItems()
	n = counted(func(ctx context.Context) { again = must[*storage.Migration](t)(e.store.Migrate(ctx)) })
	equal(t, "a run over a migrated table", fmt.Sprintf("%+v", *again), fmt.Sprintf("%+v", storage.Migration{From: 1, To: storage.CurrentLayout}))
	equal(t, "its writes", n["TransactWriteItems"]+n["PutItem"]+n["DeleteItem"]+n["BatchWriteItem"], 0)
	equal(t, "its updates: the layout item", n["UpdateItem"], 1)
	var kept []string
	for _, line := range strings.Split(e.snapshotItems(), "\n") {
		if !strings.Contains(line, "PK:LAYOUT") {
			kept = append(kept, line)
		}
	}
	equal(t, "items after a run over a migrated table", strings.Join(kept, "\n"), before)
	e.migrated(b)
}

// TestMigrateNewTable migrates an empty table: nothing to do but record
// the layout.
func TestMigrateNewTable(t *testing.T) {
	e := newEnv(t)
	m := must[*storage.Migration](t)(e.store.Migrate(context.Background()))
	equal(t, "migration of a new table", fmt.Sprintf("%+v", *m), fmt.Sprintf("%+v", storage.Migration{From: 1, To: storage.CurrentLayout}))
	e.consistent()
}

// TestMigrateWhileServing runs three migrations of one legacy blog at
// once, as three servers starting together do, while writers of the
// current version edit, publish, unpublish, schedule, comment and rename
// on it: every write succeeds or is refused for a reason the moment
// explains, and afterwards the table is consistent, months included.
func TestMigrateWhileServing(t *testing.T) {
	e := newEnv(t)
	b := e.legacyBlog()
	ctx := context.Background()
	posts := []string{b.Posts["intro"], b.Posts["tables"], b.Posts["compilers"], b.Posts["notes"], b.Posts["later"]}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for range 3 {
		wg.Go(func() {
			store := storage.New(e.client, e.table, storage.WithClock(e.clock.Now))
			if _, err := store.Migrate(ctx); err != nil {
				errs <- fmt.Errorf("migrate: %w", err)
			}
		})
	}
	expected := func(err error) bool {
		return err == nil || errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidInput) ||
			errors.Is(err, storage.ErrVersionConflict) || errors.Is(err, storage.ErrBusy)
	}
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for n := range 12 {
				id := posts[rng.IntN(len(posts))]
				var err error
				switch rng.IntN(7) {
				case 0:
					_, err = e.store.Publish(ctx, storage.PublishPost{ID: id})
				case 1:
					_, err = e.store.Publish(ctx, storage.PublishPost{ID: id, At: e.clock.Now().Add(-40 * 24 * time.Hour)})
				case 2:
					_, err = e.store.Unpublish(ctx, storage.PostRef{ID: id})
				case 3:
					var p *storage.Post
					if p, err = e.store.ReadPost(ctx, id); err == nil {
						_, err = e.store.UpdatePost(ctx, storage.PostPatch{ID: id, ExpectedVersion: p.Version, Title: ptr(fmt.Sprintf("Edited %d-%d", g, n))})
					}
				case 4:
					_, err = e.store.AddComment(ctx, storage.NewComment{PostID: b.Posts["intro"], ParentID: b.Thread, AuthorID: "grace", Body: fmt.Sprintf("reply %d-%d", g, n)})
				case 5:
					_, err = e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: []string{"ada", "grace"}[rng.IntN(2)], Name: ptr(fmt.Sprintf("Name %d-%d", g, n))})
				case 6:
					_, err = e.store.Publish(ctx, storage.PublishPost{ID: id, At: e.clock.Now().Add(time.Duration(1+rng.IntN(50)) * 24 * time.Hour)})
				}
				if !expected(err) {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.consistent()
	equal(t, "layout", must[int](t)(e.store.LayoutVersion(ctx)), storage.CurrentLayout)
	var carried []string
	for _, c := range must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, b.Posts["intro"], storage.PageArgs{Limit: 10})).Items {
		if c.ID == b.Thread {
			for _, r := range c.Replies {
				carried = append(carried, r.ID)
			}
		}
	}
	equalSlices(t, "replies the thread carries", carried, b.Replies[:storage.MaxReplyPage])
}

// TestMigrateResumes stops a migration half-way through, as a server
// stopped while it runs: the layout is not recorded, and the next run
// finishes what is left.
func TestMigrateResumes(t *testing.T) {
	for _, at := range []int{1, 4, 9} {
		t.Run(fmt.Sprintf("stopped at its transaction %d", at), func(t *testing.T) {
			e := newRaceEnv(t)
			b := e.legacyBlog()
			e.hooks.at("TransactWriteItems", at, answer(http.StatusBadRequest, "ValidationException", ""))
			if _, err := e.store.Migrate(context.Background()); err == nil {
				t.Fatal("a migration whose transaction failed succeeded")
			}
			equal(t, "layout after the failed run", must[int](t)(e.store.LayoutVersion(context.Background())), 1)
			must[*storage.Migration](t)(e.store.Migrate(context.Background()))
			e.migrated(b)
		})
	}
}
