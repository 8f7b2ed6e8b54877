package gqlhttp

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/maypok86/otter/v2"
)

// The answer cache keeps whole answers to public reads in memory, so the
// next anonymous request for the same operation and variables is answered
// without running it (answerkey.go keys and looks up the operation that
// runs, cache.go keeps and sends its answer).
// Each answer carries the tags of what it shows, which the schema's
// resolvers name while it is computed (Tag); Invalidate drops every answer
// with one of the given tags. An answer whose computation began before an
// invalidation of one of its tags is not stored: it may have read what the
// write replaced.

// DefaultAnswerCacheBytes bounds the answer cache when its bound is zero.
const DefaultAnswerCacheBytes = 64 << 20

// answerEntryBytes is what an answer costs beyond its key, body and tags:
// the cache's node, the index's entries and headers.
const answerEntryBytes = 512

// invalidatedBound is how many tags the cache remembers the last
// invalidation of; past it, it forgets them all and refuses every answer
// begun before (a floor), which is as safe and bounds the memory.
const invalidatedBound = 1 << 16

// AnswerObserver receives what an AnswerCache does: every lookup (hit or
// miss), evictions to make room, and its size after every change.
type AnswerObserver interface {
	AnswerLookup(hit bool)
	AnswerEvicted(n int)
	AnswerCacheSize(entries int, bytes int64)
}

// AnswerCache is an in-memory cache of answers bounded by the bytes they
// take, evicting those least likely to be used again (by how recently and
// how often they were). It is safe for concurrent use. Its zero value is
// not usable: use NewAnswerCache.
//
// The answers are kept in an otter cache; the cache keeps its own index
// of them by tag beside it, and the sequence of invalidations. The index
// follows the otter cache: an answer leaves it as it leaves the cache
// (OnAtomicDeletion), and mu is never held while calling the otter cache.
// So an answer is stored in two steps, each under mu: checked against the
// invalidations and indexed, then (once in the cache) checked again, and
// dropped when an invalidation of one of its tags came in between, which
// did not find it in the cache yet.
type AnswerCache struct {
	max     int64
	observe AnswerObserver
	cache   *otter.Cache[string, *answer]
	// exact holds what each exact request (exactKey) was answered with;
	// an entry whose answer left the cache is a miss.
	exact *otter.Cache[string, exactAnswer]

	mu sync.Mutex
	// byTag holds the answers stored under each of their tags.
	byTag map[string]map[*answer]struct{}
	// seq counts invalidations; invalidated holds each tag's last one
	// after floor. An answer begun at sequence b is stored only when none
	// of its tags was invalidated after b, and b >= floor.
	seq         uint64
	floor       uint64
	invalidated map[string]uint64

	// reporting orders the size reports: each reads the size once it
	// holds it, so the last report is of the cache as the last change
	// left it.
	reporting sync.Mutex
}

// answer is a stored answer: what the HTTP layer sends again, with the
// media type the request asks for. tags are all its tags, headerTags
// those it sends; shared tells whether shared caches may keep it (its
// header tags purge them).
type answer struct {
	key        string
	body       []byte
	etag       string
	tags       []string
	headerTags []string
	shared     bool
	cost       int64
}

// NewAnswerCache returns an empty cache of at most maxBytes (zero:
// DefaultAnswerCacheBytes) that reports to observe when it is not nil.
func NewAnswerCache(maxBytes int64, observe AnswerObserver) *AnswerCache {
	if maxBytes == 0 {
		maxBytes = DefaultAnswerCacheBytes
	}
	c := &AnswerCache{
		max: maxBytes, observe: observe,
		byTag: map[string]map[*answer]struct{}{}, invalidated: map[string]uint64{},
	}
	c.cache = otter.Must(&otter.Options[string, *answer]{
		MaximumWeight:    uint64(maxBytes),
		Weigher:          func(_ string, a *answer) uint32 { return uint32(min(a.cost, math.MaxUint32)) },
		OnAtomicDeletion: func(e otter.DeletionEvent[string, *answer]) { c.unindex(e.Value) },
		OnDeletion: func(e otter.DeletionEvent[string, *answer]) {
			if e.Cause == otter.CauseOverflow && c.observe != nil {
				c.observe.AnswerEvicted(1)
			}
			c.changed()
		},
	})
	c.exact = otter.Must(&otter.Options[string, exactAnswer]{
		MaximumWeight: uint64(max(maxBytes/8, 1<<20)),
		Weigher: func(k string, v exactAnswer) uint32 {
			return uint32(len(k) + len(v.key) + len(v.contentType) + exactEntryBytes)
		},
	})
	c.changed()
	return c
}

// exactEntryBytes is what a remembered request costs beyond its bytes,
// its answer's key and media type.
const exactEntryBytes = 128

// exactAnswer is what an exact request was answered with: the key of the
// answer, in the media type its transport chose.
type exactAnswer struct {
	key, contentType string
}

// getExact returns the answer of the exact request req (exactKey) and its
// media type, when one was remembered for it and is still in the cache.
// It reports the hits alone: a miss goes on to get, which reports it.
func (c *AnswerCache) getExact(req string) (*answer, string, bool) {
	e, ok := c.exact.GetIfPresent(req)
	if !ok {
		return nil, "", false
	}
	a, ok := c.cache.GetIfPresent(e.key)
	if ok && c.observe != nil {
		c.observe.AnswerLookup(true)
	}
	return a, e.contentType, ok
}

// addExact remembers that the exact request req ("": none) is answered
// by the answer kept under key, in the media type contentType.
func (c *AnswerCache) addExact(req, key, contentType string) {
	if req != "" {
		c.exact.Set(req, exactAnswer{key: key, contentType: contentType})
	}
}

// begin returns the sequence an answer computed from now on is checked
// against when it is stored.
func (c *AnswerCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// get returns the answer stored under key.
func (c *AnswerCache) get(key string) (*answer, bool) {
	a, ok := c.cache.GetIfPresent(key)
	if c.observe != nil {
		c.observe.AnswerLookup(ok)
	}
	return a, ok
}

// add stores a under its key unless one of its tags was invalidated after
// begun (a sequence from begin); an answer that alone costs more than the
// bound is not kept. It reports whether a was stored.
func (c *AnswerCache) add(a *answer, begun uint64) bool {
	a.cost = int64(len(a.key)+len(a.body)+len(a.etag)) + answerEntryBytes
	for _, t := range a.tags {
		a.cost += int64(len(t)) + 64
	}
	for _, t := range a.headerTags {
		a.cost += int64(len(t)) + 16
	}
	if a.cost > c.max {
		return false
	}
	c.mu.Lock()
	if !c.fresh(a, begun) {
		c.mu.Unlock()
		return false
	}
	for _, t := range a.tags {
		set := c.byTag[t]
		if set == nil {
			set = map[*answer]struct{}{}
			c.byTag[t] = set
		}
		set[a] = struct{}{}
	}
	c.mu.Unlock()

	c.cache.Set(a.key, a)
	c.mu.Lock()
	fresh := c.fresh(a, begun)
	c.mu.Unlock()
	if !fresh {
		// An invalidation came while a was put in the cache.
		c.drop(a)
		return false
	}
	c.changed()
	return true
}

// fresh reports whether a, begun at begun, may be stored: none of its
// tags was invalidated since. c.mu is held.
func (c *AnswerCache) fresh(a *answer, begun uint64) bool {
	if begun < c.floor {
		return false
	}
	for _, t := range a.tags {
		if c.invalidated[t] > begun {
			return false
		}
	}
	return true
}

// Invalidate drops every answer tagged with one of tags, and keeps answers
// begun before from being stored with them.
func (c *AnswerCache) Invalidate(tags ...string) {
	if len(tags) == 0 {
		return
	}
	var drop []*answer
	c.mu.Lock()
	c.seq++
	if len(c.invalidated)+len(tags) > invalidatedBound {
		clear(c.invalidated)
		c.floor = c.seq
	}
	for _, t := range tags {
		c.invalidated[t] = c.seq
		for a := range c.byTag[t] {
			drop = append(drop, a)
		}
	}
	c.mu.Unlock()
	for _, a := range drop {
		c.drop(a)
	}
	c.changed()
}

// InvalidateAll drops every answer, and keeps every answer begun before
// from being stored.
func (c *AnswerCache) InvalidateAll() {
	c.mu.Lock()
	c.seq++
	c.floor = c.seq
	clear(c.invalidated)
	c.mu.Unlock()
	c.cache.InvalidateAll()
	c.exact.InvalidateAll()
	c.changed()
}

// Size returns the answers the cache holds and the bytes they are
// charged, once the evictions due are made.
func (c *AnswerCache) Size() (entries int, bytes int64) {
	c.cache.CleanUp()
	return c.cache.EstimatedSize(), int64(c.cache.WeightedSize())
}

// drop removes a from the cache if it is still the answer of its key.
func (c *AnswerCache) drop(a *answer) {
	c.cache.ComputeIfPresent(a.key, func(old *answer) (*answer, otter.ComputeOp) {
		if old != a {
			return old, otter.CancelOp
		}
		return nil, otter.InvalidateOp
	})
}

// unindex removes a, which left the cache, from the index by tag. It runs
// under the lock of a's bucket of the otter cache, which never waits for
// c.mu's holder.
func (c *AnswerCache) unindex(a *answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range a.tags {
		if set := c.byTag[t]; set != nil {
			delete(set, a)
			if len(set) == 0 {
				delete(c.byTag, t)
			}
		}
	}
}

// changed reports the size.
func (c *AnswerCache) changed() {
	if c.observe == nil {
		return
	}
	c.reporting.Lock()
	defer c.reporting.Unlock()
	c.observe.AnswerCacheSize(c.cache.EstimatedSize(), int64(c.cache.WeightedSize()))
}

// answerTags collects the tags of the answer being computed, as the
// resolvers name them; untagged marks an answer that showed something no
// tag names, which is not stored.
type answerTags struct {
	mu       sync.Mutex
	tags     []string
	private  []string // not sent in headers
	untagged atomic.Bool
}

type answerTagsKey struct{}

// Tag names what the answer of the request ctx belongs to shows: when one
// of tags is invalidated, a stored copy of the answer is dropped. Where
// nothing collects tags (a mutation, a stream, a signed-in request) it
// does nothing.
func Tag(ctx context.Context, tags ...string) {
	addTags(ctx, func(at *answerTags) *[]string { return &at.tags }, tags)
}

// TagPrivately is Tag for tags that name what the public may not know
// (a reader's id): they drop the answer from the answer cache, but are
// not sent in the Surrogate-Key and Cache-Tag headers.
func TagPrivately(ctx context.Context, tags ...string) {
	addTags(ctx, func(at *answerTags) *[]string { return &at.private }, tags)
}

// addTags adds tags, each once, to the list of the request ctx belongs
// to that list names, if anything collects them.
func addTags(ctx context.Context, list func(*answerTags) *[]string, tags []string) {
	at, ok := ctx.Value(answerTagsKey{}).(*answerTags)
	if !ok {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	l := list(at)
	for _, t := range tags {
		if t != "" && !slices.Contains(*l, t) {
			*l = append(*l, t)
		}
	}
}

// Untagged marks the answer of the request ctx belongs to as showing
// something no tag names: it is not kept in the answer cache, and gets no
// tag headers. HTTP caches get it as "private": a browser may keep it for
// max-age, no shared cache at all, since no purge would reach its copy.
func Untagged(ctx context.Context) {
	if at, ok := ctx.Value(answerTagsKey{}).(*answerTags); ok {
		at.untagged.Store(true)
	}
}

// collected returns the tags named, sorted: all of them, and those for
// the headers; false when the answer is untagged.
func (at *answerTags) collected() (all, public []string, ok bool) {
	if at.untagged.Load() {
		return nil, nil, false
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	public = slices.Clone(at.tags)
	slices.Sort(public)
	all = append(slices.Clone(public), at.private...)
	return all, public, true
}
