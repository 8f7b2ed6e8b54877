package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go/middleware"
	"github.com/aws/smithy-go/tracing"
)

// ClientConfig selects the DynamoDB the client talks to. With Embedded set,
// the engine of package embedded answers in this process, carried by
// HTTPClient (the server opens it on its data file and passes it as the
// transport; without one every request fails). Otherwise Endpoint (empty
// for AWS) and Region are used, with credentials from the SDK's default
// chain unless LocalCredentials is set. The client reads no environment
// variable of its own choosing; the SDK's default chain reads AWS's.
type ClientConfig struct {
	Embedded bool
	Endpoint string
	Region   string
	// LocalCredentials signs requests with fixed credentials, which a
	// local engine such as DynamoDB Local accepts, instead of the SDK's
	// default chain. The embedded engine's requests are not signed.
	LocalCredentials bool
	// MaxAttempts bounds the attempts of one call that DynamoDB throttles
	// or fails with a server or connection error; zero means
	// DefaultMaxAttempts, one means no retries.
	MaxAttempts int
	// HTTPClient, when set, carries every request (tests inject faults here).
	HTTPClient *http.Client
	// Observe, when set, is called after every call with its operation,
	// consumed capacity, duration and error, e.g. to count them in metrics.
	Observe func(Call)
	// TracerProvider, when set, traces every call with the SDK's own
	// instrumentation, e.g. OpenTelemetry through smithyoteltracing.
	TracerProvider tracing.TracerProvider
}

// The retry policy of every DynamoDB call, set here and nowhere else. It is
// made for an API that answers people within a request deadline: a few
// quick attempts with jittered exponential backoff from retryBaseDelay up
// to retryMaxBackoff, instead of the SDK's one-second base meant for batch
// jobs. The SDK's retry quota stays on, so a DynamoDB outage fails calls
// fast rather than multiplying the load with retries. Every call also
// ends at its context's deadline (the GraphQL handler's request timeout).
const (
	// DefaultMaxAttempts is how often a call is tried when
	// ClientConfig.MaxAttempts is zero.
	DefaultMaxAttempts = 3
	// MaxAttemptsLimit is the most attempts a configuration may ask for.
	MaxAttemptsLimit = 10
	retryBaseDelay   = 50 * time.Millisecond
	retryMaxBackoff  = time.Second
)

// NewClient returns a DynamoDB client for cfg. Every client it makes counts
// its requests into the counter of the call's context (see
// WithRequestCounter), and a call that still fails for a passing reason
// after its retries matches ErrUnavailable. It fails when cfg.MaxAttempts is
// out of range or the AWS configuration cannot be loaded.
func NewClient(ctx context.Context, cfg ClientConfig) (*dynamodb.Client, error) {
	c, err := loadConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(c.aws, func(o *dynamodb.Options) {
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
		if c.http != nil {
			o.HTTPClient = c.http
		}
		// validateCRC32 instead (checksum.go).
		o.DisableValidateResponseChecksum = true
		o.Protocol = readsProtocol{o.Protocol}
		o.APIOptions = append(o.APIOptions, c.apiOptions...)
		o.APIOptions = append(o.APIOptions, validateCRC32)
		if cfg.TracerProvider != nil {
			o.TracerProvider = cfg.TracerProvider
		}
	}), nil
}

// NewStreamsClient returns a DynamoDB Streams client for cfg: the same
// endpoint (the embedded engine serves the Streams API on the same
// transport), region, credentials, retries and observation as NewClient's
// DynamoDB client. It fails as NewClient does.
func NewStreamsClient(ctx context.Context, cfg ClientConfig) (*dynamodbstreams.Client, error) {
	c, err := loadConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return dynamodbstreams.NewFromConfig(c.aws, func(o *dynamodbstreams.Options) {
		if c.endpoint != "" {
			o.BaseEndpoint = aws.String(c.endpoint)
		}
		if c.http != nil {
			o.HTTPClient = c.http
		}
		o.APIOptions = append(o.APIOptions, c.apiOptions...)
		if cfg.TracerProvider != nil {
			o.TracerProvider = cfg.TracerProvider
		}
	}), nil
}

// loadedConfig is what the clients of one ClientConfig share.
type loadedConfig struct {
	aws        aws.Config
	endpoint   string
	http       *http.Client
	apiOptions []func(*middleware.Stack) error
}

// loadConfig checks cfg and loads the AWS configuration its clients use.
func loadConfig(ctx context.Context, cfg ClientConfig) (*loadedConfig, error) {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.MaxAttempts < 1 || cfg.MaxAttempts > MaxAttemptsLimit {
		return nil, fmt.Errorf("max attempts %d: must be 1 to %d", cfg.MaxAttempts, MaxAttemptsLimit)
	}
	retryer := retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = cfg.MaxAttempts
		o.Backoff = retry.BackoffDelayerFunc(backoff)
	})
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(cfg.Region),
		config.WithRetryer(func() aws.Retryer { return retryer }),
	}
	httpClient := cfg.HTTPClient
	if cfg.Embedded {
		if httpClient == nil {
			httpClient = &http.Client{Transport: failedTransport{errNoEngine}}
		}
		cfg.Endpoint = "http://embedded.invalid"
	}
	switch {
	case cfg.Embedded:
		// The engine in this process checks no signature.
		opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case cfg.LocalCredentials:
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load aws config: %w", err)
	}
	c := &loadedConfig{aws: awsCfg, endpoint: cfg.Endpoint, http: httpClient,
		apiOptions: []func(*middleware.Stack) error{countRequests, markUnavailable(retryer)}}
	if cfg.Observe != nil {
		c.apiOptions = append(c.apiOptions, observeCalls(cfg.Observe))
	}
	if cfg.Embedded {
		c.apiOptions = append(c.apiOptions, inProcess)
	}
	return c, nil
}

// inProcess takes out of an embedded client's calls what only a request
// that leaves the process needs: the headers that identify the client and
// the invocation to AWS (user agent, invocation id, Lambda trace id) and the
// hash of the payload that a signature would cover. The engine reads none
// of them.
func inProcess(stack *middleware.Stack) error {
	for _, id := range []string{"ClientRequestID", "UserAgent", "RecursionDetection"} {
		if _, err := stack.Build.Remove(id); err != nil {
			return fmt.Errorf("remove %s: %w", id, err)
		}
	}
	if _, err := stack.Finalize.Remove("ComputePayloadHash"); err != nil {
		return fmt.Errorf("remove ComputePayloadHash: %w", err)
	}
	return nil
}

// backoff returns the wait before retry number attempt (1 for the first):
// half of retryBaseDelay·2^(attempt-1), capped at retryMaxBackoff, plus up
// to as much again at random, so clients throttled together do not retry
// together.
func backoff(attempt int, _ error) (time.Duration, error) {
	d := min(retryBaseDelay<<min(attempt-1, 10), retryMaxBackoff)
	return d/2 + rand.N(d/2+1), nil
}

// unavailableError is a call that failed for a passing reason after its
// retries. It matches ErrUnavailable and still unwraps to the SDK's error.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// markUnavailable makes the errors that the retryer would retry (throttling,
// server errors, lost connections) match ErrUnavailable once the retries are
// spent, so callers tell "try again later" from a bug without knowing the
// SDK's error types. A cancelled or expired context is not one of them.
func markUnavailable(retryer aws.Retryer) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("MarkUnavailable",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil && ctx.Err() == nil && retryer.IsErrorRetryable(err) {
					err = &unavailableError{err}
				}
				return out, md, err
			}), middleware.Before)
	}
}

// errNoEngine fails the requests of an embedded client that was given no
// engine to carry them.
var errNoEngine = errors.New("storage: ClientConfig.Embedded without an HTTPClient carrying the engine")

// failedTransport fails every request with err.
type failedTransport struct{ err error }

func (t failedTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, t.err }

// Counter counts DynamoDB requests (API calls, not retried attempts) made
// with one context, by operation name, and the capacity units DynamoDB
// reports they consumed. It is safe for concurrent use.
type Counter struct {
	mu     sync.Mutex
	ops    map[string]int
	read   float64
	write  float64
	parent *Counter
}

type counterKey struct{}

// WithRequestCounter returns a context whose DynamoDB requests are counted
// in the returned Counter. Counters nest: a request made with the context
// counts in the counter of every context it derives from as well.
func WithRequestCounter(ctx context.Context) (context.Context, *Counter) {
	parent, _ := ctx.Value(counterKey{}).(*Counter)
	c := &Counter{ops: map[string]int{}, parent: parent}
	return context.WithValue(ctx, counterKey{}, c), c
}

// Total returns how many requests were counted.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.ops {
		n += v
	}
	return n
}

// ByOperation returns the counts by DynamoDB operation name, e.g. "Query".
func (c *Counter) ByOperation() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.ops))
	for k, v := range c.ops {
		out[k] = v
	}
	return out
}

// Capacity returns the read and the write capacity units the counted
// requests consumed, as DynamoDB reported them: reads (GetItem,
// BatchGetItem, Query, Scan) consume read units, writes write units.
func (c *Counter) Capacity() (read, write float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read, c.write
}

func (c *Counter) add(op string) {
	for ; c != nil; c = c.parent {
		c.mu.Lock()
		c.ops[op]++
		c.mu.Unlock()
	}
}

func (c *Counter) addCapacity(op string, units float64) {
	if units == 0 {
		return
	}
	for ; c != nil; c = c.parent {
		c.mu.Lock()
		if readOperations[op] {
			c.read += units
		} else {
			c.write += units
		}
		c.mu.Unlock()
	}
}

// readOperations are the operations that consume read capacity.
var readOperations = map[string]bool{"GetItem": true, "BatchGetItem": true, "Query": true, "Scan": true, "TransactGetItems": true}

// countRequests counts every call in the counter of its context, with the
// capacity it consumed: every read and write asks DynamoDB for it
// (ReturnConsumedCapacity TOTAL), which makes the answer a few bytes
// longer and the call cost the same.
func countRequests(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountRequests",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c, _ := ctx.Value(counterKey{}).(*Counter)
			op := awsmiddleware.GetOperationName(ctx)
			c.add(op)
			in.Parameters = returnCapacity(in.Parameters)
			out, md, err := next.HandleInitialize(ctx, in)
			c.addCapacity(op, consumedCapacity(out.Result))
			return out, md, err
		}), middleware.After)
}
