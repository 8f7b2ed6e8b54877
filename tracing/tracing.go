// Package tracing traces GraphQL operations with OpenTelemetry and exports
// the spans with OTLP over HTTP. It is off unless an OTLP endpoint is
// configured; DynamoDB calls are traced by the AWS SDK's own
// instrumentation under the operation's span.
package tracing

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName names the server in its spans unless OTEL_SERVICE_NAME says
// otherwise.
const ServiceName = "blog"

// Endpoint returns the OTLP endpoint that getenv configures for traces
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT),
// or "" when there is none: tracing is off then.
func Endpoint(getenv func(string) string) string {
	if e := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
		return e
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
}

// NewProvider returns a tracer provider that sends spans in batches to the
// OTLP/HTTP endpoint that the standard OTEL_EXPORTER_OTLP_* variables
// configure, sampled as OTEL_TRACES_SAMPLER says (every span by default).
// Its Shutdown sends what is left. It fails when the variables are invalid.
func NewProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", ServiceName)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}

// Extension returns a gqlgen handler extension that traces every GraphQL
// request with tp: a server span for the operation, continuing the trace
// of the request's traceparent header, and a child span for each root
// field. Work a resolver does with its context, DynamoDB calls included,
// nests under them.
func Extension(tp trace.TracerProvider) graphql.HandlerExtension {
	return extension{
		tracer:     tp.Tracer("github.com/blogql/blog/tracing"),
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

type extension struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
}

func (extension) ExtensionName() string                          { return "OpenTelemetry" }
func (extension) Validate(schema graphql.ExecutableSchema) error { return nil }

// InterceptResponse wraps the execution of an operation, and sees the
// requests that fail to parse or validate too.
func (e extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	ctx = e.propagator.Extract(ctx, propagation.HeaderCarrier(oc.Headers))
	name, attrs := "GraphQL Operation", []attribute.KeyValue{}
	if op := oc.Operation; op != nil {
		name = string(op.Operation)
		attrs = append(attrs, attribute.String("graphql.operation.type", string(op.Operation)))
		if op.Name != "" {
			name += " " + op.Name
			attrs = append(attrs, attribute.String("graphql.operation.name", op.Name))
		}
	}
	ctx, span := e.tracer.Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(oc.Stats.OperationStart),
		trace.WithAttributes(attrs...))
	defer span.End()

	resp := next(ctx)
	if resp != nil && len(resp.Errors) > 0 {
		first := resp.Errors[0]
		if code, ok := first.Extensions["code"].(string); ok {
			span.SetAttributes(attribute.String("graphql.error.code", code))
		}
		span.SetAttributes(attribute.Int("graphql.error.count", len(resp.Errors)))
		span.SetStatus(codes.Error, first.Message)
	}
	return resp
}

// InterceptRootField traces one root field, such as Query.post, with the
// fields below it.
func (e extension) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	fc := graphql.GetRootFieldContext(ctx)
	ctx, span := e.tracer.Start(ctx, fc.Field.ObjectDefinition.Name+"."+fc.Field.Name,
		trace.WithAttributes(attribute.String("graphql.field.name", fc.Field.Name)))
	defer span.End()
	return next(ctx)
}
