package segments

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// PostingsList is the documents of a segment that hold a word of a
// field, in increasing order.
type PostingsList struct {
	pl segment.PostingsList
}

// Count returns how many documents the list holds (deleted ones
// included).
func (p *PostingsList) Count() uint64 { return p.pl.Count() }

// bitmapper is what zap's postings lists have and the segment API does
// not promise: OR'ing the list's documents into a bitmap at once, from
// the bitmap the segment stores.
type bitmapper interface {
	OrInto(*roaring.Bitmap)
}

// slowPaths counts the postings lists read one posting at a time for
// OrInto.
var (
	slowPaths atomic.Uint64
	slowOnce  sync.Once
)

// SlowPaths returns how many postings lists OrInto has read one posting
// at a time since the process started: 0 while every segment is zap's.
func SlowPaths() uint64 { return slowPaths.Load() }

// OrInto adds the list's documents to out. Zap's lists do it from their
// bitmap; any other is read one posting at a time (logged once, counted
// by SlowPaths).
func (p *PostingsList) OrInto(out *roaring.Bitmap) error {
	if b, ok := p.pl.(bitmapper); ok {
		b.OrInto(out)
		return nil
	}
	slowPaths.Add(1)
	slowOnce.Do(func() {
		slog.Warn("search: the index's postings lists cannot be read as bitmaps: searches read them one posting at a time, several times slower; is bleve's version the one go.mod pins?",
			"type", fmt.Sprintf("%T", p.pl))
	})
	it := p.pl.Iterator(false, false, false, nil)
	for {
		d, err := it.Next()
		if err != nil || d == nil {
			return err
		}
		out.Add(uint32(d.Number()))
	}
}

// Iterator returns an iterator over the list's postings, which reads
// each posting's frequency, norm and locations as asked, in reuse when
// not nil.
func (p *PostingsList) Iterator(freq, norm, locations bool, reuse *Iterator) *Iterator {
	var prealloc segment.PostingsIterator
	if reuse != nil {
		prealloc = reuse.it
	} else {
		reuse = &Iterator{}
	}
	reuse.it = p.pl.Iterator(freq, norm, locations, prealloc)
	return reuse
}

// Iterator reads a postings list in increasing order of document.
type Iterator struct {
	it segment.PostingsIterator
	at Posting
}

// Next returns the next posting, nil after the last. The posting is
// valid until the iterator's next call.
func (it *Iterator) Next() (*Posting, error) {
	p, err := it.it.Next()
	return it.posting(p, err)
}

// Advance returns the first posting of a document at or after num, nil
// when there is none. The posting is valid until the iterator's next
// call.
func (it *Iterator) Advance(num uint64) (*Posting, error) {
	p, err := it.it.Advance(num)
	return it.posting(p, err)
}

func (it *Iterator) posting(p segment.Posting, err error) (*Posting, error) {
	if err != nil || p == nil {
		return nil, err
	}
	it.at.p = p
	return &it.at, nil
}

// Posting is a document's entry in a postings list.
type Posting struct {
	p segment.Posting
}

// Number returns the document's number in its segment.
func (p *Posting) Number() uint64 { return p.p.Number() }

// Frequency returns how many times the document holds the word (when the
// iterator reads frequencies).
func (p *Posting) Frequency() uint64 { return p.p.Frequency() }

// Norm returns 1 / √(the field's length in words) (when the iterator
// reads norms).
func (p *Posting) Norm() float64 { return p.p.Norm() }

// Location is where a word is in a field: its place among the field's
// words, and its first byte.
type Location struct {
	Pos, Start uint64
}

// Locations appends the word's locations in the document to dst (when
// the iterator reads locations) and returns it.
func (p *Posting) Locations(dst []Location) []Location {
	for _, l := range p.p.Locations() {
		dst = append(dst, Location{Pos: l.Pos(), Start: l.Start()})
	}
	return dst
}
