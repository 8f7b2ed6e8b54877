package storage

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The DynamoDB client and its request counting are the table primitives'
// (package dynamo); the server and tests reach them here.

// ClientConfig selects the DynamoDB the client talks to (see
// dynamo.ClientConfig).
type ClientConfig = dynamo.ClientConfig

// Call describes one finished DynamoDB API call to an observer such as a
// metrics collector (see ClientConfig.Observe).
type Call = dynamo.Call

// Counter counts DynamoDB requests made with one context, by operation,
// and the capacity units they consumed (see WithRequestCounter).
type Counter = dynamo.Counter

const (
	// DefaultMaxAttempts is how often a call is tried when
	// ClientConfig.MaxAttempts is zero.
	DefaultMaxAttempts = dynamo.DefaultMaxAttempts
	// MaxAttemptsLimit is the most attempts a configuration may ask for.
	MaxAttemptsLimit = dynamo.MaxAttemptsLimit
)

// NewClient returns a DynamoDB client for cfg. Every client it makes counts
// its requests into the counter of the call's context (see
// WithRequestCounter), and a call that still fails for a passing reason
// after its retries matches ErrUnavailable. It fails when cfg.MaxAttempts is
// out of range or the AWS configuration cannot be loaded.
func NewClient(ctx context.Context, cfg ClientConfig) (*dynamodb.Client, error) {
	return dynamo.NewClient(ctx, cfg)
}

// NewStreamsClient returns a DynamoDB Streams client for cfg: the same
// endpoint, region, credentials, retries and observation as NewClient's.
func NewStreamsClient(ctx context.Context, cfg ClientConfig) (*dynamodbstreams.Client, error) {
	return dynamo.NewStreamsClient(ctx, cfg)
}

// WithRequestCounter returns a context whose DynamoDB requests are counted
// in the returned Counter. Counters nest: a request made with the context
// counts in the counter of every context it derives from as well.
func WithRequestCounter(ctx context.Context) (context.Context, *Counter) {
	return dynamo.WithRequestCounter(ctx)
}
