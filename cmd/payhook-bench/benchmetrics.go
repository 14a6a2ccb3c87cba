package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/payhook/payhook/internal/clock"
)

// benchMetrics is what a run's /metrics said: the benchmark reads payhook's
// Prometheus exposition over HTTP, as an operator's scraper would, during
// the run (queue gauges, sampled) and at its end (counters).
type benchMetrics struct {
	// Attempts counts finished attempts by outcome
	// (payhook_deliveries_total summed over transports).
	Attempts map[string]float64 `json:"attempts_by_outcome"`
	// Finished counts notifications that left the queue, by status
	// (payhook_notifications_finished_total).
	Finished map[string]float64 `json:"notifications_finished"`
	// Blocked is payhook_blocked_destinations_total.
	Blocked float64 `json:"blocked"`
	// AttemptP99ms is the upper bound of the attempt-duration histogram
	// bucket holding the 99th percentile, in milliseconds.
	AttemptP99ms float64 `json:"attempt_duration_p99_bucket_ms"`
	// MaxQueued is the largest queue depth (pending + retrying) and
	// MaxOldestDueSecs the largest payhook_oldest_due_notification_age_seconds
	// seen by the scrapes during the run.
	MaxQueued        float64 `json:"max_queued"`
	MaxOldestDueSecs float64 `json:"max_oldest_due_seconds"`
	Scrapes          int     `json:"scrapes"`
}

// metricsScraper scrapes a payhook /metrics endpoint over HTTP.
type metricsScraper struct {
	url  string
	mu   sync.Mutex
	m    benchMetrics
	stop chan struct{}
	done chan struct{}
}

func newMetricsScraper(url string) *metricsScraper { return &metricsScraper{url: url} }

// sample scrapes every interval until finish or stopSampling, keeping the
// largest queue gauges.
func (s *metricsScraper) sample(ctx context.Context, every time.Duration) {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.scrape(ctx) // the queue as the run starts: a short run still has two scrapes
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = s.scrape(ctx)
			}
		}
	}()
}

// stopSampling stops sampling and waits for it to end; it is idempotent.
// Every sample is followed by one, so that no scrape outlives a run that
// failed.
func (s *metricsScraper) stopSampling() {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
}

// finish stops sampling and takes a final scrape.
func (s *metricsScraper) finish(ctx context.Context) (benchMetrics, error) {
	s.stopSampling()
	err := s.scrape(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m, err
}

// settle stops sampling and scrapes until payhook has recorded as many
// acknowledged notifications as the receiver acknowledged (outcomes are
// counted after the commit that records them, shortly after the receiver
// answered), or for at most 10 s; it returns the last scrape.
func (s *metricsScraper) settle(ctx context.Context, acked float64) (benchMetrics, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	limit := clock.Now().Add(10 * time.Second)
	for {
		m, err := s.finish(ctx)
		if err != nil || m.Finished["acknowledged"] >= acked || clock.Now().After(limit) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return m, fmt.Errorf("scrape /metrics: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// acknowledged scrapes once and returns how many notifications payhook
// has recorded as acknowledged.
func (s *metricsScraper) acknowledged(ctx context.Context) (float64, error) {
	if err := s.scrape(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.Finished["acknowledged"], nil
}

func (s *metricsScraper) scrape(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("scrape /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scrape /metrics: HTTP %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("parse /metrics: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Scrapes++
	s.m.Attempts = sumBy(fams["payhook_deliveries_total"], "outcome")
	s.m.Finished = sumBy(fams["payhook_notifications_finished_total"], "status")
	if f := fams["payhook_blocked_destinations_total"]; f != nil && len(f.Metric) == 1 {
		s.m.Blocked = f.Metric[0].GetCounter().GetValue()
	}
	var queued float64
	for _, v := range sumBy(fams["payhook_notifications"], "status") {
		queued += v
	}
	s.m.MaxQueued = math.Max(s.m.MaxQueued, queued)
	if f := fams["payhook_oldest_due_notification_age_seconds"]; f != nil && len(f.Metric) == 1 {
		s.m.MaxOldestDueSecs = math.Max(s.m.MaxOldestDueSecs, f.Metric[0].GetGauge().GetValue())
	}
	s.m.AttemptP99ms = histogramQuantile(fams["payhook_delivery_attempt_duration_seconds"], 0.99) * 1000
	return nil
}

// sumBy sums a family's counter or gauge values by one label.
func sumBy(f *dto.MetricFamily, label string) map[string]float64 {
	out := map[string]float64{}
	if f == nil {
		return out
	}
	for _, m := range f.Metric {
		var key string
		for _, l := range m.Label {
			if l.GetName() == label {
				key = l.GetValue()
			}
		}
		switch {
		case m.Counter != nil:
			out[key] += m.Counter.GetValue()
		case m.Gauge != nil:
			out[key] += m.Gauge.GetValue()
		}
	}
	return out
}

// histogramQuantile is the upper bound of the bucket holding quantile q of
// a histogram family, merged over its label sets (+Inf when it lies in the
// last bucket, 0 when the histogram is empty).
func histogramQuantile(f *dto.MetricFamily, q float64) float64 {
	if f == nil {
		return 0
	}
	counts := map[float64]uint64{}
	var total uint64
	for _, m := range f.Metric {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		total += h.GetSampleCount()
		for _, b := range h.Bucket {
			counts[b.GetUpperBound()] += b.GetCumulativeCount()
		}
	}
	if total == 0 {
		return 0
	}
	bounds := make([]float64, 0, len(counts))
	for b := range counts {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	want := uint64(math.Ceil(q * float64(total)))
	for _, b := range bounds {
		if counts[b] >= want {
			return b
		}
	}
	return math.Inf(1)
}
