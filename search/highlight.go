package search

import (
	"bytes"
	"html"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/blogql/blog/search/internal/segments"
)

// Highlighting: a result's title and a passage of its body, escaped, with
// <mark> around each word the query matched. The words are found as the
// index found them: the stored text is analyzed again, and a word matches
// when its analyzed form is one of the query's or one of the words its
// typo tolerance found for them, or begins with one of its prefixes (a
// phrase's words are marked wherever they are). A snippet's passage
// starts at the first of the query's words in the body, which the
// index's term vectors say.

// marker knows what a query's words match.
type marker struct {
	analyzer analysis.Analyzer
	exact    map[string]bool
	prefixes []string
}

// newMarker returns the marker of parts, with the words typos found for
// them (nil: none).
func newMarker(parts []part, analyzer analysis.Analyzer, typos typoWords) *marker {
	m := &marker{analyzer: analyzer, exact: map[string]bool{}}
	for _, p := range parts {
		if p.prefix {
			m.prefixes = append(m.prefixes, p.text)
			continue
		}
		for _, tok := range analyzer.Analyze([]byte(p.text)) {
			term := string(tok.Term)
			m.exact[term] = true
			if !p.phrase {
				for _, t := range typos[term] {
					m.exact[t] = true
				}
			}
		}
	}
	return m
}

func (m *marker) matches(term []byte, word string) bool {
	if m.exact[string(term)] {
		return true
	}
	for _, p := range m.prefixes {
		if bytes.HasPrefix(term, []byte(p)) || strings.HasPrefix(strings.ToLower(word), p) {
			return true
		}
	}
	return false
}

// span is a matched word's place in a text, in bytes.
type span struct{ start, end int }

// find returns the places of the matched words of text.
func (m *marker) find(text string) []span {
	var out []span
	for _, tok := range m.analyzer.Analyze([]byte(text)) {
		if tok.Start < 0 || tok.End > len(text) || tok.Start >= tok.End {
			continue
		}
		if m.matches(tok.Term, text[tok.Start:tok.End]) {
			if n := len(out); n > 0 && out[n-1].end > tok.Start {
				continue
			}
			out = append(out, span{tok.Start, tok.End})
		}
	}
	return out
}

// title returns text escaped with its matched words marked.
func (m *marker) title(text string) string {
	return markUp(text, 0, len(text), m.find(text))
}

// snippet returns a passage of about limit bytes of text around its
// matched word at byte first (its beginning when first is -1), escaped
// with the matched words marked, with "…" where it was cut. Only the
// passage is analyzed.
func (m *marker) snippet(text string, first, limit int) string {
	from := 0
	if first > limit/3 {
		from = wordStart(text, first-limit/3)
	}
	to := min(len(text), from+limit)
	if to < len(text) {
		to = wordEnd(text, from, to)
	}
	out := markUp(text[from:to], 0, to-from, m.find(text[from:to]))
	if from > 0 {
		out = "…" + out
	}
	if to < len(text) {
		out += "…"
	}
	return out
}

// bodyWords returns the words of the bodies of snap the marker marks:
// its exact words and those its prefixes begin.
func (m *marker) bodyWords(snap *segments.Snapshot) ([]string, error) {
	words := slices.Collect(maps.Keys(m.exact))
	for _, p := range m.prefixes {
		more, err := prefixWords(snap, fieldBody, p)
		if err != nil {
			return nil, err
		}
		words = append(words, more...)
	}
	return words, nil
}

// wordStart returns the start of the word after i (or i, at a rune
// boundary, when there is no space near).
func wordStart(text string, i int) int {
	for j := i; j < len(text) && j < i+30; j++ {
		if text[j] == ' ' {
			return j + 1
		}
	}
	for i < len(text) && !utf8.RuneStart(text[i]) {
		i++
	}
	return i
}

// wordEnd returns where to cut text[from:to] before a word that does not
// fit, at a rune boundary.
func wordEnd(text string, from, to int) int {
	for j := to; j > from && j > to-30; j-- {
		if text[j] == ' ' {
			return j
		}
	}
	for to > from && !utf8.RuneStart(text[to]) {
		to--
	}
	return to
}

// markUp returns text[from:to] escaped, with the spans in it marked.
func markUp(text string, from, to int, spans []span) string {
	var b strings.Builder
	at := from
	for _, s := range spans {
		if s.start < at || s.end > to {
			continue
		}
		b.WriteString(html.EscapeString(text[at:s.start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[s.start:s.end]))
		b.WriteString("</mark>")
		at = s.end
	}
	b.WriteString(html.EscapeString(text[at:to]))
	return b.String()
}
