package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// Category facets. A search's facets count, for every post that matches,
// each of its categories: exact counts over the whole result. bleve's
// own facets read each match's categories from the index's doc values,
// a third of a search's time at 100,000 posts; here they come from a
// table in memory, made once per segment of the index (segments never
// change; a change to the index adds segments and merges old ones):
// each document's categories, by its number in the segment. A search
// counts its matches as bleve's collector sees them (one call per match,
// through the context's MakeDocumentMatchHandlerKey), in front of the
// collector's own ranking, which is left as it is.

// categoryTables keeps the category tables of an index's segments.
type categoryTables struct {
	mu     sync.Mutex
	names  []string          // categories by number
	number map[string]uint32 // numbers by category
	bySeg  map[uint64]*categoryTable
}

// categoryTable holds the categories of a segment's documents: those of
// document d are cats[off[d]:off[d+1]].
type categoryTable struct {
	off  []uint32
	cats []uint32
}

// facetCounter counts the categories of one search's matches.
type facetCounter struct {
	names   []string
	starts  []uint64 // the first document number of each segment
	tables  []*categoryTable
	seg     int
	counts  []int
	matches int
}

// counter returns a facetCounter over reader, a scorch snapshot, making
// the tables of its segments not seen before (and forgetting those of
// segments it no longer has).
func (t *categoryTables) counter(ctx context.Context, reader any) (*facetCounter, error) {
	snap, ok := reader.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("facets: the index reader is a %T, not a scorch snapshot", reader)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.number == nil {
		t.number, t.bySeg = map[string]uint32{}, map[uint64]*categoryTable{}
	}
	segs := snap.Segments()
	c := &facetCounter{starts: make([]uint64, len(segs)), tables: make([]*categoryTable, len(segs))}
	var terms []string
	live := make(map[uint64]bool, len(segs))
	var start uint64
	for i, ss := range segs {
		c.starts[i] = start
		// Global document numbers run on from one segment to the next,
		// deleted documents included (scorch's offsets).
		start += ss.Segment().Count()
		live[ss.Id()] = true
		if tab, ok := t.bySeg[ss.Id()]; ok {
			c.tables[i] = tab
			continue
		}
		if terms == nil {
			var err error
			if terms, err = categoryTerms(snap); err != nil {
				return nil, err
			}
		}
		tab, err := t.table(ss.Segment(), terms)
		if err != nil {
			return nil, err
		}
		t.bySeg[ss.Id()], c.tables[i] = tab, tab
	}
	for id := range t.bySeg {
		if !live[id] {
			delete(t.bySeg, id)
		}
	}
	c.names = t.names
	c.counts = make([]int, len(t.names))
	return c, ctx.Err()
}

// categoryTerms returns the categories the snapshot's documents hold.
func categoryTerms(snap *scorch.IndexSnapshot) ([]string, error) {
	d, err := snap.FieldDict(fieldCategories)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	terms := []string{}
	for {
		e, err := d.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			return terms, nil
		}
		terms = append(terms, e.Term)
	}
}

// table returns the category table of seg, whose documents hold terms
// among them.
func (t *categoryTables) table(seg segment.Segment, terms []string) (*categoryTable, error) {
	dict, err := seg.Dictionary(fieldCategories)
	if err != nil {
		return nil, err
	}
	type pair struct{ doc, cat uint32 }
	var pairs []pair
	n := seg.Count()
	var pl segment.PostingsList
	var it segment.PostingsIterator
	for _, term := range terms {
		num, ok := t.number[term]
		if !ok {
			num = uint32(len(t.names))
			t.number[term] = num
			t.names = append(t.names, term)
		}
		if pl, err = dict.PostingsList([]byte(term), nil, pl); err != nil {
			return nil, err
		}
		it = pl.Iterator(false, false, false, it)
		for {
			p, err := it.Next()
			if err != nil {
				return nil, err
			}
			if p == nil {
				break
			}
			if p.Number() < n {
				pairs = append(pairs, pair{uint32(p.Number()), num})
			}
		}
	}
	tab := &categoryTable{off: make([]uint32, n+1), cats: make([]uint32, len(pairs))}
	for _, p := range pairs {
		tab.off[p.doc+1]++
	}
	for d := range n {
		tab.off[d+1] += tab.off[d]
	}
	fill := slices.Clone(tab.off[:n])
	for _, p := range pairs {
		tab.cats[fill[p.doc]] = p.cat
		fill[p.doc]++
	}
	return tab, nil
}

// add counts the categories of the document numbered num.
func (c *facetCounter) add(num uint64) {
	c.matches++
	// Matches come in document order: the segment is the one before or
	// one of the next.
	if num < c.starts[c.seg] {
		c.seg = 0
	}
	for c.seg+1 < len(c.starts) && num >= c.starts[c.seg+1] {
		if c.seg+2 < len(c.starts) && num >= c.starts[c.seg+2] {
			c.seg = sort.Search(len(c.starts), func(i int) bool { return c.starts[i] > num }) - 1
			break
		}
		c.seg++
	}
	tab, d := c.tables[c.seg], num-c.starts[c.seg]
	if d+1 >= uint64(len(tab.off)) {
		return
	}
	for _, cat := range tab.cats[tab.off[d]:tab.off[d+1]] {
		c.counts[cat]++
	}
}

// facets returns the counted categories, most first (then by name), at
// most facetSize.
func (c *facetCounter) facets() []Facet {
	var out []Facet
	for i, n := range c.counts {
		if n > 0 {
			out = append(out, Facet{Category: c.names[i], Count: n})
		}
	}
	slices.SortFunc(out, func(a, b Facet) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Category, b.Category))
	})
	return out[:min(len(out), facetSize)]
}

// withFacets returns ctx for a search of x whose matches' categories
// are counted: *counted is set when the search starts.
func (x *index) withFacets(ctx context.Context, counted **facetCounter) context.Context {
	handler := func(sctx *search.SearchContext) (search.DocumentMatchHandler, bool, error) {
		next, loadID, err := collector.MakeTopNDocumentMatchHandler(sctx)
		if err != nil {
			return nil, false, err
		}
		c, err := x.categories.counter(ctx, sctx.IndexReader)
		if err != nil {
			return nil, false, err
		}
		*counted = c
		return func(d *search.DocumentMatch) error {
			if d != nil {
				c.add(d.IndexInternalID.Value())
			}
			return next(d)
		}, loadID, nil
	}
	return context.WithValue(ctx, search.MakeDocumentMatchHandlerKey, search.MakeDocumentMatchHandler(handler))
}
