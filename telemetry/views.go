package telemetry

// ViewObserver returns what the view counter reports to: the metrics, or
// nil when they are off. Call it once.
func (t *Telemetry) ViewObserver() func(event string, n int) {
	if t.metrics == nil {
		return nil
	}
	return t.metrics.ViewObserver()
}
