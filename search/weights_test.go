package search

import (
	"context"
	"strings"
	"testing"
)

// TestWeightsStayUnderTheirBytesAndGoWithTheirSegment checks the cache
// of common words' weights: it holds no more than its bytes however
// many words are searched, and the weights of a segment gone from the
// index (all its posts deleted) are dropped at the next search.
func TestWeightsStayUnderTheirBytesAndGoWithTheirSegment(t *testing.T) {
	cachedPostings = 1
	defer func() { cachedPostings = 2048 }()
	posts := benchPosts(200)
	svc := testService(t, posts[:100]...)
	const maxBytes = 4 << 10
	svc.cur.weights = newWeightCache(maxBytes)
	search := func(words []string) {
		t.Helper()
		for _, w := range words {
			parts, err := checkQuery(w)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := compile(parts, svc.queryAnalyzers(), nil)
			if !ok {
				t.Fatalf("%q: no words", w)
			}
			if _, err := svc.cur.match(context.Background(), p, matchOptions{k: 10}); err != nil {
				t.Fatal(err)
			}
		}
	}
	words := strings.Fields(posts[0].Body)[:40]
	search(words)
	c := svc.cur.weights.cache
	c.CleanUp()
	if c.EstimatedSize() == 0 || c.WeightedSize() > maxBytes {
		t.Fatalf("%d weights of %d bytes kept, want some and at most %d bytes", c.EstimatedSize(), c.WeightedSize(), maxBytes)
	}
	old := map[uint64]bool{}
	for k := range c.Keys() {
		old[k.seg] = true
	}

	// The first posts' segment goes when they are all deleted.
	b := svc.cur.b.NewBatch()
	for _, p := range posts[:100] {
		b.Delete(p.ID)
	}
	if err := svc.cur.b.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := svc.Index(posts[100:]); err != nil {
		t.Fatal(err)
	}
	search(words[:5])
	kept := 0
	for k := range c.Keys() {
		if old[k.seg] {
			t.Errorf("weights of %q of segment %d, gone from the index, are kept", k.term, k.seg)
		}
		kept++
	}
	if kept == 0 {
		t.Error("no weights of the new posts' segment kept")
	}
}
