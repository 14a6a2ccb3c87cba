package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/notifier"
)

// Namespace prefixes every payhook metric name.
const Namespace = "payhook"

// StatsTimeout bounds the queue query a scrape runs, so a slow database
// delays a scrape by at most this long.
const StatsTimeout = 2 * time.Second

// OtherLabel replaces a transport or outcome value outside the known sets,
// so a caller bug cannot grow the number of series without bound.
const OtherLabel = "other"

// transports and outcomes are the label values the notifier reports (see
// notifier.Observer). Their series are created up front.
var (
	transports = [...]string{"get", "form", "json"}
	outcomes   = [...]string{
		string(deliveryattempt.OutcomeAcknowledged),
		string(deliveryattempt.OutcomeFailed),
		string(deliveryattempt.OutcomeBlocked),
		string(deliveryattempt.OutcomeInterrupted),
	}
	finalStatuses = [...]string{
		notification.StatusAcknowledged.String(),
		notification.StatusFailed.String(),
	}
)

// DurationBuckets are the upper bounds, in seconds, of the delivery attempt
// duration histogram: from a 1ms local acknowledgement to the 30s egress
// timeout.
var DurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30}

// Metrics owns a Prometheus registry with payhook's collectors. Create it
// with New; it is safe for concurrent use.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	deliveries *prometheus.CounterVec
	durations  *prometheus.HistogramVec
	blocked    prometheus.Counter
	finished   map[string]prometheus.Counter
	finishedV  *prometheus.CounterVec

	nodeLatency *prometheus.HistogramVec

	httpRequests, grpcRequests *prometheus.CounterVec
	httpDuration, grpcDuration *prometheus.HistogramVec

	// series caches the children of the known label pairs. It is built in
	// New and only read afterwards, so AttemptFinished needs no lock.
	series map[string]transportSeries

	email    emailMetrics
	endpoint endpointMetrics
}

// transportSeries holds one transport's duration histogram and its counter
// per outcome.
type transportSeries struct {
	duration prometheus.Observer
	outcomes map[string]prometheus.Counter
}

// New builds a Metrics with its own registry holding:
//   - payhook_deliveries_total{transport,outcome} and
//     payhook_delivery_attempt_duration_seconds{transport}, fed by
//     AttemptFinished;
//   - payhook_blocked_destinations_total, attempts refused by the SSRF guard;
//   - payhook_notifications_finished_total{status}, notifications this
//     instance acknowledged or failed, fed by NotificationFinished;
//   - payhook_notifications{status} (the queue: pending, retrying) and
//     payhook_oldest_due_notification_age_seconds, read from stats at each
//     scrape (StatsTimeout), with payhook_metrics_scrape_errors_total
//     counting failed reads;
//   - payhook_watchers, read from watchers at each scrape;
//   - payhook_http_requests_total, payhook_http_request_duration_seconds,
//     payhook_grpc_requests_total and payhook_grpc_request_duration_seconds,
//     fed by InstrumentHTTP and the gRPC interceptors;
//   - the Go runtime and process collectors.
//
// A nil stats or watchers leaves out the metrics it feeds.
func New(stats func(ctx context.Context) (notifier.QueueStats, error), watchers func() int) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "deliveries_total",
			Help:      "Finished webhook delivery attempts, by transport (get, form, json) and outcome (acknowledged, failed, blocked, interrupted).",
		}, []string{"transport", "outcome"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace,
			Name:      "delivery_attempt_duration_seconds",
			Help:      "Duration of webhook delivery attempts, from sending the request to reading the merchant's response, by transport.",
			Buckets:   DurationBuckets,
		}, []string{"transport"}),
		blocked: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "blocked_destinations_total",
			Help:      "Delivery attempts refused because the callback resolved to a forbidden (private, loopback or special-purpose) address.",
		}),
		finishedV: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "notifications_finished_total",
			Help:      "Notifications that left the queue on this instance, by final status: acknowledged, or failed (delivery window closed).",
		}, []string{"status"}),
		finished: make(map[string]prometheus.Counter, len(finalStatuses)),
		nodeLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace,
			Name:      "chain_node_request_duration_seconds",
			Help:      "Duration of requests to chain nodes, by ticker and outcome (ok, error).",
			Buckets:   DurationBuckets,
		}, []string{"ticker", "outcome"}),
		series: make(map[string]transportSeries, len(transports)),
	}
	m.httpRequests, m.httpDuration, m.grpcRequests, m.grpcDuration = newRequestMetrics()
	for _, st := range finalStatuses {
		m.finished[st] = m.finishedV.WithLabelValues(st)
	}
	for _, t := range transports {
		ts := transportSeries{
			duration: m.durations.WithLabelValues(t),
			outcomes: make(map[string]prometheus.Counter, len(outcomes)),
		}
		for _, o := range outcomes {
			ts.outcomes[o] = m.deliveries.WithLabelValues(t, o)
		}
		m.series[t] = ts
	}
	m.reg.MustRegister(
		m.deliveries,
		m.durations,
		m.blocked,
		m.finishedV,
		m.nodeLatency,
		m.httpRequests, m.httpDuration, m.grpcRequests, m.grpcDuration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.ObserveQueue(stats, watchers)
	m.handler = promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A failing collector costs its own metrics, not the whole scrape;
		// promhttp_metric_handler_errors_total counts such failures.
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	}))
	return m
}

// ObserveQueue adds the metrics read from stats and watchers at each scrape,
// for a Metrics built before the notifier it observes (the notifier takes
// the Metrics as its Observer). A nil func leaves out the metrics it feeds;
// call it at most once with each non-nil.
func (m *Metrics) ObserveQueue(stats func(ctx context.Context) (notifier.QueueStats, error), watchers func() int) {
	if stats != nil {
		m.reg.MustRegister(newQueueCollector(stats, StatsTimeout))
	}
	if watchers != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace,
			Name:      "watchers",
			Help:      "Live WatchDeliveries subscriptions on this instance.",
		}, func() float64 { return float64(watchers()) }))
	}
}

// Handler serves the registry in the Prometheus exposition formats, with
// promhttp's own request and error counters.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Registry returns the registry, to add collectors or to gather in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// AttemptFinished records one finished delivery attempt: it counts it by
// transport and outcome, observes its duration, and counts blocked
// destinations. It implements notifier.Observer and never blocks; values
// outside the notifier's documented sets are recorded as OtherLabel.
func (m *Metrics) AttemptFinished(transport, outcome string, d time.Duration) {
	if outcome == string(deliveryattempt.OutcomeBlocked) {
		m.blocked.Inc()
	}
	if ts, ok := m.series[transport]; ok {
		ts.duration.Observe(d.Seconds())
		if c, ok := ts.outcomes[outcome]; ok {
			c.Inc()
			return
		}
	} else {
		transport = OtherLabel
		m.durations.WithLabelValues(OtherLabel).Observe(d.Seconds())
	}
	if !knownOutcome(outcome) {
		outcome = OtherLabel
	}
	m.deliveries.WithLabelValues(transport, outcome).Inc()
}

// NotificationFinished counts a notification that left the queue. It
// implements notifier.Observer and never blocks; a status outside
// acknowledged and failed is recorded as OtherLabel.
func (m *Metrics) NotificationFinished(status string) {
	if c, ok := m.finished[status]; ok {
		c.Inc()
		return
	}
	m.finishedV.WithLabelValues(OtherLabel).Inc()
}

func knownOutcome(o string) bool {
	for _, k := range outcomes {
		if o == k {
			return true
		}
	}
	return false
}

var _ notifier.Observer = (*Metrics)(nil)
