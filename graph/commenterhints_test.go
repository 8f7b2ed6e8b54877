package graph

import (
	"fmt"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestCommenterHintsAreBounded checks that the hints keep at most
// maxCommenterHints pages, forget a page whose writers one BatchGetItem
// cannot read or that has none, and keep a page's latest writers.
func TestCommenterHintsAreBounded(t *testing.T) {
	h := newCommenterHints()
	ada := []storage.Writer{{AuthorID: "ada"}}
	for i := range maxCommenterHints + 10 {
		h.put(fmt.Sprintf("page-%d", i), ada)
	}
	if n := len(h.pages); n != maxCommenterHints {
		t.Errorf("%d pages kept, want %d", n, maxCommenterHints)
	}
	last := fmt.Sprintf("page-%d", maxCommenterHints+9)
	if got := h.get(last); len(got) != 1 || got[0] != ada[0] {
		t.Errorf("the page put last: %v", got)
	}
	h.put(last, []storage.Writer{{AuthorID: "ada"}, {ReaderID: "kay"}})
	if got := h.get(last); len(got) != 2 {
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
}
