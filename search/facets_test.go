package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/blogql/blog/storage"
)

// TestFacetsCountEveryMatch compares a search's facets with the
// categories of every post its query matches, over an index of several
// segments, some of whose posts were deleted or indexed again with other
// categories since.
func TestFacetsCountEveryMatch(t *testing.T) {
	posts := benchPosts(600)
	svc := testService(t)
	for i := 0; i < len(posts); i += 100 {
		if err := svc.Index(posts[i : i+100]); err != nil {
			t.Fatal(err)
		}
	}
	// Later batches move some posts to other categories, delete others.
	moved := posts[10:60]
	for _, p := range moved {
		p.Categories = []storage.CategoryRef{{Slug: "moved", Name: "Moved"}, {Slug: p.Categories[0].Slug, Name: p.Categories[0].Name}}
	}
	if err := svc.Index(moved); err != nil {
		t.Fatal(err)
	}
	b := svc.cur.b.NewBatch()
	for _, p := range posts[300:340] {
		b.Delete(p.ID)
	}
	if err := svc.cur.b.Batch(b); err != nil {
		t.Fatal(err)
	}
	svc.changes.Add(1)
	categories := map[string][]string{}
	for _, p := range posts {
		for _, c := range p.Categories {
			categories[p.ID] = append(categories[p.ID], c.Slug)
		}
	}
	ctx := context.Background()
	for _, r := range benchQueries(posts)[:40] {
		t.Run(r.Query+" "+r.Category, func(t *testing.T) {
			res, err := svc.Search(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			// The query the search ran: its words as typed, or with their
			// typo tolerance when those find less than a page.
			parts, err := checkQuery(r.Query)
			if err != nil {
				t.Fatal(err)
			}
			queries := &searchQueries{parts: parts, analyzer: svc.analyzer, r: r, forgiving: forgiving(parts)}
			q, _ := compile(parts, svc.analyzer, nil)
			q = filtered(q, r)
			if n, _ := svc.cur.b.Search(bleve.NewSearchRequestOptions(q, 0, 0, false)); int(n.Total) < r.First {
				if tq, _, err := queries.typo(svc.cur); err != nil {
					t.Fatal(err)
				} else if tq != nil {
					q = tq
				}
			}
			req := bleve.NewSearchRequestOptions(q, len(posts), 0, false)
			sr, err := svc.cur.b.Search(req)
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, h := range sr.Hits {
				for _, c := range categories[h.ID] {
					count[c]++
				}
			}
			var want []Facet
			for c, n := range count {
				want = append(want, Facet{Category: c, Count: n})
			}
			slices.SortFunc(want, func(a, b Facet) int {
				return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Category, b.Category))
			})
			if int(sr.Total) != res.Total || fmt.Sprint(res.Facets) != fmt.Sprint(want) {
				t.Errorf("total %d, facets %v; the index counts %d, %v", res.Total, res.Facets, sr.Total, want)
			}
		})
	}
}
