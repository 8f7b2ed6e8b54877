package search

import (
	"slices"
	"sync"
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"golang.org/x/text/language"

	// The analyzers of posts' locales (analyzerOf).
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ar"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/da"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fa"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fi"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/hi"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/hr"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/hu"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/no"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/pl"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ro"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/ru"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/sv"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/tr"
)

// Languages of posts. Each post is indexed with the analyzer of its
// locale's language (analyzerOf): bleve's stemmer and stop words for the
// languages it has one for (postLanguages), its CJK analyzer (bigrams of
// ideographs and kana, words of hangul) for Chinese, Japanese and Korean,
// and the service's Language for a post without a locale or in a
// language bleve has no analyzer for. A post's document carries its
// analyzer's name as its type (document.BleveType), whose mapping
// analyzes its title, body and names with it, and in the keyword field
// lang, so the service knows the languages its index holds.
//
// A query is analyzed with every language the index holds (queryWords):
// a word of Chinese, Japanese or Korean script by the CJK analyzer, each
// bigram a word the post must hold; any other word by each language's
// analyzer, any of whose terms may match (so a Russian word finds its
// stem in Russian posts and itself in others), and left out when one of
// them drops it as a stop word.

// postLanguages are the languages bleve has an analyzer of: a locale of
// one of them is indexed with it.
var postLanguages = []string{"ar", "da", "de", "en", "es", "fa", "fi", "fr", "hi", "hr", "hu", "it", "nl", "no", "pl", "pt", "ro", "ru", "sv", "tr"}

// analyzerCJK is bleve's CJK analyzer's name.
const analyzerCJK = "cjk"

// fieldLang is the keyword field of a document's analyzer.
const fieldLang = "lang"

// analyzerOf returns the name of the analyzer of a post in locale, or ""
// for the service's Language (no locale, or one bleve has no analyzer
// for).
func analyzerOf(locale string) string {
	if locale == "" {
		return ""
	}
	tag, err := language.Parse(locale)
	if err != nil {
		return ""
	}
	base, _ := tag.Base()
	switch b := base.String(); {
	case b == "ja" || b == "zh" || b == "ko":
		return analyzerCJK
	case b == "nb" || b == "nn":
		return "no"
	case slices.Contains(postLanguages, b):
		return b
	}
	return ""
}

// addLanguageMappings adds to m a document mapping per analyzer of
// postLanguages and CJK, made by docMapping with that analyzer.
func addLanguageMappings(m *mapping.IndexMappingImpl, docMapping func(analyzer string) *mapping.DocumentMapping) {
	for _, l := range append(slices.Clone(postLanguages), analyzerCJK) {
		m.AddDocumentMapping(l, docMapping(bleveAnalyzer(l)))
	}
}

// languageSet is the set of analyzers the index holds documents of,
// beside the service's Language, which is always in it.
type languageSet struct {
	mu    sync.Mutex
	names map[string]bool
}

// add notes the analyzer name ("": the service's Language).
func (s *languageSet) add(name string) {
	if name == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[name] = true
}

// queryAnalyzers are the analyzers a query is analyzed with: primary (the
// service's Language), the others of the index in name order, and the
// CJK analyzer (nil when no post is in Chinese, Japanese or Korean, then
// the other analyzers take such words too).
type queryAnalyzers struct {
	primary analysis.Analyzer
	others  []analysis.Analyzer
	cjk     analysis.Analyzer
	// byName are all of them, for a phrase in a script of one language.
	byName map[string]analysis.Analyzer
}

// analyzers returns the analyzers of the languages in s, from m.
func (s *languageSet) analyzers(m mapping.IndexMapping, primary string) *queryAnalyzers {
	s.mu.Lock()
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	s.mu.Unlock()
	slices.Sort(names)
	q := &queryAnalyzers{primary: m.AnalyzerNamed(primary), byName: map[string]analysis.Analyzer{primary: m.AnalyzerNamed(primary)}}
	for _, n := range names {
		a := m.AnalyzerNamed(bleveAnalyzer(n))
		if a == nil || n == primary {
			continue
		}
		q.byName[n] = a
		if n == analyzerCJK {
			q.cjk = a
		} else {
			q.others = append(q.others, a)
		}
	}
	return q
}

// isCJK reports whether s holds a Han, Hiragana, Katakana or Hangul
// letter.
func isCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

// isCyrillic reports whether s holds a Cyrillic letter.
func isCyrillic(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Cyrillic, r) {
			return true
		}
	}
	return false
}

// wordTerms returns the words of the query word text (not a phrase, not
// a prefix), each as the terms any of which matches it: see the package
// comment above. A word the analyzers drop is none.
func (q *queryAnalyzers) wordTerms(text string) [][]string {
	if q.cjk != nil && isCJK(text) {
		return tokenWords(q.cjk, text)
	}
	primary := tokenWords(q.primary, text)
	if len(q.others) == 0 || len(primary) != 1 {
		return primary
	}
	alts := primary[0]
	for _, a := range q.others {
		w := tokenWords(a, text)
		switch {
		case len(w) == 0:
			return nil // a stop word of a language the index holds
		case len(w) == 1 && !slices.Contains(alts, w[0][0]):
			alts = append(alts, w[0][0])
		}
	}
	return [][]string{alts}
}

// tokenWords returns each term a analyzes text into as a word of one
// term.
func tokenWords(a analysis.Analyzer, text string) [][]string {
	var out [][]string
	for _, tok := range a.Analyze([]byte(text)) {
		out = append(out, []string{string(tok.Term)})
	}
	return out
}

// phraseAnalyzer returns the analyzer of a phrase: CJK for one in those
// scripts, Russian for a Cyrillic one when the index holds Russian, else
// the primary one.
func (q *queryAnalyzers) phraseAnalyzer(text string) analysis.Analyzer {
	switch {
	case q.cjk != nil && isCJK(text):
		return q.cjk
	case isCyrillic(text) && q.byName["ru"] != nil:
		return q.byName["ru"]
	}
	return q.primary
}

// phraseTerms returns the analyzed words of the phrase text by place
// (phraseTerms with its phraseAnalyzer), a word that another language of
// the index drops as a stop word left an empty place, as a word of a
// query is left out (wordTerms): "train de nuit" is one phrase in an
// English and a French post, whose analyzer drops "de". Nil when no word
// is left.
func (q *queryAnalyzers) phraseTerms(text string) []string {
	a := q.phraseAnalyzer(text)
	terms := phraseTerms(text, a)
	if a == q.cjk || len(q.others) == 0 {
		return terms
	}
	first := 0
	for i, tok := range a.Analyze([]byte(text)) {
		if i == 0 {
			first = tok.Position
		}
		word := []byte(text[tok.Start:tok.End])
		for _, o := range q.byName {
			if o != a && o != q.cjk && len(o.Analyze(word)) == 0 {
				terms[tok.Position-first] = ""
				break
			}
		}
	}
	if !slices.ContainsFunc(terms, func(t string) bool { return t != "" }) {
		return nil
	}
	return terms
}

// queryAnalyzers returns the analyzers of a query now: those of the
// languages the index holds.
func (s *Service) queryAnalyzers() *queryAnalyzers {
	return s.langs.analyzers(s.mapping, s.opts.Language)
}
