package graph

import (
	"fmt"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestCommenterHintsAreBounded checks that the hints keep at most
// maxHintedWritersInAll writers, forget a page whose writers one BatchGetItem
// cannot read or that has none, and keep a page's latest writers.
func TestCommenterHintsAreBounded(t *testing.T) {
	h := newCommenterHints()
	ada := []storage.Writer{{AuthorID: "ada"}}
	two := []storage.Writer{{AuthorID: "ada"}, {ReaderID: "kay"}}
	for i := range maxHintedWritersInAll {
		h.put(fmt.Sprintf("page-%d", i), two)
	}
	if h.writers != maxHintedWritersInAll || len(h.pages) != maxHintedWritersInAll/2 {
		t.Errorf("%d writers in %d pages kept, want %d in %d", h.writers, len(h.pages), maxHintedWritersInAll, maxHintedWritersInAll/2)
	}
	last := fmt.Sprintf("page-%d", maxHintedWritersInAll+9)
	h.put(last, ada)
	if got := h.get(last); len(got) != 1 || got[0] != ada[0] {
		t.Errorf("the page put last: %v", got)
	}
	h.put(last, two)
	if got := h.get(last); len(got) != 2 || h.writers > maxHintedWritersInAll {
		t.Errorf("a page put again keeps its latest writers, got %v", got)
	}
	many := make([]storage.Writer, maxHintedWriters+1)
	for i := range many {
		many[i] = storage.Writer{ReaderID: fmt.Sprint(i)}
	}
	h.put(last, many)
	if got := h.get(last); got != nil {
		t.Errorf("a page of %d writers is forgotten, got %d", len(many), len(got))
	}
	h.put("page-0", ada)
	h.put("page-0", nil)
	if got := h.get("page-0"); got != nil {
		t.Errorf("a page without writers is forgotten, got %v", got)
	}
	n := 0
	for _, w := range h.pages {
		n += len(w)
	}
	if n != h.writers {
		t.Errorf("%d writers counted, %d held", h.writers, n)
	}
}
