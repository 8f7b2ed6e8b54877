package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/blogql/blog/storage"
)

// What a search may ask, checked before any work: a query of at most
// MaxQueryLength characters and MaxTerms words (a phrase's words count),
// and a page of at most MaxFirst results.
const (
	MaxQueryLength = 200
	MaxTerms       = 10
	MaxFirst       = 50
	// MinPrefix is the fewest letters before a trailing * (a prefix
	// search): a shorter prefix matches too many words to be quick.
	MinPrefix = 3
)

// ErrSlowQuery is a query that would take too long to answer: a wildcard
// other than a trailing * after MinPrefix letters.
var ErrSlowQuery = errors.New("the query would be too slow")

// SlowQueryError says why a query is refused; it wraps ErrSlowQuery.
type SlowQueryError struct{ Reason string }

func (e *SlowQueryError) Error() string { return "query: " + e.Reason }
func (e *SlowQueryError) Unwrap() error { return ErrSlowQuery }

// Typo tolerance: a word of FuzzyOneFrom letters or more matches words
// one edit away, of FuzzyTwoFrom or more two edits away.
const (
	FuzzyOneFrom = 4
	FuzzyTwoFrom = 8
)

// Boosts: a word in the title counts more than in the body, an exact
// word more than one found through a typo.
const (
	boostTitle = 3
	boostNames = 1.5
	boostFuzzy = 0.3
)

// forgiving reports whether parts hold a word long enough for typos.
func forgiving(parts []part) bool {
	for _, p := range parts {
		if !p.phrase && !p.prefix && fuzziness(utf8.RuneCountInString(p.text)) > 0 {
			return true
		}
	}
	return false
}

// part is one word (or prefix) or phrase of a query as typed.
type part struct {
	text   string
	phrase bool
	prefix bool
}

// CountTerms returns how many words q holds, as the cost of a search
// counts them: its whitespace-separated words, a phrase's each.
func CountTerms(q string) int {
	return len(strings.FieldsFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '"' }))
}

// splitQuery returns the parts of q: phrases in double quotes (an
// unclosed quote runs to the end), and words between them.
func splitQuery(q string) []part {
	var parts []part
	for q != "" {
		before, rest, quoted := strings.Cut(q, `"`)
		for _, w := range strings.Fields(before) {
			parts = append(parts, part{text: w})
		}
		if !quoted {
			break
		}
		phrase, after, _ := strings.Cut(rest, `"`)
		if strings.TrimSpace(phrase) != "" {
			parts = append(parts, part{text: phrase, phrase: true})
		}
		q = after
	}
	return parts
}

// checkQuery returns the parts of q, or the error of a query that is
// empty, too long, of too many words, or slow.
func checkQuery(q string) ([]part, error) {
	switch {
	case strings.TrimSpace(q) == "":
		return nil, &storage.ValidationError{Field: "query", Reason: "must not be empty"}
	case utf8.RuneCountInString(q) > MaxQueryLength:
		return nil, &storage.ValidationError{Field: "query", Reason: fmt.Sprintf("must be at most %d characters", MaxQueryLength)}
	case !utf8.ValidString(q):
		return nil, &storage.ValidationError{Field: "query", Reason: "must be UTF-8 text"}
	case CountTerms(q) > MaxTerms:
		return nil, &storage.ValidationError{Field: "query", Reason: fmt.Sprintf("must have at most %d words", MaxTerms)}
	}
	parts := splitQuery(q)
	for i, p := range parts {
		if p.phrase {
			continue
		}
		body, star := strings.CutSuffix(p.text, "*")
		if strings.ContainsAny(body, "*?") || (star && strings.HasPrefix(body, "*")) {
			return nil, &SlowQueryError{Reason: "wildcards are only allowed as a trailing * (a prefix)"}
		}
		if star {
			letters := 0
			for _, r := range body {
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					letters++
				}
			}
			if letters < MinPrefix {
				return nil, &SlowQueryError{Reason: fmt.Sprintf("a prefix needs at least %d letters before the *", MinPrefix)}
			}
			parts[i] = part{text: strings.ToLower(body), prefix: true}
		}
	}
	return parts, nil
}

// fuzziness returns the edits allowed for a word of n letters.
func fuzziness(n int) int {
	switch {
	case n >= FuzzyTwoFrom:
		return 2
	case n >= FuzzyOneFrom:
		return 1
	}
	return 0
}

// compile returns the plan of parts: every word or phrase must match, in
// the title, the body or the names, a word as its stem or, with typos
// (nil: none), also as one of the words typos gives for it. Words the
// analyzer drops (stop words, punctuation) are left out; when none is
// left the query matches nothing (ok false).
func compile(parts []part, an *queryAnalyzers, typos typoWords) (p *plan, ok bool) {
	p = &plan{}
	for _, pt := range parts {
		switch {
		case pt.phrase:
			if terms := an.phraseTerms(pt.text); terms != nil {
				p.phrases = append(p.phrases, terms)
			}
		case pt.prefix:
			p.words = append(p.words, word{prefix: pt.text})
		default:
			for _, terms := range an.wordTerms(pt.text) {
				var alts []alt
				for _, term := range terms {
					alts = append(alts, wordAlts(term, typos[term])...)
				}
				p.words = append(p.words, word{alts: alts})
			}
		}
	}
	return p, len(p.words)+len(p.phrases) > 0
}

// wordAlts are the terms that match the analyzed word term: itself, and
// the words typos found for it.
func wordAlts(term string, typos []string) []alt {
	alts := []alt{{term, fieldTitle, boostTitle}, {term, fieldBody, 1}, {term, fieldNames, boostNames}}
	for _, t := range typos {
		alts = append(alts, alt{t, fieldTitle, boostFuzzy * boostTitle}, alt{t, fieldBody, boostFuzzy})
	}
	return alts
}

// phraseTerms returns the analyzed words of a phrase, by place ("" for a
// place a stop word the analyzer drops leaves empty, as bleve's
// match-phrase query does); nil when the analyzer leaves no word of it.
func phraseTerms(text string, analyzer analysis.Analyzer) []string {
	tokens := analyzer.Analyze([]byte(text))
	if len(tokens) == 0 {
		return nil
	}
	first := tokens[0].Position
	var terms []string
	for _, tok := range tokens {
		at := tok.Position - first
		for len(terms) <= at {
			terms = append(terms, "")
		}
		terms[at] = string(tok.Term)
	}
	return terms
}
