package telemetry

import (
	"context"

	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
)

// PublicationObserver returns what the router of publications reports
// each request to (routing.Options.Observe), counting the request and
// its DynamoDB requests and capacity units under its publication
// (metrics.ObservePublication, which labels the publications of labels
// and the first metrics.MaxPublicationLabels others); nil when metrics
// are off.
func (t *Telemetry) PublicationObserver(labels []string) func(ctx context.Context, id string, limited bool) (context.Context, func()) {
	m := t.metrics
	if m == nil {
		return nil
	}
	m.SetPublicationLabels(labels)
	return func(ctx context.Context, id string, limited bool) (context.Context, func()) {
		if limited {
			m.ObservePublication(id, metrics.RateLimited, 0, 0, 0)
			return ctx, func() {}
		}
		ctx, c := storage.WithRequestCounter(ctx)
		return ctx, func() {
			read, write := c.Capacity()
			m.ObservePublication(id, metrics.Served, c.Total(), read, write)
		}
	}
}
