package views

import (
	"cmp"
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/blogql/blog/storage"
)

// The defaults of Options.
const (
	DefaultFlushEvery    = time.Second
	DefaultPopularEvery  = 10 * time.Second
	DefaultMaxVisitors   = 1 << 20
	DefaultMaxPerClient  = 1000
	DefaultPostCheckTTL  = time.Minute
	DefaultMaxPostChecks = 10000
)

// Outcome is what became of a hit: Counted, or why it was not.
type Outcome string

// The outcomes of a hit, as the metrics name them.
const (
	Counted   Outcome = "counted"
	Duplicate Outcome = "duplicate" // the visitor was counted on the post today
	Bot       Outcome = "bot"       // a crawler's or headless browser's user agent
	Hidden    Outcome = "hidden"    // the post is missing, a draft or scheduled
	Flood     Outcome = "flood"     // the client reached MaxPerClient today
	Invalid   Outcome = "invalid"   // no post id
	Failed    Outcome = "failed"    // the post could not be checked
)

// Options configure a Counter. Zero values mean the defaults.
type Options struct {
	// FlushEvery is how often the counts are added to the table: each
	// post gets one flush (one write) at most that often.
	FlushEvery time.Duration
	// PopularEvery is how often at most a post's entries in the popular
	// lists are written (three writes), from the counts of its last flush.
	PopularEvery time.Duration
	// MaxVisitors bounds the (visitor, post) pairs remembered, and the
	// clients counted: past it the oldest half is forgotten (memory.go),
	// so a visitor first seen more than MaxVisitors/2 visitors ago may be
	// counted again that day.
	MaxVisitors int
	// MaxPerClient bounds the views counted from one IP address a day
	// (a flood of beacons for many posts, or with ever new user agents).
	MaxPerClient int
	// PostCheckTTL is how long whether a post may be counted is
	// remembered; MaxPostChecks how many posts are.
	PostCheckTTL  time.Duration
	MaxPostChecks int
	// ClientIPHeader names the header that carries the client's address
	// when the server is behind a proxy (X-Forwarded-For, whose last
	// address counts, or one such as Fly-Client-IP); empty: the peer
	// address. Behind a proxy without it, every reader has the proxy's
	// address and MaxPerClient bounds them all together.
	ClientIPHeader string
	// Observe, when set, is called with each hit's outcome, and with
	// "flush_writes" and "flush_errors" and their number after a flush.
	Observe func(event string, n int)
	// Logger receives flush errors; nil means slog.Default().
	Logger *slog.Logger
}

// Counter counts views in memory and flushes them to the store. It is
// safe for concurrent use. The counters In returns for other
// publications share its memory, its bounds and its flushes: each view
// is written into the publication it was counted on.
type Counter struct {
	*tally
	// store is the publication's the views are counted on.
	store *storage.Store
}

// tally is what the counters of every publication share.
type tally struct {
	// root is the store of New, which In of a publication's id gives
	// that publication's.
	root *storage.Store
	opts Options
	now  func() time.Time

	mu sync.Mutex
	// day is the UTC day whose seed, visitors and clients these are.
	day      string
	seed     maphash.Seed
	visitors *memory
	clients  *memory
	pending  map[postKey]*pendingViews
	// popularAt is when each post's popular entries were last written.
	popularAt map[postKey]time.Time

	checks     sync.Map // postKey → postCheck
	nChecks    int
	checkMu    sync.Mutex
	checkGroup singleflight.Group
	flushMu    sync.Mutex
}

// postKey names a post of a publication.
type postKey struct{ pub, post string }

type pendingViews struct {
	views int64
	refs  map[string]int64
}

type postCheck struct {
	visible bool
	at      time.Time
}

// maxReferrersPending bounds the referrer domains held for one post
// between flushes; views from others count without one.
const maxReferrersPending = 50

// New returns a Counter over store whose clock is store's.
func New(store *storage.Store, opts Options) *Counter {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = DefaultFlushEvery
	}
	if opts.PopularEvery <= 0 {
		opts.PopularEvery = DefaultPopularEvery
	}
	if opts.MaxVisitors <= 0 {
		opts.MaxVisitors = DefaultMaxVisitors
	}
	if opts.MaxPerClient <= 0 {
		opts.MaxPerClient = DefaultMaxPerClient
	}
	if opts.PostCheckTTL <= 0 {
		opts.PostCheckTTL = DefaultPostCheckTTL
	}
	if opts.MaxPostChecks <= 0 {
		opts.MaxPostChecks = DefaultMaxPostChecks
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Observe == nil {
		opts.Observe = func(string, int) {}
	}
	return &Counter{store: store, tally: &tally{root: store, opts: opts, now: store.Now,
		pending: map[postKey]*pendingViews{}, popularAt: map[postKey]time.Time{}}}
}

// In returns the counter of the views of the publication of store (a
// Store of New's store's table, storage.Store.In): it shares c's memory
// of visitors and clients, its bounds and its flushes (Run), which write
// its views into store's publication.
func (c *Counter) In(store *storage.Store) *Counter {
	return &Counter{tally: c.tally, store: store}
}

// Hit is one view of a post as the server saw it.
type Hit struct {
	PostID string
	// IP and UserAgent are the client's; they are hashed with the day's
	// seed and never kept.
	IP, UserAgent string
	// Referrer is the URL the reader came from, if any.
	Referrer string
}

// Record counts h unless it is a bot's, a visitor's already counted on
// the post today, a flood's, or for a post that is missing or hidden,
// and returns what became of it.
func (c *Counter) Record(ctx context.Context, h Hit) Outcome {
	out := c.record(ctx, h)
	c.opts.Observe(string(out), 1)
	return out
}

func (c *Counter) record(ctx context.Context, h Hit) Outcome {
	if !storage.ValidID(h.PostID) {
		return Invalid
	}
	if IsBot(h.UserAgent) {
		return Bot
	}
	now := c.now()
	c.mu.Lock()
	c.turnDay(now)
	key := postKey{c.store.Publication(), h.PostID}
	visitor := c.hash(h.IP, h.UserAgent, key.pub, h.PostID)
	client := c.hash(h.IP, "", "", "")
	out := c.admits(visitor, client)
	c.mu.Unlock()
	if out != Counted {
		return out
	}
	switch visible, err := c.visible(ctx, key, now); {
	case err != nil:
		return Failed
	case !visible:
		return Hidden
	}
	domain := ReferrerDomain(h.Referrer)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turnDay(now)
	if out := c.admits(visitor, client); out != Counted {
		return out
	}
	c.visitors.add(visitor)
	c.clients.add(client)
	p := c.pending[key]
	if p == nil {
		p = &pendingViews{refs: map[string]int64{}}
		c.pending[key] = p
	}
	p.views++
	if _, ok := p.refs[domain]; domain != "" && (ok || len(p.refs) < maxReferrersPending) {
		p.refs[domain]++
	}
	return Counted
}

// admits returns Counted when the visitor may be counted, else why not.
// c.mu is held.
func (c *tally) admits(visitor, client uint64) Outcome {
	switch {
	case c.visitors.get(visitor) > 0:
		return Duplicate
	case c.clients.get(client) >= c.opts.MaxPerClient:
		return Flood
	}
	return Counted
}

// turnDay starts a new day when now is in another than c.day's: a new
// seed, and the visitors and clients of the day before forgotten. c.mu is
// held.
func (c *tally) turnDay(now time.Time) {
	day := now.UTC().Format(time.DateOnly)
	if day == c.day {
		return
	}
	c.day, c.seed = day, maphash.MakeSeed()
	c.visitors, c.clients = newMemory(c.opts.MaxVisitors), newMemory(c.opts.MaxVisitors)
	c.popularAt = map[postKey]time.Time{}
}

// hash returns the day's hash of the parts. c.mu is held.
func (c *tally) hash(parts ...string) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, p := range parts {
		h.WriteString(p)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// visible reports whether views of the post key names count: it is
// published in c's publication and visible at now. The answer is
// remembered PostCheckTTL, and concurrent checks of one post make one
// read.
func (c *Counter) visible(ctx context.Context, key postKey, now time.Time) (bool, error) {
	if v, ok := c.checks.Load(key); ok && now.Sub(v.(postCheck).at) < c.opts.PostCheckTTL {
		return v.(postCheck).visible, nil
	}
	v, err, _ := c.checkGroup.Do(key.pub+"\x00"+key.post, func() (any, error) {
		p, err := c.store.GetPostWithoutBody(context.WithoutCancel(ctx), key.post)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			p = nil
		case err != nil:
			return false, err
		}
		visible := p != nil && p.VisibleAt(now)
		c.checkMu.Lock()
		if c.nChecks >= c.opts.MaxPostChecks {
			c.checks.Clear()
			c.nChecks = 0
		}
		if _, loaded := c.checks.Swap(key, postCheck{visible: visible, at: now}); !loaded {
			c.nChecks++
		}
		c.checkMu.Unlock()
		return visible, nil
	})
	if err != nil {
		return false, err
	}
	return v.(bool), nil
}

// Flush adds what was counted since the last flush, on every
// publication's counter (In), to the table, each view into its
// publication: one write a post (storage.FlushViews), one more the first time it flushes
// the post on a later day (storage.MoveViewDays), and its popular entries when they
// were last written PopularEvery ago or more. What fails to be written is
// counted again at the next flush. It returns the first error.
func (c *Counter) Flush(ctx context.Context) error {
	return c.flush(ctx, false)
}

// FlushAll flushes as Flush does and writes the popular entries of every
// post flushed, however recently they were written.
func (c *Counter) FlushAll(ctx context.Context) error {
	return c.flush(ctx, true)
}

func (c *Counter) flush(ctx context.Context, allPopular bool) error {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	batch := c.pending
	c.pending = map[postKey]*pendingViews{}
	c.mu.Unlock()
	now := c.now()
	var first error
	writes, failures := 0, 0
	for _, key := range slices.SortedFunc(maps.Keys(batch), comparePostKeys) {
		p, id := batch[key], key.post
		store, err := c.root.In(key.pub)
		var totals storage.ViewTotals
		if err == nil {
			totals, err = store.FlushViews(ctx, storage.ViewBatch{PostID: id, At: now, Views: p.views, Referrers: p.refs})
		}
		if err == nil {
			writes++
			// The views are written: a failed move is retried by the
			// next flush, never by counting them again.
			moved, merr := store.MoveViewDays(ctx, totals)
			writes += moved
			if merr != nil {
				failures++
				c.opts.Logger.Warn("move views of past days", "post", id, "err", merr)
			}
			c.mu.Lock()
			due := allPopular || now.Sub(c.popularAt[key]) >= c.opts.PopularEvery
			if due {
				c.popularAt[key] = now
			}
			c.mu.Unlock()
			if due {
				err = store.WritePopular(ctx, id, now, totals)
				writes += 3
			}
		} else {
			c.restore(key, p)
		}
		if err != nil {
			failures++
			c.opts.Logger.Warn("flush views", "publication", key.pub, "post", id, "err", err)
			if first == nil {
				first = err
			}
		}
	}
	c.opts.Observe("flush_writes", writes)
	c.opts.Observe("flush_errors", failures)
	return first
}

// comparePostKeys orders post keys by publication, then post.
func comparePostKeys(a, b postKey) int {
	return cmp.Or(strings.Compare(a.pub, b.pub), strings.Compare(a.post, b.post))
}

// restore puts the views p of the post key names back to be flushed
// again.
func (c *tally) restore(key postKey, p *pendingViews) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.pending[key]
	if q == nil {
		c.pending[key] = p
		return
	}
	q.views += p.views
	for d, n := range p.refs {
		q.refs[d] += n
	}
}

// Run flushes every FlushEvery until ctx ends, then flushes what is left
// (within 5 s) and returns.
func (c *Counter) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = c.Flush(ctx)
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = c.Flush(last)
			return
		}
	}
}
