package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	blevequery "github.com/blevesearch/bleve/v2/search/query"

	"github.com/blogql/blog/storage"
)

// Related posts: those alike a post by its categories and its words. The
// post's stored title and body give its most frequent words (relatedTerms
// of them, title words counting more); a post that shares a category
// scores relatedCategoryBoost for each, and the index scores the words
// as a search would. The post itself is never among them.
const (
	MaxRelated           = 20
	relatedTerms         = 12
	relatedCategoryBoost = 2
	relatedMinWord       = 3
)

// Related returns the ids of the first published posts most alike the
// post id, best first: none when the post is not in the index (not
// published) or while the index is being built. first outside
// 1..MaxRelated is a *storage.ValidationError.
func (s *Service) Related(ctx context.Context, id string, first int) ([]string, error) {
	if first < 1 || first > MaxRelated {
		return nil, &storage.ValidationError{Field: "first", Reason: fmt.Sprintf("must be 1 to %d", MaxRelated)}
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	var ids []string
	err = s.reading(func(idx *index) error {
		var err error
		ids, err = s.related(ctx, idx, id, first)
		return err
	})
	if errors.Is(err, ErrBuilding) {
		return nil, nil
	}
	return ids, searchError(err)
}

func (s *Service) related(ctx context.Context, idx *index, id string, first int) ([]string, error) {
	// The post's words are stored; its categories are in the index's
	// tables of them (facets.go).
	req := bleve.NewSearchRequestOptions(docIDQuery([]string{id}), 1, 0, false)
	req.Fields = []string{fieldTitle, fieldBody}
	sr, err := idx.b.SearchInContext(ctx, req)
	if err != nil || len(sr.Hits) == 0 {
		return nil, err
	}
	title, _ := sr.Hits[0].Fields[fieldTitle].(string)
	body, _ := sr.Hits[0].Fields[fieldBody].(string)
	cats, err := idx.categoriesOf(id)
	if err != nil {
		return nil, err
	}
	var should []blevequery.Query
	for _, c := range cats {
		tq := bleve.NewTermQuery(c)
		tq.SetField(fieldCategories)
		tq.SetBoost(relatedCategoryBoost)
		should = append(should, tq)
	}
	for _, t := range s.topTerms(title, body) {
		for _, f := range []string{fieldTitle, fieldBody} {
			tq := bleve.NewTermQuery(t)
			tq.SetField(f)
			should = append(should, tq)
		}
	}
	if len(should) == 0 {
		return nil, nil
	}
	q := bleve.NewBooleanQuery()
	q.AddShould(should...)
	q.AddMustNot(docIDQuery([]string{id}))
	req = bleve.NewSearchRequestOptions(q, first, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	sr, err = idx.b.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(sr.Hits))
	for i, h := range sr.Hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// topTerms returns the analyzed words of title and body that occur most,
// a title's counting three times.
func (s *Service) topTerms(title, body string) []string {
	count := map[string]int{}
	for _, tok := range s.analyzer.Analyze([]byte(title)) {
		count[string(tok.Term)] += 3
	}
	for _, tok := range s.analyzer.Analyze([]byte(body)) {
		count[string(tok.Term)]++
	}
	terms := make([]string, 0, len(count))
	for t := range count {
		if utf8.RuneCountInString(t) >= relatedMinWord {
			terms = append(terms, t)
		}
	}
	slices.SortFunc(terms, func(a, b string) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a, b))
	})
	return terms[:min(len(terms), relatedTerms)]
}
