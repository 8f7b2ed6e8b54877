package search

import (
	"math"
	"slices"
	"sync"

	"github.com/maypok86/otter/v2"

	"github.com/blogql/blog/search/internal/segments"
)

// Weights of common words. Scoring a word reads its postings at the
// matches: for a word in most posts, that is decoding most of its
// postings list, the bulk of a search's work. A search box's queries
// share their common words, so the postings of a word in at least
// cachedPostings posts of a segment are kept decoded, as each post's
// number and √frequency / √(field length), up to weightCacheBytes for
// the index (those least likely to be used again go first; a segment's
// are dropped with it). Scoring from them gives the same scores as from
// the index.
var cachedPostings uint64 = 2048

const weightCacheBytes uint64 = 64 << 20

// weights are a word's postings in a field of a segment: posts in
// increasing order, and the word's weight in each.
type weights struct {
	docs []uint32
	tfn  []float64
}

// weight returns a posting's weight: √frequency / √(field length).
func weight(p *segments.Posting) float64 { return math.Sqrt(float64(p.Frequency())) * p.Norm() }

// weightKey names a word of a field of a segment.
type weightKey struct {
	seg         uint64
	field, term string
}

// weightCache keeps weights up to a total size in bytes, evicting those
// least likely to be used again (by how recently and how often they
// were), and drops a segment's with it.
type weightCache struct {
	cache *otter.Cache[weightKey, *weights]
	mu    sync.Mutex
	segs  []uint64 // of the last snapshot seen
}

func newWeightCache(maxBytes uint64) *weightCache {
	return &weightCache{cache: otter.Must(&otter.Options[weightKey, *weights]{
		MaximumWeight: maxBytes,
		Weigher:       func(_ weightKey, w *weights) uint32 { return uint32(min(w.size(), math.MaxUint32)) },
	})}
}

// get returns the weights of k, made from pl when not kept yet; nil when
// pl is too short to keep.
func (c *weightCache) get(k weightKey, pl *segments.PostingsList) (*weights, error) {
	if pl.Count() < cachedPostings {
		return nil, nil
	}
	if w, ok := c.cache.GetIfPresent(k); ok {
		return w, nil
	}
	n := pl.Count()
	w := &weights{docs: make([]uint32, 0, n), tfn: make([]float64, 0, n)}
	it := pl.Iterator(true, true, false, nil)
	for {
		p, err := it.Next()
		if err != nil {
			return nil, err
		}
		if p == nil {
			break
		}
		w.docs = append(w.docs, uint32(p.Number()))
		w.tfn = append(w.tfn, weight(p))
	}
	// Another search may have made them meanwhile: theirs are kept.
	w, _ = c.cache.SetIfAbsent(k, w)
	return w, nil
}

func (w *weights) size() int { return 12*len(w.docs) + 64 }

// keep drops the weights of the segments snap does not hold, when its
// segments are not those of the last snapshot seen.
func (c *weightCache) keep(snap *segments.Snapshot) {
	segs := snap.Segments()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(segs) == len(c.segs) && slices.EqualFunc(segs, c.segs, func(ss *segments.Segment, id uint64) bool { return ss.ID() == id }) {
		return
	}
	c.segs = c.segs[:0]
	live := map[uint64]bool{}
	for _, ss := range segs {
		c.segs = append(c.segs, ss.ID())
		live[ss.ID()] = true
	}
	for k := range c.cache.Keys() {
		if !live[k.seg] {
			c.cache.Invalidate(k)
		}
	}
}

// forget drops every weight kept.
func (c *weightCache) forget() { c.cache.InvalidateAll() }

// add adds factor times the weight of each of docs (in increasing
// order) w holds to its score.
func (w *weights) add(docs []uint32, scores []float64, factor float64) {
	k := 0
	sparse := len(w.docs) > 8*len(docs)
	for j, d := range docs {
		if sparse {
			// Few matches in a long list: look each up.
			lo, hi := k, len(w.docs)
			for lo < hi {
				mid := int(uint(lo+hi) >> 1)
				if w.docs[mid] < d {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			k = lo
		} else {
			for k < len(w.docs) && w.docs[k] < d {
				k++
			}
		}
		if k == len(w.docs) {
			return
		}
		if w.docs[k] == d {
			scores[j] += factor * w.tfn[k]
		}
	}
}
