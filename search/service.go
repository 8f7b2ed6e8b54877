package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/blogql/blog/storage"
)

// ErrBuilding is a search while the server has no index yet: it is being
// built from the table.
var ErrBuilding = errors.New("the search index is being built, try again in a moment")

// Defaults of Options.
const (
	DefaultLanguage = "en"
	DefaultTimeout  = 2 * time.Second
	// gapWait is how long a position missing from the log may stay
	// missing before the index is rebuilt: a moment while a Query sees
	// part of an append (see package changefeed), for good once the log's
	// retention removed it.
	gapWait = 2 * time.Second
	// logPage is how many events one read of the log asks for.
	logPage = 100
	// inboxLimit bounds the events waiting to be applied; past it they are
	// dropped and read again from the log.
	inboxLimit = 10000
)

// Options configure a Service.
type Options struct {
	// Dir is the directory of the index; "" keeps it in memory (rebuilt
	// at every start).
	Dir string
	// Language names the analyzer of titles and bodies (Languages);
	// "" is DefaultLanguage. An index built in another is rebuilt.
	Language string
	// Table is the table's name, recorded in the index: an index of
	// another table is rebuilt.
	Table string
	// Timeout bounds one search (DefaultTimeout).
	Timeout time.Duration
	// MaxConcurrent bounds the searches running at once, each holding a
	// page of results in memory; others wait for their turn within their
	// request's time. Default: 4 times GOMAXPROCS.
	MaxConcurrent int
	// Logger gets the index's progress and failures; nil: slog.Default().
	Logger *slog.Logger
	// Changed, when set, is called after each change of what searches
	// find (events applied, an index built), once searches see it: the
	// server drops the answers it keeps of searches then, which the
	// events' own invalidation may have come before.
	Changed func()
	// MaxReplay, when positive, is how many events of the log an index
	// found in Dir may be behind its head when Run starts: one further
	// behind is built again from the table instead, which costs less for
	// a publication's few posts than reading every publication's events
	// since (Publications).
	MaxReplay int64
}

// Service is one server's search index of the blog's published posts,
// kept current from the change feed's events (Events) by Run, and
// searched by Search and Related.
type Service struct {
	store    *storage.Store
	opts     Options
	log      *slog.Logger
	analyzer analysis.Analyzer
	// mapping is the index's, and langs the languages of its posts
	// (languages.go), which a query is analyzed in.
	mapping mapping.IndexMapping
	langs   languageSet
	sem     chan struct{}
	snaps   *snapshots

	mu  sync.RWMutex
	cur *index // nil while the first build runs
	// built is closed once an index serves (cur is set).
	built     chan struct{}
	builtOnce sync.Once

	building atomic.Bool
	applied  atomic.Int64
	// changes counts the batches written to the serving index (and its
	// swaps): a first page's ranking is reused while it has not moved.
	changes atomic.Uint64

	inboxMu  sync.Mutex
	inbox    []storage.LoggedEvent
	overflow bool
	wake     chan struct{}
}

// New returns the Service of store's published posts with the index in
// opts.Dir: the newest complete one there, or none until Run built it.
// It fails on an unknown language or a directory it cannot read.
func New(store *storage.Store, opts Options) (*Service, error) {
	if opts.Language == "" {
		opts.Language = DefaultLanguage
	}
	if !slices.Contains(Languages, opts.Language) {
		return nil, fmt.Errorf("search language %q: must be one of %s", opts.Language, strings.Join(Languages, ", "))
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 4 * runtime.GOMAXPROCS(0)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Service{store: store, opts: opts, log: opts.Logger, sem: make(chan struct{}, opts.MaxConcurrent),
		snaps: newSnapshots(snapshotCount), wake: make(chan struct{}, 1), built: make(chan struct{})}
	m := newMapping(opts.Language)
	s.mapping = m
	s.analyzer = m.AnalyzerNamed(opts.Language)
	if s.analyzer == nil {
		return nil, fmt.Errorf("search language %q: no analyzer", opts.Language)
	}
	if opts.Dir != "" {
		idx, err := openNewest(opts.Dir, opts.Language, opts.Table)
		if err != nil {
			return nil, err
		}
		s.cur = idx
		if idx != nil {
			s.setBuilt()
			if err := idx.languages(&s.langs); err != nil {
				return nil, err
			}
			if pos, err := idx.position(); err == nil {
				s.applied.Store(pos)
			}
		}
	}
	return s, nil
}

// Events takes a batch of the event log for Run to apply: the change
// feed's Subscribe calls it on every server. It returns at once.
func (s *Service) Events(events []storage.LoggedEvent) {
	s.inboxMu.Lock()
	if len(s.inbox)+len(events) > inboxLimit {
		s.inbox, s.overflow = nil, true
	} else {
		s.inbox = append(s.inbox, events...)
	}
	s.inboxMu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Position returns the event log's position the index is current with,
// and whether an index is serving.
func (s *Service) Position() (int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.applied.Load(), s.cur != nil
}

// Dir returns the directory of the index, "" in memory.
func (s *Service) Dir() string { return s.opts.Dir }

// Building reports whether a build of the index is under way.
func (s *Service) Building() bool { return s.building.Load() }

// Size returns the bytes the serving index takes on disk, and how many
// posts it holds.
func (s *Service) Size() (int64, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur == nil {
		return 0, 0
	}
	n, _ := s.cur.b.DocCount()
	return s.cur.size(), n
}

// Close closes the index; call it after Run returned.
func (s *Service) Close() {
	s.snaps.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.close(false)
		s.cur = nil
	}
}

// Run keeps the index current until ctx ends: it builds it from the
// table when there is none, when it is of another table or language, or
// when the log no longer holds the events after its position (older
// than the log's retention); then it applies every event of the log
// after its position, in order, those Events hands it and, for a gap,
// those it reads from the log itself.
func (s *Service) Run(ctx context.Context) {
	wait := 100 * time.Millisecond
	r := &runner{behind: true, checkHead: true}
	for ctx.Err() == nil {
		err := s.step(ctx, r)
		if err == nil {
			wait = 100 * time.Millisecond
			continue
		}
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("search index: keeping up with the change feed failed; trying again", "error", err, "in", wait)
		if !sleep(ctx, wait) {
			return
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// runner is Run's state: whether the index may be behind the log (at
// start, after a build, after a gap in the events at hand), so the log
// must be read; whether the log's head is still to be compared with the
// position; and since when a position has been missing from the log.
type runner struct {
	behind, checkHead bool
	gapSince          time.Time
}

// step does the next piece of Run's work, waiting for events when there
// is none. A server that is caught up reads nothing from the table while
// no event comes: the change feed's tail reads the log for it.
func (s *Service) step(ctx context.Context, r *runner) error {
	s.mu.RLock()
	idx := s.cur
	s.mu.RUnlock()
	if idx == nil {
		r.behind = true
		return s.rebuild(ctx, "no index")
	}
	pos, err := idx.position()
	if err != nil {
		r.behind = true
		return s.rebuild(ctx, "no position")
	}
	s.applied.Store(pos)
	if r.checkHead {
		head, err := s.store.Feed().EventLogHead(ctx)
		if err != nil {
			return err
		}
		r.checkHead = false
		if head < pos {
			return s.rebuild(ctx, "the event log is behind the index (another table)")
		}
		if s.opts.MaxReplay > 0 && head-pos > s.opts.MaxReplay {
			return s.rebuild(ctx, fmt.Sprintf("the index is %d events behind the log", head-pos))
		}
	}
	// Events at hand that follow the position are applied as they are;
	// after a gap the log is read from the position.
	events, gap := s.take(pos)
	if gap {
		r.behind = true
	}
	if events == nil && !r.behind {
		s.idle(ctx)
		return nil
	}
	if events == nil {
		events, err = s.store.EventsAfter(ctx, pos, logPage)
		if err != nil {
			return err
		}
		if len(events) > 0 && events[0].Position != pos+1 {
			if r.gapSince.IsZero() {
				r.gapSince = time.Now()
			}
			if time.Since(r.gapSince) < gapWait {
				sleep(ctx, 100*time.Millisecond)
				return nil
			}
			r.gapSince = time.Time{}
			return s.rebuild(ctx, fmt.Sprintf("the event log no longer holds the events after position %d", pos))
		}
		if len(events) == 0 {
			r.behind = false
			return nil
		}
	}
	r.gapSince = time.Time{}
	n := 1
	for n < len(events) && events[n].Position == events[n-1].Position+1 {
		n++
	}
	return s.apply(ctx, idx, events[:n])
}

// take returns the inbox's events after pos when they follow it without
// a gap, and drops those at or before it; gap is set when the inbox
// overflowed or its next event is past pos+1, so the log must be read.
func (s *Service) take(pos int64) (events []storage.LoggedEvent, gap bool) {
	s.inboxMu.Lock()
	defer s.inboxMu.Unlock()
	if s.overflow {
		s.inbox, s.overflow = nil, false
		return nil, true
	}
	i := 0
	for i < len(s.inbox) && s.inbox[i].Position <= pos {
		i++
	}
	s.inbox = s.inbox[i:]
	if len(s.inbox) == 0 {
		return nil, false
	}
	if s.inbox[0].Position != pos+1 {
		return nil, true
	}
	events = s.inbox
	s.inbox = nil
	return events, false
}

// idle waits for events.
func (s *Service) idle(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.wake:
	}
}

// apply brings the index in line with the table for what events changed
// and records the last one's position with the documents, in one batch:
// each post they name is read again, indexed when it is public and
// removed when not (so applying an event twice, or late, does no harm),
// and every post of a renamed author or category is indexed again with
// the new name.
func (s *Service) apply(ctx context.Context, idx *index, events []storage.LoggedEvent) error {
	ids := map[string]bool{}
	names := renames{authors: map[string]string{}, categories: map[string]string{}}
	for _, e := range events {
		switch {
		case !s.store.Ours(e.Event):
			// Another publication's: this index is its store's.
		case strings.HasPrefix(string(e.Type), "post.") && e.Data.PostID != "":
			ids[e.Data.PostID] = true
		case e.Type == storage.EventAuthorUpdated && e.Data.AuthorID != "":
			a, err := s.store.GetAuthor(ctx, e.Data.AuthorID)
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			names.authors[a.ID] = a.Name
			if err := addIDs(ctx, idx, fieldAuthor, a.ID, ids); err != nil {
				return err
			}
		case e.Type == storage.EventCategoryUpdated && e.Data.Slug != "":
			c, err := s.store.GetCategory(ctx, e.Data.Slug)
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			names.categories[c.Slug] = c.Name
			if err := addIDs(ctx, idx, fieldCategories, c.Slug, ids); err != nil {
				return err
			}
		}
	}
	batch := idx.b.NewBatch()
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	slices.Sort(list)
	now := s.store.Now()
	for chunk := range slices.Chunk(list, 100) {
		posts, errs := s.store.GetPosts(ctx, chunk)
		for i, id := range chunk {
			switch {
			case errs[i] != nil && !errors.Is(errs[i], storage.ErrNotFound):
				return errs[i]
			case errs[i] == nil && posts[i].VisibleAt(now):
				if err := s.index(batch, id, documentOf(posts[i], names)); err != nil {
					return err
				}
			default:
				batch.Delete(id)
			}
		}
	}
	last := events[len(events)-1].Position
	batch.SetInternal([]byte(keyPosition), encodePosition(last))
	if err := idx.b.Batch(batch); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	s.changes.Add(1)
	s.applied.Store(last)
	s.tellChanged()
	return nil
}

// addIDs adds to ids those of the documents whose field holds value.
func addIDs(ctx context.Context, idx *index, field, value string, ids map[string]bool) error {
	found, err := idx.idsWith(ctx, field, value)
	for _, id := range found {
		ids[id] = true
	}
	return err
}

// rebuild builds a new index from the table's public posts (the whole
// blog's feed, a page of 100 at a time) at the log's head, and swaps it
// for the one serving, which answers searches until then. The events
// after the head are applied next: those the build saw already change
// nothing.
func (s *Service) rebuild(ctx context.Context, why string) error {
	s.building.Store(true)
	defer s.building.Store(false)
	start := time.Now()
	s.log.Info("search index: building from the table", "reason", why, "dir", s.opts.Dir)
	head, err := s.store.Feed().EventLogHead(ctx)
	if err != nil {
		return err
	}
	idx, err := createIndex(s.opts.Dir, s.opts.Language, s.opts.Table, time.Now().UnixNano())
	if err != nil {
		return err
	}
	n, err := s.fill(ctx, idx)
	if err == nil {
		b := idx.b.NewBatch()
		b.SetInternal([]byte(keyPosition), encodePosition(head))
		b.SetInternal([]byte(keyComplete), []byte{1})
		err = idx.b.Batch(b)
	}
	if err != nil {
		idx.close(true)
		return fmt.Errorf("build the search index: %w", err)
	}
	s.mu.Lock()
	old := s.cur
	s.cur = idx
	s.applied.Store(head)
	s.changes.Add(1)
	s.mu.Unlock()
	s.setBuilt()
	s.snaps.clear()
	s.tellChanged()
	if old != nil {
		old.close(true)
	}
	s.log.Info("search index: built", "posts", n, "position", head, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// fill indexes every public post of the table into idx, and returns how
// many.
func (s *Service) fill(ctx context.Context, idx *index) (int, error) {
	n := 0
	after := ""
	b := idx.b.NewBatch()
	for {
		page, err := s.store.LatestPosts(ctx, storage.PageArgs{Limit: storage.MaxPageSize, After: after}, storage.Period{})
		if err != nil {
			return n, err
		}
		// The feed lists summaries: the bodies are read with the posts'
		// body items, one BatchGetItem for every 33 posts.
		ids := make([]string, len(page.Items))
		for i, p := range page.Items {
			ids[i] = p.ID
		}
		full, errs := s.store.GetPosts(ctx, ids)
		for i, p := range page.Items {
			switch {
			case errs[i] == nil:
				p = full[i]
			case !errors.Is(errs[i], storage.ErrNotFound):
				return n, errs[i]
			}
			if err := s.index(b, p.ID, documentOf(p, renames{})); err != nil {
				return n, err
			}
		}
		n += len(page.Items)
		last := !page.HasNext || len(page.Cursors) == 0
		// Batches of about 1,000 posts: fewer, larger segments to merge.
		if b.Size() >= 1000 || last {
			if err := idx.b.Batch(b); err != nil {
				return n, err
			}
			b.Reset()
		}
		if last {
			return n, nil
		}
		after = page.Cursors[len(page.Cursors)-1]
	}
}

// Index indexes posts at once, as the change feed would: for tests and
// benchmarks that fill an index without a table.
func (s *Service) Index(posts []*storage.Post) error {
	s.mu.Lock()
	if s.cur == nil {
		idx, err := createIndex(s.opts.Dir, s.opts.Language, s.opts.Table, time.Now().UnixNano())
		if err != nil {
			s.mu.Unlock()
			return err
		}
		idx.b.SetInternal([]byte(keyComplete), []byte{1})
		idx.b.SetInternal([]byte(keyPosition), encodePosition(0))
		s.cur = idx
	}
	idx := s.cur
	s.mu.Unlock()
	s.setBuilt()
	for chunk := range slices.Chunk(posts, 1000) {
		b := idx.b.NewBatch()
		for _, p := range chunk {
			if err := s.index(b, p.ID, documentOf(p, renames{})); err != nil {
				return err
			}
		}
		if err := idx.b.Batch(b); err != nil {
			return err
		}
		s.changes.Add(1)
		s.tellChanged()
	}
	return nil
}

// setBuilt marks that an index serves.
func (s *Service) setBuilt() { s.builtOnce.Do(func() { close(s.built) }) }

// tellChanged calls Changed, if set.
func (s *Service) tellChanged() {
	if s.opts.Changed != nil {
		s.opts.Changed()
	}
}

// sleep waits d, and returns false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// reading runs read on the serving index, which stays open until read
// returns, or returns ErrBuilding when there is none yet.
func (s *Service) reading(read func(*index) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur == nil {
		return ErrBuilding
	}
	return read(s.cur)
}

// index adds d to b as the document id, noting its language.
func (s *Service) index(b *bleve.Batch, id string, d document) error {
	s.langs.add(d.Lang)
	return b.Index(id, d)
}
