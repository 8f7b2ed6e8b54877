package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/metrics"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/tracing"
)

// traceFlushTimeout bounds the export of the spans left at shutdown.
const traceFlushTimeout = 5 * time.Second

// telemetry is the server's metrics and tracing, each off unless
// configured: metrics by -metrics-addr, tracing by an OTLP endpoint in the
// standard OpenTelemetry variables.
type telemetry struct {
	metrics *metrics.Metrics         // nil when off
	tracer  *sdktrace.TracerProvider // nil when off
}

// newTelemetry sets up what cfg and getenv ask for. It fails when the
// OpenTelemetry variables are invalid.
func newTelemetry(ctx context.Context, cfg *config, getenv func(string) string, logger *slog.Logger) (*telemetry, error) {
	t := &telemetry{}
	if cfg.metricsAddr != "" {
		t.metrics = metrics.New()
	}
	if endpoint := tracing.Endpoint(getenv); endpoint != "" {
		tp, err := tracing.NewProvider(ctx)
		if err != nil {
			return nil, err
		}
		t.tracer = tp
		logger.Info("tracing on", "otlp_endpoint", endpoint)
	}
	return t, nil
}

// client adds the observers of DynamoDB calls to c.
func (t *telemetry) client(c storage.ClientConfig) storage.ClientConfig {
	if t.metrics != nil {
		c.Observe = t.metrics.ObserveDynamoDB
	}
	if t.tracer != nil {
		c.TracerProvider = tracing.AWS(t.tracer)
	}
	return c
}

// handler adds the observers of GraphQL requests to o.
func (t *telemetry) handler(o graph.HandlerOptions) graph.HandlerOptions {
	o.Metrics = t.metrics
	if t.tracer != nil {
		o.TracerProvider = t.tracer
	}
	return o
}

// serveMetrics serves the metrics at /metrics on addr, a listener of their
// own so that they stay off the public port, until ctx is done; on
// loopback, to requests addressed to this machine or to allowedHosts. It
// does nothing when metrics are off.
func (t *telemetry) serveMetrics(ctx context.Context, addr string, allowedHosts []string, logger *slog.Logger) error {
	if t.metrics == nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", t.metrics.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	_, err := serveAside(ctx, "metrics", "/metrics", addr, allowedHosts, srv, logger)
	return err
}

// shutdown exports the spans not sent yet. Their loss is logged, not
// returned: it must not fail a shutdown that went well otherwise.
func (t *telemetry) shutdown(ctx context.Context, logger *slog.Logger) {
	if t.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), traceFlushTimeout)
	defer cancel()
	if err := t.tracer.Shutdown(ctx); err != nil {
		logger.Warn("spans lost at shutdown", "err", err)
	}
}

// answerObserver returns what the answer cache reports to: the metrics,
// or nothing when they are off.
func (t *telemetry) answerObserver() gqlhttp.AnswerObserver {
	if t.metrics == nil {
		return nil
	}
	return t.metrics
}

// streamObserver returns what the gate of subscription streams reports
// to: the metrics, or nothing when they are off.
func (t *telemetry) streamObserver() gqlhttp.StreamObserver {
	if t.metrics == nil {
		return nil
	}
	return t.metrics
}
