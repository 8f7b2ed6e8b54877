package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// countingTransport counts the DynamoDB requests that pass it.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// BenchmarkRetriesScan measures what the webhooks worker's scan costs
// when it takes its lease, on a table of 1,000 publications (the
// default one and 999 more) on the test's DynamoDB: its time and its
// DynamoDB requests (docs/platform-operations.md).
//
//	go test -run '^$' -bench RetriesScan -benchtime 5x .
func BenchmarkRetriesScan(b *testing.B) {
	ctx := context.Background()
	cfg := dynamotest.ClientConfig(b, nil)
	counter := &countingTransport{next: dynamotest.Transport(cfg)}
	cfg.HTTPClient = &http.Client{Transport: counter}
	client, err := storage.NewClient(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	store := storage.New(client, dynamotest.Table(b, client, "scan"))
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := store.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	for i := range 999 {
		if _, err := store.CreatePublication(ctx, storage.NewPublication{Slug: fmt.Sprintf("pub-%d", i), Title: "A publication"}); err != nil {
			b.Fatal(err)
		}
	}
	r := &retries{store: store, next: map[string]time.Time{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	before := counter.n.Load()
	for b.Loop() {
		if err := r.scan(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(counter.n.Load()-before)/float64(b.N), "requests/scan")
}
