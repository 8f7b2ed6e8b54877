package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// coPost creates a draft of author with co-authors, categories and tags.
func (e *env) coPost(author, slug string, coAuthors, cats, tags []string) *storage.Post {
	return must[*storage.Post](e.t)(e.store.CreatePost(context.Background(), storage.NewPost{
		AuthorID: author, Title: "Title " + slug, Slug: slug, Body: "# " + slug,
		CoAuthors: coAuthors, Categories: cats, Tags: tags,
	}))
}

// authorPageIDs returns the ids of the posts on the author's page.
func (e *env) authorPageIDs(id string) []string {
	res := must[*storage.Result[*storage.Post]](e.t)(e.store.AuthorPosts(context.Background(), id, storage.PageArgs{Limit: 100}, storage.Period{}, false))
	return ids(res.Items)
}

func bylines(p *storage.Post) []string {
	var out []string
	for _, a := range p.Authors() {
		out = append(out, a.Name+"/"+a.Slug)
	}
	return out
}

func TestCoAuthoredPostIsOnEveryAuthorsPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.author("cy", "Cy")
	e.category("go", "Go")
	p := e.coPost("ada", "together", []string{"bob", "cy"}, []string{"go"}, nil)
	equalSlices(t, "draft's bylines", bylines(p), []string{"Ada/ada", "Bob/bob", "Cy/cy"})
	equalSlices(t, "bob's page before publishing", e.authorPageIDs("bob"), nil)
	e.consistent()

	p = e.publish(p, start.Add(-time.Hour))
	for _, id := range []string{"ada", "bob", "cy"} {
		equalSlices(t, id+"'s page", e.authorPageIDs(id), []string{p.ID})
		a := must[*storage.Author](t)(e.store.GetAuthor(ctx, id))
		equal(t, id+"'s postCount", a.PostCount, 1)
		equal(t, id+"'s archive", len(a.Archive), 1)
	}
	// Bylines come with every copy: the author's, the category's.
	res := must[*storage.Result[*storage.Post]](t)(e.store.AuthorPosts(ctx, "cy", storage.PageArgs{Limit: 10}, storage.Period{}, false))
	equalSlices(t, "bylines on cy's page", bylines(res.Items[0]), []string{"Ada/ada", "Bob/bob", "Cy/cy"})
	res = must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 10}, storage.Period{}))
	equalSlices(t, "bylines on the category page", bylines(res.Items[0]), []string{"Ada/ada", "Bob/bob", "Cy/cy"})
	e.consistent()

	// Removing bob and adding dan moves the copies and the counts.
	e.author("dan", "Dan")
	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, CoAuthors: &[]string{"dan", "cy"}}))
	equalSlices(t, "bylines after the change", bylines(p), []string{"Ada/ada", "Dan/dan", "Cy/cy"})
	equalSlices(t, "bob's page", e.authorPageIDs("bob"), nil)
	equalSlices(t, "dan's page", e.authorPageIDs("dan"), []string{p.ID})
	equal(t, "bob's postCount", must[*storage.Author](t)(e.store.GetAuthor(ctx, "bob")).PostCount, 0)
	e.consistent()

	// A rename and a new slug of a co-author reach every copy.
	must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "cy", Name: ptr("Cyrus"), Slug: ptr("cyrus")}))
	res = must[*storage.Result[*storage.Post]](t)(e.store.AuthorPosts(ctx, "ada", storage.PageArgs{Limit: 10}, storage.Period{}, false))
	equalSlices(t, "bylines on ada's page after cy's rename", bylines(res.Items[0]), []string{"Ada/ada", "Dan/dan", "Cyrus/cyrus"})
	e.consistent()

	// Deleting the post removes every author's copy and count.
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: p.ID}))
	for _, id := range []string{"ada", "dan", "cy"} {
		equalSlices(t, id+"'s page after the deletion", e.authorPageIDs(id), nil)
	}
	e.consistent()
}

func TestCoAuthorsBadInputWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	var ten []string
	for i := range storage.MaxAuthors {
		ten = append(ten, e.author(fmt.Sprintf("co%d", i), fmt.Sprintf("Co %d", i)).ID)
	}
	p := e.coPost("ada", "full", ten[:storage.MaxAuthors-1], nil, nil)
	for name, in := range map[string]storage.NewPost{
		"an 11th author":           {AuthorID: "ada", Title: "T", Slug: "eleven", CoAuthors: ten},
		"the primary as co-author": {AuthorID: "ada", Title: "T", Slug: "self", CoAuthors: []string{"ada"}},
		"an unknown co-author":     {AuthorID: "ada", Title: "T", Slug: "ghost", CoAuthors: []string{"nobody"}},
		"a bad id":                 {AuthorID: "ada", Title: "T", Slug: "bad", CoAuthors: []string{"a b"}},
	} {
		_, err := e.store.CreatePost(ctx, in)
		if !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("%s: %v, want invalid input", name, err)
		}
	}
	_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, CoAuthors: &ten})
	if !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("an 11th author by an update: %v, want invalid input", err)
	}
	_, err = e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, CoAuthors: &[]string{"ada"}})
	if !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("the primary as co-author by an update: %v, want invalid input", err)
	}
	equal(t, "version", must[*storage.Post](t)(e.store.GetPost(ctx, p.ID)).Version, p.Version)
	res := must[*storage.Result[*storage.Post]](t)(e.store.AuthorDrafts(ctx, "ada", storage.PageArgs{Limit: 10}))
	equal(t, "drafts", len(res.Items), 1)
	e.consistent()
}

// TestConcurrentCoAuthorChangesWithRename adds and removes co-authors of
// a published post while one of them is renamed again and again: every
// copy ends up exact, with the last name, in every co-author's partition.
func TestConcurrentCoAuthorChangesWithRename(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.author("cy", "Cy")
	e.category("go", "Go")
	var posts []*storage.Post
	for i := range 4 {
		posts = append(posts, e.publish(e.coPost("ada", fmt.Sprintf("p%d", i), []string{"bob"}, []string{"go"}, []string{"Go"}), start.Add(-time.Duration(i+1)*time.Hour)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, p := range posts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists := [][]string{{"bob", "cy"}, {"cy"}, {"cy", "bob"}, {"bob"}}
			for round := range 4 {
				co := lists[(round+i)%len(lists)]
				if err := e.updateUntilDone(storage.PostPatch{ID: p.ID, CoAuthors: &co}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := range 4 {
			for _, id := range []string{"bob", "cy"} {
				name := fmt.Sprintf("%s %d", id, round)
				if _, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: id, Name: &name}); err != nil && !errors.Is(err, storage.ErrBusy) {
					errs <- err
				}
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.consistent()
	for _, p := range posts {
		got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
		for _, a := range got.CoAuthors {
			if !slices.Contains([]string{"bob 3", "cy 3"}, a.Name) {
				t.Errorf("post %s carries co-author name %q", p.Slug, a.Name)
			}
		}
	}
}

// updateUntilDone applies the patch to the post as it is now, again
// after a conflict with another writer.
func (e *env) updateUntilDone(patch storage.PostPatch) error {
	ctx := context.Background()
	for {
		cur, err := e.store.GetPost(ctx, patch.ID)
		if err != nil {
			return err
		}
		patch.ExpectedVersion = cur.Version
		_, err = e.store.UpdatePost(ctx, patch)
		var conflict *storage.ConflictError
		if !errors.As(err, &conflict) && !errors.Is(err, storage.ErrBusy) {
			return err
		}
	}
}

// TestOnlyThePostsAuthorsWrite checks the post's authors as each write
// reads them: a co-author may edit, publish and unpublish, not change the
// co-authors; once removed, they may do nothing, whatever they checked
// before; someone else never.
func TestOnlyThePostsAuthorsWrite(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, id := range []string{"ada", "bob", "cy"} {
		e.author(id, id)
	}
	p := e.coPost("ada", "p", []string{"bob"}, nil, nil)
	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr("By bob"), Actor: "bob"}))
	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, Actor: "bob"}))
	for name, err := range map[string]error{
		"cy edits": func() error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr("By cy"), Actor: "cy"})
			return err
		}(),
		"bob changes the co-authors": func() error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, CoAuthors: &[]string{"bob", "cy"}, Actor: "bob"})
			return err
		}(),
		"cy deletes": func() error {
			_, err := e.store.DeletePost(ctx, storage.PostRef{ID: p.ID, Actor: "cy"})
			return err
		}(),
	} {
		if !errors.Is(err, storage.ErrNotPostAuthor) {
			t.Errorf("%s: %v, want ErrNotPostAuthor", name, err)
		}
	}
	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, CoAuthors: &[]string{"cy"}, Actor: "ada"}))
	if _, err := e.store.Unpublish(ctx, storage.PostRef{ID: p.ID, Actor: "bob"}); !errors.Is(err, storage.ErrNotPostAuthor) {
		t.Errorf("bob, removed, unpublishes: %v, want ErrNotPostAuthor", err)
	}
	must[*storage.Post](t)(e.store.Unpublish(ctx, storage.PostRef{ID: p.ID, Actor: "cy"}))
	e.consistent()
}
