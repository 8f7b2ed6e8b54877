package storage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// TestCheckConfirmsWhatItFinds runs the go-live sweep in the middle of
// Check's scan, made to read one item a page: the scan sees a scheduled
// post's schedule item from before the sweep and the rest after it, a
// state the table was never in, but a second read finds the table
// consistent, and Check reports nothing.
func TestCheckConfirmsWhatItFinds(t *testing.T) {
	var (
		once  sync.Once
		mu    sync.Mutex
		sweep func()
		swept atomic.Bool
	)
	onePerPage := func(cfg *storage.ClientConfig) {
		next := dynamotest.Transport(*cfg)
		cfg.HTTPClient = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Scan") {
				return next.RoundTrip(r)
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			var in map[string]any
			if err := json.Unmarshal(body, &in); err != nil {
				return nil, err
			}
			in["Limit"] = 1
			if body, err = json.Marshal(in); err != nil {
				return nil, err
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			resp, err := next.RoundTrip(r)
			if err != nil {
				return nil, err
			}
			page, err := io.ReadAll(resp.Body)
			if err != nil {
				return nil, err
			}
			resp.Body = io.NopCloser(bytes.NewReader(page))
			mu.Lock()
			fn := sweep
			mu.Unlock()
			if fn != nil && bytes.Contains(page, []byte(`#SCHEDULE"`)) {
				once.Do(fn)
			}
			return resp, nil
		})}
	}
	e := newEnv(t, onePerPage)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.publish(e.post("ada", "later", "go"), start.Add(time.Hour))
	e.clock.Advance(time.Hour)
	mu.Lock()
	sweep = func() {
		swept.Store(true)
		if n, err := e.store.GoLive(ctx); err != nil || n != 1 {
			t.Errorf("the sweep during the scan: %d gone live, %v", n, err)
		}
	}
	mu.Unlock()
	bad, err := e.store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}
	if !swept.Load() {
		t.Fatal("the scan met no schedule item: the sweep never ran")
	}
}
