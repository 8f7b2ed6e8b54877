package graph

import (
	"strings"
	"testing"
)

func TestSearchComplexityCountsWordsAndPage(t *testing.T) {
	first := 10
	one := searchComplexity(3, "apples", &first, nil, nil, nil)
	five := searchComplexity(3, `apples "pears and plums" figs`, &first, nil, nil, nil)
	if five-one != 4*searchTermCost {
		t.Errorf("5 words cost %d more than 1, want %d", five-one, 4*searchTermCost)
	}
	long := searchComplexity(3, strings.Repeat("word ", 1000), &first, nil, nil, nil)
	if long > searchCost+searchTermCost*11+first*3 {
		t.Errorf("a query of 1000 words costs %d: the words count up to one past the limit, which refuses it", long)
	}
	big := 50
	if got := searchComplexity(3, "apples", &big, nil, nil, nil); got != searchCost+searchTermCost+big*3 {
		t.Errorf("a page of 50 costs %d", got)
	}
}
