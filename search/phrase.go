package search

import (
	"context"
	"math"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// Phrases. A phrase matches a field that holds its analyzed words at
// their places (a stop word the analyzer drops leaves its place empty,
// as bleve's match-phrase query does). The posts that hold every word are
// found and scored as bleve's phrase searcher finds them (a conjunction
// of the words with their positions); their positions are then compared
// in the order they come, with no map built per post, which halves what
// a phrase of common words costs.

// phraseQuery matches the phrase terms (analyzed; "" for an empty place)
// in field, scored with boost.
type phraseQuery struct {
	terms []string
	field string
	boost float64
}

// newPhraseQuery returns the query of text as a phrase of field, or ok
// false when the analyzer leaves no word of it.
func newPhraseQuery(text, field string, boost float64, analyzer analysis.Analyzer) (*phraseQuery, bool) {
	tokens := analyzer.Analyze([]byte(text))
	if len(tokens) == 0 {
		return nil, false
	}
	first := tokens[0].Position
	q := &phraseQuery{field: field, boost: boost}
	for _, tok := range tokens {
		at := tok.Position - first
		for len(q.terms) <= at {
			q.terms = append(q.terms, "")
		}
		q.terms[at] = string(tok.Term)
	}
	return q, true
}

// Searcher returns the searcher of the phrase (blevequery.Query).
func (q *phraseQuery) Searcher(ctx context.Context, r bleveindex.IndexReader, _ mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	keep := options.IncludeTermVectors
	options.IncludeTermVectors = true
	var words []search.Searcher
	for _, t := range q.terms {
		if t == "" {
			continue
		}
		ts, err := searcher.NewTermSearcher(ctx, r, t, q.field, q.boost, options)
		if err != nil {
			for _, w := range words {
				_ = w.Close()
			}
			return nil, err
		}
		words = append(words, ts)
	}
	conj, err := searcher.NewConjunctionSearcher(ctx, r, words, options)
	if err != nil {
		for _, w := range words {
			_ = w.Close()
		}
		return nil, err
	}
	s := &phraseSearcher{all: conj, terms: q.terms, field: q.field, keep: keep, positions: make([][]uint64, len(q.terms))}
	s.all.SetQueryNorm(1 / math.Sqrt(s.all.Weight()))
	return s, nil
}

// phraseSearcher is the searcher of a phraseQuery: the posts all finds
// (every word, with its locations) whose positions make the phrase.
type phraseSearcher struct {
	all   search.Searcher
	terms []string
	field string
	keep  bool // the caller asked for term vectors
	// positions holds, by place in the phrase, the positions of its
	// word in the post being checked.
	positions [][]uint64
}

func (s *phraseSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	for {
		dm, err := s.all.Next(ctx)
		if err != nil || dm == nil {
			return nil, err
		}
		if s.matches(dm) {
			return dm, nil
		}
		ctx.DocumentMatchPool.Put(dm)
	}
}

func (s *phraseSearcher) Advance(ctx *search.SearchContext, id bleveindex.IndexInternalID) (*search.DocumentMatch, error) {
	dm, err := s.all.Advance(ctx, id)
	if err != nil || dm == nil {
		return nil, err
	}
	if s.matches(dm) {
		return dm, nil
	}
	ctx.DocumentMatchPool.Put(dm)
	return s.Next(ctx)
}

// matches reports whether dm holds the phrase, and drops its locations
// unless the caller asked for them.
func (s *phraseSearcher) matches(dm *search.DocumentMatch) bool {
	for i := range s.positions {
		s.positions[i] = s.positions[i][:0]
	}
	for _, l := range dm.FieldTermLocations {
		if l.Field != s.field {
			continue
		}
		for i, t := range s.terms {
			if t == l.Term {
				s.positions[i] = append(s.positions[i], l.Location.Pos)
			}
		}
	}
	ok := s.found()
	if !s.keep {
		dm.FieldTermLocations = dm.FieldTermLocations[:0]
	}
	return ok
}

// found reports whether positions hold the phrase: a position of its
// first word from which every other word is at its place.
func (s *phraseSearcher) found() bool {
	first := 0
	for first < len(s.terms) && s.terms[first] == "" {
		first++
	}
	// Each list is in increasing order: a cursor per place moves forward
	// only.
	next := make([]int, len(s.terms))
	for _, p := range s.positions[first] {
		ok := true
		for i := first + 1; i < len(s.terms) && ok; i++ {
			if s.terms[i] == "" {
				continue
			}
			want := p + uint64(i-first)
			l := s.positions[i]
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

func (s *phraseSearcher) Weight() float64            { return s.all.Weight() }
func (s *phraseSearcher) SetQueryNorm(norm float64)  { s.all.SetQueryNorm(norm) }
func (s *phraseSearcher) Count() uint64              { return s.all.Count() }
func (s *phraseSearcher) Min() int                   { return 0 }
func (s *phraseSearcher) Size() int                  { return s.all.Size() }
func (s *phraseSearcher) DocumentMatchPoolSize() int { return s.all.DocumentMatchPoolSize() + 1 }
func (s *phraseSearcher) Close() error               { return s.all.Close() }
