package gqlhttp

import (
	"context"
	"math"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/maypok86/otter/v2"
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
	// and text: the cache's node, the entry and their headers.
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

// byteCache is a graphql.Cache that holds at most max bytes of entries, as
// cost charges them, evicting those least likely to be used again (by how
// recently and how often they were). An entry that costs more than max is
// not kept. It is safe for concurrent use.
type byteCache[T any] struct {
	max    int64
	cost   func(key string, value T) int64
	cache  *otter.Cache[string, T] // nil: nothing is kept
	report func(entries int, bytes int64)
	// reporting orders the reports: each reads the size once it holds
	// it, so the last report is of the cache as the last change left it.
	reporting sync.Mutex
}

var _ graphql.Cache[string] = (*byteCache[string])(nil)

// newByteCache returns an empty cache of at most max bytes (none kept for
// zero or less). report, when not nil, is called with the entries and
// bytes held after every change; evictions are reported once made, which
// is soon after the change that made them needed.
func newByteCache[T any](max int64, cost func(string, T) int64, report func(entries int, bytes int64)) *byteCache[T] {
	c := &byteCache[T]{max: max, cost: cost, report: report}
	if max > 0 {
		c.cache = otter.Must(&otter.Options[string, T]{
			MaximumWeight: uint64(max),
			Weigher:       func(k string, v T) uint32 { return uint32(min(cost(k, v), math.MaxUint32)) },
			OnDeletion:    func(otter.DeletionEvent[string, T]) { c.changed() },
		})
	}
	c.changed()
	return c
}

// Get returns the value of key.
func (c *byteCache[T]) Get(_ context.Context, key string) (T, bool) {
	if c.cache == nil {
		var zero T
		return zero, false
	}
	return c.cache.GetIfPresent(key)
}

// Add keeps value under key; a value that alone costs more than the bound
// is not kept, and the value key had is dropped.
func (c *byteCache[T]) Add(_ context.Context, key string, value T) {
	if c.cache == nil {
		return
	}
	if c.cost(key, value) > c.max {
		c.cache.Invalidate(key)
		return
	}
	c.cache.Set(key, value)
	c.changed()
}

// Size returns the entries and bytes the cache holds, once the evictions
// due are made.
func (c *byteCache[T]) Size() (entries int, bytes int64) {
	if c.cache == nil {
		return 0, 0
	}
	c.cache.CleanUp()
	return c.size()
}

func (c *byteCache[T]) size() (entries int, bytes int64) {
	if c.cache == nil {
		return 0, 0
	}
	return c.cache.EstimatedSize(), int64(c.cache.WeightedSize())
}

// changed reports the size.
func (c *byteCache[T]) changed() {
	if c.report == nil {
		return
	}
	c.reporting.Lock()
	defer c.reporting.Unlock()
	c.report(c.size())
}
