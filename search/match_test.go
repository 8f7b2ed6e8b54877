package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	blevequery "github.com/blevesearch/bleve/v2/search/query"

	"github.com/blogql/blog/search/internal/segments"
	"github.com/blogql/blog/storage"
)

// TestMatchesAsBleveWould compares what a search matches, counts and
// ranks with bleve's own queries of the same words (term queries over
// the fields, prefix queries, match-phrase queries, keyword filters),
// over an index of several segments, some of whose posts were deleted
// or indexed again with other categories since: the same posts, the same
// total and the facets of exactly those posts, and the best first.
func TestMatchesAsBleveWould(t *testing.T) {
	posts := benchPosts(600)
	posts = append(posts,
		post("s1", "The fox", "the quick brown fox jumps over the lazy dog; a fox of the woods", "cat-01"),
		post("s2", "Foxes", "a fox in the woods, the fox of the woods, fox fox", "cat-02"),
		post("s3", "Dogs", "lazy dogs sleep; the dog is lazy and the fox is not", "cat-01"),
	)
	svc := testService(t)
	for i := 0; i < len(posts); i += 100 {
		if err := svc.Index(posts[i:min(i+100, len(posts))]); err != nil {
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
	categories := map[string][]string{}
	for _, p := range posts {
		for _, c := range p.Categories {
			categories[p.ID] = append(categories[p.ID], c.Slug)
		}
	}
	requests, _ := benchQueries(posts)
	requests = requests[:60]
	for _, q := range []string{`"fox of the woods"`, `"the lazy dog"`, `"fox fox"`, `lazy "dog is lazy"`, `"brown fox jumps"`, "fox", "ren* fox", "kalo*", "lazy dog"} {
		requests = append(requests, Request{Query: q})
	}
	for _, w := range strings.Fields(posts[0].Body)[:20] {
		requests = append(requests, Request{Query: w[:3] + "*"}, Request{Query: w, AuthorID: "a07"})
	}
	words := 0
	for i, r := range requests {
		parts, err := checkQuery(r.Query)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := compile(parts, svc.queryAnalyzers(), nil)
		if !ok {
			t.Fatalf("%q: no words", r.Query)
		}
		if typos, err := svc.cur.typoWords(parts, svc.queryAnalyzers()); err != nil {
			t.Fatal(err)
		} else if len(typos) > 0 && i%2 == 0 {
			p, _ = compile(parts, svc.queryAnalyzers(), typos)
		}
		p = filtered(p, r)
		got, err := svc.cur.match(context.Background(), p, matchOptions{k: 1000, facets: true})
		if err != nil {
			t.Fatal(err)
		}
		req := bleve.NewSearchRequestOptions(oracle(p), 1000, 0, false)
		sr, err := svc.cur.b.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		count := map[string]int{}
		for _, h := range sr.Hits {
			want = append(want, h.ID)
			for _, c := range categories[h.ID] {
				count[c]++
			}
		}
		var facets []Facet
		for c, n := range count {
			facets = append(facets, Facet{Category: c, Count: n})
		}
		slices.SortFunc(facets, func(a, b Facet) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Category, b.Category))
		})
		var ids []string
		for _, h := range got.hits {
			ids = append(ids, h.id)
		}
		slices.Sort(ids)
		slices.Sort(want)
		if len(want) > 0 {
			words++
		}
		if int(sr.Total) != got.total || !slices.Equal(ids, want) || fmt.Sprint(got.facets) != fmt.Sprint(facets) {
			t.Errorf("%q %s %s: %d %v, facets %v; bleve finds %d %v, facets %v", r.Query, r.Category, r.AuthorID, got.total, ids, got.facets, sr.Total, want, facets)
		}
		if !slices.IsSortedFunc(got.hits, func(a, b ranked) int {
			return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id))
		}) {
			t.Errorf("%q: not best first: %v", r.Query, got.hits)
		}
		// Scores are the same whichever way a word's postings are read:
		// at each match, looked up among them, or from the weights kept
		// in memory.
		for _, way := range []struct {
			rare   int
			cached uint64
		}{{1 << 30, 1 << 40}, {1, 1 << 40}, {1 << 30, 1}} {
			rareWord, cachedPostings = way.rare, way.cached
			again, err := svc.cur.match(context.Background(), p, matchOptions{k: 1000})
			rareWord, cachedPostings = 8, 2048
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(again.hits, got.hits) {
				t.Errorf("%q: read with %+v: %v, want %v", r.Query, way, again.hits, got.hits)
			}
		}
		// The best 5, and the 5 after the third, are those of the whole
		// ranking.
		best, err := svc.cur.match(context.Background(), p, matchOptions{k: 5})
		if err != nil {
			t.Fatal(err)
		}
		if n := min(5, len(got.hits)); !slices.Equal(best.hits, got.hits[:n]) {
			t.Errorf("%q: best 5 %v, want %v", r.Query, best.hits, got.hits[:n])
		}
		if len(got.hits) > 3 {
			third := got.hits[2]
			after, err := svc.cur.match(context.Background(), p, matchOptions{k: 5, after: &cursor{score: third.score, id: third.id}})
			if err != nil {
				t.Fatal(err)
			}
			if n := min(8, len(got.hits)); !slices.Equal(after.hits, got.hits[3:n]) {
				t.Errorf("%q: after the third %v, want %v", r.Query, after.hits, got.hits[3:n])
			}
		}
	}
	if words < len(requests)*2/3 {
		t.Errorf("only %d of the %d searches found a post: too few to compare", words, len(requests))
	}
	// The matches above came from zap's bitmaps, not from postings read
	// one at a time (segments.PostingsList.OrInto).
	if n := segments.SlowPaths(); n != 0 {
		t.Errorf("%d postings lists were read one posting at a time: bleve's segments no longer OR into bitmaps", n)
	}
}

// oracle returns bleve's query of p.
func oracle(p *plan) blevequery.Query {
	var all []blevequery.Query
	for _, w := range p.words {
		var any []blevequery.Query
		for _, a := range w.alts {
			q := bleve.NewTermQuery(a.term)
			q.SetField(a.field)
			any = append(any, q)
		}
		if w.prefix != "" {
			for _, f := range []string{fieldTitle, fieldBody, fieldNames} {
				q := bleve.NewPrefixQuery(w.prefix)
				q.SetField(f)
				any = append(any, q)
			}
		}
		all = append(all, bleve.NewDisjunctionQuery(any...))
	}
	for _, ph := range p.phrases {
		var either []blevequery.Query
		for _, f := range []string{fieldTitle, fieldBody} {
			q := bleve.NewPhraseQuery(ph, f)
			either = append(either, q)
		}
		all = append(all, bleve.NewDisjunctionQuery(either...))
	}
	for _, f := range p.filters {
		q := bleve.NewTermQuery(f.term)
		q.SetField(f.field)
		all = append(all, q)
	}
	return bleve.NewConjunctionQuery(all...)
}

// TestRankingPrefersTitlesRepeatsAndShortTexts checks the score's
// order: a word in the title first, then a body that holds it more often
// in fewer words, then a long body that holds it once (of two bodies
// that hold it as often, the shorter); a phrase ranks the same way where
// it is.
func TestRankingPrefersTitlesRepeatsAndShortTexts(t *testing.T) {
	filler := strings.Repeat("walnut bread and butter beans ", 40)
	svc := testService(t,
		post("r1", "Tomato soup", "a recipe for a cold day"),
		post("r2", "Lunch", "tomato soup, tomato salad, tomato tart"),
		post("r3", "Dinner", filler+"a tomato soup"),
		post("r4", "Breakfast", filler),
	)
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"tomato", []string{"r1", "r2", "r3"}},
		{`"tomato soup"`, []string{"r1", "r2", "r3"}},
		{"tomato walnut", []string{"r3"}},
		{"walnut", []string{"r4", "r3"}},
	} {
		res, err := svc.Search(context.Background(), Request{Query: c.q, First: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, h := range res.Hits {
			got = append(got, h.PostID)
			if i > 0 && h.Score > res.Hits[i-1].Score {
				t.Errorf("%q: %s scores %v, more than the one before it", c.q, h.PostID, h.Score)
			}
			if h.Score <= 0 {
				t.Errorf("%q: %s scores %v", c.q, h.PostID, h.Score)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
}
