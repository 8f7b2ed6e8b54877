package changefeed

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// BenchmarkIdleFeed runs a server's feed with the default timings, a
// shard and four workers (a server's), lets it log a few events, then
// counts what it consumes over a minute of nothing written; write units
// are the figure (see BENCHMARKS.md). exclusive is the embedded engine's
// server, which reads its stream every 25 ms; fleet, a server of a
// fleet, reading at DynamoDB Streams' pace.
func BenchmarkIdleFeed(b *testing.B) {
	const idleFor = time.Minute
	for _, exclusive := range []bool{true, false} {
		name := "fleet"
		if exclusive {
			name = "exclusive"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				e := newEnv(b)
				opts := Options{Owner: "a", Exclusive: exclusive, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
				if exclusive {
					opts.ReadGap, opts.PollEvery = 25*time.Millisecond, 25*time.Millisecond
				}
				f := New(e.store, e.streams, opts)
				for _, w := range []string{"schedule", "rerender", "webhooks", "counts"} {
					f.AddWorker(Worker{Name: w, Events: func(context.Context, []storage.LoggedEvent) error { return nil }})
				}
				ctx, counter := storage.WithRequestCounter(context.Background())
				stop := e.runIn(ctx, f)
				e.write(3)
				e.eventually("3 events logged", func() bool { return e.head() == 3 })
				time.Sleep(5 * time.Second) // the workers' checkpoints and the reads past them
				before := counter.ByOperation()
				_, w0 := counter.Capacity()
				time.Sleep(idleFor)
				after := counter.ByOperation()
				_, w1 := counter.Capacity()
				stop()
				writes := 0
				for _, op := range writeOperations {
					writes += after[op] - before[op]
				}
				b.ReportMetric(w1-w0, "write-units/min")
				b.ReportMetric(float64(writes), "writes/min")
				b.ReportMetric(float64(after["GetRecords"]-before["GetRecords"]), "GetRecords/min")
				b.ReportMetric(float64(after["Query"]-before["Query"]), "Query/min")
			}
		})
	}
}
