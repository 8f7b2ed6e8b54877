package gqlhttp

import (
	"context"
	"sync"
	"testing"
)

// TestByteCache keeps entries within the byte bound, keeps nothing that
// alone is over the bound, and reports its size as the last change left
// it.
func TestByteCache(t *testing.T) {
	ctx := context.Background()
	var (
		mu       sync.Mutex
		changed  = sync.NewCond(&mu)
		reported [2]int64
	)
	c := newByteCache(10, func(_ string, v string) int64 { return int64(len(v)) }, func(n int, b int64) {
		mu.Lock()
		defer mu.Unlock()
		reported = [2]int64{int64(n), b}
		changed.Broadcast()
	})
	// waitReport waits for the report of want: evictions are reported
	// from another goroutine once made.
	waitReport := func(want [2]int64) {
		mu.Lock()
		defer mu.Unlock()
		for reported != want {
			changed.Wait()
		}
	}
	c.Add(ctx, "a", "aaaa")
	c.Add(ctx, "b", "bbbb")
	if _, ok := c.Get(ctx, "a"); !ok {
		t.Fatal("a is missing")
	}
	c.Add(ctx, "c", "cccc") // 12 bytes: one of the three goes
	n, b := c.Size()        // once the evictions due are made
	kept := 0
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := c.Get(ctx, k); ok {
			kept++
		}
	}
	if n != 2 || b != 8 || kept != 2 {
		t.Errorf("size %d entries %d bytes, %d found; want 2 and 8", n, b, kept)
	}
	waitReport([2]int64{2, 8})

	c.Add(ctx, "d", "ddd")
	c.Add(ctx, "d", "ddddddddddd") // over the bound: dropped, and its old value too
	if _, ok := c.Get(ctx, "d"); ok {
		t.Error("an entry over the bound was kept")
	}
	if n, b := c.Size(); n > 2 || b > 8 {
		t.Errorf("size %d entries %d bytes, want at most 2 and 8", n, b)
	}

	none := newByteCache[string](0, func(string, string) int64 { return 1 }, nil)
	none.Add(ctx, "a", "a")
	if _, ok := none.Get(ctx, "a"); ok {
		t.Error("a cache of no bytes kept an entry")
	}
}
