package gqlhttp

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"sync/atomic"
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
// the list element, map entries and headers.
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
// take, with the least recently used dropped first. It is safe for
// concurrent use. Its zero value is not usable: use NewAnswerCache.
type AnswerCache struct {
	max     int64
	observe AnswerObserver

	mu    sync.Mutex
	used  int64
	order *list.List // of *answer, most recently used first
	items map[string]*list.Element
	byTag map[string]map[*list.Element]struct{}
	// seq counts invalidations; invalidated holds each tag's last one
	// after floor. An answer begun at sequence b is stored only when none
	// of its tags was invalidated after b, and b >= floor.
	seq         uint64
	floor       uint64
	invalidated map[string]uint64
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
		max: maxBytes, observe: observe, order: list.New(),
		items: map[string]*list.Element{}, byTag: map[string]map[*list.Element]struct{}{},
		invalidated: map[string]uint64{},
	}
	c.changed()
	return c
}

// begin returns the sequence an answer computed from now on is checked
// against when it is stored.
func (c *AnswerCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// get returns the answer stored under key and marks it recently used.
func (c *AnswerCache) get(key string) (*answer, bool) {
	c.mu.Lock()
	e, ok := c.items[key]
	if ok {
		c.order.MoveToFront(e)
	}
	c.mu.Unlock()
	if c.observe != nil {
		c.observe.AnswerLookup(ok)
	}
	if !ok {
		return nil, false
	}
	return e.Value.(*answer), true
}

// add stores a under its key unless one of its tags was invalidated after
// begun (a sequence from begin), dropping the least recently used answers
// until it fits; an answer that alone costs more than the bound is not
// kept. It reports whether a was stored.
func (c *AnswerCache) add(a *answer, begun uint64) bool {
	a.cost = int64(len(a.key)+len(a.body)+len(a.etag)) + answerEntryBytes
	for _, t := range a.tags {
		a.cost += int64(len(t)) + 64
	}
	for _, t := range a.headerTags {
		a.cost += int64(len(t)) + 16
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if begun < c.floor || a.cost > c.max {
		return false
	}
	for _, t := range a.tags {
		if c.invalidated[t] > begun {
			return false
		}
	}
	if e, ok := c.items[a.key]; ok {
		c.remove(e)
	}
	evicted := 0
	for c.used+a.cost > c.max {
		c.remove(c.order.Back())
		evicted++
	}
	e := c.order.PushFront(a)
	c.items[a.key] = e
	for _, t := range a.tags {
		set := c.byTag[t]
		if set == nil {
			set = map[*list.Element]struct{}{}
			c.byTag[t] = set
		}
		set[e] = struct{}{}
	}
	c.used += a.cost
	if evicted > 0 && c.observe != nil {
		c.observe.AnswerEvicted(evicted)
	}
	c.changed()
	return true
}

// Invalidate drops every answer tagged with one of tags, and keeps answers
// begun before from being stored with them.
func (c *AnswerCache) Invalidate(tags ...string) {
	if len(tags) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if len(c.invalidated)+len(tags) > invalidatedBound {
		clear(c.invalidated)
		c.floor = c.seq
	}
	for _, t := range tags {
		c.invalidated[t] = c.seq
		for e := range c.byTag[t] {
			c.remove(e)
		}
	}
	c.changed()
}

// InvalidateAll drops every answer, and keeps every answer begun before
// from being stored.
func (c *AnswerCache) InvalidateAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.floor = c.seq
	clear(c.invalidated)
	c.order.Init()
	clear(c.items)
	clear(c.byTag)
	c.used = 0
	c.changed()
}

// Size returns the answers the cache holds and the bytes they are charged.
func (c *AnswerCache) Size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.used
}

// remove drops the answer of e; c.mu is held.
func (c *AnswerCache) remove(e *list.Element) {
	a := c.order.Remove(e).(*answer)
	delete(c.items, a.key)
	for _, t := range a.tags {
		if set := c.byTag[t]; set != nil {
			delete(set, e)
			if len(set) == 0 {
				delete(c.byTag, t)
			}
		}
	}
	c.used -= a.cost
}

// changed reports the size; c.mu is held, so reports come in order.
func (c *AnswerCache) changed() {
	if c.observe != nil {
		c.observe.AnswerCacheSize(len(c.items), c.used)
	}
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
