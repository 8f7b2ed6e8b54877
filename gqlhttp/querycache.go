package gqlhttp

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Bounds of the two query caches, by the memory their entries take. A
// count would not bound them: one entry may hold a document of any size
// the body limit lets in.
const (
	// DefaultQueryCacheBytes bounds the cache of parsed and validated
	// documents when Options.QueryCacheBytes is zero: about 120
	// operations of 2 KB, which a blog's frontend does not reach.
	DefaultQueryCacheBytes = 8 << 20
	// DefaultPersistedQueryCacheBytes bounds the automatic persisted
	// queries (hash to query text) when
	// Options.PersistedQueryCacheBytes is zero.
	DefaultPersistedQueryCacheBytes = 2 << 20
)

// A parsed document is charged documentBytesPerByte times the length of its
// text plus documentEntryBytes. Parsing and validating a document and
// keeping it (the text, which the AST's positions hold, and the AST)
// raised the live heap by 16.5 times the text's length for the 12 KB of
// tests/operations.graphql, 28.5 times for a 192-byte post page written
// on one line, and 790 bytes for `{ __typename }` (runtime.MemStats
// HeapAlloc after a GC, 200 copies of each). Denser text makes more nodes
// per byte; these charges are above every measure, so the cache holds
// less than its bound.
const (
	documentBytesPerByte = 32
	documentEntryBytes   = 1 << 10
	// persistedEntryBytes is what a persisted query costs beyond its hash
	// and text: the list element, the map entry and their headers.
	persistedEntryBytes = 256
)

// documentCost returns what a parsed document of query takes in the cache.
func documentCost(query string, _ *ast.QueryDocument) int64 {
	return int64(len(query))*documentBytesPerByte + documentEntryBytes
}

// persistedCost returns what a persisted query takes in the cache.
func persistedCost(hash string, e *persistedEntry) int64 {
	return int64(len(hash)+len(e.query)) + persistedEntryBytes
}

// byteLRU is a graphql.Cache that holds at most max bytes of entries, as
// cost charges them, and drops the least recently used ones to make room.
// An entry that costs more than max is not kept. It is safe for
// concurrent use.
type byteLRU[T any] struct {
	max    int64
	cost   func(key string, value T) int64
	report func(entries int, bytes int64)

	mu    sync.Mutex
	used  int64
	order *list.List // of *lruEntry[T], most recently used first
	items map[string]*list.Element
}

type lruEntry[T any] struct {
	key   string
	value T
	cost  int64
}

var _ graphql.Cache[string] = (*byteLRU[string])(nil)

// newByteLRU returns an empty cache of at most max bytes. report, when not
// nil, is called with the entries and bytes held after every change.
func newByteLRU[T any](max int64, cost func(string, T) int64, report func(entries int, bytes int64)) *byteLRU[T] {
	c := &byteLRU[T]{max: max, cost: cost, report: report, order: list.New(), items: map[string]*list.Element{}}
	c.changed()
	return c
}

// Get returns the value of key and marks it recently used.
func (c *byteLRU[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		var zero T
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[T]).value, true
}

// Add keeps value under key, dropping the least recently used entries
// until it fits; a value that alone costs more than the bound is dropped.
func (c *byteLRU[T]) Add(_ context.Context, key string, value T) {
	cost := c.cost(key, value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.remove(e)
	}
	if cost > c.max {
		c.changed()
		return
	}
	for c.used+cost > c.max {
		c.remove(c.order.Back())
	}
	c.items[key] = c.order.PushFront(&lruEntry[T]{key: key, value: value, cost: cost})
	c.used += cost
	c.changed()
}

// Size returns the entries and bytes the cache holds.
func (c *byteLRU[T]) Size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.used
}

func (c *byteLRU[T]) remove(e *list.Element) {
	ent := c.order.Remove(e).(*lruEntry[T])
	delete(c.items, ent.key)
	c.used -= ent.cost
}

// changed reports the size; c.mu is held, so reports come in order.
func (c *byteLRU[T]) changed() {
	if c.report != nil {
		c.report(len(c.items), c.used)
	}
}
