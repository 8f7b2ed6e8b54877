// Package metrics collects the server's Prometheus metrics: GraphQL
// operations by name and outcome with their latency, DynamoDB calls with the
// capacity they consume, dataloader batch sizes, and the size of the query
// caches. It is the only package
// that knows Prometheus; storage and graph report to it through plain
// functions.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/blogql/blog/storage"
)

// Operation labels that are not an operation's name.
const (
	// Anonymous labels an operation without a name.
	Anonymous = "anonymous"
	// Unknown labels a request that failed before an operation was chosen:
	// its document did not parse or validate.
	Unknown = "unknown"
	// Other labels the operations whose names came after the first
	// MaxOperationNames, so a client cannot grow the series without bound.
	Other = "other"
	// MaxOperationNames is how many distinct operation names get a label of
	// their own.
	MaxOperationNames = 200
)

// Outcome labels.
const (
	// OK labels an operation or call without errors. A failed operation is
	// labelled with the extensions.code of its first error, a failed
	// DynamoDB call with its AWS error code.
	OK = "ok"
	// Failed labels a DynamoDB call that failed without an AWS error code
	// (a lost connection, an expired deadline), and an operation whose
	// first error has no code or whose client went away.
	Failed = "error"
)

// Metrics holds the server's metrics in a registry of its own. It is safe
// for concurrent use.
type Metrics struct {
	registry *prometheus.Registry

	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	dynamoRequests *prometheus.CounterVec
	dynamoCapacity *prometheus.CounterVec
	dynamoLatency  *prometheus.HistogramVec

	batchSize  *prometheus.HistogramVec
	batchWaits *prometheus.CounterVec

	queryCacheEntries *prometheus.GaugeVec
	queryCacheBytes   *prometheus.GaugeVec

	answerLookups   *prometheus.CounterVec
	answerEvictions prometheus.Counter
	answerEntries   prometheus.Gauge
	answerBytes     prometheus.Gauge

	streamsOpen    prometheus.Gauge
	streamsRefused *prometheus.CounterVec

	mu    sync.Mutex
	names map[string]bool

	pubs *publicationMetrics // publications.go
}

// New returns a Metrics with every series registered, along with the Go
// runtime's and the process's own.
func New() *Metrics {
	latencyBuckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_graphql_requests_total",
			Help: "GraphQL requests by operation name and outcome (ok, or the extensions.code of the first error).",
		}, []string{"operation", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "blog_graphql_request_duration_seconds",
			Help:    "Time from reading a GraphQL request to its response, by operation name.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		dynamoRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_dynamodb_requests_total",
			Help: "DynamoDB API calls, retries included in their call, by operation and outcome (ok, or the AWS error code).",
		}, []string{"operation", "outcome"}),
		dynamoCapacity: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_dynamodb_consumed_capacity_units_total",
			Help: "Read and write capacity units DynamoDB reports consumed, by operation.",
		}, []string{"operation"}),
		dynamoLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "blog_dynamodb_request_duration_seconds",
			Help:    "Duration of DynamoDB API calls, retries included, by operation.",
			Buckets: latencyBuckets,
		}, []string{"operation"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "blog_dataloader_batch_size",
			Help:    "Keys per batch read of a dataloader, by loader.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100},
		}, []string{"loader"}),
		batchWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_dataloader_waits_total",
			Help: "Batch reads of a dataloader that waited for its batch window before reading, by loader; primed reads do not wait.",
		}, []string{"loader"}),
		queryCacheEntries: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blog_graphql_query_cache_entries",
			Help: "Entries of a query cache: parsed documents (documents) or automatic persisted queries (persisted).",
		}, []string{"cache"}),
		queryCacheBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blog_graphql_query_cache_bytes",
			Help: "Memory a query cache is charged for its entries, at most its bound, by cache (documents or persisted).",
		}, []string{"cache"}),
		answerLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_answer_cache_lookups_total",
			Help: "Anonymous reads looked up in the answer cache, by result (hit or miss).",
		}, []string{"result"}),
		answerEvictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blog_answer_cache_evictions_total",
			Help: "Answers dropped from the answer cache to make room (not those a write invalidated).",
		}),
		answerEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blog_answer_cache_entries",
			Help: "Answers the answer cache holds.",
		}),
		answerBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blog_answer_cache_bytes",
			Help: "Memory the answer cache is charged for its answers, at most its bound (-answer-cache-bytes).",
		}),
		streamsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "blog_streams_open",
			Help: "Subscription streams (WebSocket connections and SSE responses) open on this server.",
		}),
		streamsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_streams_refused_total",
			Help: "Subscription streams refused, by the limit they met: address (-streams-per-address) or server (-max-streams).",
		}, []string{"limit"}),
		names: map[string]bool{},
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.latency,
		m.dynamoRequests, m.dynamoCapacity, m.dynamoLatency,
		m.batchSize, m.batchWaits,
		m.queryCacheEntries, m.queryCacheBytes,
		m.answerLookups, m.answerEvictions, m.answerEntries, m.answerBytes,
		m.streamsOpen, m.streamsRefused,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "blog_tenant_guard_violations_total",
			Help: "DynamoDB requests the tenant guard refused for naming a key outside their publication; any is a bug.",
		}, func() float64 { return float64(storage.TenantViolations()) }),
	)
	m.pubs = newPublicationMetrics(m.registry)
	return m
}

// Handler returns the endpoint that Prometheus scrapes.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// ObserveDynamoDB counts one DynamoDB call. It fits
// storage.ClientConfig.Observe.
func (m *Metrics) ObserveDynamoDB(c storage.Call) {
	outcome := OK
	if c.Err != nil {
		outcome = Failed
		var apiErr smithy.APIError
		if errors.As(c.Err, &apiErr) {
			outcome = apiErr.ErrorCode()
		}
	}
	m.dynamoRequests.WithLabelValues(c.Operation, outcome).Inc()
	m.dynamoCapacity.WithLabelValues(c.Operation).Add(c.CapacityUnits)
	m.dynamoLatency.WithLabelValues(c.Operation).Observe(c.Duration.Seconds())
}

// ObserveBatch records one batch read by a loader: its number of keys, and
// whether it waited for the loader's batch window.
func (m *Metrics) ObserveBatch(loader string, keys int, waited bool) {
	m.batchSize.WithLabelValues(loader).Observe(float64(keys))
	if waited {
		m.batchWaits.WithLabelValues(loader).Inc()
	}
}

// ObserveQueryCache records the size of the query cache named cache: its
// entries and the bytes they are charged.
func (m *Metrics) ObserveQueryCache(cache string, entries int, bytes int64) {
	m.queryCacheEntries.WithLabelValues(cache).Set(float64(entries))
	m.queryCacheBytes.WithLabelValues(cache).Set(float64(bytes))
}

// Extension returns the gqlgen handler extension that counts every GraphQL
// request and measures its latency.
func (m *Metrics) Extension() graphql.HandlerExtension {
	return extension{m}
}

type extension struct{ m *Metrics }

func (extension) ExtensionName() string                          { return "Metrics" }
func (extension) Validate(schema graphql.ExecutableSchema) error { return nil }

// InterceptResponse sees every response, those of requests that fail to
// parse or validate included.
func (e extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if !graphql.HasOperationContext(ctx) {
		return resp
	}
	oc := graphql.GetOperationContext(ctx)
	name := e.m.operationName(oc)
	outcome := OK
	switch {
	case resp == nil: // the client went away before the response
		outcome = Failed
	case len(resp.Errors) > 0:
		outcome = Failed
		if code, ok := resp.Errors[0].Extensions["code"].(string); ok {
			outcome = code
		}
	}
	e.m.requests.WithLabelValues(name, outcome).Inc()
	e.m.latency.WithLabelValues(name).Observe(graphql.Now().Sub(oc.Stats.OperationStart).Seconds())
	return resp
}

// operationName returns the label of the operation oc runs.
func (m *Metrics) operationName(oc *graphql.OperationContext) string {
	switch {
	case oc.Operation == nil:
		return Unknown
	case oc.Operation.Name == "":
		return Anonymous
	}
	name := oc.Operation.Name
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.names[name] {
		if len(m.names) >= MaxOperationNames {
			return Other
		}
		m.names[name] = true
	}
	return name
}

// AnswerLookup counts a lookup in the answer cache. With AnswerEvicted
// and AnswerCacheSize it makes Metrics a gqlhttp.AnswerObserver.
func (m *Metrics) AnswerLookup(hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.answerLookups.WithLabelValues(result).Inc()
}

// AnswerEvicted counts n answers dropped to make room.
func (m *Metrics) AnswerEvicted(n int) { m.answerEvictions.Add(float64(n)) }

// AnswerCacheSize records the answers the answer cache holds and the bytes
// they are charged.
func (m *Metrics) AnswerCacheSize(entries int, bytes int64) {
	m.answerEntries.Set(float64(entries))
	m.answerBytes.Set(float64(bytes))
}

// StreamsOpen records how many subscription streams are open. With
// StreamRefused it makes Metrics a gqlhttp.StreamObserver.
func (m *Metrics) StreamsOpen(n int) { m.streamsOpen.Set(float64(n)) }

// StreamRefused counts a subscription stream refused at the limit named
// limit.
func (m *Metrics) StreamRefused(limit string) { m.streamsRefused.WithLabelValues(limit).Inc() }
