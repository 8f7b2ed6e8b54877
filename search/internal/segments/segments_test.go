package segments

import (
	"fmt"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
)

// TestPostingsAreReadAsBitmaps checks, in memory and on disk, that every
// postings list of every segment is OR'd into a bitmap from zap's own
// (the fast path, SlowPaths stays 0), holding the documents its
// iterator reads, and that a segment's live documents leave out those
// deleted since.
func TestPostingsAreReadAsBitmaps(t *testing.T) {
	for _, where := range []string{"memory", "disk"} {
		t.Run(where, func(t *testing.T) {
			dir := ""
			if where == "disk" {
				dir = t.TempDir() + "/index"
			}
			m := bleve.NewIndexMapping()
			m.DefaultAnalyzer = "standard"
			b, err := Create(dir, m)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			// Three batches, three segments (at least, until merged).
			for batch := range 3 {
				bt := b.NewBatch()
				for i := range 20 {
					id := fmt.Sprintf("d%d-%02d", batch, i)
					text := "common"
					if i%4 == 0 {
						text += " rare"
					}
					if err := bt.Index(id, map[string]any{"text": text}); err != nil {
						t.Fatal(err)
					}
				}
				if err := b.Batch(bt); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Delete("d0-04"); err != nil {
				t.Fatal(err)
			}
			before := SlowPaths()
			snap, err := Open(b)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if n, err := snap.DocCount(); err != nil || n != 59 {
				t.Fatalf("DocCount: %d, %v; want 59", n, err)
			}
			found := 0
			for _, seg := range snap.Segments() {
				d, err := seg.Dictionary("text")
				if err != nil {
					t.Fatal(err)
				}
				for _, term := range []string{"common", "rare", "absent"} {
					pl, err := d.PostingsList([]byte(term), nil)
					if err != nil {
						t.Fatal(err)
					}
					got := roaring.New()
					if err := pl.OrInto(got); err != nil {
						t.Fatal(err)
					}
					var want []uint32
					it := pl.Iterator(true, true, true, nil)
					for {
						p, err := it.Next()
						if err != nil {
							t.Fatal(err)
						}
						if p == nil {
							break
						}
						want = append(want, uint32(p.Number()))
						if p.Frequency() != 1 || len(p.Locations(nil)) != 1 {
							t.Errorf("%s in %d: frequency %d, locations %v", term, p.Number(), p.Frequency(), p.Locations(nil))
						}
					}
					if !slices.Equal(got.ToArray(), want) || uint64(len(want)) != pl.Count() {
						t.Errorf("%s: bitmap %v, postings %v, count %d", term, got.ToArray(), want, pl.Count())
					}
				}
				var ids []string
				for i := range 20 {
					ids = append(ids, fmt.Sprintf("d0-%02d", i))
				}
				live, err := seg.LiveDocs(ids)
				if err != nil {
					t.Fatal(err)
				}
				for _, num := range live {
					id, err := seg.DocID(uint64(num))
					if err != nil {
						t.Fatal(err)
					}
					if id == "d0-04" {
						t.Errorf("deleted %s is live", id)
					}
					if id == "d0-00" || id == "d0-08" {
						found++
					}
				}
			}
			if found != 2 {
				t.Errorf("LiveDocs found %d of d0-00 and d0-08", found)
			}
			if n := SlowPaths() - before; n != 0 {
				t.Errorf("%d postings lists were read one posting at a time: the segments are not zap's", n)
			}
		})
	}
}

// TestIndexesShareNoConfig makes an index while another is searched, as
// two servers in one process do: bleve writes into the configuration
// map it is given and each index reads its own, so one map shared by
// both is a data race (the race detector fails this test then).
func TestIndexesShareNoConfig(t *testing.T) {
	m := bleve.NewIndexMapping()
	a, err := Create("", m)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Index("d", map[string]any{"text": "common"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			if _, err := a.Search(bleve.NewSearchRequest(bleve.NewTermQuery("common"))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 20 {
		b, err := Create(t.TempDir()+"/index", m)
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
	}
	<-done
}
