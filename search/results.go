package search

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/blogql/blog/search/internal/segments"
	"github.com/blogql/blog/storage"
)

// Paging. A search's first page ranks up to snapshotSize results at once
// (4 pages of 50, 20 of 10)
// and keeps their order (ids and scores) on this server as a snapshot;
// its cursors name the snapshot and the offset, so the next pages come
// from the same ranking whatever is written meanwhile: no result is
// skipped or repeated (a post unpublished or deleted since is left out;
// one published since is not added). A cursor also carries the score and
// id of its result: past the snapshot's end, or on a server that does
// not hold the snapshot (another server of the fleet, or after a
// restart), the next page is the live index's results ranked after that
// score and id.
const (
	snapshotSize  = 200
	snapshotCount = 256
	snapshotTTL   = 15 * time.Minute
	// facetSize is how many categories the facets name at most.
	facetSize = 100
	// snippetChars is how many bytes of text a body's snippet has at
	// most.
	snippetChars = 200
	cursorList   = "search"
)

// The most bytes a highlighted title and a snippet take: each byte of
// text at most 5 once escaped ("&amp;"), and 13 more for the <mark>
// around it, and a snippet's "…" at both ends.
const (
	MaxTitleHTMLBytes = 5*4*storage.MaxTitleLength + 13*storage.MaxTitleLength
	MaxSnippetBytes   = 18*snippetChars + 6
)

// Request is a search.
type Request struct {
	Query string
	// First is the page size, 1 to MaxFirst.
	First int
	// After is the cursor of the result the page starts after.
	After string
	// Category and AuthorID, when set, keep the posts of that category
	// (slug) or author.
	Category, AuthorID string
	// Facets asks for Results.Facets, which cost a visit of every match.
	Facets bool
}

// Hit is a result: a post, its score, and its title and a snippet of its
// body as HTML (escaped text with <mark> around what matched).
type Hit struct {
	PostID  string
	Score   float64
	Title   string
	Snippet string
	Cursor  string
}

// Facet is a category and how many results it holds.
type Facet struct {
	Category string
	Count    int
}

// Results is a page of a search.
type Results struct {
	Hits    []Hit
	HasNext bool
	HasPrev bool
	// Total is how many posts match, Facets how many of them each
	// category holds, most first (when Request.Facets asked): the whole
	// result's, not the page's.
	Total  int
	Facets []Facet
}

// Search returns a page of the published posts matching r.Query, best
// first. A query that is empty, too long or of too many words, a page
// size outside 1..MaxFirst, and a cursor that is not one of this search
// are *storage.ValidationError; a slow query is a *SlowQueryError; with
// no index yet it returns ErrBuilding.
func (s *Service) Search(ctx context.Context, r Request) (*Results, error) {
	if r.First < 1 || r.First > MaxFirst {
		return nil, &storage.ValidationError{Field: "first", Reason: fmt.Sprintf("must be 1 to %d", MaxFirst)}
	}
	parts, err := checkQuery(r.Query)
	if err != nil {
		return nil, err
	}
	c, err := s.openCursor(r)
	if err != nil {
		return nil, err
	}
	an := s.queryAnalyzers()
	q, ok := compile(parts, an, nil)
	if !ok {
		return &Results{HasPrev: c != nil}, nil
	}
	queries := &searchQueries{exact: filtered(q, r), parts: parts, analyzer: an, r: r, forgiving: forgiving(parts)}
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	var res *Results
	err = s.reading(func(idx *index) error {
		if err := idx.checkPrefixes(parts); err != nil {
			return err
		}
		var err error
		res, err = s.search(ctx, idx, queries, parts, r, c)
		return err
	})
	return res, searchError(err)
}

// filtered adds r's category and author to p.
func filtered(p *plan, r Request) *plan {
	for _, f := range []alt{{term: r.Category, field: fieldCategories}, {term: r.AuthorID, field: fieldAuthor}} {
		if f.term != "" {
			p.filters = append(p.filters, f)
		}
	}
	return p
}

// MaxPrefixWords is how many words of a field a query's prefixes may
// match together: more would make a search of each (SLOW_QUERY).
const MaxPrefixWords = 500

// checkPrefixes returns a *SlowQueryError when the prefixes of parts
// match more than MaxPrefixWords words of a field between them, counted
// in the index's dictionaries before any search.
func (x *index) checkPrefixes(parts []part) error {
	for _, f := range []string{fieldTitle, fieldBody, fieldNames} {
		n := 0
		for _, p := range parts {
			if !p.prefix {
				continue
			}
			d, err := x.b.FieldDictPrefix(f, []byte(p.text))
			if err != nil {
				return err
			}
			for n <= MaxPrefixWords {
				e, err := d.Next()
				if err != nil || e == nil {
					break
				}
				n++
			}
			_ = d.Close()
			if n > MaxPrefixWords {
				return &SlowQueryError{Reason: fmt.Sprintf("%s* and the query's other prefixes match more than %d words: type more of them", p.text, MaxPrefixWords)}
			}
		}
	}
	return nil
}

// searchError returns the error of a search that failed: a query that
// expands to too many words, or that ran out of time, is slow.
func searchError(err error) error {
	switch {
	case err == nil, errors.Is(err, ErrBuilding), errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return &SlowQueryError{Reason: "it did not finish in time"}
	}
	return fmt.Errorf("search: %w", err)
}

// acquire waits for a turn among the searches running at once.
func (s *Service) acquire(ctx context.Context) (func(), error) {
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// search returns the page of r from idx: from the cursor's snapshot when
// this server holds it, else from the index.
func (s *Service) search(ctx context.Context, idx *index, queries *searchQueries, parts []part, r Request, c *cursor) (*Results, error) {
	fp := fingerprint(r)
	q, typos := queries.exact, false
	if c != nil && strings.HasPrefix(c.snapshot, typosMark) {
		tq, _, err := queries.typo(idx)
		if err != nil {
			return nil, err
		}
		if tq != nil {
			q = tq
		}
		typos = true
	}
	changes := s.changes.Load()
	var snap *snapshot
	from := 0
	if c != nil {
		snap, from = s.snaps.get(c.snapshot), c.offset
	} else {
		// The same search's first page since the index last changed:
		// its ranking again.
		snap = s.snaps.latest(fp, changes, r.Facets)
	}
	res := &Results{HasPrev: c != nil}
	var page []ranked
	switch {
	case snap != nil && (c == nil || from < len(snap.hits)):
		end := min(from+r.First, len(snap.hits))
		page = snap.hits[from:end]
		res.HasNext = end < len(snap.hits) || snap.truncated
		res.Total, res.Facets = snap.total, snap.facets
		if r.Facets && !snap.counted {
			// The first page did not ask for them: counted now, in the
			// index as it is.
			sq, err := queries.of(idx, snap)
			if err != nil {
				return nil, err
			}
			counted, err := idx.match(ctx, sq, matchOptions{facets: true})
			if err != nil {
				return nil, err
			}
			res.Facets = counted.facets
		}
	default:
		// A first page ranks a snapshot's worth; past a snapshot, a page
		// ranks those after the cursor's score and id.
		o := matchOptions{k: r.First + 1, after: c, facets: r.Facets}
		if c == nil {
			o.k = snapshotSize
		}
		found, err := idx.match(ctx, q, o)
		if err != nil {
			return nil, err
		}
		if c == nil && found.total < r.First && queries.forgiving {
			// Typo tolerance: when the words as typed find less than a
			// page, the words their typos may stand for count too.
			tq, _, err := queries.typo(idx)
			if err != nil {
				return nil, err
			}
			typos = true
			if tq != nil {
				if found, err = idx.match(ctx, tq, o); err != nil {
					return nil, err
				}
			}
		}
		hits := found.hits
		res.Total, res.Facets = found.total, found.facets
		if c == nil {
			// The snapshot holds the first of the ranking (score, then
			// id): the pages past it go on after its last.
			truncated := found.total > len(hits)
			snap = &snapshot{id: newSnapshotID(typos), fp: fp, changes: changes, hits: hits, truncated: truncated, total: res.Total, facets: res.Facets, counted: r.Facets, words: queries.words}
			s.snaps.put(snap)
			page = hits[:min(r.First, len(hits))]
			res.HasNext = len(hits) > r.First || snap.truncated
		} else {
			// A page past a snapshot, or without one: the offset goes on
			// counting, in the same snapshot's name.
			page = hits[:min(r.First, len(hits))]
			res.HasNext = len(hits) > r.First
			snap = &snapshot{id: c.snapshot}
		}
	}
	base := 0
	if c != nil {
		base = c.offset
	}
	if snap != nil && strings.HasPrefix(snap.id, typosMark) {
		typos = true
	}
	var words typoWords
	switch {
	case typos && snap != nil && snap.words != nil:
		words = snap.words
	case typos:
		var err error
		if _, words, err = queries.typo(idx); err != nil {
			return nil, err
		}
	}
	shown, err := s.highlight(ctx, idx, newMarker(parts, s.analyzer, words), page)
	if err != nil {
		return nil, err
	}
	for i, h := range page {
		hl, ok := shown[h.id]
		if !ok {
			// Gone from the index since the snapshot: unpublished or
			// deleted.
			continue
		}
		hl.PostID, hl.Score = h.id, h.score
		hl.Cursor = s.store.SealCursor(cursorList, cursor{fp: fp, snapshot: snap.id, offset: base + i + 1, score: h.score, id: h.id}.position())
		res.Hits = append(res.Hits, hl)
	}
	return res, nil
}

// highlight returns the title and snippet of each of the page's posts
// still in the index, by id, from their stored text (highlight.go).
func (s *Service) highlight(ctx context.Context, idx *index, m *marker, page []ranked) (map[string]Hit, error) {
	out := make(map[string]Hit, len(page))
	if len(page) == 0 {
		return out, nil
	}
	ids := make([]string, len(page))
	for i, h := range page {
		ids[i] = h.id
	}
	snap, release, err := idx.snapshot()
	if err != nil {
		return nil, err
	}
	defer release()
	words, err := m.bodyWords(snap)
	if err != nil {
		return nil, err
	}
	for _, ss := range snap.Segments() {
		docs, err := ss.LiveDocs(ids)
		if err != nil {
			return nil, err
		}
		if len(docs) == 0 {
			continue
		}
		first, err := firstMatches(ss, words, docs)
		if err != nil {
			return nil, err
		}
		for i, num := range docs {
			id, err := ss.DocID(uint64(num))
			if err != nil {
				return nil, err
			}
			var title, body string
			err = ss.VisitStored(uint64(num), func(field string, value []byte) bool {
				switch field {
				case fieldTitle:
					title = string(value)
				case fieldBody:
					body = string(value)
				}
				return true
			})
			if err != nil {
				return nil, err
			}
			at := first[i]
			if at >= len(body) {
				at = -1
			}
			out[id] = Hit{Title: m.title(title), Snippet: m.snippet(body, at, snippetChars)}
		}
	}
	return out, ctx.Err()
}

// firstMatches returns, for each of the posts docs of the segment ss (in
// increasing order), the byte offset in its body of the first of words,
// -1 for none: where the index's term vectors say they are.
func firstMatches(ss *segments.Segment, words []string, docs []uint32) ([]int, error) {
	first := make([]int, len(docs))
	for i := range first {
		first[i] = -1
	}
	d, err := ss.Dictionary(fieldBody)
	if err != nil {
		return nil, err
	}
	var pl *segments.PostingsList
	var locs []segments.Location
	for _, w := range words {
		if pl, err = d.PostingsList([]byte(w), pl); err != nil {
			return nil, err
		}
		if pl.Count() == 0 {
			continue
		}
		it := pl.Iterator(true, true, true, nil)
		var p *segments.Posting
		for i, doc := range docs {
			if p == nil || p.Number() < uint64(doc) {
				if p, err = it.Advance(uint64(doc)); err != nil {
					return nil, err
				}
				if p == nil {
					break
				}
			}
			if p.Number() != uint64(doc) {
				continue
			}
			locs = p.Locations(locs[:0])
			for _, l := range locs {
				if s := int(l.Start); first[i] < 0 || s < first[i] {
					first[i] = s
				}
			}
		}
	}
	return first, nil
}

// ranked is a result's place in a ranking.
type ranked struct {
	id    string
	score float64
}

// snapshot is the ranking of a search's first page.
type snapshot struct {
	id        string
	fp        string // the search's fingerprint
	changes   uint64 // the index's Service.changes it was ranked at
	hits      []ranked
	truncated bool // more matched than it holds
	total     int
	facets    []Facet
	counted   bool      // facets were asked for and counted
	words     typoWords // what its typos stood for, when it needed them
}

// of returns the plan snap was ranked with.
func (q *searchQueries) of(idx *index, snap *snapshot) (*plan, error) {
	if strings.HasPrefix(snap.id, typosMark) {
		tq, _, err := q.typo(idx)
		if tq != nil || err != nil {
			return tq, err
		}
	}
	return q.exact, nil
}

// searchQueries are a search's query with its words as typed, and with
// their typo tolerance, made when a search needs it.
type searchQueries struct {
	exact     *plan
	parts     []part
	analyzer  *queryAnalyzers
	r         Request
	forgiving bool // a word is long enough for typos

	made  bool
	typos *plan
	words typoWords
	err   error
}

// typo returns the query with the typo tolerance, and the words it
// stands for; a nil query when no word may be a typo (the index holds
// every word as typed, or finds none near it).
func (q *searchQueries) typo(idx *index) (*plan, typoWords, error) {
	if q.made || !q.forgiving {
		return q.typos, q.words, q.err
	}
	q.made = true
	q.words, q.err = idx.typoWords(q.parts, q.analyzer)
	for _, near := range q.words {
		if len(near) > 0 {
			tq, _ := compile(q.parts, q.analyzer, q.words)
			q.typos = filtered(tq, q.r)
			break
		}
	}
	return q.typos, q.words, q.err
}

// typosMark begins the id of a snapshot of a search that needed its typo
// tolerance, so the pages after it, from a snapshot or not, search the
// same way.
const typosMark = "t"

func newSnapshotID(typos bool) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	if typos {
		return typosMark + hex.EncodeToString(b)
	}
	return "x" + hex.EncodeToString(b)
}

// snapshots keeps the latest snapshots, up to a count, each for
// snapshotTTL since it was ranked, by id and by the search they rank
// (the latest of each). Past the count, the cache evicts those least
// likely to be read again (by how recently and how often they were).
type snapshots struct {
	byID *otter.Cache[string, *snapshot]
	mu   sync.Mutex
	byFP map[string]string // the id of the latest snapshot of each search
}

func newSnapshots(max int) *snapshots {
	c := &snapshots{byFP: map[string]string{}}
	c.byID = otter.Must(&otter.Options[string, *snapshot]{
		MaximumSize:      max,
		ExpiryCalculator: otter.ExpiryWriting[string, *snapshot](snapshotTTL),
		// The search's latest goes with it.
		OnDeletion: func(e otter.DeletionEvent[string, *snapshot]) { c.forget(e.Value) },
	})
	return c
}

func (c *snapshots) put(s *snapshot) {
	if s.fp != "" {
		// Named before it is kept, so that its deletion comes after.
		c.mu.Lock()
		c.byFP[s.fp] = s.id
		c.mu.Unlock()
	}
	c.byID.Set(s.id, s)
}

// forget drops s as its search's latest.
func (c *snapshots) forget(s *snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byFP[s.fp] == s.id {
		delete(c.byFP, s.fp)
	}
}

// latest returns the latest snapshot of the search fp when the index has
// not changed since (changes), with its facets counted when facets is
// set; nil when there is none.
func (c *snapshots) latest(fp string, changes uint64, facets bool) *snapshot {
	c.mu.Lock()
	id, ok := c.byFP[fp]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	s, ok := c.byID.GetIfPresent(id)
	if !ok {
		return nil
	}
	if s.changes != changes || (facets && !s.counted) {
		return nil
	}
	return s
}

func (c *snapshots) get(id string) *snapshot {
	s, _ := c.byID.GetIfPresent(id)
	return s
}

func (c *snapshots) clear() {
	c.byID.InvalidateAll()
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.byFP)
}

// close stops the cache's clean-ups of expired snapshots.
func (c *snapshots) close() { c.byID.StopAllGoroutines() }

// cursor is a search's position after a result: the search it belongs
// to (fp), its snapshot and offset, and the result's score and id.
type cursor struct {
	fp, snapshot string
	offset       int
	score        float64
	id           string
}

func (c cursor) position() map[string]string {
	return map[string]string{"q": c.fp, "s": c.snapshot, "o": strconv.Itoa(c.offset),
		"sc": strconv.FormatFloat(c.score, 'g', -1, 64), "id": c.id}
}

// openCursor returns the cursor of r.After, nil for none; a cursor that
// is not one of this search (of another query or filter, altered, or not
// a search's) is a *storage.ValidationError on "after".
func (s *Service) openCursor(r Request) (*cursor, error) {
	if r.After == "" {
		return nil, nil
	}
	pos, err := s.store.OpenCursor(cursorList, "after", r.After)
	if err != nil {
		return nil, err
	}
	bad := storage.BadCursor("after")
	if len(pos) != 5 || pos["q"] != fingerprint(r) || pos["id"] == "" || pos["s"] == "" {
		return nil, bad
	}
	offset, err1 := strconv.Atoi(pos["o"])
	score, err2 := strconv.ParseFloat(pos["sc"], 64)
	if err1 != nil || err2 != nil || offset < 1 {
		return nil, bad
	}
	return &cursor{fp: pos["q"], snapshot: pos["s"], offset: offset, score: score, id: pos["id"]}, nil
}

// fingerprint names the search of r: its query and filters.
func fingerprint(r Request) string {
	sum := sha256.Sum256([]byte(r.Query + "\x00" + r.Category + "\x00" + r.AuthorID))
	return hex.EncodeToString(sum[:8])
}
