// Package telemetry is the server's metrics (package metrics) and tracing
// (package tracing), each off unless configured, and what they observe:
// DynamoDB calls, GraphQL requests, the answer cache and the streams of
// subscriptions.
package telemetry

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

// MetricsPath is where MetricsServer serves the metrics.
const MetricsPath = "/metrics"

// traceFlushTimeout bounds the export of the spans left at shutdown.
const traceFlushTimeout = 5 * time.Second

// Telemetry is the server's metrics and tracing, each off unless
// configured: metrics by -metrics-addr, tracing by an OTLP endpoint in the
// standard OpenTelemetry variables.
type Telemetry struct {
	metrics *metrics.Metrics         // nil when off
	tracer  *sdktrace.TracerProvider // nil when off
}

// New sets up the metrics when metricsOn, and the tracing the
// OpenTelemetry variables of getenv ask for. It fails when they are
// invalid.
func New(ctx context.Context, metricsOn bool, getenv func(string) string, logger *slog.Logger) (*Telemetry, error) {
	t := &Telemetry{}
	if metricsOn {
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

// Client adds the observers of DynamoDB calls to c.
func (t *Telemetry) Client(c storage.ClientConfig) storage.ClientConfig {
	if t.metrics != nil {
		c.Observe = t.metrics.ObserveDynamoDB
	}
	if t.tracer != nil {
		c.TracerProvider = tracing.AWS(t.tracer)
	}
	return c
}

// Handler adds the observers of GraphQL requests to o.
func (t *Telemetry) Handler(o graph.HandlerOptions) graph.HandlerOptions {
	o.Metrics = t.metrics
	if t.tracer != nil {
		o.TracerProvider = t.tracer
	}
	return o
}

// MetricsServer returns the server of the metrics at MetricsPath, for a
// listener of their own so that they stay off the public port, or nil
// when metrics are off.
func (t *Telemetry) MetricsServer() *http.Server {
	if t.metrics == nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, t.metrics.Handler())
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
}

// Shutdown exports the spans not sent yet. Their loss is logged, not
// returned: it must not fail a shutdown that went well otherwise.
func (t *Telemetry) Shutdown(ctx context.Context, logger *slog.Logger) {
	if t.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), traceFlushTimeout)
	defer cancel()
	if err := t.tracer.Shutdown(ctx); err != nil {
		logger.Warn("spans lost at shutdown", "err", err)
	}
}

// AnswerObserver returns what the answer cache reports to: the metrics,
// or nothing when they are off.
func (t *Telemetry) AnswerObserver() gqlhttp.AnswerObserver {
	if t.metrics == nil {
		return nil
	}
	return t.metrics
}

// StreamObserver returns what the gate of subscription streams reports
// to: the metrics, or nothing when they are off.
func (t *Telemetry) StreamObserver() gqlhttp.StreamObserver {
	if t.metrics == nil {
		return nil
	}
	return t.metrics
}
