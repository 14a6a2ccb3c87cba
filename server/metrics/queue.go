package metrics

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/notifier"
)

// statuses are the queued notification statuses always exported, at 0 when
// the queue holds none. Acknowledged and failed notifications have left the
// queue; payhook_notifications_finished_total counts them.
var statuses = [...]string{
	notification.StatusPending.String(),
	notification.StatusRetrying.String(),
}

// queueCollector reads the notification queue at scrape time. Reading at
// scrape time, rather than from a background poller, keeps the gauges as
// fresh as the scrape and runs no goroutine of its own.
type queueCollector struct {
	stats   func(ctx context.Context) (notifier.QueueStats, error)
	timeout time.Duration

	byStatus *prometheus.Desc
	oldest   *prometheus.Desc
	// errors is owned by the collector, not registered on its own, so a
	// failed read and its count appear in the same scrape.
	errors prometheus.Counter
}

func newQueueCollector(stats func(ctx context.Context) (notifier.QueueStats, error), timeout time.Duration) *queueCollector {
	return &queueCollector{
		stats:   stats,
		timeout: timeout,
		byStatus: prometheus.NewDesc(
			prometheus.BuildFQName(Namespace, "", "notifications"),
			"Notifications still to deliver (attempts in flight included), by delivery status (pending, retrying), read from the database at scrape time; a large queue's (100,000 or more, counted in 20 ms or more) at most every 50 times the count's duration (a million rows: about every 14 s).",
			[]string{"status"}, nil,
		),
		oldest: prometheus.NewDesc(
			prometheus.BuildFQName(Namespace, "", "oldest_due_notification_age_seconds"),
			"How long the oldest due, unclaimed notification has been waiting for a worker (0 when none is due); a growing value means delivery is falling behind.",
			nil, nil,
		),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "metrics_scrape_errors_total",
			Help:      "Scrapes whose notification queue read failed or timed out; payhook_notifications and payhook_oldest_due_notification_age_seconds are missing from those scrapes.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.byStatus
	ch <- c.oldest
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector. A failed read skips the queue
// gauges and counts an error rather than failing the scrape.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.stats(ctx)
	if err != nil {
		c.errors.Inc()
		ch <- c.errors
		return
	}
	ch <- c.errors
	for _, s := range statuses {
		ch <- prometheus.MustNewConstMetric(c.byStatus, prometheus.GaugeValue, float64(st.ByStatus[s]), s)
	}
	// Statuses added to the schema later are exported too, in a stable order.
	var extra []string
	for s := range st.ByStatus {
		if !knownStatus(s) {
			extra = append(extra, s)
		}
	}
	sort.Strings(extra)
	for _, s := range extra {
		ch <- prometheus.MustNewConstMetric(c.byStatus, prometheus.GaugeValue, float64(st.ByStatus[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, max(st.OldestDue, 0).Seconds())
}

func knownStatus(s string) bool {
	for _, k := range statuses {
		if s == k {
			return true
		}
	}
	return false
}
