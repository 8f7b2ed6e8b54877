package search

import (
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/pl"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
)

// The Polish analyzer of the index is bleve's ("pl") with a stemmer
// shared by every index of the process: bleve's builds its stemmer's
// table, about 6 MB of heap, for each index that opens (each mapping has
// a cache of analyzers of its own), so a server holding many
// publications' indexes would hold one table each. The table is only
// read once built, as one index's concurrent batches already read it.
const (
	analyzerPolish      = "pl_shared"
	filterPolishStemmer = "stemmer_pl_shared"
)

var polishStemmer = sync.OnceValues(func() (analysis.TokenFilter, error) { return pl.NewPolishStemmerFilter() })

func init() {
	if err := registry.RegisterTokenFilter(filterPolishStemmer, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return polishStemmer()
	}); err != nil {
		panic(err)
	}
	// pl.AnalyzerConstructor's analyzer, with the shared stemmer.
	if err := registry.RegisterAnalyzer(analyzerPolish, func(_ map[string]any, cache *registry.Cache) (analysis.Analyzer, error) {
		tokenizer, err := cache.TokenizerNamed(unicode.Name)
		if err != nil {
			return nil, err
		}
		var filters []analysis.TokenFilter
		for _, name := range []string{lowercase.Name, pl.StopName, filterPolishStemmer} {
			f, err := cache.TokenFilterNamed(name)
			if err != nil {
				return nil, err
			}
			filters = append(filters, f)
		}
		return &analysis.DefaultAnalyzer{Tokenizer: tokenizer, TokenFilters: filters}, nil
	}); err != nil {
		panic(err)
	}
}

// bleveAnalyzer returns the name of the bleve analyzer of the posts'
// language (or analyzer) name: name itself, but for Polish.
func bleveAnalyzer(name string) string {
	if name == pl.AnalyzerName {
		return analyzerPolish
	}
	return name
}
