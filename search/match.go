package search

import (
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/blogql/blog/search/internal/segments"
)

// Matching. A search runs here rather than through bleve's searchers,
// one segment of the index's snapshot after another:
//
//   - what matches is found with bitmaps: each word's postings in the
//     title, the body and the names (and in the words its typos or its
//     prefix stand for) are OR'd, the words' AND'd, with the filters'
//     and without the deleted posts;
//   - a phrase's words are AND'd the same way, and their positions are
//     compared in those posts alone;
//   - the count of the result is the bitmap's; the facets count the
//     matches' categories from the segment's table of them (facets.go);
//   - only then are the matches scored, each word's postings read at
//     the matches alone (their frequencies and field lengths), and the
//     best kept.
//
// bleve's searchers visit every match through a heap of iterators and
// score it on the way; here a match costs the reads of its words'
// frequencies (or their weights kept in memory, weights.go): at 100,000
// posts a search takes 3–4 ms of CPU instead of 7 (docs/performance.md).
//
// The score is bleve's TF-IDF: for each word found in a field,
// boost · idf² · √frequency / √(field length), times the query's norm
// (1 / √ the sum of every (boost · idf)²), with idf = 1 + ln(posts /
// (posts with the word in the field + 1)); a phrase scores its words in
// the fields where the phrase is. Equal scores rank by post id, read for
// the best and for those tied with the last of them alone.

// plan is a search's query: posts that hold every word, every phrase
// and every filter.
type plan struct {
	words   []word
	phrases [][]string // analyzed words, "" for a place a stop word left empty
	filters []alt      // keywords (categories, author) a post must hold
}

// word is a word of a query: any of its alternatives, or the words its
// prefix begins (expanded in the index when a search runs).
type word struct {
	alts   []alt
	prefix string
}

// alt is a term of a field, scored with boost.
type alt struct {
	term, field string
	boost       float64
}

// matchOptions says what a match returns besides the count.
type matchOptions struct {
	// k is how many of the best matches to rank, 0 for none.
	k int
	// after, when set, leaves out the matches ranked at or before its
	// score and id (score descending, then id).
	after  *cursor
	facets bool
}

// matches are a search's result.
type matches struct {
	hits   []ranked // best first: score, then id
	total  int
	facets []Facet
}

// match runs p over the index as it is.
func (x *index) match(ctx context.Context, p *plan, o matchOptions) (*matches, error) {
	snap, release, err := x.snapshot()
	if err != nil {
		return nil, err
	}
	defer release()
	x.weights.keep(snap)
	m := &matcher{snap: snap, plan: p, opts: o, postings: map[termKey]postings{}, weights: x.weights}
	if err := m.prepare(); err != nil {
		return nil, err
	}
	var counts []int
	var names []string
	out := &matches{}
	for i, ss := range snap.Segments() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var cats *categoryTable
		if o.facets {
			if cats, names, err = x.categories.of(snap, ss); err != nil {
				return nil, err
			}
			// A segment may have added categories.
			counts = append(counts, make([]int, len(names)-len(counts))...)
		}
		n, err := m.segment(ctx, i, ss, cats, counts)
		if err != nil {
			return nil, err
		}
		out.total += n
	}
	if out.hits, err = m.best(); err != nil {
		return nil, err
	}
	if o.facets {
		out.facets = facetsOf(counts, names)
	}
	return out, nil
}

// termKey names a term of a field.
type termKey struct{ field, term string }

// postings are a term's postings list in each segment.
type postings []*segments.PostingsList

// matcher is one run of a plan.
type matcher struct {
	snap *segments.Snapshot
	plan *plan
	opts matchOptions
	// words are the plan's, prefixes expanded.
	words    []word
	postings map[termKey]postings
	weights  *weightCache
	// factor is each scored term's share of a score, before its
	// frequency and field length.
	factor map[alt]float64
	top    candidates
	// buffers reused from one segment to the next
	docs   []uint32
	scores []float64
}

// phraseFields are the fields a phrase is looked for in, with the
// boost of its words there.
var phraseFields = []alt{{field: fieldTitle, boost: boostTitle}, {field: fieldBody, boost: 1}}

// prepare expands the prefixes, reads every term's postings lists and
// works out the terms' factors.
func (m *matcher) prepare() error {
	for _, w := range m.plan.words {
		if w.prefix == "" {
			m.words = append(m.words, w)
			continue
		}
		var alts []alt
		for _, f := range []alt{{field: fieldTitle, boost: boostTitle}, {field: fieldBody, boost: 1}, {field: fieldNames, boost: boostNames}} {
			terms, err := prefixWords(m.snap, f.field, w.prefix)
			if err != nil {
				return err
			}
			for _, t := range terms {
				alts = append(alts, alt{term: t, field: f.field, boost: f.boost})
			}
		}
		m.words = append(m.words, word{alts: alts})
	}
	var scored []alt
	for _, w := range m.words {
		scored = append(scored, w.alts...)
	}
	for _, ph := range m.plan.phrases {
		for _, f := range phraseFields {
			for _, t := range ph {
				if t != "" {
					scored = append(scored, alt{term: t, field: f.field, boost: f.boost})
				}
			}
		}
	}
	keys := make([]termKey, 0, len(scored)+len(m.plan.filters))
	for _, a := range scored {
		keys = append(keys, termKey{a.field, a.term})
	}
	for _, f := range m.plan.filters {
		keys = append(keys, termKey{f.field, f.term})
	}
	segs := m.snap.Segments()
	df := map[termKey]uint64{}
	for i, ss := range segs {
		dicts := map[string]*segments.Dictionary{}
		for _, k := range keys {
			if _, done := m.postings[k]; done && m.postings[k][i] != nil {
				continue
			}
			d, ok := dicts[k.field]
			if !ok {
				var err error
				if d, err = ss.Dictionary(k.field); err != nil {
					return err
				}
				dicts[k.field] = d
			}
			pl, err := d.PostingsList([]byte(k.term), nil)
			if err != nil {
				return err
			}
			if m.postings[k] == nil {
				m.postings[k] = make(postings, len(segs))
			}
			m.postings[k][i] = pl
			df[k] += pl.Count()
		}
	}
	docs, err := m.snap.DocCount()
	if err != nil {
		return err
	}
	idf := func(k termKey) float64 { return 1 + math.Log(float64(docs)/float64(df[k]+1)) }
	sum := 0.0
	for _, a := range scored {
		w := a.boost * idf(termKey{a.field, a.term})
		sum += w * w
	}
	norm := 1.0
	if sum > 0 {
		norm = 1 / math.Sqrt(sum)
	}
	m.factor = make(map[alt]float64, len(scored))
	for _, a := range scored {
		i := idf(termKey{a.field, a.term})
		m.factor[a] = a.boost * i * norm * i
	}
	return nil
}

// bitmap returns the posts of segment i that hold the term k.
func (m *matcher) bitmap(k termKey, i int) (*roaring.Bitmap, error) {
	pl := m.postings[k][i]
	out := roaring.New()
	if pl == nil || pl.Count() == 0 {
		return out, nil
	}
	return out, pl.OrInto(out)
}

// segment matches the plan in the segment i, ss: it adds the matches'
// categories to counts (cats: the segment's table, nil for none), keeps
// the best, and returns how many match.
func (m *matcher) segment(ctx context.Context, i int, ss *segments.Segment, cats *categoryTable, counts []int) (int, error) {
	var all []*roaring.Bitmap
	for _, w := range m.words {
		any := roaring.New()
		for _, a := range w.alts {
			b, err := m.bitmap(termKey{a.field, a.term}, i)
			if err != nil {
				return 0, err
			}
			any.Or(b)
		}
		all = append(all, any)
	}
	for _, f := range m.plan.filters {
		b, err := m.bitmap(termKey{f.field, f.term}, i)
		if err != nil {
			return 0, err
		}
		all = append(all, b)
	}
	found := intersect(all, ss.Deleted())
	// Where each phrase is, by field (phraseFields), with its words'
	// scores there.
	var scored [][]docScore
	for _, ph := range m.plan.phrases {
		either := roaring.New()
		for _, f := range phraseFields {
			words := []*roaring.Bitmap{}
			if found != nil {
				words = append(words, found)
			}
			for _, t := range ph {
				if t == "" {
					continue
				}
				b, err := m.bitmap(termKey{f.field, t}, i)
				if err != nil {
					return 0, err
				}
				words = append(words, b)
			}
			at, sc, err := m.phrase(ph, f, i, intersect(words, ss.Deleted()))
			if err != nil {
				return 0, err
			}
			scored = append(scored, sc)
			either.Or(at)
		}
		found = either
	}
	if found == nil {
		return 0, nil
	}
	n := int(found.GetCardinality())
	if n == 0 || (m.opts.k == 0 && cats == nil) {
		return n, ctx.Err()
	}
	m.docs = found.ToArray()
	if cats != nil {
		cats.count(m.docs, counts)
	}
	if m.opts.k == 0 {
		return n, ctx.Err()
	}
	m.scores = slices.Grow(m.scores[:0], n)[:n]
	clear(m.scores)
	for _, w := range m.words {
		for _, a := range w.alts {
			if err := m.score(a, i, ss); err != nil {
				return 0, err
			}
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
	}
	for _, sc := range scored {
		// Both in increasing order of post.
		j := 0
		for _, ds := range sc {
			for j < len(m.docs) && m.docs[j] < ds.doc {
				j++
			}
			if j < len(m.docs) && m.docs[j] == ds.doc {
				m.scores[j] += ds.score
			}
		}
	}
	for j, d := range m.docs {
		if err := m.top.offer(candidate{score: m.scores[j], seg: ss, doc: d}, m.opts); err != nil {
			return 0, err
		}
	}
	return n, ctx.Err()
}

// intersect returns the posts every one of bitmaps holds, without those
// deleted (nil when bitmaps is empty: no condition).
func intersect(bitmaps []*roaring.Bitmap, deleted *roaring.Bitmap) *roaring.Bitmap {
	if len(bitmaps) == 0 {
		return nil
	}
	slices.SortFunc(bitmaps, func(a, b *roaring.Bitmap) int { return cmp.Compare(a.GetCardinality(), b.GetCardinality()) })
	out := bitmaps[0].Clone()
	for _, b := range bitmaps[1:] {
		out.And(b)
	}
	if deleted != nil {
		out.AndNot(deleted)
	}
	return out
}

// score adds the term a's share to the scores of the matches (m.docs)
// that hold it.
func (m *matcher) score(a alt, i int, ss *segments.Segment) error {
	pl := m.postings[termKey{a.field, a.term}][i]
	if pl == nil || pl.Count() == 0 {
		return nil
	}
	factor := m.factor[a]
	w, err := m.weights.get(weightKey{ss.ID(), a.field, a.term}, pl)
	if err != nil {
		return err
	}
	if w != nil {
		w.add(m.docs, m.scores, factor)
		return nil
	}
	it := pl.Iterator(true, true, false, nil)
	if pl.Count() < uint64(len(m.docs)/rareWord) {
		// A rare word: its postings are read, and each looked up among
		// the matches.
		k := 0
		for {
			p, err := it.Next()
			if err != nil || p == nil {
				return err
			}
			d := uint32(p.Number())
			k += sort.Search(len(m.docs)-k, func(x int) bool { return m.docs[k+x] >= d })
			if k == len(m.docs) {
				return nil
			}
			if m.docs[k] == d {
				m.scores[k] += factor * weight(p)
			}
		}
	}
	var p *segments.Posting
	for j, d := range m.docs {
		if p == nil || p.Number() < uint64(d) {
			if p, err = it.Advance(uint64(d)); err != nil {
				return err
			}
			if p == nil {
				return nil
			}
		}
		if p.Number() == uint64(d) {
			m.scores[j] += factor * weight(p)
		}
	}
	return nil
}

// rareWord is how many times fewer posts than the matches a word holds
// for score to read its postings and look each up among the matches,
// rather than read them at each match.
var rareWord = 8

// docScore is a post's share of a score.
type docScore struct {
	doc   uint32
	score float64
}

// phrase returns the posts of candidates (of segment i) whose field f
// holds the phrase's words at their places, and the words' scores in
// each (read with their places).
func (m *matcher) phrase(terms []string, f alt, i int, candidates *roaring.Bitmap) (*roaring.Bitmap, []docScore, error) {
	out := roaring.New()
	if candidates == nil || candidates.IsEmpty() {
		return out, nil, nil
	}
	its := make([]*segments.Iterator, len(terms))
	factors := make([]float64, len(terms))
	for t, term := range terms {
		if term != "" {
			its[t] = m.postings[termKey{f.field, term}][i].Iterator(true, true, true, nil)
			factors[t] = m.factor[alt{term: term, field: f.field, boost: f.boost}]
		}
	}
	var scores []docScore
	at := make([]*segments.Posting, len(terms))
	positions := make([][]uint64, len(terms))
	var locs []segments.Location
	c := candidates.Iterator()
	for c.HasNext() {
		d := uint64(c.Next())
		score := 0.0
		for t, it := range its {
			if it == nil {
				continue
			}
			if at[t] == nil || at[t].Number() < d {
				p, err := it.Advance(d)
				if err != nil {
					return nil, nil, err
				}
				at[t] = p
			}
			positions[t] = positions[t][:0]
			if p := at[t]; p != nil && p.Number() == d {
				locs = p.Locations(locs[:0])
				for _, l := range locs {
					positions[t] = append(positions[t], l.Pos)
				}
				score += factors[t] * weight(p)
			}
		}
		if phraseAt(terms, positions) {
			out.Add(uint32(d))
			scores = append(scores, docScore{uint32(d), score})
		}
	}
	return out, scores, nil
}

// phraseAt reports whether positions (by place in the phrase, of its
// word, in increasing order) hold the phrase: a position of its first
// word from which every other word is at its place.
func phraseAt(terms []string, positions [][]uint64) bool {
	first := 0
	for first < len(terms) && terms[first] == "" {
		first++
	}
	// A cursor per place moves forward only.
	next := make([]int, len(terms))
	for _, p := range positions[first] {
		ok := true
		for i := first + 1; i < len(terms) && ok; i++ {
			if terms[i] == "" {
				continue
			}
			want := p + uint64(i-first)
			l := positions[i]
			for next[i] < len(l) && l[next[i]] < want {
				next[i]++
			}
			ok = next[i] < len(l) && l[next[i]] == want
		}
		if ok {
			return true
		}
	}
	return false
}

// candidate is a match with its score.
type candidate struct {
	score float64
	seg   *segments.Segment
	doc   uint32
	id    string // read when needed
}

// idOf returns c's post id, read once.
func idOf(c *candidate) (string, error) {
	if c.id == "" {
		id, err := c.seg.DocID(uint64(c.doc))
		if err != nil {
			return "", err
		}
		c.id = id
	}
	return c.id, nil
}

// candidates keeps the best k matches offered: a heap of them, the
// worst first, and the others of the worst's score (ties are ranked by
// id, read only for them and the best, at the end).
type candidates struct {
	list []candidate
	ties []candidate
}

func (h *candidates) Len() int           { return len(h.list) }
func (h *candidates) Less(i, j int) bool { return h.list[i].score < h.list[j].score }
func (h *candidates) Swap(i, j int)      { h.list[i], h.list[j] = h.list[j], h.list[i] }
func (h *candidates) Push(x any)         { h.list = append(h.list, x.(candidate)) }
func (h *candidates) Pop() any {
	x := h.list[len(h.list)-1]
	h.list = h.list[:len(h.list)-1]
	return x
}

// offer keeps c when it may be among the o.k best after o.after.
func (h *candidates) offer(c candidate, o matchOptions) error {
	if a := o.after; a != nil {
		if c.score > a.score {
			return nil
		}
		if c.score == a.score {
			id, err := idOf(&c)
			if err != nil || id <= a.id {
				return err
			}
		}
	}
	if len(h.list) < o.k {
		heap.Push(h, c)
		return nil
	}
	worst := h.list[0]
	switch {
	case c.score < worst.score:
	case c.score == worst.score:
		h.ties = append(h.ties, c)
	default:
		h.list[0] = c
		heap.Fix(h, 0)
		if h.list[0].score == worst.score {
			h.ties = append(h.ties, worst)
		} else {
			h.ties = h.ties[:0]
		}
	}
	return nil
}

// best returns the k best matches kept, best first: score, then id.
func (m *matcher) best() ([]ranked, error) {
	all := append(m.top.list, m.top.ties...)
	out := make([]ranked, len(all))
	for i := range all {
		id, err := idOf(&all[i])
		if err != nil {
			return nil, err
		}
		out[i] = ranked{id: id, score: all[i].score}
	}
	slices.SortFunc(out, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id))
	})
	return out[:min(len(out), m.opts.k)], nil
}
