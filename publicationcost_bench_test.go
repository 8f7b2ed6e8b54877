package main

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPublicationCost measures what serving a publication at a host
// of its own costs over serving the same page as the single blog is
// served: one server (run, the embedded engine on a data file in memory,
// answer cache off) over a table of the default publication and one
// publication more, each with the same posts (seedScale), asked for the
// category page at localhost (the default publication, as a single blog)
// and at the publication's host.
//
// The two are measured in pairs, so that what the machine's other work
// does to one it does to the other: each iteration sends one page of
// each, one request at a time, in alternating order; then, every 50th
// iteration, 16 clients ask for one host for half a second and for the
// other for half a second. It reports the medians of both, and the
// publication's over the default's: the median of the pairs' ratios at
// one client, and the ratio of the rounds' totals at 16
// (docs/benchmarks-publications.md):
//
//	go test -run '^$' -bench PublicationCost -benchtime 3000x .
func BenchmarkPublicationCost(b *testing.B) {
	args := []string{"-port", "0", "-log-format", "json", "-answer-cache-bytes", "0", "-seed-demo=false"}
	dir := seedScale(b, args, 1)
	base, _, stop := startServer(b, args, map[string]string{"DATA_DIR": dir})
	defer stop()
	hosts := [2]string{"localhost", scaleHost(0)}
	var send [2]func() error
	for i, host := range hosts {
		send[i] = scaleSender(base, host)
	}
	// Warm: the publication's site built, the engine's pages read, the
	// query parsed, and 3 seconds of load, as BenchmarkNoisyNeighbour.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		for _, s := range send {
			if err := s(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var took [2][]time.Duration
	var ratios []float64
	var answered [2]int64
	round := 0
	for b.Loop() {
		order := []int{0, 1}
		if round%2 == 1 {
			order = []int{1, 0}
		}
		var pair [2]time.Duration
		for _, i := range order {
			start := time.Now()
			if err := send[i](); err != nil {
				b.Fatal(err)
			}
			pair[i] = time.Since(start)
			took[i] = append(took[i], pair[i])
		}
		ratios = append(ratios, float64(pair[1])/float64(pair[0]))
		if round%50 == 49 {
			for _, i := range order {
				answered[i] += floodFor(b, send[i], 500*time.Millisecond)
			}
		}
		round++
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i, name := range []string{"single", "publication"} {
		slices.Sort(took[i])
		b.ReportMetric(ms(took[i][len(took[i])/2]), name+"-p50-ms")
		b.ReportMetric(ms(took[i][len(took[i])*99/100]), name+"-p99-ms")
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "publication/single-p50")
	if floods := round / 50; floods > 0 {
		seconds := float64(floods) / 2
		b.ReportMetric(float64(answered[0])/seconds, "single-c16-req/s")
		b.ReportMetric(float64(answered[1])/seconds, "publication-c16-req/s")
		b.ReportMetric(float64(answered[1])/float64(answered[0]), "publication/single-c16")
	}
}

// floodFor sends pages from 16 clients for d and returns how many were
// answered.
func floodFor(b *testing.B, send func() error, d time.Duration) int64 {
	var answered atomic.Int64
	var failed atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := send(); err != nil {
					failed.Store(err)
					return
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return answered.Load()
}
