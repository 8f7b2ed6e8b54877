package tracing

import (
	"context"

	smithytracing "github.com/aws/smithy-go/tracing"
	"github.com/aws/smithy-go/tracing/smithyoteltracing"
	"go.opentelemetry.io/otel/trace"
)

// attemptSpan is the name the AWS SDK gives the span of one attempt of a
// call.
const attemptSpan = "Attempt"

// AWS returns tp for the AWS SDK's own instrumentation
// (storage.ClientConfig.TracerProvider). Of the SDK's spans it keeps the
// span of each call, e.g. DynamoDB.Query, and one span per attempt, so
// retries show; the ten or so spans the SDK opens for serializing,
// signing and reading would multiply the spans of every request without
// saying more. Properties the SDK sets on the current span then land on
// the attempt.
func AWS(tp trace.TracerProvider) smithytracing.TracerProvider {
	return callsOnly{smithyoteltracing.Adapt(tp)}
}

type callsOnly struct{ smithytracing.TracerProvider }

func (p callsOnly) Tracer(scope string, opts ...smithytracing.TracerOption) smithytracing.Tracer {
	return callsOnlyTracer{p.TracerProvider.Tracer(scope, opts...)}
}

type callsOnlyTracer struct{ smithytracing.Tracer }

// StartSpan starts the span of a call or an attempt. For any other it
// returns ctx as it is, so that the SDK's work goes on under the current
// span.
func (t callsOnlyTracer) StartSpan(ctx context.Context, name string, opts ...smithytracing.SpanOption) (context.Context, smithytracing.Span) {
	var o smithytracing.SpanOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.Kind != smithytracing.SpanKindClient && name != attemptSpan {
		return smithytracing.NopTracerProvider{}.Tracer("").StartSpan(ctx, name)
	}
	return t.Tracer.StartSpan(ctx, name, opts...)
}
