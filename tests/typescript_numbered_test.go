package tests

import (
	"context"
	"fmt"
	"testing"
)

// TestTypeScriptNumberedPages sends the TypeScript client's numbered
// pages (clients/typescript/src/numbered.ts) as it does: a category's, an
// author's by slug, a series' and a month's, each at its first page, a
// middle one, its last and one past the end, and checks what the pages
// read and what they cost: two DynamoDB requests for the list and its
// parent, plus the author's slug for an author (as author(slug:) always
// reads it) and the series' owner for a series.
func TestTypeScriptNumberedPages(t *testing.T) {
	s := newServer(t, cacheable)
	b := s.seedBlog(t)
	ctx := context.Background()
	ops := tsOperations(t)
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, b.writers[0], CreateSeriesInput{Slug: "tour", Title: "Tour"}))
	for i := 0; i < 25; i += 2 { // Ada's 13 posts
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, b.writers[0], AddPostToSeriesInput{SeriesSlug: "tour", PostId: b.published[i]}))
	}
	if err := s.store.SyncAllPages(ctx); err != nil {
		t.Fatal(err)
	}
	const size = 10 // the client's 20 would make one page of each list here
	cases := []struct {
		name, op, path string
		vars           map[string]any
		count, budget  int
	}{
		{"category", "NumberedCategoryPage", "category.postPage", map[string]any{"slug": "go"}, 25, 2},
		{"author by slug", "NumberedAuthorPage", "author.postPage", map[string]any{"slug": "ada-lovelace"}, 13, 1 + 2},
		{"series", "NumberedSeriesPage", "series.postPage", map[string]any{"slug": "tour"}, 13, 2 + 1},
		{"month", "NumberedMonthPage", "postPage", map[string]any{"month": "2026-02"}, 13, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			last := (c.count + size - 1) / size
			for _, n := range []int{1, (last + 1) / 2, last, last + 1} {
				vars := map[string]any{"number": n, "size": size}
				for k, v := range c.vars {
					vars[k] = v
				}
				a := s.sendTS(t, ops[c.op], vars, "")
				what := fmt.Sprintf("page %d of %d", n, last)
				if got := total(s.requests()); got > c.budget {
					t.Errorf("%s: %d DynamoDB requests %v, budget %d", what, got, s.requests(), c.budget)
				}
				equal(t, what+" totalPages", a.num(c.path+".totalPages"), last)
				equal(t, what+" totalCount", a.num(c.path+".totalCount"), c.count)
				equal(t, what+" posts", a.len(c.path+".nodes"), max(0, min(size, c.count-(n-1)*size)))
			}
		})
	}
	// The series reads in its order: page 1 starts with its first part.
	a := s.sendTS(t, ops["NumberedSeriesPage"], map[string]any{"slug": "tour", "number": 1, "size": size}, "")
	equal(t, "series page 1 first part", a.str("series.postPage.nodes.0.slug"), "post-0")
	equal(t, "series owner", a.str("series.owner.slug"), "ada-lovelace")
	// A month page holds that month's posts, oldest first.
	a = s.sendTS(t, ops["NumberedMonthPage"], map[string]any{"month": "2026-02", "number": 1, "size": size}, "")
	equal(t, "oldest of february first", a.str("postPage.nodes.0.slug"), "post-0")
	s.consistent()
}
