package gqlhttp

import (
	"context"
	"testing"
)

// TestByteLRU keeps entries within the byte bound, drops the least
// recently used first, and keeps nothing that alone is over the bound.
func TestByteLRU(t *testing.T) {
	ctx := context.Background()
	var reported [2]int64
	c := newByteLRU(10, func(_ string, v string) int64 { return int64(len(v)) }, func(n int, b int64) { reported = [2]int64{int64(n), b} })
	c.Add(ctx, "a", "aaaa")
	c.Add(ctx, "b", "bbbb")
	if _, ok := c.Get(ctx, "a"); !ok { // a is now the most recently used
		t.Fatal("a is missing")
	}
	c.Add(ctx, "c", "cccc") // 12 bytes: b goes
	if _, ok := c.Get(ctx, "b"); ok {
		t.Error("b was kept, a and c were used since")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(ctx, k); !ok {
			t.Errorf("%s is missing", k)
		}
	}
	if n, b := c.Size(); n != 2 || b != 8 || reported != [2]int64{2, 8} {
		t.Errorf("size %d entries %d bytes, reported %v; want 2 and 8", n, b, reported)
	}
	c.Add(ctx, "a", "aaaaaaaaaaa") // over the bound: dropped, and its old value too
	if _, ok := c.Get(ctx, "a"); ok {
		t.Error("an entry over the bound was kept")
	}
	if n, b := c.Size(); n != 1 || b != 4 {
		t.Errorf("size %d entries %d bytes, want 1 and 4", n, b)
	}
}
