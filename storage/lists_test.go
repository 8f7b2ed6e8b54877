package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestPaginationMatchesModel walks every list with random page sizes and
// compares the concatenated pages with the order a model of the data gives.
func TestPaginationMatchesModel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	authors := []string{"a1", "a2", "a3"}
	cats := []string{"c1", "c2", "c3", "c4"}
	for _, a := range authors {
		e.author(a, "Author "+a)
	}
	for _, c := range cats {
		e.category(c, "Category "+c)
	}
	type pub struct {
		id, author string
		cats       []string
		at         time.Time
	}
	var model []pub
	for i := range 140 {
		a := authors[rng.IntN(len(authors))]
		var pc []string
		for _, c := range cats {
			if rng.IntN(3) == 0 {
				pc = append(pc, c)
			}
		}
		p := e.post(a, fmt.Sprintf("post-%d", i), pc...)
		if rng.IntN(8) == 0 {
			continue // stays a draft
		}
		// Several posts share a publish time, so ties are ordered by id.
		at := start.Add(-time.Duration(rng.IntN(60)) * time.Hour)
		e.publish(p, at)
		model = append(model, pub{p.ID, a, pc, at})
	}
	sort.Slice(model, func(i, j int) bool {
		if !model[i].at.Equal(model[j].at) {
			return model[i].at.After(model[j].at)
		}
		return model[i].id > model[j].id
	})
	expect := func(keep func(pub) bool) []string {
		var out []string
		for _, p := range model {
			if keep(p) {
				out = append(out, p.id)
			}
		}
		return out
	}
	walk := func(t *testing.T, list func(storage.Page) (*storage.Result[*storage.Post], error)) []string {
		var got []string
		after := ""
		for {
			r, err := list(storage.Page{Limit: 1 + rng.IntN(100), After: after})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ids(r.Items)...)
			if !r.HasNext {
				return got
			}
			if len(r.Items) == 0 {
				t.Fatal("empty page with HasNext")
			}
			after = r.Cursors[len(r.Cursors)-1]
		}
	}
	for round := range 5 {
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
			equalSlices(t, "feed", walk(t, func(p storage.Page) (*storage.Result[*storage.Post], error) { return e.store.LatestPosts(ctx, p) }),
				expect(func(pub) bool { return true }))
			for _, a := range authors {
				equalSlices(t, "author "+a, walk(t, func(p storage.Page) (*storage.Result[*storage.Post], error) {
					return e.store.AuthorPosts(ctx, a, p, false)
				}),
					expect(func(p pub) bool { return p.author == a }))
			}
			for _, c := range cats {
				equalSlices(t, "category "+c, walk(t, func(p storage.Page) (*storage.Result[*storage.Post], error) { return e.store.CategoryPosts(ctx, c, p) }),
					expect(func(p pub) bool { return slices.Contains(p.cats, c) }))
			}
		})
	}
	t.Run("a cursor of another list or altered is rejected", func(t *testing.T) {
		r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "c1", storage.Page{Limit: 2}))
		c := r.Cursors[0]
		tampered := c[:len(c)-2] + strings.ToUpper(c[len(c)-2:])
		if tampered == c {
			tampered = c[:len(c)-2] + "zz"
		}
		for name, try := range map[string]func() error{
			"other category": func() error { _, err := e.store.CategoryPosts(ctx, "c2", storage.Page{Limit: 2, After: c}); return err },
			"feed":           func() error { _, err := e.store.LatestPosts(ctx, storage.Page{Limit: 2, After: c}); return err },
			"tampered": func() error {
				_, err := e.store.CategoryPosts(ctx, "c1", storage.Page{Limit: 2, After: tampered})
				return err
			},
		} {
			var ve *storage.ValidationError
			if err := try(); !errors.As(err, &ve) || ve.Field != "after" {
				t.Errorf("%s: err = %v, want invalid cursor", name, err)
			}
		}
	})
	e.consistent()
}

func TestConcurrentEditsOneWinnerPerVersion(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	p := e.publish(e.post("ada", "race", "go"), time.Time{})

	// Each round, 20 writers race with the same expected version: exactly
	// one wins, the others get a conflict naming the winner's version.
	for round := range 3 {
		version := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID)).Version
		var wg sync.WaitGroup
		results := make([]error, 20)
		titles := make([]string, 20)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				titles[i] = fmt.Sprintf("round %d writer %d", round, i)
				cats := []string{"go"}
				if i%2 == 1 {
					cats = []string{"aws", "go"}
				}
				_, results[i] = e.store.UpdatePost(ctx, storage.PostPatch{
					ID: p.ID, ExpectedVersion: version, Title: &titles[i], Categories: &cats,
				})
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range results {
			var conflict *storage.ConflictError
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
			case errors.As(err, &conflict):
				if conflict.CurrentVersion != version+1 {
					t.Errorf("conflict names version %d, want %d", conflict.CurrentVersion, version+1)
				}
			default:
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
		equal(t, "title", got.Title, titles[winner])
		equal(t, "version", got.Version, version+1)
		e.consistent()
	}
}

func TestConcurrentCommentsAreAllCounted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	p := e.publish(e.post("ada", "popular", "go", "aws"), time.Time{})
	root := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: "root"}))
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: fmt.Sprintf("comment %d", i)}
			if i%2 == 0 {
				in.ParentID = root.ID
			}
			_, errs[i] = e.store.AddComment(ctx, in)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
	equal(t, "comment count", got.CommentCount, int64(21))
	equal(t, "thread count", got.ThreadCount, int64(11))
	r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "aws", storage.Page{Limit: 5}))
	equal(t, "copy comment count", r.Items[0].CommentCount, int64(21))
	e.consistent()
}

func TestCommentThreads(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	p := e.publish(e.post("ada", "threads"), time.Time{})
	add := func(parent, body string) *storage.Comment {
		e.clock.advance(time.Second)
		return must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: parent, AuthorID: "bob", Body: body}))
	}
	first := add("", "first")
	second := add("", "second")
	r1 := add(first.ID, "reply 1")
	r2 := add(first.ID, "reply 2")
	s1 := add(second.ID, "reply to second")
	e.consistent()

	var roots *storage.Result[*storage.Comment]
	n := counted(func(ctx context.Context) {
		roots = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.Page{Limit: 50}))
	})
	equal(t, "comments requests", n["Query"], 1)
	equalSlices(t, "roots", []string{roots.Items[0].ID, roots.Items[1].ID}, []string{first.ID, second.ID})
	equal(t, "roots only", len(roots.Items), 2)

	var replies map[string][]*storage.Comment
	n = counted(func(ctx context.Context) {
		replies = must[map[string][]*storage.Comment](t)(e.store.Replies(ctx, p.ID, []string{first.ID, second.ID}))
	})
	equal(t, "replies requests", n["Query"], 1)
	equal(t, "replies of first", len(replies[first.ID]), 2)
	equal(t, "first reply", replies[first.ID][0].ID, r1.ID)
	equal(t, "second reply", replies[first.ID][1].ID, r2.ID)
	equal(t, "reply of second", replies[second.ID][0].ID, s1.ID)

	if _, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: r1.ID, AuthorID: "bob", Body: "deep"}); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("reply to a reply: err = %v, want invalid input", err)
	}

	// Deleting a comment with replies leaves a tombstone; without, it goes.
	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: first.ID}))
	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: s1.ID}))
	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: second.ID}))
	e.consistent()
	roots = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.Page{Limit: 50}))
	equal(t, "roots after delete", len(roots.Items), 1)
	equal(t, "tombstone", roots.Items[0].Deleted, true)
	equal(t, "tombstone body", roots.Items[0].Body, "")
	got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
	equal(t, "comment count", got.CommentCount, int64(2))
	if _, err := e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: first.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("delete twice: err = %v, want not found", err)
	}
	if _, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: first.ID, AuthorID: "bob", Body: "late"}); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("reply to a tombstone: err = %v, want invalid input", err)
	}

	comments := must[[]*storage.Comment](t)(func() ([]*storage.Comment, error) {
		cs, errs := e.store.GetComments(ctx, []storage.CommentKey{{PostID: p.ID, CommentID: r2.ID}, {PostID: p.ID, CommentID: s1.ID}})
		equal(t, "found", errs[0], nil)
		if !errors.Is(errs[1], storage.ErrNotFound) {
			t.Errorf("deleted reply: err = %v", errs[1])
		}
		return cs, nil
	}())
	equal(t, "reply body", comments[0].Body, "reply 2")

	t.Run("the last reply of a tombstone takes the tombstone along", func(t *testing.T) {
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: r1.ID}))
		e.consistent()
		roots := must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.Page{Limit: 50}))
		equal(t, "tombstone still holds a reply", len(roots.Items), 1)
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: r2.ID}))
		e.consistent()
		roots = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.Page{Limit: 50}))
		equal(t, "roots left", len(roots.Items), 0)
		got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
		equal(t, "comment count", got.CommentCount, int64(0))
		equal(t, "thread count", got.ThreadCount, int64(0))
	})
}

func TestBatchReadsKeepKeyOrder(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var want []string
	for i := range 130 {
		id := fmt.Sprintf("author-%03d", i)
		e.author(id, "Name "+id)
		want = append(want, id)
	}
	rand.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	keys := append(slices.Clone(want), "missing", want[0])
	var got []*storage.Author
	var errs []error
	n := counted(func(ctx context.Context) { got, errs = e.store.GetAuthors(ctx, keys) })
	equal(t, "BatchGetItem calls", n["BatchGetItem"], 2)
	for i, id := range want {
		if errs[i] != nil || got[i].ID != id {
			t.Fatalf("slot %d: %v %v, want %s", i, got[i], errs[i], id)
		}
	}
	if !errors.Is(errs[len(want)], storage.ErrNotFound) {
		t.Errorf("missing: %v", errs[len(want)])
	}
	equal(t, "duplicate key", got[len(want)+1].ID, want[0])
	all := must[*storage.Result[*storage.Author]](t)(e.store.Authors(ctx, storage.Page{Limit: 100}))
	equal(t, "authors page", len(all.Items), 100)
	equal(t, "more authors", all.HasNext, true)
}
