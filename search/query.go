package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	blevequery "github.com/blevesearch/bleve/v2/search/query"

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

// compile returns the bleve query of parts: every word or phrase must
// match, in the title, the body or the names, a word as its stem or, with
// typos, also within its typo tolerance. Words the analyzer drops (stop
// words, punctuation) are left out; when none is left the query matches
// nothing (ok false).
func compile(parts []part, analyzer analysis.Analyzer, typos bool) (q blevequery.Query, ok bool) {
	var musts []blevequery.Query
	for _, p := range parts {
		switch {
		case p.phrase:
			var fields []blevequery.Query
			for _, f := range []struct {
				name  string
				boost float64
			}{{fieldTitle, boostTitle}, {fieldBody, 1}} {
				mq := bleve.NewMatchPhraseQuery(p.text)
				mq.SetField(f.name)
				mq.SetBoost(f.boost)
				fields = append(fields, mq)
			}
			if len(analyzer.Analyze([]byte(p.text))) == 0 {
				continue
			}
			musts = append(musts, bleve.NewDisjunctionQuery(fields...))
		case p.prefix:
			var fields []blevequery.Query
			for _, f := range []string{fieldTitle, fieldBody, fieldNames} {
				pq := bleve.NewPrefixQuery(p.text)
				pq.SetField(f)
				fields = append(fields, pq)
			}
			musts = append(musts, bleve.NewDisjunctionQuery(fields...))
		default:
			for _, tok := range analyzer.Analyze([]byte(p.text)) {
				musts = append(musts, wordQuery(string(tok.Term), utf8.RuneCount([]byte(p.text)[tok.Start:tok.End]), typos))
			}
		}
	}
	if len(musts) == 0 {
		return nil, false
	}
	return bleve.NewConjunctionQuery(musts...), true
}

// wordQuery matches the analyzed word term, typed with n letters, and
// with typos the words within its typo tolerance.
func wordQuery(term string, n int, typos bool) blevequery.Query {
	var any []blevequery.Query
	add := func(q interface {
		blevequery.Query
		SetField(string)
		SetBoost(float64)
	}, field string, boost float64) {
		q.SetField(field)
		q.SetBoost(boost)
		any = append(any, q)
	}
	add(bleve.NewTermQuery(term), fieldTitle, boostTitle)
	add(bleve.NewTermQuery(term), fieldBody, 1)
	add(bleve.NewTermQuery(term), fieldNames, boostNames)
	if edits := fuzziness(n); edits > 0 && typos {
		for _, f := range []string{fieldTitle, fieldBody} {
			fq := bleve.NewFuzzyQuery(term)
			fq.SetFuzziness(edits)
			boost := boostFuzzy
			if f == fieldTitle {
				boost *= boostTitle
			}
			add(fq, f, boost)
		}
	}
	return bleve.NewDisjunctionQuery(any...)
}
