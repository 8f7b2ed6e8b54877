package storage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/truora/minidyn/server"
)

// ClientConfig selects the DynamoDB the client talks to. With Embedded set,
// an in-process engine answers; otherwise Endpoint (empty for AWS) and
// Region are used, with credentials from the SDK's default chain.
type ClientConfig struct {
	Embedded bool
	Endpoint string
	Region   string
	// MaxAttempts bounds the SDK's retries of throttled and failed calls;
	// zero means 3.
	MaxAttempts int
	// HTTPClient, when set, carries every request (tests inject faults here).
	HTTPClient *http.Client
}

// NewClient returns a DynamoDB client for cfg. Every client it makes counts
// its requests into the counter of the call's context (see
// WithRequestCounter). It fails when the AWS configuration cannot be loaded.
func NewClient(ctx context.Context, cfg ClientConfig) (*dynamodb.Client, error) {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 3
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(cfg.Region),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cfg.MaxAttempts
				o.MaxBackoff = 2 * time.Second
			})
		}),
	}
	httpClient := cfg.HTTPClient
	if cfg.Embedded {
		if httpClient == nil {
			httpClient = &http.Client{Transport: NewEmbeddedTransport()}
		}
		cfg.Endpoint = "http://embedded.invalid"
	}
	if cfg.Embedded || (cfg.Endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "") {
		// Local engines accept any credentials; AWS never sees these.
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load aws config: %w", err)
	}
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		if httpClient != nil {
			o.HTTPClient = httpClient
		}
		// The embedded engine sends no CRC32 of its responses.
		o.DisableValidateResponseChecksum = cfg.Embedded
		o.APIOptions = append(o.APIOptions, countRequests)
	}), nil
}

// NewEmbeddedTransport returns an http.RoundTripper that answers DynamoDB
// requests with a fresh in-memory engine in this process, so the real SDK
// client runs against it with no network. Data lives as long as the
// transport.
func NewEmbeddedTransport() http.RoundTripper {
	return &embeddedTransport{handler: server.NewServer()}
}

type embeddedTransport struct {
	handler http.Handler
}

func (t *embeddedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.handler.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// Counter counts DynamoDB requests (API calls, not retried attempts) made
// with one context, by operation name. It is safe for concurrent use.
type Counter struct {
	mu  sync.Mutex
	ops map[string]int
}

type counterKey struct{}

// WithRequestCounter returns a context whose DynamoDB requests are counted
// in the returned Counter.
func WithRequestCounter(ctx context.Context) (context.Context, *Counter) {
	c := &Counter{ops: map[string]int{}}
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

func (c *Counter) add(op string) {
	c.mu.Lock()
	c.ops[op]++
	c.mu.Unlock()
}

func countRequests(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountRequests",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if c, ok := ctx.Value(counterKey{}).(*Counter); ok {
				c.add(awsmiddleware.GetOperationName(ctx))
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}
