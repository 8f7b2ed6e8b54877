package metrics

import "github.com/prometheus/client_golang/prometheus"

// ViewObserver registers the views' counter in m and returns what a
// views.Counter reports to (views.Options.Observe): each beacon's outcome
// (counted, duplicate, bot, hidden, flood, invalid, failed,
// oversized), and the writes and failures of its flushes. Call it once.
func (m *Metrics) ViewObserver() func(event string, n int) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "blog_views_total",
		Help: "Views by outcome (counted, or why not: duplicate, bot, hidden, flood, invalid, failed, oversized), and the DynamoDB writes (flush_writes) and failed posts (flush_errors) of their flushes.",
	}, []string{"event"})
	m.registry.MustRegister(c)
	return func(event string, n int) {
		if n > 0 {
			c.WithLabelValues(event).Add(float64(n))
		}
	}
}
