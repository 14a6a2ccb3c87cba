// Package metrics exposes payhook's Prometheus metrics: webhook delivery
// outcomes and latencies (fed by the notifier through its Observer hook),
// the notification queue's depth and lag (read from the database at scrape
// time), live watchers, HTTP and gRPC requests (InstrumentHTTP and the
// interceptors), the chains, price ages, build information, and the Go
// runtime and process collectors.
//
// Guarantees:
//   - No global state. Every Metrics owns its prometheus.Registry; nothing
//     is registered with the default registry, so tests and several servers
//     in one process do not collide.
//   - Observing never blocks delivery. AttemptFinished only updates atomic
//     counters and a histogram; for the transports and outcomes the
//     notifier reports it does not allocate or take a lock.
//   - Bounded cardinality. HTTP requests are labelled by HTTPRoute's route
//     (a fixed set: never a raw path, id, ticker or key), gRPC calls by
//     registered method only. Transport and outcome labels outside the
//     notifier's documented sets are reported as "other", and every known
//     series is exported from the start (at 0), so rate() and absent()
//     behave from the first scrape.
//   - A slow or failing database does not fail the scrape. Queue gauges are
//     read with a short timeout; on error they are left out of that scrape
//     and payhook_metrics_scrape_errors_total is incremented, while every
//     other metric is still served.
//
// Failure modes: each scrape runs one queue query (two SQL statements); a
// scrape that times out reports the error counter only. Concurrent scrapes
// each run their own query, so scrape intervals should stay well above the
// query timeout.
package metrics
