// Package segments is the search's window on the segments of a bleve
// index: the one package that imports bleve's index/scorch and its
// segment API, which carry no compatibility promise (unlike bleve's
// public API and bleve_index_api). The search matches, ranks, counts
// facets and finds snippets over the segments' postings itself
// (search/match.go), so it needs more of an index than bleve's searchers
// give: each segment of a snapshot, its deleted posts, its dictionaries'
// postings lists as bitmaps, and their iterators.
//
// What it relies on, and what breaks when bleve changes it:
//
//   - an index made with Create or OpenIndex is a scorch index, whose
//     reader is a *scorch.IndexSnapshot (Open fails otherwise);
//   - a segment never changes once in a snapshot: what is kept per
//     segment (by ID) stays true while the segment lives;
//   - a postings list can OR itself into a bitmap (OrInto), which every
//     zap version bleve registers has. Without it a list is read one
//     posting at a time, several times slower; that slow path is logged
//     once and counted (SlowPaths), and the search's tests fail when it
//     is taken.
//
// go.mod pins bleve's version for these reasons; the search's oracle
// test (its results against bleve's own searchers) and this package's
// tests say whether another version keeps them.
package segments

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// config makes a batch return before its segment is on disk: what a
// crash loses is a suffix of the batches, so a caller that records its
// progress in each batch (SetInternal in the same batch) finds it gone
// back with them, and replays from there. It is a new map for every
// index: bleve writes into the map it is given (the path) and the index
// keeps reading it, so indexes sharing one would race.
func config() map[string]any { return map[string]any{"unsafe_batch": true} }

// Create returns a new, empty scorch index with mapping m in dir ("" in
// memory), or the error bleve gave.
func Create(dir string, m mapping.IndexMapping) (bleve.Index, error) {
	return bleve.NewUsing(dir, m, scorch.Name, scorch.Name, config())
}

// OpenIndex opens the scorch index in dir, or returns the error bleve
// gave.
func OpenIndex(dir string) (bleve.Index, error) {
	return bleve.OpenUsing(dir, config())
}

// Snapshot is an index as it was when opened: a list of segments that
// do not change. Close releases it.
type Snapshot struct {
	snap *scorch.IndexSnapshot
	segs []*Segment
}

// Open returns the snapshot of b as it is now; it fails when b is not a
// scorch index.
func Open(b bleve.Index) (*Snapshot, error) {
	ii, err := b.Advanced()
	if err != nil {
		return nil, fmt.Errorf("search index snapshot: %w", err)
	}
	r, err := ii.Reader()
	if err != nil {
		return nil, fmt.Errorf("search index snapshot: %w", err)
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		_ = r.Close()
		return nil, fmt.Errorf("search: the index reader is a %T, not a scorch snapshot", r)
	}
	s := &Snapshot{snap: snap}
	for _, ss := range snap.Segments() {
		s.segs = append(s.segs, &Segment{ss: ss})
	}
	return s, nil
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.snap.Close() }

// Segments returns the snapshot's segments, oldest first.
func (s *Snapshot) Segments() []*Segment { return s.segs }

// DocCount returns how many documents the snapshot holds.
func (s *Snapshot) DocCount() (uint64, error) { return s.snap.DocCount() }

// FieldDict returns the words of field, in order.
func (s *Snapshot) FieldDict(field string) (bleveindex.FieldDict, error) {
	return s.snap.FieldDict(field)
}

// FieldDictPrefix returns the words of field that begin with prefix, in
// order.
func (s *Snapshot) FieldDictPrefix(field string, prefix []byte) (bleveindex.FieldDict, error) {
	return s.snap.FieldDictPrefix(field, prefix)
}

// FieldDictFuzzy returns the words of field within fuzziness edits of
// term that begin with prefix.
func (s *Snapshot) FieldDictFuzzy(field, term string, fuzziness int, prefix string) (bleveindex.FieldDict, error) {
	return s.snap.FieldDictFuzzy(field, term, fuzziness, prefix)
}

// Segment is a segment of a snapshot: its documents are numbered from 0
// to Count()-1, and it never changes while it lives.
type Segment struct {
	ss *scorch.SegmentSnapshot
}

// ID returns the segment's id, unique in its index while it lives.
func (s *Segment) ID() uint64 { return s.ss.Id() }

// Count returns how many documents the segment holds, deleted ones
// included.
func (s *Segment) Count() uint64 { return s.ss.Segment().Count() }

// Deleted returns the numbers of the segment's deleted documents (nil for
// none); callers must not change it.
func (s *Segment) Deleted() *roaring.Bitmap { return s.ss.Deleted() }

// LiveDocs returns the numbers of the documents ids the segment holds
// and has not deleted, in increasing order.
func (s *Segment) LiveDocs(ids []string) ([]uint32, error) {
	nums, err := s.ss.DocNumbers(ids)
	if err != nil {
		return nil, err
	}
	if del := s.ss.Deleted(); del != nil {
		nums.AndNot(del)
	}
	return nums.ToArray(), nil
}

// DocID returns the id of the document num.
func (s *Segment) DocID(num uint64) (string, error) {
	id, err := s.ss.DocID(num)
	return string(id), err
}

// VisitStored calls visit with each stored field of the document num,
// until visit returns false.
func (s *Segment) VisitStored(num uint64, visit func(field string, value []byte) bool) error {
	return s.ss.VisitDocument(num, func(field string, _ byte, value []byte, _ []uint64) bool {
		return visit(field, value)
	})
}

// Dictionary returns the dictionary of field in the segment.
func (s *Segment) Dictionary(field string) (*Dictionary, error) {
	d, err := s.ss.Segment().Dictionary(field)
	if err != nil {
		return nil, err
	}
	return &Dictionary{d: d}, nil
}

// Dictionary is the words of a field of a segment.
type Dictionary struct {
	d segment.TermDictionary
}

// PostingsList returns the postings of term (empty when the segment does
// not hold it), in reuse when not nil.
func (d *Dictionary) PostingsList(term []byte, reuse *PostingsList) (*PostingsList, error) {
	var prealloc segment.PostingsList
	if reuse != nil {
		prealloc = reuse.pl
	} else {
		reuse = &PostingsList{}
	}
	pl, err := d.d.PostingsList(term, nil, prealloc)
	if err != nil {
		return nil, err
	}
	reuse.pl = pl
	return reuse, nil
}
