package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// The workers that follow every publication's content: "webhooks",
// "counts", "pages", "newsletter" and "reply-notifications" are each one
// worker across the fleet (one lease each, as before publications), and
// each serves every publication of the table. A batch of the log's
// events is cut into runs of one publication's events (byPublication),
// and each run goes to that publication's instance of the worker's state
// (a webhooks.Service, a storage.CountSync…), made on its Store
// (storage.Store.In) when first needed and kept in a pubSet, which drops
// the instances that owe nothing once more than maxKeptPublications are
// kept: 10,000 publications never make 10,000 of each. A worker's Hold
// is the least of its instances', and its Tick ticks those it keeps,
// which are the ones that owe work. The webhooks' retries are per
// publication in the table (the outbox's GSI1 partition of each), so the
// worker keeps when each publication's next delivery is due (retries)
// rather than querying every publication's outbox every second.

// maxKeptPublications bounds how many publications' instances a worker
// keeps while they owe nothing; those that owe work are kept whatever
// their number, which the events bound.
const maxKeptPublications = 64

// letterAge is how long the newsletter of a publication is used before
// it is made again, with its publication's title and hosts read again.
const letterAge = time.Minute

// errGonePublication means the events name a publication the directory
// no longer has: they are passed over, never retried.
var errGonePublication = errors.New("publication not in the directory")

// publicationWorkers are the workers of every publication on the server
// that holds their leases.
type publicationWorkers struct {
	log *slog.Logger
	// defaultHooks is the default publication's webhooks service, the
	// one its GraphQL endpoint manages the webhooks with.
	defaultHooks *webhooks.Service
	hooks        *pubSet[*webhooks.Service]
	counts       *pubSet[*storage.CountSync]
	pages        *pubSet[*storage.PageSync]
	// letters are the newsletters, which carry no state: kept for
	// letterAge, so a publication's new title or host shows.
	letters *pubSet[*newsletter.Service]
	retries *retries
}

// newPublicationWorkers returns the workers of every publication of
// store's table, store the default publication's; letters is the default
// publication's newsletter, whose key, mail worker and logger every
// publication's shares.
func newPublicationWorkers(store *storage.Store, cfg *config, letters *newsletter.Service, logger *slog.Logger) *publicationWorkers {
	w := &publicationWorkers{log: logger}
	w.retries = &retries{store: store, next: map[string]time.Time{}, log: logger}
	w.defaultHooks = w.newHooks(cfg, store)
	w.hooks = newPubSet(store, func(_ context.Context, st *storage.Store) (*webhooks.Service, error) {
		if st == store {
			return w.defaultHooks, nil
		}
		return w.newHooks(cfg, st), nil
	}, (*webhooks.Service).Hold)
	w.retries.hooks = w.hooks
	defaultCounts, defaultPages := store.NewCountSync(), store.NewPageSync()
	w.counts = newPubSet(store, func(_ context.Context, st *storage.Store) (*storage.CountSync, error) {
		if st == store {
			return defaultCounts, nil
		}
		return st.NewCountSync(), nil
	}, (*storage.CountSync).Hold)
	w.pages = newPubSet(store, func(_ context.Context, st *storage.Store) (*storage.PageSync, error) {
		if st == store {
			return defaultPages, nil
		}
		return st.NewPageSync(), nil
	}, (*storage.PageSync).Hold)
	w.letters = newPubSet(store, func(ctx context.Context, st *storage.Store) (*newsletter.Service, error) {
		if st == store {
			return letters, nil
		}
		return publicationLetters(ctx, cfg, letters, st)
	}, nil)
	w.letters.maxAge = letterAge
	return w
}

// newHooks returns the webhooks service of the publication of st, which
// tells the retries when its pending deliveries are due.
func (w *publicationWorkers) newHooks(cfg *config, st *storage.Store) *webhooks.Service {
	opts := cfg.webhookOptions(w.log)
	pub := st.Publication()
	opts.Pending = func(next time.Time) { w.retries.note(pub, next) }
	if pub != storage.DefaultPublication {
		// The default publication cannot be suspended.
		opts.Paused = st.Suspended
	}
	return webhooks.New(st, opts)
}

// handleHooks hands events of one publication to its webhooks service s,
// then, when they hold a publication.updated (a suspended publication
// made active again among them), looks when its next delivery is due, so
// the deliveries that waited are made (retries.look: one Query).
func (w *publicationWorkers) handleHooks(s *webhooks.Service, ctx context.Context, events []storage.LoggedEvent) error {
	if err := s.HandleEvents(ctx, events); err != nil {
		return err
	}
	for _, e := range events {
		if e.Type == storage.EventPublicationUpdated {
			return w.retries.look(ctx, cmp.Or(e.Publication, storage.DefaultPublication))
		}
	}
	return nil
}

// publicationLetters returns the newsletter of the publication of st, on
// letters' key and mail worker, as its hosts serve it
// (publicationNewsletter): it reads the directory item (1 GetItem) and
// returns errGonePublication when there is none.
func publicationLetters(ctx context.Context, cfg *config, letters *newsletter.Service, st *storage.Store) (*newsletter.Service, error) {
	pub, err := st.GetPublication(ctx, st.Publication())
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("newsletter of %q: %w", st.Publication(), errGonePublication)
	}
	if err != nil {
		return nil, fmt.Errorf("newsletter of %q: %w", st.Publication(), err)
	}
	return publicationNewsletter(cfg, letters, pub, st), nil
}

// workers returns the change feed's workers of every publication, by
// the names and leases they had when they followed one.
func (w *publicationWorkers) workers() []changefeed.Worker {
	return []changefeed.Worker{
		// Deliveries: what the log brings, and every second the retries
		// of the publications that have some due. The checkpoint stays
		// before the events whose first attempts are still queued.
		// A suspended publication's deliveries wait in the outbox
		// (webhooks.Options.Paused) until its publication.updated.
		{Name: "webhooks", Events: byPublication(w, w.hooks, w.handleHooks), Tick: w.retries.tick, Every: time.Second, Hold: w.hooks.hold},
		// Comment counts onto the posts' summaries (storage/countsync.go).
		{Name: "counts", Events: byPublication(w, w.counts, (*storage.CountSync).Events), Tick: w.counts.tick((*storage.CountSync).Tick), Every: storage.CountSyncTick, Hold: w.counts.hold},
		// The page indexes of numbered pages (storage/pagesync.go).
		{Name: "pages", Events: byPublication(w, w.pages, (*storage.PageSync).Events), Tick: w.pages.tick((*storage.PageSync).Tick), Every: storage.CountSyncTick, Hold: w.pages.hold},
		// A post first published, to the members who get the newsletter.
		{Name: "newsletter", Events: byPublication(w, w.letters, (*newsletter.Service).HandleEvents)},
		// A published reply, to the writer of the comment it answers.
		{Name: "reply-notifications", Events: byPublication(w, w.letters, (*newsletter.Service).HandleReplyEvents)},
	}
}

// byPublication returns a worker's Events that hands each publication's
// events of a batch, in the log's order, to handle with the publication's
// instance in set. An event without a publication (logged before the
// table had publications) is the default publication's. It returns the
// first error, and the feed gives the batch again: every handler is
// idempotent by event id. The events of a publication the directory no
// longer has, or of an id that cannot be one, are logged and passed over.
func byPublication[T any](w *publicationWorkers, set *pubSet[T], handle func(T, context.Context, []storage.LoggedEvent) error) func(context.Context, []storage.LoggedEvent) error {
	return func(ctx context.Context, events []storage.LoggedEvent) error {
		var order []string
		of := map[string][]storage.LoggedEvent{}
		for _, e := range events {
			pub := cmp.Or(e.Publication, storage.DefaultPublication)
			if _, ok := of[pub]; !ok {
				order = append(order, pub)
			}
			of[pub] = append(of[pub], e)
		}
		for _, pub := range order {
			err := set.use(ctx, pub, func(v T) error { return handle(v, ctx, of[pub]) })
			switch {
			case errors.Is(err, errGonePublication) || errors.Is(err, errBadPublication):
				w.log.WarnContext(ctx, "change feed: events of no publication passed over", "publication", pub, "events", len(of[pub]), "err", err)
			case err != nil:
				return err
			}
		}
		return nil
	}
}

// errBadPublication means an event names a publication id that no
// publication can have.
var errBadPublication = errors.New("not a publication id")

// pubSet holds a worker's instance of each publication it serves: made
// on first use, kept while it owes work (hold), and dropped, least
// recently used first, when more than maxKeptPublications are kept. An
// instance in use is never dropped, so what its use leaves owed is in
// the set for hold and tick. It is safe for concurrent use.
type pubSet[T any] struct {
	store *storage.Store // the default publication's
	build func(context.Context, *storage.Store) (T, error)
	// owes is the instance's Hold, nil for one that owes nothing.
	owes func(T, int64) int64
	// maxAge, when set, is how long an instance is used before it is
	// made again.
	maxAge time.Duration

	mu sync.Mutex
	of map[string]*pubEntry[T]
}

type pubEntry[T any] struct {
	v          T
	made, used time.Time
	users      int
}

func newPubSet[T any](store *storage.Store, build func(context.Context, *storage.Store) (T, error), owes func(T, int64) int64) *pubSet[T] {
	return &pubSet[T]{store: store, build: build, owes: owes, of: map[string]*pubEntry[T]{}}
}

// use calls fn with the instance of the publication pub, made when the
// set has none (errBadPublication for an id no publication has, or
// make's error).
func (p *pubSet[T]) use(ctx context.Context, pub string, fn func(T) error) error {
	e, err := p.acquire(ctx, pub)
	if err != nil {
		return err
	}
	defer p.release(e)
	return fn(e.v)
}

func (p *pubSet[T]) acquire(ctx context.Context, pub string) (*pubEntry[T], error) {
	now := time.Now()
	p.mu.Lock()
	if e := p.of[pub]; e != nil && (p.maxAge == 0 || now.Sub(e.made) < p.maxAge) {
		e.users++
		p.mu.Unlock()
		return e, nil
	}
	p.mu.Unlock()
	st, err := p.store.In(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadPublication, err)
	}
	v, err := p.build(ctx, st)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.of[pub]
	// Another use made one meanwhile, or the one kept owes work: it is
	// the publication's (a stale one that owes work is kept until done).
	if e == nil || (e.users == 0 && p.owesNothing(e.v)) {
		e = &pubEntry[T]{v: v, made: now}
		p.of[pub] = e
	}
	e.users++
	return e, nil
}

func (p *pubSet[T]) release(e *pubEntry[T]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.users--
	e.used = time.Now()
	p.trim()
}

// owesNothing reports whether v owes no work, and may be dropped.
func (p *pubSet[T]) owesNothing(v T) bool {
	return p.owes == nil || p.owes(v, math.MaxInt64) == math.MaxInt64
}

// trim drops instances that are not in use and owe nothing, least
// recently used first, until at most maxKeptPublications are kept. It
// is called with p.mu held.
func (p *pubSet[T]) trim() {
	if len(p.of) <= maxKeptPublications {
		return
	}
	var idle []string
	for pub, e := range p.of {
		if e.users == 0 && p.owesNothing(e.v) {
			idle = append(idle, pub)
		}
	}
	slices.SortFunc(idle, func(a, b string) int { return p.of[a].used.Compare(p.of[b].used) })
	for _, pub := range idle[:max(0, min(len(idle), len(p.of)-maxKeptPublications))] {
		delete(p.of, pub)
	}
}

// hold is the worker's Hold: the least of its instances'.
func (p *pubSet[T]) hold(last int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.owes == nil {
		return last
	}
	for _, e := range p.of {
		last = min(last, p.owes(e.v, last))
	}
	return last
}

// tick returns the worker's Tick: tick of every instance kept, which
// the ones that owe work are. It returns the first error; the others
// are ticked still.
func (p *pubSet[T]) tick(tick func(T, context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		p.mu.Lock()
		entries := make([]*pubEntry[T], 0, len(p.of))
		for _, e := range p.of {
			e.users++
			entries = append(entries, e)
		}
		p.mu.Unlock()
		var first error
		for _, e := range entries {
			first = cmp.Or(first, tick(e.v, ctx))
			p.release(e)
		}
		return first
	}
}

// retries knows when each publication's webhook deliveries are next due,
// so the webhooks worker's tick claims the due deliveries of those
// publications only: a publication whose endpoints answer costs nothing
// a second. What it knows comes from the publications' webhooks services
// (webhooks.Options.Pending: every pending delivery they write), from one
// storage.Store.NextOutbox Query of a publication after its due
// deliveries were claimed, and, when the worker's lease is taken (a
// start, a lease moved from another server), from a scan of the
// publications' directory with one NextOutbox Query each: what another
// server wrote before it stopped.
type retries struct {
	store *storage.Store
	hooks *pubSet[*webhooks.Service]
	log   *slog.Logger

	mu   sync.Mutex
	next map[string]time.Time
	// lease is the Done channel of the lease's context the directory was
	// scanned under: a tick under another is under a new lease.
	lease <-chan struct{}
}

// scanners bounds the NextOutbox Queries of a scan at once.
const scanners = 8

// note records that a delivery of the publication pub is due at at.
func (r *retries) note(pub string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.next[pub]; !ok || at.Before(cur) {
		r.next[pub] = at
	}
}

// tick is the webhooks worker's Tick: on a new lease it scans the
// directory; then, for each publication with a delivery due, it claims
// the due ones (webhooks.Service.RetryDue) and looks when the next is
// due. A publication whose look fails is looked at again a second later;
// a suspended one's, whose deliveries wait, at its next publication.updated.
func (r *retries) tick(ctx context.Context) error {
	r.mu.Lock()
	scanned := r.lease == ctx.Done()
	r.mu.Unlock()
	if !scanned {
		if err := r.scan(ctx); err != nil {
			return err
		}
		r.mu.Lock()
		r.lease = ctx.Done()
		r.mu.Unlock()
	}
	now := time.Now()
	var due []string
	r.mu.Lock()
	for pub, at := range r.next {
		if !at.After(now) {
			due = append(due, pub)
			delete(r.next, pub)
		}
	}
	r.mu.Unlock()
	slices.Sort(due)
	var first error
	for _, pub := range due {
		err := r.hooks.use(ctx, pub, func(s *webhooks.Service) error { return s.RetryDue(ctx) })
		if err == nil {
			err = r.look(ctx, pub)
		}
		if errors.Is(err, webhooks.ErrPaused) {
			// Suspended: looked at again at its publication.updated
			// (handleHooks), not every second.
			continue
		}
		if err != nil && !errors.Is(err, errBadPublication) {
			r.note(pub, now.Add(time.Second))
			first = cmp.Or(first, fmt.Errorf("webhook retries of publication %q: %w", pub, err))
		}
	}
	return first
}

// look notes when the publication pub's next pending delivery is due.
func (r *retries) look(ctx context.Context, pub string) error {
	st, err := r.store.In(pub)
	if err != nil {
		return fmt.Errorf("%w: %w", errBadPublication, err)
	}
	at, ok, err := st.NextOutbox(ctx)
	if ok {
		r.note(pub, at)
	}
	return err
}

// scan looks at every publication of the directory: a Query of the
// directory a hundred publications, and one NextOutbox each, a few at
// once.
func (r *retries) scan(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(scanners)
	page := storage.PageArgs{Limit: 100}
	n := 0
	for {
		pubs, err := r.store.ListPublications(ctx, page)
		if err != nil {
			_ = g.Wait()
			return fmt.Errorf("webhook retries: directory: %w", err)
		}
		for _, p := range pubs.Items {
			g.Go(func() error { return r.look(gctx, p.ID) })
		}
		n += len(pubs.Items)
		if !pubs.HasNext || len(pubs.Cursors) == 0 {
			break
		}
		page.After = pubs.Cursors[len(pubs.Cursors)-1]
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("webhook retries: %w", err)
	}
	r.log.InfoContext(ctx, "webhook retries: publications scanned", "publications", n)
	return nil
}
