package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

type postList func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error)

// walkBack reads a list from its end to its start with backward pages of
// random sizes and returns its ids in the list's order, checking each
// page's flags on the way.
func walkBack(t *testing.T, rng *rand.Rand, list postList) []string {
	t.Helper()
	var got []string
	before := ""
	for {
		r, err := list(context.Background(), storage.PageArgs{Limit: 1 + rng.IntN(30), Before: before, Backward: true})
		if err != nil {
			t.Fatal(err)
		}
		got = append(ids(r.Items), got...)
		equal(t, "hasNext of a backward page", r.HasNext, before != "")
		if !r.HasPrev {
			return got
		}
		if len(r.Items) == 0 {
			t.Fatal("empty page with HasPrev")
		}
		before = r.Cursors[0]
	}
}

// walkForward reads a list from its start with forward pages.
func walkForward(t *testing.T, rng *rand.Rand, list postList) []string {
	t.Helper()
	var got []string
	after := ""
	for {
		r, err := list(context.Background(), storage.PageArgs{Limit: 1 + rng.IntN(30), After: after})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(r.Items)...)
		equal(t, "hasPrev of a forward page", r.HasPrev, after != "")
		if !r.HasNext {
			return got
		}
		after = r.Cursors[len(r.Cursors)-1]
	}
}

// TestBackwardPagesAndPeriods publishes posts over three months and walks
// every list of posts both ways, whole and by month: backward pages give
// the list forward pages give, and a period gives the posts published in
// it.
func TestBackwardPagesAndPeriods(t *testing.T) {
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(3, 5))
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	type pub struct {
		id, author string
		inGo       bool
		at         time.Time
	}
	var model []pub
	for i := range 90 {
		a := []string{"ada", "bob"}[i%2]
		cats := []string{}
		if i%3 != 0 {
			cats = append(cats, "go")
		}
		p := e.post(a, fmt.Sprintf("p-%d", i), cats...)
		// Some share a time; month ends and starts are among them.
		at := time.Date(2026, time.Month(1+i%3), 1+rng.IntN(28), rng.IntN(3), 0, 0, 0, time.UTC)
		if i%10 == 0 {
			at = time.Date(2026, time.Month(1+i%3), 1, 0, 0, 0, 0, time.UTC)
		}
		if at.After(start) {
			at = start.Add(-time.Minute)
		}
		e.publish(p, at)
		model = append(model, pub{p.ID, a, len(cats) > 0, at})
	}
	e.publish(e.post("ada", "scheduled", "go"), start.Add(time.Hour))
	slices.SortFunc(model, func(a, b pub) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		if a.id > b.id {
			return -1
		}
		return 1
	})
	expect := func(per storage.Period, keep func(pub) bool) []string {
		var out []string
		for _, p := range model {
			if keep(p) && (per.From.IsZero() || !p.at.Before(per.From)) && (per.To.IsZero() || p.at.Before(per.To)) {
				out = append(out, p.id)
			}
		}
		return out
	}
	feb := storage.Period{From: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	periods := map[string]storage.Period{
		"all": {}, "february": feb, "from february": {From: feb.From}, "before february": {To: feb.From},
		"empty": {From: feb.From, To: feb.From}, "future": {From: start.Add(time.Minute)},
	}
	for name, per := range periods {
		lists := map[string]struct {
			list postList
			keep func(pub) bool
		}{
			"feed": {func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error) {
				return e.store.LatestPosts(ctx, p, per)
			}, func(pub) bool { return true }},
			"author": {func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error) {
				return e.store.AuthorPosts(ctx, "ada", p, per, false)
			}, func(p pub) bool { return p.author == "ada" }},
			"category": {func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error) {
				return e.store.CategoryPosts(ctx, "go", p, per)
			}, func(p pub) bool { return p.inGo }},
		}
		for lname, l := range lists {
			t.Run(name+"/"+lname, func(t *testing.T) {
				want := expect(per, l.keep)
				equalSlices(t, "forward", walkForward(t, rng, l.list), want)
				equalSlices(t, "backward", walkBack(t, rng, l.list), want)
			})
		}
	}

	t.Run("an empty period costs no request", func(t *testing.T) {
		n := counted(func(ctx context.Context) {
			r := must[*storage.Result[*storage.Post]](t)(e.store.LatestPosts(ctx, storage.PageArgs{Limit: 5}, periods["future"]))
			equal(t, "items", len(r.Items), 0)
		})
		equal(t, "requests", len(n), 0)
	})

	t.Run("bad pages and periods", func(t *testing.T) {
		ctx := context.Background()
		page := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 3}, storage.Period{}))
		cursor := page.Cursors[1]
		for name, c := range map[string]struct {
			run   func() error
			field string
		}{
			"first and before": {func() error {
				_, err := e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 3, Before: cursor}, storage.Period{})
				return err
			}, "before"},
			"last and after": {func() error {
				_, err := e.store.LatestPosts(ctx, storage.PageArgs{Limit: 3, After: cursor, Backward: true}, storage.Period{})
				return err
			}, "after"},
			"last out of range": {func() error {
				_, err := e.store.Comments(ctx, "x", storage.PageArgs{Limit: 101, Backward: true})
				return err
			}, "last"},
			"before from another list": {func() error {
				_, err := e.store.AuthorPosts(ctx, "ada", storage.PageArgs{Limit: 3, Before: cursor, Backward: true}, storage.Period{}, false)
				return err
			}, "before"},
			"before from another period": {func() error {
				_, err := e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 3, Before: cursor, Backward: true}, feb)
				return err
			}, "before"},
			"feed before from a category": {func() error {
				_, err := e.store.LatestPosts(ctx, storage.PageArgs{Limit: 3, Before: cursor, Backward: true}, storage.Period{})
				return err
			}, "before"},
			"period ends before it starts": {func() error {
				_, err := e.store.LatestPosts(ctx, storage.PageArgs{Limit: 3}, storage.Period{From: feb.To, To: feb.From})
				return err
			}, "publishedBefore"},
		} {
			var ve *storage.ValidationError
			if err := c.run(); !errors.As(err, &ve) || ve.Field != c.field {
				t.Errorf("%s: err = %v, want invalid %s", name, err, c.field)
			}
		}
		back := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1, Before: cursor, Backward: true}, storage.Period{}))
		equalSlices(t, "the post before the cursor", ids(back.Items), ids(page.Items[:1]))
		equal(t, "nothing before it", back.HasPrev, false)
		equal(t, "the cursor's post after it", back.HasNext, true)
	})
}

func TestBackwardPagesOfOtherLists(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 23 {
		e.author(fmt.Sprintf("a%02d", i), fmt.Sprintf("Author %d", i))
		e.clock.Advance(time.Second)
	}
	drafts := e.posts(17, "a00", "d")
	p := e.publish(e.post("a01", "commented"), time.Time{})
	for i := range 21 {
		must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "a02", Body: fmt.Sprint(i)}))
		e.clock.Advance(time.Second)
	}
	forward := func(page func(storage.PageArgs) ([]string, []string, bool, bool, error)) []string {
		var out []string
		after := ""
		for {
			got, cursors, next, _, err := page(storage.PageArgs{Limit: 1 + rng.IntN(6), After: after})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got...)
			if !next {
				return out
			}
			after = cursors[len(cursors)-1]
		}
	}
	backward := func(page func(storage.PageArgs) ([]string, []string, bool, bool, error)) []string {
		var out []string
		before := ""
		for {
			got, cursors, _, prev, err := page(storage.PageArgs{Limit: 1 + rng.IntN(6), Before: before, Backward: true})
			if err != nil {
				t.Fatal(err)
			}
			out = append(got, out...)
			if !prev {
				return out
			}
			before = cursors[0]
		}
	}
	lists := map[string]func(storage.PageArgs) ([]string, []string, bool, bool, error){
		"authors": func(pg storage.PageArgs) ([]string, []string, bool, bool, error) {
			r, err := e.store.Authors(ctx, pg)
			if err != nil {
				return nil, nil, false, false, err
			}
			var out []string
			for _, a := range r.Items {
				out = append(out, a.ID)
			}
			return out, r.Cursors, r.HasNext, r.HasPrev, nil
		},
		"drafts": func(pg storage.PageArgs) ([]string, []string, bool, bool, error) {
			r, err := e.store.AuthorDrafts(ctx, "a00", pg)
			if err != nil {
				return nil, nil, false, false, err
			}
			return ids(r.Items), r.Cursors, r.HasNext, r.HasPrev, nil
		},
		"comments": func(pg storage.PageArgs) ([]string, []string, bool, bool, error) {
			r, err := e.store.Comments(ctx, p.ID, pg)
			if err != nil {
				return nil, nil, false, false, err
			}
			var out []string
			for _, c := range r.Items {
				out = append(out, c.ID)
			}
			return out, r.Cursors, r.HasNext, r.HasPrev, nil
		},
	}
	sizes := map[string]int{"authors": 23, "drafts": len(drafts), "comments": 21}
	for name, l := range lists {
		t.Run(name, func(t *testing.T) {
			want := forward(l)
			equal(t, "items", len(want), sizes[name])
			equalSlices(t, "backward", backward(l), want)
		})
	}
}

func TestAdjacentPosts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	var posts []*storage.Post
	for i := range 12 {
		cats := []string{}
		if i%2 == 0 {
			cats = []string{"go"}
		}
		// Pairs share a time: ties are ordered by id, as in the lists.
		posts = append(posts, e.publish(e.post("ada", fmt.Sprintf("p%d", i), cats...), start.Add(-time.Duration(12-i/2)*time.Hour)))
	}
	scheduled := e.publish(e.post("ada", "scheduled", "go"), start.Add(time.Hour))
	draft := e.post("ada", "draft", "go")
	feed := walkForward(t, rand.New(rand.NewPCG(1, 1)), func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error) {
		return e.store.LatestPosts(ctx, p, storage.Period{})
	})
	inGo := walkForward(t, rand.New(rand.NewPCG(1, 1)), func(ctx context.Context, p storage.PageArgs) (*storage.Result[*storage.Post], error) {
		return e.store.CategoryPosts(ctx, "go", p, storage.Period{})
	})
	byID := map[string]*storage.Post{}
	for _, p := range posts {
		byID[p.ID] = p
	}
	adjacent := func(p *storage.Post, cat string, newer bool) string {
		a := must[*storage.Post](t)(e.store.AdjacentPost(ctx, p, cat, newer))
		if a == nil {
			return ""
		}
		return a.ID
	}
	check := func(list []string, cat string) {
		for i, id := range list { // newest first
			older, newer := "", ""
			if i+1 < len(list) {
				older = list[i+1]
			}
			if i > 0 {
				newer = list[i-1]
			}
			equal(t, fmt.Sprintf("%s previous of %d", cat, i), adjacent(byID[id], cat, false), older)
			equal(t, fmt.Sprintf("%s next of %d", cat, i), adjacent(byID[id], cat, true), newer)
		}
	}
	check(feed, "")
	check(inGo, "go")
	equal(t, "next of a draft", adjacent(draft, "", true), "")
	equal(t, "previous of a scheduled post", adjacent(scheduled, "go", false), inGo[0])
	equal(t, "next of a scheduled post", adjacent(scheduled, "", true), "")
	if _, err := e.store.AdjacentPost(ctx, posts[0], "Not A Slug", true); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("bad category: err = %v", err)
	}
	e.clock.Advance(2 * time.Hour)
	equal(t, "next of the newest once the scheduled post appears", adjacent(byID[feed[0]], "", true), scheduled.ID)
}
