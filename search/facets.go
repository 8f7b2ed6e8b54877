package search

import (
	"cmp"
	"slices"
	"sync"

	"github.com/blogql/blog/search/internal/segments"
)

// Category facets count, for every post a search matches, each of its
// categories: exact counts over the whole result. The categories come
// from a table in memory, made once per segment of the index (segments
// never change: a change to the index adds segments and merges old
// ones): each post's categories, by its number in the segment. A search
// counts them over its matches (match.go), which it lists anyway.

// categoryTables keeps the category tables of an index's segments.
type categoryTables struct {
	mu     sync.Mutex
	names  []string          // categories by number
	number map[string]uint32 // numbers by category
	bySeg  map[uint64]*categoryTable
}

// categoryTable holds the categories of a segment's posts: those of post
// d are cats[off[d]:off[d+1]].
type categoryTable struct {
	off  []uint32
	cats []uint32
}

// of returns the table of the segment ss of snap, made when not seen
// before (and the tables of segments snap no longer holds forgotten),
// with the names of the categories by number.
func (t *categoryTables) of(snap *segments.Snapshot, ss *segments.Segment) (*categoryTable, []string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tab, ok := t.bySeg[ss.ID()]; ok {
		return tab, t.names, nil
	}
	if t.number == nil {
		t.number, t.bySeg = map[string]uint32{}, map[uint64]*categoryTable{}
	}
	live := map[uint64]bool{}
	for _, s := range snap.Segments() {
		live[s.ID()] = true
	}
	for id := range t.bySeg {
		if !live[id] {
			delete(t.bySeg, id)
		}
	}
	terms, err := categoryTerms(snap)
	if err != nil {
		return nil, nil, err
	}
	tab, err := t.table(ss, terms)
	if err != nil {
		return nil, nil, err
	}
	t.bySeg[ss.ID()] = tab
	return tab, t.names, nil
}

// categoryTerms returns the categories the snapshot's documents hold.
func categoryTerms(snap *segments.Snapshot) ([]string, error) {
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
func (t *categoryTables) table(seg *segments.Segment, terms []string) (*categoryTable, error) {
	dict, err := seg.Dictionary(fieldCategories)
	if err != nil {
		return nil, err
	}
	type pair struct{ doc, cat uint32 }
	var pairs []pair
	n := seg.Count()
	var pl *segments.PostingsList
	var it *segments.Iterator
	for _, term := range terms {
		num, ok := t.number[term]
		if !ok {
			num = uint32(len(t.names))
			t.number[term] = num
			t.names = append(t.names, term)
		}
		if pl, err = dict.PostingsList([]byte(term), pl); err != nil {
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

// count adds the categories of the posts docs (of the table's segment)
// to counts, by category number.
func (tab *categoryTable) count(docs []uint32, counts []int) {
	for _, d := range docs {
		if int(d)+1 >= len(tab.off) {
			continue
		}
		for _, c := range tab.cats[tab.off[d]:tab.off[d+1]] {
			counts[c]++
		}
	}
}

// facetsOf returns the categories counted (counts by number, names by
// number), most first (then by name), at most facetSize.
func facetsOf(counts []int, names []string) []Facet {
	var out []Facet
	for c, n := range counts {
		if n > 0 {
			out = append(out, Facet{Category: names[c], Count: n})
		}
	}
	slices.SortFunc(out, func(a, b Facet) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Category, b.Category))
	})
	return out[:min(len(out), facetSize)]
}

// categoriesOf returns the categories of the post id in the index, by
// name.
func (x *index) categoriesOf(id string) ([]string, error) {
	snap, release, err := x.snapshot()
	if err != nil {
		return nil, err
	}
	defer release()
	var out []string
	for _, ss := range snap.Segments() {
		docs, err := ss.LiveDocs([]string{id})
		if err != nil {
			return nil, err
		}
		if len(docs) == 0 {
			continue
		}
		tab, names, err := x.categories.of(snap, ss)
		if err != nil {
			return nil, err
		}
		counts := make([]int, len(names))
		tab.count(docs, counts)
		for _, f := range facetsOf(counts, names) {
			out = append(out, f.Category)
		}
	}
	slices.Sort(out)
	return out, nil
}
