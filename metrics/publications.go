package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Publications' metrics: each request a publication is served or refused
// (by its rate limit), and the DynamoDB requests and read and write
// capacity units its requests consumed, labelled by the publication's id.
//
// The label's values are bounded: the publications of an operator's
// allow-list (SetPublicationLabels) and the first MaxPublicationLabels
// others a server serves get their own; every other publication counts
// under OtherPublications. So a server of 10,000 publications exports at
// most (MaxPublicationLabels + the allow-list + 1) × 6 series here.
const (
	// MaxPublicationLabels is how many publications outside the
	// allow-list get a label of their own.
	MaxPublicationLabels = 100
	// OtherPublications labels every other publication.
	OtherPublications = "other"
)

// Outcomes of a publication's request.
const (
	Served      = "served"
	RateLimited = "rate_limited"
)

// publicationMetrics are the series of publications.
type publicationMetrics struct {
	requests *prometheus.CounterVec
	dynamo   *prometheus.CounterVec
	capacity *prometheus.CounterVec

	mu      sync.Mutex
	allowed map[string]bool
	seen    map[string]bool
}

func newPublicationMetrics(r *prometheus.Registry) *publicationMetrics {
	p := &publicationMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_publication_requests_total",
			Help: "Requests of a publication by its id (\"other\" past the labelled ones) and outcome (served or rate_limited).",
		}, []string{"publication", "outcome"}),
		dynamo: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_publication_dynamodb_requests_total",
			Help: "DynamoDB requests of a publication's requests, by its id.",
		}, []string{"publication"}),
		capacity: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blog_publication_consumed_capacity_units_total",
			Help: "Read and write capacity units a publication's requests consumed, by its id and kind (read or write).",
		}, []string{"publication", "kind"}),
		allowed: map[string]bool{},
		seen:    map[string]bool{},
	}
	r.MustRegister(p.requests, p.dynamo, p.capacity)
	return p
}

// SetPublicationLabels gives the publications ids labels of their own,
// besides the first MaxPublicationLabels others served.
func (m *Metrics) SetPublicationLabels(ids []string) {
	m.pubs.mu.Lock()
	defer m.pubs.mu.Unlock()
	for _, id := range ids {
		m.pubs.allowed[id] = true
	}
}

// ObservePublication counts one request of the publication id: its
// outcome (Served or RateLimited), the DynamoDB requests it made and the
// read and write capacity units they consumed.
func (m *Metrics) ObservePublication(id, outcome string, requests int, read, write float64) {
	label := m.pubs.label(id)
	m.pubs.requests.WithLabelValues(label, outcome).Inc()
	if requests > 0 {
		m.pubs.dynamo.WithLabelValues(label).Add(float64(requests))
		m.pubs.capacity.WithLabelValues(label, "read").Add(read)
		m.pubs.capacity.WithLabelValues(label, "write").Add(write)
	}
}

// label returns the label of the publication id.
func (p *publicationMetrics) label(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.allowed[id] || p.seen[id]:
		return id
	case len(p.seen) < MaxPublicationLabels && id != OtherPublications:
		p.seen[id] = true
		return id
	}
	return OtherPublications
}
