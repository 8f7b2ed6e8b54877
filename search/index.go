package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	blevequery "github.com/blevesearch/bleve/v2/search/query"

	// The languages -search-language offers (Languages).
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/de"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/en"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/es"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/fr"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/it"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/nl"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/pt"

	"github.com/blogql/blog/search/internal/segments"
	"github.com/blogql/blog/storage"
)

// The index on disk: one bleve index (scorch) in a directory of its own
// under the service's directory, named by when it was built
// ("index-<unix nanoseconds>"). A build writes a new one beside the one
// serving and swaps when it is complete, so a crash half-way leaves the
// old one, and the next start opens the newest complete one and removes
// the others. Its internal keys record what it holds: the event log's
// position it is current with (keyPosition, written in the same batch as
// the documents an event changed), the table and language it was built
// for, and that the build finished (keyComplete). A batch returns before
// its segment is on disk (segments.Create): what a crash loses is a
// suffix of the batches, and the position recorded with each goes back
// with them, so the index replays those events from the log when it
// opens again.

// Languages are the values of Options.Language: bleve's analyzers with
// their stemmers and stop words, and "standard" for no stemming (Unicode
// words, lower-cased, English stop words).
var Languages = []string{"en", "de", "es", "fr", "it", "nl", "pt", "standard"}

// Fields of a document. Only title and body are stored, for snippets;
// categories and author are keywords for filters and facets; names holds
// the author's name and the categories' names, so a search for an author
// finds their posts; words holds the title's and body's words as written
// (lower-cased, not stemmed: analyzerSurface), the dictionary a typo is
// matched against (query.go), neither stored nor scored.
const (
	fieldTitle      = "title"
	fieldBody       = "body"
	fieldNames      = "names"
	fieldWords      = "words"
	fieldCategories = "categories"
	fieldAuthor     = "author"
)

const (
	keyPosition = "position"
	keyComplete = "complete"
	keyTable    = "table"
	keyLanguage = "language"
	// layoutVersion is kept with the language (keyLanguage): an index of
	// another layout is built again. 2: documents analyzed by their
	// posts' locales. 3: Polish analyzed by one stemmer shared by
	// every index (polish.go). 4: the words as written (fieldWords).
	layoutVersion = "4"
	dirPrefix     = "index-"
)

// document is what the index holds of a published post.
type document struct {
	Title      string   `json:"title"`
	Body       string   `json:"body"`
	Names      string   `json:"names"`
	Words      string   `json:"words"`
	Categories []string `json:"categories"`
	Author     string   `json:"author"`
	// Lang names the analyzer of the post's locale (analyzerOf), "" for
	// the service's Language.
	Lang string `json:"lang,omitempty"`
}

// BleveType returns the document's type: its analyzer's, whose mapping
// analyzes it (languages.go).
func (d document) BleveType() string { return d.Lang }

// newMapping returns the index's mapping: the analyzer language for the
// text fields of a post without a locale, and one document type per
// language of posts, whose text fields its analyzer analyzes
// (languages.go).
func newMapping(language string) mapping.IndexMapping {
	m := bleve.NewIndexMapping()
	m.DefaultMapping = docMapping(language)
	addLanguageMappings(m, docMapping)
	addSurfaceAnalyzer(m)
	m.DefaultAnalyzer = language
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	return m
}

// docMapping returns the mapping of a document whose text fields
// analyzer analyzes.
func docMapping(analyzer string) *mapping.DocumentMapping {
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = store, store, false, false
		return f
	}
	keyword := func() *mapping.FieldMapping {
		k := bleve.NewKeywordFieldMapping()
		// Facets count categories from tables made of the postings
		// (facets.go), not from doc values.
		k.Store, k.IncludeInAll, k.IncludeTermVectors, k.DocValues = false, false, false, false
		return k
	}
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldTitle, text(true))
	doc.AddFieldMappingsAt(fieldBody, text(true))
	doc.AddFieldMappingsAt(fieldNames, text(false))
	words := text(false)
	words.Analyzer = analyzerSurface
	doc.AddFieldMappingsAt(fieldWords, words)
	doc.AddFieldMappingsAt(fieldCategories, keyword())
	doc.AddFieldMappingsAt(fieldAuthor, keyword())
	doc.AddFieldMappingsAt(fieldLang, keyword())
	return doc
}

// index is one bleve index and where it lives ("" in memory).
type index struct {
	b          bleve.Index
	dir        string
	language   string
	categories categoryTables
	weights    *weightCache
}

// createIndex makes a new, empty index in a new directory under parent
// ("" in memory), named by stamp.
func createIndex(parent, language, table string, stamp int64) (*index, error) {
	dir := ""
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("search index directory: %w", err)
		}
		dir = filepath.Join(parent, fmt.Sprintf("%s%d", dirPrefix, stamp))
	}
	b, err := segments.Create(dir, newMapping(language))
	if err != nil {
		return nil, fmt.Errorf("create search index %s: %w", dir, err)
	}
	idx := &index{b: b, dir: dir, language: language, weights: newWeightCache(weightCacheBytes)}
	if err := b.SetInternal([]byte(keyTable), []byte(table)); err != nil {
		idx.close(true)
		return nil, err
	}
	if err := b.SetInternal([]byte(keyLanguage), []byte(language+"/"+layoutVersion)); err != nil {
		idx.close(true)
		return nil, err
	}
	return idx, nil
}

// openNewest opens the newest complete index under parent built for
// table and language, and removes every other index there. It returns
// nil, nil when there is none.
func openNewest(parent, language, table string) (*index, error) {
	entries, err := os.ReadDir(parent)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("search index directory: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), dirPrefix) {
			names = append(names, e.Name())
		}
	}
	// Newest first: the names hold fixed-width stamps of one length.
	slices.SortFunc(names, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(b, a)
	})
	var found *index
	for _, name := range names {
		dir := filepath.Join(parent, name)
		if found == nil {
			if idx, err := openIndex(dir, language, table); err == nil {
				found = idx
				continue
			}
		}
		_ = os.RemoveAll(dir)
	}
	return found, nil
}

// openIndex opens the index in dir, or fails when it is not a complete
// index of table in language.
func openIndex(dir, language, table string) (*index, error) {
	b, err := segments.OpenIndex(dir)
	if err != nil {
		return nil, err
	}
	idx := &index{b: b, dir: dir, language: language, weights: newWeightCache(weightCacheBytes)}
	complete, _ := b.GetInternal([]byte(keyComplete))
	t, _ := b.GetInternal([]byte(keyTable))
	l, _ := b.GetInternal([]byte(keyLanguage))
	if len(complete) == 0 || string(t) != table || string(l) != language+"/"+layoutVersion {
		_ = b.Close()
		return nil, fmt.Errorf("search index %s: not a complete index of table %s in %s", dir, table, language)
	}
	return idx, nil
}

// position returns the event log's position the index is current with.
func (x *index) position() (int64, error) {
	v, err := x.b.GetInternal([]byte(keyPosition))
	if err != nil || len(v) != 8 {
		return 0, fmt.Errorf("search index position: %v", err)
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func encodePosition(p int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(p))
}

// close closes the index, and removes its directory when remove is set.
func (x *index) close(remove bool) {
	_ = x.b.Close()
	if remove && x.dir != "" {
		_ = os.RemoveAll(x.dir)
	}
}

// size returns the bytes the index takes on disk (0 in memory).
func (x *index) size() int64 {
	if x.dir == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(x.dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// idsWith returns the ids of the documents whose keyword field holds
// value.
func (x *index) idsWith(ctx context.Context, field, value string) ([]string, error) {
	q := bleve.NewTermQuery(value)
	q.SetField(field)
	var ids []string
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
		req.SortBy([]string{"_id"})
		req.SearchAfter = after
		res, err := x.b.SearchInContext(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		if len(res.Hits) < 1000 {
			return ids, nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// documentOf returns what the index holds of p: its title, its body as
// plain text, the names of its author and categories (names overrides the
// copies on the post, for a rename the post's copies may not show yet).
func documentOf(p *storage.Post, names renames) document {
	d := document{Title: p.Title, Body: plainText(p), Author: p.AuthorID, Lang: analyzerOf(p.Locale)}
	d.Words = d.Title + "\n" + d.Body
	author := p.AuthorName
	if n, ok := names.authors[p.AuthorID]; ok {
		author = n
	}
	parts := []string{author}
	for _, c := range p.Categories {
		d.Categories = append(d.Categories, c.Slug)
		name := c.Name
		if n, ok := names.categories[c.Slug]; ok {
			name = n
		}
		parts = append(parts, name)
	}
	d.Names = strings.Join(parts, " ")
	return d
}

// renames are the current names of authors and categories renamed by the
// events being applied.
type renames struct {
	authors, categories map[string]string
}

// docIDQuery matches the documents ids.
func docIDQuery(ids []string) blevequery.Query { return bleve.NewDocIDQuery(ids) }

// snapshot returns the index as it is now, and the function that
// releases it.
func (x *index) snapshot() (*segments.Snapshot, func(), error) {
	snap, err := segments.Open(x.b)
	if err != nil {
		return nil, nil, err
	}
	return snap, func() { _ = snap.Close() }, nil
}

// prefixWords returns the words of field in snap that begin with prefix,
// at most MaxPrefixWords.
func prefixWords(snap *segments.Snapshot, field, prefix string) ([]string, error) {
	d, err := snap.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		return nil, err
	}
	var words []string
	for len(words) < MaxPrefixWords {
		e, err := d.Next()
		if err != nil {
			_ = d.Close()
			return nil, err
		}
		if e == nil {
			break
		}
		words = append(words, e.Term)
	}
	return words, d.Close()
}

// languages adds to set the languages of the documents x holds.
func (x *index) languages(set *languageSet) error {
	snap, release, err := x.snapshot()
	if err != nil {
		return err
	}
	defer release()
	words, err := prefixWords(snap, fieldLang, "")
	for _, w := range words {
		set.add(w)
	}
	return err
}
