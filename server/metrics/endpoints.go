package metrics

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// endpointMetrics is payhook_webhook_endpoint_pauses_total and the gauge
// read at scrape time, added by ObserveEndpoints.
type endpointMetrics struct {
	once   sync.Once
	pauses *prometheus.CounterVec
}

// endpointPauseReasons are the reasons EndpointPaused reports; their series
// are created up front.
var endpointPauseReasons = [...]string{"failing", "merchant"}

// ObserveEndpoints adds payhook_webhook_endpoints_paused_failing (read from
// paused at each scrape: the webhook endpoints paused because every
// attempt failed, not yet resumed, over every project) and
// payhook_webhook_endpoint_pauses_total{reason} (the pauses this instance
// made: failing, by its monitor; merchant, at the merchant's request),
// which EndpointPaused feeds. Call it once.
func (m *Metrics) ObserveEndpoints(paused func(ctx context.Context) (int, error)) {
	m.endpoint.once.Do(func() {
		m.endpoint.pauses = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "webhook_endpoint_pauses_total",
			Help:      "Webhook endpoints this instance paused, by reason: failing (every attempt failed for --endpoint-pause-after) or merchant (asked).",
		}, []string{"reason"})
		for _, r := range endpointPauseReasons {
			m.endpoint.pauses.WithLabelValues(r)
		}
		m.reg.MustRegister(m.endpoint.pauses)
		if paused != nil {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Namespace: Namespace,
				Name:      "webhook_endpoints_paused_failing",
				Help:      "Webhook endpoints paused because every attempt failed, not yet resumed (all projects; -1 when the database could not be read).",
			}, func() float64 {
				ctx, cancel := context.WithTimeout(context.Background(), StatsTimeout)
				defer cancel()
				n, err := paused(ctx)
				if err != nil {
					return -1
				}
				return float64(n)
			}))
		}
	})
}

// EndpointPaused counts a pause made by this instance (reason failing or
// merchant; anything else is OtherLabel). Nothing is counted before
// ObserveEndpoints.
func (m *Metrics) EndpointPaused(reason string) {
	if m.endpoint.pauses == nil {
		return
	}
	for _, r := range endpointPauseReasons {
		if r == reason {
			m.endpoint.pauses.WithLabelValues(r).Inc()
			return
		}
	}
	m.endpoint.pauses.WithLabelValues(OtherLabel).Inc()
}
