package main

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// latencies are the durations of the calls of one measurement.
type latencies []time.Duration

// stats summarizes a measurement.
type stats struct {
	Calls      int     `json:"calls"`
	PerSecond  float64 `json:"perSecond,omitempty"`
	P50Millis  float64 `json:"p50Ms"`
	P99Millis  float64 `json:"p99Ms"`
	MeanMillis float64 `json:"meanMs"`
}

func (l latencies) stats(elapsed time.Duration) stats {
	s := slices.Clone(l)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	st := stats{Calls: len(s)}
	if len(s) > 0 {
		st.P50Millis = millis(s[len(s)*50/100])
		st.P99Millis = millis(s[len(s)*99/100])
		st.MeanMillis = millis(sum / time.Duration(len(s)))
	}
	if elapsed > 0 {
		st.PerSecond = float64(len(s)) / elapsed.Seconds()
	}
	return st
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// call is one call of an operation, the server's or the floor's; i numbers
// the calls so each picks its own target.
type call func(ctx context.Context, i int) error

// sequential alternates a and b one call at a time, n calls each, so drift
// in the backend (a JIT warming up, a GC) hits both alike. Both calls of a
// pair get the same number, so they ask for the same thing.
func sequential(ctx context.Context, n int, a, b call, next *atomic.Int64) (latencies, latencies, error) {
	var la, lb latencies
	for range n {
		i := int(next.Add(1))
		for _, c := range []struct {
			f   call
			out *latencies
		}{{a, &la}, {b, &lb}} {
			start := time.Now()
			if err := c.f(ctx, i); err != nil {
				return nil, nil, err
			}
			*c.out = append(*c.out, time.Since(start))
		}
	}
	return la, lb, nil
}

// concurrent runs f from workers goroutines in a loop for d and returns the
// latency of every call that finished in time and the time it took. The
// first error stops every worker.
func concurrent(ctx context.Context, workers int, d time.Duration, f call, next *atomic.Int64) (latencies, time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := time.Now().Add(d)
	var (
		mu  sync.Mutex
		all latencies
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			var mine latencies
			for ctx.Err() == nil && time.Now().Before(deadline) {
				i := int(next.Add(1))
				t := time.Now()
				if err := f(ctx, i); err != nil {
					cancel(err)
					return
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return nil, 0, err
	}
	return all, elapsed, nil
}

// allocationsPerCall returns the heap allocations of one call of f, the
// mean over n calls made one at a time. prepare builds what a call needs
// (not counted); only f's own allocations, and those of the goroutines it
// waits for, are counted.
func allocationsPerCall(ctx context.Context, n int, prepare func(i int) func() error, next *atomic.Int64) (float64, error) {
	var total uint64
	var ms runtime.MemStats
	for range n {
		f := prepare(int(next.Add(1)))
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		err := f()
		runtime.ReadMemStats(&ms)
		total += ms.Mallocs - before
		if err != nil {
			return 0, err
		}
	}
	return float64(total) / float64(n), nil
}
