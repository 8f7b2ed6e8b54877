package storage_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage"
)

// localePost creates and publishes a post of ada in locale.
func (e *env) localePost(slug, locale string) *storage.Post {
	p := must[*storage.Post](e.t)(e.store.CreatePost(context.Background(), storage.NewPost{
		AuthorID: "ada", Title: "Title " + slug, Slug: slug, Body: "# " + slug, Locale: locale,
	}))
	return e.publish(p, time.Time{})
}

func TestTranslationsStaySymmetricUnderConcurrentLinks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	locales := []string{"en", "de", "fr", "ja", "ru", "de", "en", "ja"}
	var posts []*storage.Post
	for i, l := range locales {
		posts = append(posts, e.localePost("p"+string(rune('a'+i)), l))
	}
	// Writers link random pairs, unlink, and edit titles at once. Each
	// write either happens whole or is refused (a locale taken, ErrBusy
	// after too many conflicts); whatever lands, every group stays
	// symmetric with one post per locale.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 15 {
				a, b := posts[r.IntN(len(posts))], posts[r.IntN(len(posts))]
				var err error
				switch r.IntN(4) {
				case 0:
					_, err = e.store.UnlinkTranslation(ctx, a.ID)
				case 1:
					title := "edited"
					var cur *storage.Post
					if cur, err = e.store.GetPost(ctx, a.ID); err == nil {
						_, err = e.store.UpdatePost(ctx, storage.PostPatch{ID: a.ID, ExpectedVersion: cur.Version, Title: &title})
					}
				default:
					_, err = e.store.LinkTranslation(ctx, a.ID, b.ID)
				}
				var invalid *storage.ValidationError
				var conflict *storage.ConflictError
				if err != nil && !errors.As(err, &invalid) && !errors.As(err, &conflict) && !errors.Is(err, storage.ErrBusy) {
					t.Errorf("writer %d: %v", w, err)
				}
			}
		}()
	}
	wg.Wait()
	e.consistent()
}

func TestTranslationLinksRefuseBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	en, de, de2 := e.localePost("hello", "en"), e.localePost("hallo", "de"), e.localePost("servus", "DE")
	if de2.Locale != "de" {
		t.Fatalf("locale DE kept as %q, want de", de2.Locale)
	}
	must[*storage.Post](t)(e.store.LinkTranslation(ctx, en.ID, de.ID))
	for name, f := range map[string]func() error{
		"itself":       func() error { _, err := e.store.LinkTranslation(ctx, en.ID, en.ID); return err },
		"locale taken": func() error { _, err := e.store.LinkTranslation(ctx, en.ID, de2.ID); return err },
		"same locale":  func() error { _, err := e.store.LinkTranslation(ctx, de2.ID, de.ID); return err },
		"locale change": func() error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: de.ID, ExpectedVersion: de.Version, Locale: ptr("fr")})
			return err
		},
		"bad bcp 47": func() error {
			_, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "x", Slug: "x", Body: "x", Locale: "english!"})
			return err
		},
	} {
		var invalid *storage.ValidationError
		if err := f(); !errors.As(err, &invalid) {
			t.Errorf("%s: %v, want a validation error", name, err)
		}
	}
	if _, err := e.store.LinkTranslation(ctx, en.ID, "no-such-post"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("link to a missing post: %v, want ErrNotFound", err)
	}
	groups, errs := e.store.GetTranslations(ctx, []string{must[*storage.Post](t)(e.store.GetPost(ctx, en.ID)).TranslationGroup})
	if errs != nil && errs[0] != nil {
		t.Fatal(errs[0])
	}
	for _, g := range groups {
		if len(g) != 2 || g[0].Locale != "de" || g[0].PostID != de.ID || g[1].PostID != en.ID {
			t.Errorf("group %v, want de and en only", g)
		}
	}
	// Deleting a member of a pair deletes the group and unlinks the other.
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: de.ID}))
	if g := must[*storage.Post](t)(e.store.GetPost(ctx, en.ID)).TranslationGroup; g != "" {
		t.Errorf("en still in group %s after its translation was deleted", g)
	}
	e.consistent()
}

// TestCheckFindsAsymmetricTranslations breaks a group behind the store's
// back, as a lost write would: the translations check names it.
func TestCheckFindsAsymmetricTranslations(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	en, de, fr := e.localePost("hello", "en"), e.localePost("hallo", "de"), e.localePost("salut", "fr")
	must[*storage.Post](t)(e.store.LinkTranslation(ctx, en.ID, de.ID))
	// fr names en's group, which does not list it.
	group := e.rawItem(pubPrefix+"POST#"+en.ID, "POST#"+en.ID)["transGroup"]
	item := e.rawItem(pubPrefix+"POST#"+fr.ID, "POST#"+fr.ID)
	item["transGroup"] = group
	must[*dynamodb.PutItemOutput](t)(e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: item}))
	bad := must[[]string](t)(e.store.Check(ctx))
	found := false
	for _, b := range bad {
		found = found || strings.Contains(b, "post "+fr.ID+" names translation group")
	}
	if !found {
		t.Errorf("check found %q, want the post naming a group that does not list it", bad)
	}
}
