package search

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/blogql/blog/search/internal/segments"
)

// Typos are matched against the words as written, not against their
// stems: a stem can be further from a typo than the word it came from
// (`gracefull` is one edit from `graceful` but four from its stem
// `grace`). The index keeps the titles' and bodies' words as written in
// a field of their own (fieldWords, lower-cased by analyzerSurface); a
// query's word the index does not hold is looked up there within its
// edits, and the stems of the words found are what it searches.

// analyzerSurface analyzes fieldWords: Unicode words, lower-cased, kept
// as written.
const analyzerSurface = "surface"

// addSurfaceAnalyzer adds analyzerSurface to m.
func addSurfaceAnalyzer(m *mapping.IndexMappingImpl) {
	err := m.AddCustomAnalyzer(analyzerSurface, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []any{lowercase.Name},
	})
	if err != nil {
		panic(fmt.Sprintf("search: the surface analyzer: %v", err))
	}
}

// MaxTypoWords is how many words of the index a word of a query with a
// typo may stand for at most: the most frequent of those nearest to it.
const MaxTypoWords = 10

// typoWords are, by analyzed word of a query, the stems of the words of
// the index a typo may have made it: none for a word the index holds.
type typoWords map[string][]string

// typoWords returns the typoWords of parts: for each word long enough for
// typos (FuzzyOneFrom) whose stems neither the titles' nor the bodies'
// words of the index hold, the stems of the words as written nearest to
// it as typed, within its tolerance (one edit, or two from FuzzyTwoFrom
// letters), of the MaxTypoWords most frequent. A word the index holds is
// taken as meant: a typo elsewhere in the query is what found too little.
// Looking only at the nearest words keeps a search's work to what the
// reader likely meant instead of every word two edits away.
func (x *index) typoWords(parts []part, an *queryAnalyzers) (typoWords, error) {
	snap, release, err := x.snapshot()
	if err != nil {
		return nil, err
	}
	defer release()
	words := typoWords{}
	surface := x.b.Mapping().AnalyzerNamed(analyzerSurface)
	for _, p := range parts {
		if p.phrase || p.prefix || isCJK(p.text) {
			continue // a CJK query is bigrams, not words with typos
		}
		for _, tok := range surface.Analyze([]byte(p.text)) {
			written := string(tok.Term)
			edits := fuzziness(utf8.RuneCountInString(written))
			stems := an.wordTerms(written)
			if edits == 0 || len(stems) != 1 {
				continue
			}
			terms := stems[0]
			if _, done := words[terms[0]]; done {
				continue
			}
			held, err := holdsAny(snap, terms)
			if err != nil {
				return nil, err
			}
			var found []string
			if !held {
				near, err := nearWords(snap, written, edits)
				if err != nil {
					return nil, err
				}
				for _, w := range near {
					for _, ts := range an.wordTerms(w) {
						for _, t := range ts {
							if !slices.Contains(found, t) && !slices.Contains(terms, t) {
								found = append(found, t)
							}
						}
					}
				}
			}
			for _, t := range terms {
				words[t] = found
			}
		}
	}
	return words, nil
}

// holdsAny reports whether the titles' or bodies' words of the index hold
// any of terms.
func holdsAny(r *segments.Snapshot, terms []string) (bool, error) {
	for _, f := range []string{fieldTitle, fieldBody} {
		for _, t := range terms {
			d, err := r.FieldDictPrefix(f, []byte(t))
			if err != nil {
				return false, err
			}
			e, err := d.Next()
			_ = d.Close()
			if err != nil {
				return false, err
			}
			if e != nil && e.Term == t {
				return true, nil
			}
		}
	}
	return false, nil
}

// nearWords returns the words as written (fieldWords) nearest to written
// within edits, the MaxTypoWords most frequent; none when the index holds
// written itself.
func nearWords(r *segments.Snapshot, written string, edits int) ([]string, error) {
	type word struct {
		edits int
		count uint64
	}
	found := map[string]*word{}
	d, err := r.FieldDictFuzzy(fieldWords, written, edits, "")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	for {
		e, err := d.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Term == written {
			return nil, nil
		}
		w := &word{edits: edits, count: e.Count}
		if edits > 1 && withinEdits(e.Term, written, 1) {
			w.edits = 1
		}
		found[e.Term] = w
	}
	fewest := edits
	for _, w := range found {
		fewest = min(fewest, w.edits)
	}
	var near []string
	for t, w := range found {
		if w.edits == fewest {
			near = append(near, t)
		}
	}
	slices.SortFunc(near, func(a, b string) int {
		return cmp.Or(cmp.Compare(found[b].count, found[a].count), strings.Compare(a, b))
	})
	return near[:min(len(near), MaxTypoWords)], nil
}

// withinEdits reports whether a and b are at most k edits apart
// (Levenshtein, over runes).
func withinEdits(a, b string, k int) bool {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > k || -d > k {
		return false
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > k {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)] <= k
}
