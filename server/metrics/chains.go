package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ChainStat is one ticker's watcher, as the chain metrics show it.
type ChainStat struct {
	Ticker string
	// Up is false while the node's last poll failed.
	Up bool
	// Head is the node's tip, Cursor the height processed.
	Head, Cursor int64
	// LastPoll is when the last poll ended (zero: none yet).
	LastPoll time.Time
	// PollErrors counts failed polls.
	PollErrors uint64
	// ForwardsPending are forwards recorded but not yet sent and recorded
	// done; ForwardsSent those done.
	ForwardsPending, ForwardsSent int64
}

// chainCollector reads the watchers at scrape time.
type chainCollector struct {
	stats                                         func() []ChainStat
	up, head, cursor, lag, lastPoll, errs, fwdPen *prometheus.Desc
	fwdSent                                       *prometheus.Desc
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

// ObserveChains registers, read from stats at each scrape and labelled by
// ticker: payhook_chain_up, payhook_chain_head_height,
// payhook_chain_cursor_height, payhook_chain_lag_blocks,
// payhook_chain_last_poll_timestamp_seconds,
// payhook_chain_poll_errors_total, payhook_chain_forwards_pending and
// payhook_chain_forwards_sent_total. Node request latency is
// payhook_chain_node_request_duration_seconds{ticker,outcome}, fed by
// NodeRequest.
func (m *Metrics) ObserveChains(stats func() []ChainStat) {
	m.reg.MustRegister(&chainCollector{
		stats:    stats,
		up:       desc("chain_up", "1 when the ticker's node answered the last poll, 0 when it failed.", "ticker"),
		head:     desc("chain_head_height", "The node's tip, as last read.", "ticker"),
		cursor:   desc("chain_cursor_height", "The height the watcher has processed (the durable cursor).", "ticker"),
		lag:      desc("chain_lag_blocks", "Blocks between the node's tip and the cursor.", "ticker"),
		lastPoll: desc("chain_last_poll_timestamp_seconds", "When the watcher's last poll ended.", "ticker"),
		errs:     desc("chain_poll_errors_total", "Polls of the node that failed.", "ticker"),
		fwdPen:   desc("chain_forwards_pending", "Forwarding transactions recorded and not yet sent and recorded done.", "ticker"),
		fwdSent:  desc("chain_forwards_sent_total", "Forwarding transactions sent and recorded done.", "ticker"),
	})
}

// Describe implements prometheus.Collector.
func (c *chainCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.head, c.cursor, c.lag, c.lastPoll, c.errs, c.fwdPen, c.fwdSent} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *chainCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.stats() {
		up := 0.0
		if s.Up {
			up = 1
		}
		g := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, s.Ticker)
		}
		g(c.up, up)
		g(c.head, float64(s.Head))
		g(c.cursor, float64(s.Cursor))
		g(c.lag, float64(max(0, s.Head-s.Cursor)))
		if !s.LastPoll.IsZero() {
			g(c.lastPoll, float64(s.LastPoll.UnixNano())/1e9)
		}
		ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(s.PollErrors), s.Ticker)
		g(c.fwdPen, float64(s.ForwardsPending))
		ch <- prometheus.MustNewConstMetric(c.fwdSent, prometheus.CounterValue, float64(s.ForwardsSent), s.Ticker)
	}
}

// PriceStats is the live price feed, as the price metrics show it.
type PriceStats struct {
	// Ages is how old each coin's price is, served or not.
	Ages map[string]time.Duration
	// MaxAge is --price-max-age; negative when there is no limit.
	MaxAge time.Duration
	// Stale counts the coins payhook serves that have no fresh price:
	// checkouts in them fail while it is above 0.
	Stale int
	// Providers are the price providers.
	Providers []PriceProvider
}

// PriceProvider is one price provider.
type PriceProvider struct {
	Name string
	// Up is true when it answered the last refresh.
	Up bool
	// Failures counts the refreshes it failed.
	Failures uint64
}

// ObservePrices registers, read from stats at each scrape:
// payhook_price_age_seconds{coin}, payhook_price_max_age_seconds (absent
// without a limit), payhook_price_stale_coins,
// payhook_price_provider_up{provider} and
// payhook_price_provider_failures_total{provider}.
func (m *Metrics) ObservePrices(stats func() PriceStats) {
	m.reg.MustRegister(&priceCollector{stats: stats,
		age:      desc("price_age_seconds", "Age of the USD price of each coin (the median of the providers, the last known one, or the table's).", "coin"),
		maxAge:   desc("price_max_age_seconds", "How old a price may be before it is not used (--price-max-age)."),
		stale:    desc("price_stale_coins", "Coins payhook serves that have no price within --price-max-age: checkouts in them fail with 503."),
		up:       desc("price_provider_up", "1 when the price provider answered the last refresh, 0 when it failed.", "provider"),
		failures: desc("price_provider_failures_total", "Refreshes in which the price provider failed.", "provider"),
	})
}

type priceCollector struct {
	stats                            func() PriceStats
	age, maxAge, stale, up, failures *prometheus.Desc
}

func (c *priceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.age, c.maxAge, c.stale, c.up, c.failures} {
		ch <- d
	}
}

func (c *priceCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	for coin, age := range st.Ages {
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age.Seconds(), coin)
	}
	if st.MaxAge >= 0 {
		ch <- prometheus.MustNewConstMetric(c.maxAge, prometheus.GaugeValue, st.MaxAge.Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.stale, prometheus.GaugeValue, float64(st.Stale))
	for _, p := range st.Providers {
		up := 0.0
		if p.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, p.Name)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(p.Failures), p.Name)
	}
}

// NodeRequest observes one request to a ticker's node.
func (m *Metrics) NodeRequest(ticker string, d time.Duration, ok bool) {
	outcome := "ok"
	if !ok {
		outcome = "error"
	}
	m.nodeLatency.WithLabelValues(ticker, outcome).Observe(d.Seconds())
}
