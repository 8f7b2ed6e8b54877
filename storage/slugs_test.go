package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/blogql/blog/storage"
)

func (e *env) slug(p *storage.Post, slug string) *storage.Post {
	e.t.Helper()
	cur := must[*storage.Post](e.t)(e.store.GetPost(context.Background(), p.ID))
	return must[*storage.Post](e.t)(e.store.UpdatePost(context.Background(), storage.PostPatch{ID: p.ID, ExpectedVersion: cur.Version, Slug: &slug}))
}

// bySlug returns the id and current slug of the post slug leads to, or
// the error.
func (e *env) bySlug(slug string) (string, error) {
	p, err := e.store.GetPostBySlug(context.Background(), slug)
	if err != nil {
		return "", err
	}
	return p.ID + " " + p.Slug, nil
}

func TestSlugHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	p := e.publish(e.post("ada", "first", "go"), start)
	e.slug(p, "second")
	e.slug(p, "third")
	e.consistent()
	for _, old := range []string{"first", "second", "third"} {
		equal(t, "post by "+old, must[string](t)(e.bySlug(old)), p.ID+" third")
	}

	t.Run("a post takes another's redirect", func(t *testing.T) {
		x := e.post("ada", "x")
		e.slug(x, "second")
		e.consistent()
		equal(t, "taken redirect", must[string](t)(e.bySlug("second")), x.ID+" second")
		equal(t, "the other redirect", must[string](t)(e.bySlug("first")), p.ID+" third")
		equal(t, "x's old slug", must[string](t)(e.bySlug("x")), x.ID+" second")
		created := e.post("ada", "first")
		equal(t, "a new post takes a redirect", must[string](t)(e.bySlug("first")), created.ID+" first")
		e.consistent()
	})

	t.Run("another author's post takes a redirect only by an admin's write", func(t *testing.T) {
		e.author("bob", "Bob")
		old := must[string](t)(e.bySlug("x"))
		if _, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "bob", Title: "T", Slug: "x"}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("another author's new post: err = %v, want slug taken", err)
		}
		bobs := e.post("bob", "bobs")
		if _, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: bobs.ID, ExpectedVersion: bobs.Version, Slug: ptr("x")}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("another author's edit: err = %v, want slug taken", err)
		}
		equal(t, "the redirect kept", must[string](t)(e.bySlug("x")), old)
		must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: bobs.ID, ExpectedVersion: bobs.Version, Slug: ptr("x"), Admin: true}))
		equal(t, "taken by an admin's write", must[string](t)(e.bySlug("x")), bobs.ID+" x")
		e.consistent()
	})

	t.Run("a current slug is not taken, and nothing is written", func(t *testing.T) {
		y := e.post("ada", "y")
		_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: y.ID, ExpectedVersion: y.Version, Slug: ptr("third")})
		if !errors.Is(err, storage.ErrSlugTaken) {
			t.Fatalf("err = %v, want slug taken", err)
		}
		if _, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "third"}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Fatalf("create: err = %v, want slug taken", err)
		}
		equal(t, "version", must[*storage.Post](t)(e.store.GetPost(ctx, y.ID)).Version, y.Version)
		equal(t, "third", must[string](t)(e.bySlug("third")), p.ID+" third")
		e.consistent()
	})

	t.Run("a post goes back to a slug it kept", func(t *testing.T) {
		e.slug(p, "fourth")
		e.slug(p, "third")
		equal(t, "third again", must[string](t)(e.bySlug("third")), p.ID+" third")
		equal(t, "fourth", must[string](t)(e.bySlug("fourth")), p.ID+" third")
		e.consistent()
	})

	t.Run("the oldest redirects go past the bound", func(t *testing.T) {
		for i := range storage.MaxRedirects + 2 {
			e.slug(p, fmt.Sprintf("name-%d", i))
		}
		last := fmt.Sprintf("name-%d", storage.MaxRedirects+1)
		for i := 1; i <= storage.MaxRedirects+1; i++ {
			equal(t, fmt.Sprintf("name-%d", i), must[string](t)(e.bySlug(fmt.Sprintf("name-%d", i))), p.ID+" "+last)
		}
		for _, gone := range []string{"name-0", "third", "fourth"} {
			if _, err := e.bySlug(gone); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("%s: err = %v, want not found", gone, err)
			}
		}
		e.consistent()
	})

	t.Run("deleting a post frees its slug and redirects", func(t *testing.T) {
		must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: p.ID}))
		for i := 1; i <= storage.MaxRedirects+1; i++ {
			if _, err := e.bySlug(fmt.Sprintf("name-%d", i)); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("name-%d: err = %v, want not found", i, err)
			}
		}
		e.post("ada", "name-3")
		e.consistent()
	})
}

func TestAuthorSlugs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	create := func(in storage.NewAuthor) (*storage.Author, error) { return e.store.CreateAuthor(ctx, in) }
	ada := must[*storage.Author](t)(create(storage.NewAuthor{ID: "ada", Name: "Ada Lovelace"}))
	equal(t, "slug from the name", ada.Slug, "ada-lovelace")
	equal(t, "second of the name", must[*storage.Author](t)(create(storage.NewAuthor{ID: "ada2", Name: "Ada  Lovelace!"})).Slug, "ada-lovelace-2")
	equal(t, "accents", must[*storage.Author](t)(create(storage.NewAuthor{ID: "jose", Name: "José Núñez"})).Slug, "jose-nunez")
	equal(t, "no latin letters: the name's script", must[*storage.Author](t)(create(storage.NewAuthor{ID: "li", Name: "李小龍"})).Slug, "李小龍")
	equal(t, "given", must[*storage.Author](t)(create(storage.NewAuthor{ID: "grace", Name: "Grace", Slug: "amazing-grace"})).Slug, "amazing-grace")
	for i := range 9 {
		must[*storage.Author](t)(create(storage.NewAuthor{ID: fmt.Sprintf("same-%d", i), Name: "Same"}))
	}
	if a := must[*storage.Author](t)(create(storage.NewAuthor{ID: "same-9", Name: "Same"})); len(a.Slug) != len("same-123456") {
		t.Errorf("tenth of a name has slug %q, want one with a random suffix", a.Slug)
	}
	if _, err := create(storage.NewAuthor{ID: "other", Name: "Other", Slug: "amazing-grace"}); !errors.Is(err, storage.ErrSlugTaken) {
		t.Errorf("taken slug: err = %v, want slug taken", err)
	}
	if _, err := e.store.GetAuthor(ctx, "other"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("refused author exists: %v", err)
	}
	var ve *storage.ValidationError
	if _, err := create(storage.NewAuthor{ID: "bad", Name: "Bad", Slug: "Not A Slug"}); !errors.As(err, &ve) || ve.Field != "slug" {
		t.Errorf("bad slug: err = %v, want invalid slug", err)
	}
	e.consistent()

	var got *storage.Author
	n := counted(func(ctx context.Context) {
		got = must[*storage.Author](t)(e.store.GetAuthorBySlug(ctx, "ada-lovelace"))
	})
	equal(t, "by slug", got.ID, "ada")
	equal(t, "by slug requests", n["GetItem"], 2)

	t.Run("an author and a post may share a slug", func(t *testing.T) {
		e.category("go", "Go")
		p := e.publish(e.post("ada", "ada-lovelace", "go"), start)
		equal(t, "post", must[string](t)(e.bySlug("ada-lovelace")), p.ID+" ada-lovelace")
		equal(t, "post carries the author's slug", p.AuthorSlug, "ada-lovelace")
		e.consistent()
	})

	t.Run("a new slug reaches the posts and keeps the old one", func(t *testing.T) {
		a := must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Slug: ptr("countess")}))
		equal(t, "slug", a.Slug, "countess")
		equal(t, "old slug", must[*storage.Author](t)(e.store.GetAuthorBySlug(ctx, "ada-lovelace")).Slug, "countess")
		r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 5}, storage.Period{}))
		equal(t, "copy's author slug", r.Items[0].AuthorSlug, "countess")
		e.consistent()
	})

	t.Run("an admin gives an author another's redirect, never a current slug", func(t *testing.T) {
		if _, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada2", Slug: ptr("ada-lovelace")}); !errors.Is(err, storage.ErrSlugTaken) {
			t.Fatalf("an author's own write: err = %v, want slug taken", err)
		}
		equal(t, "kept", must[*storage.Author](t)(e.store.GetAuthorBySlug(ctx, "ada-lovelace")).ID, "ada")
		must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada2", Slug: ptr("ada-lovelace"), Admin: true}))
		equal(t, "taken", must[*storage.Author](t)(e.store.GetAuthorBySlug(ctx, "ada-lovelace")).ID, "ada2")
		_, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "jose", Slug: ptr("countess"), Bio: ptr("refused"), Admin: true})
		if !errors.Is(err, storage.ErrSlugTaken) {
			t.Fatalf("err = %v, want slug taken", err)
		}
		equal(t, "nothing written", must[*storage.Author](t)(e.store.GetAuthor(ctx, "jose")).Bio, "")
		e.consistent()
	})

	t.Run("redirects are bounded", func(t *testing.T) {
		for i := range storage.MaxRedirects + 1 {
			must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "li", Slug: ptr(fmt.Sprintf("li-%d", i))}))
		}
		if _, err := e.store.GetAuthorBySlug(ctx, "author"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("oldest redirect: err = %v, want not found", err)
		}
		equal(t, "kept", must[*storage.Author](t)(e.store.GetAuthorBySlug(ctx, "li-0")).Slug, fmt.Sprintf("li-%d", storage.MaxRedirects))
		equal(t, "a new author gets the freed slug", must[*storage.Author](t)(create(storage.NewAuthor{Name: "Author"})).Slug, "author")
		e.consistent()
	})
}
