package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
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
	// 60 posts, a third of them in each author's list and category's,
	// walked in pages of up to 30: 29 of the 40 walks take more than one.
	for i := range 60 {
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
		at := start.Add(-time.Duration(rng.IntN(30)) * time.Hour)
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
	walk := func(t *testing.T, list func(storage.PageArgs) (*storage.Result[*storage.Post], error)) []string {
		var got []string
		after := ""
		for {
			r, err := list(storage.PageArgs{Limit: 1 + rng.IntN(30), After: after})
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
			equalSlices(t, "feed", walk(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
				return e.store.LatestPosts(ctx, p, storage.Period{})
			}),
				expect(func(pub) bool { return true }))
			for _, a := range authors {
				equalSlices(t, "author "+a, walk(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
					return e.store.AuthorPosts(ctx, a, p, storage.Period{}, false)
				}),
					expect(func(p pub) bool { return p.author == a }))
			}
			for _, c := range cats {
				equalSlices(t, "category "+c, walk(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
					return e.store.CategoryPosts(ctx, c, p, storage.Period{})
				}),
					expect(func(p pub) bool { return slices.Contains(p.cats, c) }))
			}
		})
	}
	t.Run("a cursor of another list or altered is rejected", func(t *testing.T) {
		r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "c1", storage.PageArgs{Limit: 2}, storage.Period{}))
		c := r.Cursors[0]
		tampered := c[:len(c)-2] + strings.ToUpper(c[len(c)-2:])
		if tampered == c {
			tampered = c[:len(c)-2] + "zz"
		}
		for name, try := range map[string]func() error{
			"other category": func() error {
				_, err := e.store.CategoryPosts(ctx, "c2", storage.PageArgs{Limit: 2, After: c}, storage.Period{})
				return err
			},
			"feed": func() error {
				_, err := e.store.LatestPosts(ctx, storage.PageArgs{Limit: 2, After: c}, storage.Period{})
				return err
			},
			"tampered": func() error {
				_, err := e.store.CategoryPosts(ctx, "c1", storage.PageArgs{Limit: 2, After: tampered}, storage.Period{})
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
	all := must[*storage.Result[*storage.Author]](t)(e.store.Authors(ctx, storage.PageArgs{Limit: 100}))
	equal(t, "authors page", len(all.Items), 100)
	equal(t, "more authors", all.HasNext, true)
}
