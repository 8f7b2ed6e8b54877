package search

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/blogql/blog/storage"
)

// The search of a platform's publications other than the default: each
// has an index of its own (a Service on its Store, storage.Store.In),
// opened when the publication is first searched or gets an event, and
// closed again, least recently used first, once more than MaxOpen are
// open, so a server of a thousand publications holds the indexes of the
// few being searched and written, not a thousand. An index in a
// directory is kept there when it closes and opened again from it,
// current with the log's events since or, further behind than
// DefaultMaxReplay, built again from the table; one in memory is built
// again from the table when it opens.

// Defaults of PublicationsOptions.
const (
	// DefaultMaxOpen is how many publications' indexes a server keeps
	// open at once.
	DefaultMaxOpen = 100
	// DefaultMaxReplay is how far behind the log's head an index found
	// on disk may be when it opens (Options.MaxReplay): ten reads of the
	// log, about what building a publication of a few hundred posts
	// again reads.
	DefaultMaxReplay = 10 * logPage
	// publicationsDir is the directory of the publications' indexes in
	// Options.Dir, one directory each, named by the publication's id.
	publicationsDir = "publications"
)

// PublicationsOptions configure Publications.
type PublicationsOptions struct {
	// Options are those of every publication's Service. Dir, when set,
	// holds the publications' directories (Dir/publications/<id>), beside
	// the default publication's index; MaxReplay is DefaultMaxReplay
	// when zero.
	Options
	// MaxOpen bounds the indexes open at once (DefaultMaxOpen); an index
	// being searched is closed once its searches end.
	MaxOpen int
}

// Publications are the search indexes of the publications other than
// store's (the default one, whose Service is the server's own): Events
// hands each its publication's events, For searches one. Run it, and
// the indexes open, until the server stops.
type Publications struct {
	store *storage.Store
	opts  PublicationsOptions

	mu      sync.Mutex
	ctx     context.Context // Run's; nil before it starts
	open    map[string]*pubIndex
	closing map[string]chan struct{}
	clock   uint64
}

// pubIndex is one publication's open index: its Service, running until
// stop is called.
type pubIndex struct {
	id string
	// ready is closed once svc, or err, is set.
	ready chan struct{}
	svc   *Service
	err   error
	stop  context.CancelFunc
	// closed is closed once the Service stopped and closed.
	closed chan struct{}
	// used (the pool's clock when last used) and users are guarded by
	// the pool's lock; an index with users is not closed.
	used  uint64
	users int
	// pending holds the events handed to it before svc is set.
	pendingMu sync.Mutex
	pending   []storage.LoggedEvent
}

// NewPublications returns the indexes of the publications other than
// store's. It fails as New does, on an unknown language.
func NewPublications(store *storage.Store, opts PublicationsOptions) (*Publications, error) {
	if opts.MaxOpen <= 0 {
		opts.MaxOpen = DefaultMaxOpen
	}
	if opts.MaxReplay <= 0 {
		opts.MaxReplay = DefaultMaxReplay
	}
	if opts.Language == "" {
		opts.Language = DefaultLanguage
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// The language is checked now, not when a publication is searched.
	if !slices.Contains(Languages, opts.Language) {
		return nil, fmt.Errorf("search language %q: must be one of %s", opts.Language, strings.Join(Languages, ", "))
	}
	return &Publications{store: store, opts: opts, open: map[string]*pubIndex{}, closing: map[string]chan struct{}{}}, nil
}

// Run lets indexes open until ctx ends, then closes them all and
// returns.
func (p *Publications) Run(ctx context.Context) {
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	var waits []chan struct{}
	for id, x := range p.open {
		x.stop()
		waits = append(waits, x.closed)
		delete(p.open, id)
	}
	for _, c := range p.closing {
		waits = append(waits, c)
	}
	p.mu.Unlock()
	for _, c := range waits {
		<-c
	}
}

// Open returns how many indexes are open.
func (p *Publications) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.open)
}

// Events hands each publication's events in events to its index,
// opening it when it is not open: the change feed's Subscribe calls it
// on every server. The default publication's are its Service's. It
// returns at once.
func (p *Publications) Events(events []storage.LoggedEvent) {
	byPub := map[string][]storage.LoggedEvent{}
	var order []string
	for _, e := range events {
		if p.store.Ours(e.Event) {
			continue
		}
		if _, ok := byPub[e.Publication]; !ok {
			order = append(order, e.Publication)
		}
		byPub[e.Publication] = append(byPub[e.Publication], e)
	}
	for _, id := range order {
		x := p.acquire(id)
		if x == nil {
			return
		}
		x.events(byPub[id])
		p.release(x)
	}
}

// events hands events to the index's Service, or keeps them for it
// until it is set.
func (x *pubIndex) events(events []storage.LoggedEvent) {
	x.pendingMu.Lock()
	defer x.pendingMu.Unlock()
	if x.svc == nil {
		x.pending = append(x.pending, events...)
		if len(x.pending) > inboxLimit {
			// The Service reads them from the log.
			x.pending = nil
		}
		return
	}
	x.svc.Events(events)
}

// For returns the search of the publication id, which opens its index
// when it is searched.
func (p *Publications) For(id string) *Publication { return &Publication{pool: p, id: id} }

// Publication is the search of one publication (Publications.For): a
// Service's Search and Related on its index, opened when needed. A
// search of an index just opened waits for its build, within the
// search's time.
type Publication struct {
	pool *Publications
	id   string
}

// Search is Service.Search on the publication's index.
func (s *Publication) Search(ctx context.Context, r Request) (*Results, error) {
	var res *Results
	err := s.with(ctx, func(svc *Service) error {
		var err error
		res, err = svc.Search(ctx, r)
		return err
	})
	return res, err
}

// Related is Service.Related on the publication's index.
func (s *Publication) Related(ctx context.Context, id string, first int) ([]string, error) {
	var ids []string
	err := s.with(ctx, func(svc *Service) error {
		var err error
		ids, err = svc.Related(ctx, id, first)
		return err
	})
	return ids, err
}

// with runs fn on the publication's Service once an index serves, and
// keeps it open until fn returns. It returns ErrBuilding when none
// serves within the search's time, or the server is stopping.
func (s *Publication) with(ctx context.Context, fn func(*Service) error) error {
	x := s.pool.acquire(s.id)
	if x == nil {
		return ErrBuilding
	}
	defer s.pool.release(x)
	ctx, cancel := context.WithTimeout(ctx, s.pool.opts.Timeout)
	defer cancel()
	select {
	case <-x.ready:
	case <-ctx.Done():
		return ErrBuilding
	}
	if x.err != nil {
		return x.err
	}
	select {
	case <-x.svc.built:
	case <-ctx.Done():
		return ErrBuilding
	}
	return fn(x.svc)
}

// acquire returns the open index of the publication id, opening it when
// it is not, and marks it used until release; nil before Run started or
// after it ended. Opening one past MaxOpen closes the least recently
// used of those not in use.
func (p *Publications) acquire(id string) *pubIndex {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx == nil || p.ctx.Err() != nil {
		return nil
	}
	p.clock++
	x, ok := p.open[id]
	if !ok {
		ctx, stop := context.WithCancel(p.ctx)
		x = &pubIndex{id: id, ready: make(chan struct{}), stop: stop, closed: make(chan struct{})}
		p.open[id] = x
		go p.run(ctx, x, p.closing[id])
	}
	x.used = p.clock
	x.users++
	p.evictLocked()
	return x
}

// release ends a use of x.
func (p *Publications) release(x *pubIndex) {
	p.mu.Lock()
	defer p.mu.Unlock()
	x.users--
	p.evictLocked()
}

// evictLocked closes the least recently used indexes not in use while
// more than MaxOpen are open.
func (p *Publications) evictLocked() {
	for len(p.open) > p.opts.MaxOpen {
		var oldest *pubIndex
		for _, x := range p.open {
			if x.users == 0 && (oldest == nil || x.used < oldest.used) {
				oldest = x
			}
		}
		if oldest == nil {
			return
		}
		delete(p.open, oldest.id)
		p.closing[oldest.id] = oldest.closed
		oldest.stop()
	}
}

// run opens x's Service once the index of the same publication closed
// before (after) has, keeps it current until ctx ends, and closes it.
func (p *Publications) run(ctx context.Context, x *pubIndex, after <-chan struct{}) {
	defer func() {
		p.mu.Lock()
		if p.closing[x.id] == x.closed {
			delete(p.closing, x.id)
		}
		p.mu.Unlock()
		close(x.closed)
	}()
	if after != nil {
		<-after
	}
	svc, err := p.open1(x.id)
	x.pendingMu.Lock()
	x.svc, x.err = svc, err
	pending := x.pending
	x.pending = nil
	x.pendingMu.Unlock()
	close(x.ready)
	if err != nil {
		p.opts.Logger.Error("search index: open a publication's", "publication", x.id, "error", err)
		return
	}
	svc.Events(pending)
	svc.Run(ctx)
	svc.Close()
}

// open1 returns the Service of the publication id, with the index its
// directory holds.
func (p *Publications) open1(id string) (*Service, error) {
	store, err := p.store.In(id)
	if err != nil {
		return nil, err
	}
	opts := p.opts.Options
	if opts.Dir != "" {
		opts.Dir = filepath.Join(opts.Dir, publicationsDir, dirName(id))
	}
	svc, err := New(store, opts)
	if err != nil {
		return nil, fmt.Errorf("search index of publication %q: %w", id, err)
	}
	return svc, nil
}

// dirName returns the name of the directory of the publication id: the
// id when it is letters, digits, "-" and "_", else "x" and its bytes in
// hexadecimal, so no id names a path outside the directory.
func dirName(id string) string {
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return "x" + hex.EncodeToString([]byte(id))
		}
	}
	return id
}
