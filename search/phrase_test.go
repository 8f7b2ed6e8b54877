package search

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	blevequery "github.com/blevesearch/bleve/v2/search/query"
)

// TestPhrasesMatchAsBleveWould compares the phrase query with bleve's
// match-phrase query: the same posts, scored the same, for phrases of
// two and three words, of a word twice, and with stop words inside.
func TestPhrasesMatchAsBleveWould(t *testing.T) {
	posts := benchPosts(400)
	posts = append(posts,
		post("s1", "The fox", "the quick brown fox jumps over the lazy dog; a fox of the woods"),
		post("s2", "Foxes", "a fox in the woods, the fox of the woods, fox fox"),
		post("s3", "Dogs", "lazy dogs sleep; the dog is lazy and the fox is not"),
	)
	svc := testService(t, posts...)
	phrases := []string{"fox of the woods", "fox in the woods", "the lazy dog", "fox fox", "over the lazy", "dog is lazy", "brown fox jumps"}
	for _, p := range posts[:60] {
		w := strings.Fields(p.Body)
		phrases = append(phrases, w[3]+" "+w[4], w[7]+" "+w[8]+" "+w[9], w[12]+" "+w[12])
	}
	found := 0
	for _, phrase := range phrases {
		for _, field := range []string{fieldTitle, fieldBody} {
			theirs := bleve.NewMatchPhraseQuery(phrase)
			theirs.SetField(field)
			theirs.SetBoost(2)
			ours, ok := newPhraseQuery(phrase, field, 2, svc.analyzer)
			if !ok {
				t.Fatalf("%q: no words", phrase)
			}
			want, got := hitsOf(t, svc, theirs), hitsOf(t, svc, ours)
			if want != "" {
				found++
			}
			if want != got {
				t.Errorf("%q in %s: %s, want %s", phrase, field, got, want)
			}
			// Beside a word, the phrase is asked for the posts at or
			// after the word's (Advance) rather than for its next.
			word := bleve.NewTermQuery(strings.Fields(posts[0].Body)[0])
			word.SetField(fieldBody)
			want = hitsOf(t, svc, bleve.NewDisjunctionQuery(word, bleve.NewConjunctionQuery(word, theirs)))
			got = hitsOf(t, svc, bleve.NewDisjunctionQuery(word, bleve.NewConjunctionQuery(word, ours)))
			if want != got {
				t.Errorf("%q in %s beside a word: %s, want %s", phrase, field, got, want)
			}
		}
	}
	if found < len(phrases)/2 {
		t.Errorf("only %d of the %d phrases found a post in a field: too few to compare", found, len(phrases))
	}
}

// hitsOf returns the posts q finds in svc's index, with their scores.
func hitsOf(t *testing.T, svc *Service, q blevequery.Query) string {
	t.Helper()
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(q), 1000, 0, false)
	req.SortBy([]string{"_id"})
	sr, err := svc.cur.b.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, h := range sr.Hits {
		fmt.Fprintf(&b, "%s:%.6f ", h.ID, math.Round(h.Score*1e6)/1e6)
	}
	return b.String()
}
