package storage

import (
	"fmt"
	"sync"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// A Store in another publication: Store.In returns a shallow copy of a
// Store in another publication's key space. The copy shares the client,
// the table's name, the clock, the cursor keys, the renderer's options
// and the change feed's store (global items) with the Store it was made
// from; its table is confined to its publication (the tenant guard), and
// what a Store remembers of its publication (the site settings, the
// renderer it last read, the comments' hints) is the publication's own,
// held in a map by publication id that every Store made from one New
// shares, so two requests of one publication share it too.

// pubState is what a Store remembers of one publication's items.
type pubState struct {
	hints     *hints
	siteCache *siteCache
	claimed   *claimed
	staff     *staffCache
	posts     counterGate
}

// pubStates holds the pubState of each publication a Store was made In,
// shared by every Store made from one New.
type pubStates struct {
	mu     sync.Mutex
	states map[string]*pubState
}

// maxPubStates bounds the publications whose state a Store keeps: past
// it an arbitrary one is forgotten to make room. Nothing a state holds
// is trusted without a check, so a publication's next Store only reads
// again what its state would have saved.
const maxPubStates = 1024

// state returns the pubState of the publication id, made on first use.
func (p *pubStates) state(id string) *pubState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[id]
	if !ok {
		for old := range p.states {
			if len(p.states) < maxPubStates {
				break
			}
			delete(p.states, old)
		}
		st = &pubState{hints: newHints(), siteCache: &siteCache{}, claimed: &claimed{}, staff: &staffCache{}, posts: newCounterGate()}
		p.states[id] = st
	}
	return st
}

// siteCacheOf returns the site settings' copy of the publication id, nil
// when no Store was made in it (or its state was forgotten).
func (p *pubStates) siteCacheOf(id string) *siteCache {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.states[id]; ok {
		return st.siteCache
	}
	return nil
}

// staffCacheOf returns the roles held of the publication id, nil when no
// Store was made in it (or its state was forgotten).
func (p *pubStates) staffCacheOf(id string) *staffCache {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.states[id]; ok {
		return st.staff
	}
	return nil
}

// In returns the Store of the publication pubID on the same table: its
// reads and writes touch only that publication's items (and the global
// ones), and the tenant guard refuses any other key. It fails when pubID
// is not a publication id (empty, or holding a "#"); it does not check
// that the publication exists (PublicationByHost and GetPublication do).
func (s *Store) In(pubID string) (*Store, error) {
	ks, err := keys.In(pubID)
	if err != nil {
		return nil, fmt.Errorf("store in publication %q: %w", pubID, err)
	}
	if ks == s.ks {
		return s, nil
	}
	st := s.pubs.state(pubID)
	c := *s
	c.ks = ks
	c.hints, c.siteCache, c.claimed, c.staff, c.postsGate = st.hints, st.siteCache, st.claimed, st.staff, st.posts
	c.db = dynamo.New(s.db.Client(), s.table, st.hints).Confine(ks.Prefix(), keys.Global)
	return &c, nil
}
