package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/blogql/blog/search"
)

// BenchmarkSearchPublishToSearchable measures how long after a publish is
// acknowledged the post is found by a search on the server's index (the
// stream, the change feed's log, the index's batch): each iteration
// publishes one post and searches for its own word every 2 ms until it is
// found. It reports p50 and p99 (docs/performance.md, Search).
//
//	go test -run '^$' -bench SearchPublishToSearchable -benchtime 100x ./tests
func BenchmarkSearchPublishToSearchable(b *testing.B) {
	s := newSearchServer(b)
	ada, _ := s.writer()
	ctx := context.Background()
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		word := fmt.Sprintf("marker%dword", i)
		s.publish(ada, fmt.Sprintf("bench-%d", i), "Bench "+word, "A post about "+word+".")
		acked := time.Now()
		for {
			r, err := s.index.Search(ctx, search.Request{Query: word, First: 1})
			if err == nil && len(r.Hits) == 1 {
				break
			}
			if time.Since(acked) > 30*time.Second {
				b.Fatalf("%s not searchable after 30 s (%v)", word, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		took = append(took, time.Since(acked))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Milliseconds()), "p99-ms")
}
