package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// held is an endpoint that holds every request until released, as one
// that answers after 20 s or never does.
type held struct {
	*httptest.Server
	release chan struct{}
	once    sync.Once
}

func newHeld(t testing.TB) *held {
	h := &held{release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() { h.free(); h.Close() })
	return h
}

func (h *held) free() { h.once.Do(func() { close(h.release) }) }

// TestASlowEndpointDelaysOnlyItself: nine webhooks whose endpoints hold
// every request and one that answers at once; each event handled reaches
// the fast one while the nine still hold theirs.
func TestASlowEndpointDelaysOnlyItself(t *testing.T) {
	e := newEnv(t)
	var slow []*held
	for range 9 {
		h := newHeld(t)
		slow = append(slow, h)
		e.create(h.URL, storage.EventPostPublished)
	}
	got := make(chan string, 100)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("webhook-id")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fast.Close)
	e.create(fast.URL, storage.EventPostPublished)

	// Were the fast deliveries to wait for the slow ones, nothing would
	// release them: the test would hang. It releases them itself near
	// its deadline, and fails.
	stop := make(chan struct{})
	defer close(stop)
	if d, ok := t.Deadline(); ok {
		go func() {
			select {
			case <-stop:
			case <-time.After(time.Until(d) - 10*time.Second):
				for _, h := range slow {
					h.free()
				}
			}
		}()
	}
	released := func() bool {
		select {
		case <-slow[0].release:
			return true
		default:
			return false
		}
	}
	for i := range 5 {
		ev := e.published(fmt.Sprintf("%x", i+10))
		if err := e.hooks.HandleEvents(context.Background(), []storage.LoggedEvent{{Position: int64(i + 1), Event: ev}}); err != nil {
			t.Fatal(err)
		}
		if id := <-got; id != ev.ID || released() {
			t.Fatalf("event %d reached the fast endpoint as %q after the slow ones were released: %v", i, id, released())
		}
	}
	for _, h := range slow {
		h.free()
	}
	e.hooks.Wait()
}

// BenchmarkFastBesideSlowEndpoints measures how long an event handled
// takes to reach a fast endpoint beside nine that never answer (each
// attempt to them times out after 2 s, the stand-in for the 15 s
// default): the p50 and p99 of that delay, in ms.
func BenchmarkFastBesideSlowEndpoints(b *testing.B) {
	e := newEnv(b, func(o *webhooks.Options) { o.Timeout = 2 * time.Second })
	for range 9 {
		e.create(newHeld(b).URL, storage.EventPostPublished)
	}
	got := make(chan time.Time, 1)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- time.Now()
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(fast.Close)
	e.create(fast.URL, storage.EventPostPublished)
	var delays []time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		if err := e.hooks.HandleEvents(context.Background(), []storage.LoggedEvent{{Position: int64(i), Event: e.published(fmt.Sprintf("%032x", i))}}); err != nil {
			b.Fatal(err)
		}
		delays = append(delays, (<-got).Sub(start))
	}
	slices.Sort(delays)
	ms := func(q float64) float64 {
		return float64(delays[int(q*float64(len(delays)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
