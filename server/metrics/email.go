package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// emailKinds and emailStatuses are the label values server/mail reports;
// their series are created up front.
var (
	emailKinds    = [...]string{"payout_approval", "endpoint_paused", "price_degraded", "receipt"}
	emailStatuses = [...]string{"sent", "failed"}
)

// emailMetrics is payhook_emails_total, added by ObserveEmail.
type emailMetrics struct {
	once  sync.Once
	total *prometheus.CounterVec
}

// ObserveEmail adds payhook_emails_total{kind,status}: the emails this
// instance sent, or failed for good, by kind. The server calls it when
// email is on; EmailFinished feeds it.
func (m *Metrics) ObserveEmail() {
	m.email.once.Do(func() {
		m.email.total = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "emails_total",
			Help:      "Emails this instance sent, or failed for good (refused, or not sent within 48 hours), by kind (payout_approval, endpoint_paused, price_degraded, receipt) and status (sent, failed).",
		}, []string{"kind", "status"})
		for _, k := range emailKinds {
			for _, st := range emailStatuses {
				m.email.total.WithLabelValues(k, st)
			}
		}
		m.reg.MustRegister(m.email.total)
	})
}

// EmailFinished counts an email that left the outbox (it implements
// server/mail's Observer); a kind or status outside the known sets is
// recorded as OtherLabel. Nothing is counted before ObserveEmail.
func (m *Metrics) EmailFinished(kind, status string) {
	if m.email.total == nil {
		return
	}
	known := func(v string, set []string) string {
		for _, s := range set {
			if v == s {
				return v
			}
		}
		return OtherLabel
	}
	m.email.total.WithLabelValues(known(kind, emailKinds[:]), known(status, emailStatuses[:])).Inc()
}
