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
// read once built, as one index's concurrent batches already read it,
// and it is built when a Polish token is first stemmed.
const (
	analyzerPolish      = "pl_shared"
	filterPolishStemmer = "stemmer_pl_shared"
)

var polishStemmer = sync.OnceValues(func() (analysis.TokenFilter, error) { return pl.NewPolishStemmerFilter() })

// lazyPolishStemmer builds the shared stemmer when it first stems a
// token, not when an index opens: every index's mapping has a Polish
// analyzer, and an index without Polish posts (whose queries use only
// the analyzers of the languages it holds) never needs the table.
type lazyPolishStemmer struct{}

// Filter stems input with the shared stemmer. The stemmer's table is
// built into the binary, so it fails to build only in a broken build,
// which the tests of Polish stemming catch; input is then left as is.
func (lazyPolishStemmer) Filter(input analysis.TokenStream) analysis.TokenStream {
	f, err := polishStemmer()
	if err != nil {
		return input
	}
	return f.Filter(input)
}

func init() {
	if err := registry.RegisterTokenFilter(filterPolishStemmer, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return lazyPolishStemmer{}, nil
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
