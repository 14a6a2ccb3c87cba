package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/bench"
)

// benchOptions are the flags of payhook-bench.
type benchOptions struct {
	db         string
	n          int
	transports []string
	signer     string
	rate       int
	latencyN   int
	hmacN      int
	deadN      int
	queued     int
	// backlog, backlogEndpoints, backlogDead and backlogDueWithin shape
	// the latency run with a large backlog (--backlog).
	backlog          int
	backlogEndpoints int
	backlogDead      float64
	backlogDueWithin time.Duration
	failRate         float64
	recvLatency      time.Duration
	producers        int
	batch            int
	workers          int
	out              string
	limitsFor        time.Duration
	cpuProfile       string
	memProfile       string
	repeat           int
	scrapeEvery      time.Duration
	// mode is engine (the delivery engine's runs) or e2e (payments end to
	// end through a real server).
	mode       string
	e2eN       int
	e2eTicker  string
	e2eAddress string
	e2eTimeout time.Duration
	// e2eKind is address or checkout.
	e2eKind string
	// server, serverKey, serverSecret, serverMetrics and serverPID name
	// an external payhook server (empty: one in this process) and its
	// operator listener's /metrics; receiverAddr is the receiver's
	// listening address (what that server must allow).
	server, serverKey, serverSecret, serverMetrics string
	serverPID                                      int
	receiverAddr                                   string
	// payouts are the flags of the payouts mode (payouts.go).
	payouts payoutsOptions
	// receiverURL is an external receiver (another process) that the
	// engine's runs deliver to instead of one in this process, so that
	// the CPU figure excludes the receiver (bench/webhookx compares
	// payhook with WebhookX on one shared receiver).
	receiverURL string
}

// benchRun is one measured run.
type benchRun struct {
	Name           string  `json:"name"`
	Transport      string  `json:"transport"`
	Signer         string  `json:"signer"`
	Notifications  int     `json:"notifications"`
	TargetRate     int     `json:"target_rate,omitempty"`
	Seconds        float64 `json:"seconds"`
	PerSecond      float64 `json:"deliveries_per_second"`
	P50ms          float64 `json:"latency_p50_ms"`
	P95ms          float64 `json:"latency_p95_ms"`
	P99ms          float64 `json:"latency_p99_ms"`
	Maxms          float64 `json:"latency_max_ms"`
	CPUPer1000     float64 `json:"cpu_seconds_per_1000"`
	PeakRSSMiB     float64 `json:"peak_rss_mib"`
	Attempts       int     `json:"attempts"`
	DeadQueued     int     `json:"dead_queued,omitempty"`
	DeadSettleSecs float64 `json:"dead_settle_seconds,omitempty"`
	PrefillQueued  int     `json:"prefill_queued,omitempty"`
	// Backlog, BacklogEndpoints and BacklogDead describe the backlog of a
	// latency-with-backlog run; BacklogSettleSecs is how long its dead
	// endpoints' first attempts took to time out before the measurement.
	Backlog           int     `json:"backlog,omitempty"`
	BacklogEndpoints  int     `json:"backlog_endpoints,omitempty"`
	BacklogDead       int     `json:"backlog_dead_endpoints,omitempty"`
	BacklogSettleSecs float64 `json:"backlog_settle_seconds,omitempty"`
	RatioRSALimit     float64 `json:"ratio_to_rsa_limit,omitempty"`
	RatioHTTPLimit    float64 `json:"ratio_to_http_limit,omitempty"`
	AcknowledgedAll   bool    `json:"acknowledged_all"`
	// FailedAttempts counts the attempts not acknowledged, by error.
	FailedAttempts map[string]int `json:"failed_attempts,omitempty"`
	// Metrics is what payhook's /metrics reported during and after the run.
	Metrics benchMetrics `json:"metrics"`
}

// benchReport is what payhook-bench writes as JSON.
type benchReport struct {
	Command   string  `json:"command"`
	Machine   string  `json:"machine"`
	GoVersion string  `json:"go_version"`
	CPUs      int     `json:"cpus"`
	Database  string  `json:"database"`
	RSALimit  float64 `json:"rsa2048_signatures_per_second_all_cores"`
	// RSALimitBefore and RSALimitAfter are the two measurements of an e2e
	// run, before it and after it (a shared VM's speed drifts within a
	// minute); RSALimit is the higher, the harder to reach.
	RSALimitBefore float64    `json:"rsa2048_signatures_per_second_before,omitempty"`
	RSALimitAfter  float64    `json:"rsa2048_signatures_per_second_after,omitempty"`
	HTTPLimit      float64    `json:"loopback_http_requests_per_second"`
	Runs           []benchRun `json:"runs"`
	// E2E is the end-to-end run (--mode e2e).
	E2E *e2eRun `json:"e2e,omitempty"`
	// Payouts is the payouts run (--mode payouts).
	Payouts *payoutsRun `json:"payouts,omitempty"`
	// DeadP99Ratio is the median p99 of the runs with a dead endpoint's
	// backlog over the median p99 of the plain latency runs.
	DeadP99Ratio float64 `json:"dead_endpoint_p99_ratio,omitempty"`
	// BacklogP99Ratio is the median p99 of the runs with the backlog over
	// the median p99 of the plain latency runs.
	BacklogP99Ratio float64   `json:"backlog_p99_ratio,omitempty"`
	StartedAt       time.Time `json:"started_at"`
	FinishedAt      time.Time `json:"finished_at"`
	Description     string    `json:"description"`
}

// run runs payhook's delivery engine against a loopback receiver, or with
// --mode e2e (or the e2e subcommand) payments end to end through a real
// server, and reports throughput, latency and cost next to the machine's
// own limits.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	command := "payhook-bench " + strings.Join(args, " ")
	if len(args) > 0 && (args[0] == "e2e" || args[0] == "payouts") {
		args = append([]string{"--mode", args[0]}, args[1:]...)
	}
	fs := flag.NewFlagSet("payhook-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o benchOptions
	var transports string
	fs.StringVar(&o.db, "db", "", `database server: "postgres://..." (a scratch database is created on it and dropped) or "sqlite" (a temporary file); default: TEST_DATABASE_URL, else sqlite`)
	fs.IntVar(&o.n, "n", 5000, "notifications per throughput run")
	fs.StringVar(&transports, "transports", "get,form,json", "transports of the throughput runs")
	fs.StringVar(&o.signer, "signer", "rsa", "signer of the throughput runs: rsa (RSA-2048, as low-level callbacks) or hmac")
	fs.IntVar(&o.rate, "rate", 500, "offered rate of the latency run (notifications per second); 0 skips it")
	fs.IntVar(&o.latencyN, "latency-n", 5000, "notifications of the latency run")
	fs.IntVar(&o.hmacN, "hmac-n", 20000, "notifications of the engine-ceiling run with the HMAC signer; 0 skips it")
	fs.IntVar(&o.deadN, "dead", 0, "queue this many notifications to a dead endpoint (every attempt times out) during a second latency run")
	fs.IntVar(&o.queued, "queued", 0, "prefill this many queued, not yet due notifications before a throughput run, to measure claim cost and memory with a large queue")
	fs.IntVar(&o.backlog, "backlog", 0, "PostgreSQL: store this many queued notifications over --backlog-endpoints destinations, --backlog-dead of them dead (never answering), for a latency run with them (compared with the plain one)")
	fs.IntVar(&o.backlogEndpoints, "backlog-endpoints", 10000, "--backlog: destinations (each its own loopback host)")
	fs.Float64Var(&o.backlogDead, "backlog-dead", 0.1, "--backlog: share of the destinations that are dead (accept connections, never answer)")
	fs.DurationVar(&o.backlogDueWithin, "backlog-due-within", 10*time.Minute, "--backlog: the dead destinations' notifications come due evenly over this time from the start (the healthy ones' from tomorrow)")
	fs.Float64Var(&o.failRate, "fail-rate", 0, "fraction of requests the receiver answers 500")
	fs.DurationVar(&o.recvLatency, "receiver-latency", 0, "delay of every receiver response")
	fs.IntVar(&o.producers, "producers", runtime.GOMAXPROCS(0), "goroutines storing notifications (e2e: creating and paying addresses)")
	fs.IntVar(&o.batch, "batch", 100, "notifications per producer transaction")
	fs.IntVar(&o.workers, "workers", 128, "delivery workers")
	fs.DurationVar(&o.scrapeEvery, "scrape-every", 5*time.Second, "how often a run scrapes payhook's /metrics for the queue gauges (each scrape counts the queue in the database)")
	fs.StringVar(&o.out, "out", "bench.json", "JSON results file")
	fs.DurationVar(&o.limitsFor, "limits-for", 3*time.Second, "how long each machine-limit measurement runs")
	fs.IntVar(&o.repeat, "repeat", 1, "run the latency run, and the one with a dead endpoint, this many times each, alternately (the summary compares medians)")
	fs.StringVar(&o.memProfile, "memprofile", "", "e2e: write the allocations from the mine request to the last acknowledgement to this file (and those before it to FILE.base: go tool pprof -sample_index=alloc_space -base FILE.base)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole process during the runs (not the limit measurements; e2e: from the mine request to the last acknowledgement) to this file")
	fs.StringVar(&o.mode, "mode", "engine", `engine: the delivery engine's runs against a loopback receiver; e2e: payments end to end through a real payhook server on the devnet ("payhook-bench e2e" is the same); payouts: payout requests on litecoind regtest sent in batches ("payhook-bench payouts")`)
	fs.IntVar(&o.e2eN, "e2e-n", 2000, "e2e: payment addresses created, paid and mined in one block (each owes a confirmed and a completed callback)")
	fs.StringVar(&o.e2eTicker, "e2e-ticker", "btc", "e2e: ticker of the payments (one whose payments are confirmed and forwarded with the first block at confirmations=1: UTXO or EVM)")
	fs.StringVar(&o.e2eAddress, "e2e-address", "", "e2e: the merchant's address payments are forwarded to (default: a BTC address, for --e2e-ticker btc)")
	fs.DurationVar(&o.e2eTimeout, "e2e-timeout", 10*time.Minute, "e2e: how long after the mine request every callback must be acknowledged")
	fs.StringVar(&o.e2eKind, "e2e-kind", e2eAddress, "e2e: address (low-level addresses, RSA-signed callbacks) or checkout (a checkout each with --e2e-ticker chosen, HMAC-signed webhooks)")
	fs.StringVar(&o.server, "server", "", "e2e: base URL of a running payhook serve --dev to drive over REST instead of a server in this process (it must allow --receiver-addr's endpoint: --allow-private-endpoint http://ADDR/hook, and run without request limits: --key-rate 0 --anon-rate 0)")
	fs.StringVar(&o.serverKey, "server-key", "", "e2e with --server: an API key of the server")
	fs.StringVar(&o.serverSecret, "server-secret", "", "e2e with --server and --e2e-kind checkout: the key's project IPN secret (payhook project rotate-secret)")
	fs.StringVar(&o.serverMetrics, "server-metrics", "", "e2e with --server: the server's /metrics on its operator listener (payhook serve --operator-listen ADDR: http://ADDR/metrics)")
	fs.IntVar(&o.serverPID, "server-pid", 0, "e2e with --server: the server's process id, to report its CPU time (Linux /proc)")
	fs.StringVar(&o.receiverAddr, "receiver-addr", "", "e2e: the receiver's listening address (default: a free loopback port; fix it for --server)")
	payoutsFlags(fs, &o.payouts)
	fs.StringVar(&o.receiverURL, "receiver-url", "", "engine: deliver every run to this receiver in another process (a loopback http URL answering 200) instead of one in this process, so that cpu s/1k excludes the receiver; completion is read from payhook's /metrics and no latencies are measured (bench/webhookx/run.sh uses it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.db == "" {
		o.db = os.Getenv("TEST_DATABASE_URL")
	}
	if o.db == "" {
		o.db = "sqlite"
	}
	for t := range strings.SplitSeq(transports, ",") {
		if t = strings.TrimSpace(t); t != "" {
			if t != "get" && t != "form" && t != "json" {
				return fmt.Errorf("--transports: %q is not get, form or json", t)
			}
			o.transports = append(o.transports, t)
		}
	}
	if o.signer != "rsa" && o.signer != "hmac" {
		return fmt.Errorf("--signer: %q is not rsa or hmac", o.signer)
	}
	if o.n < 1 || o.producers < 1 || o.batch < 1 || o.workers < 1 {
		return errors.New("--n, --producers, --batch and --workers must be positive")
	}
	switch o.mode {
	case "engine":
		if o.receiverURL != "" {
			if u, err := url.Parse(o.receiverURL); err != nil || u.Scheme != "http" || u.Host == "" {
				return fmt.Errorf("--receiver-url: %q is not an http URL", o.receiverURL)
			}
			if o.rate > 0 || o.deadN > 0 || o.failRate > 0 || o.recvLatency > 0 {
				return errors.New("--receiver-url measures throughput only: it needs --rate 0 and no --dead, --fail-rate or --receiver-latency")
			}
		}
	case "e2e":
		if o.e2eN < 1 || o.e2eTimeout <= 0 {
			return errors.New("--e2e-n and --e2e-timeout must be positive")
		}
		if o.e2eAddress == "" && o.e2eTicker != "btc" {
			return fmt.Errorf("--e2e-address: required with --e2e-ticker %s (the default is a BTC address)", o.e2eTicker)
		}
		if o.e2eAddress == "" {
			o.e2eAddress = e2eBTCAddress
		}
		if o.e2eKind != e2eAddress && o.e2eKind != e2eCheckout {
			return fmt.Errorf("--e2e-kind: %q is not address or checkout", o.e2eKind)
		}
		if o.server != "" && (o.serverKey == "" || o.receiverAddr == "" || o.serverMetrics == "" || o.e2eKind == e2eCheckout && o.serverSecret == "") {
			return errors.New("--server needs --server-key, --receiver-addr, --server-metrics and, for --e2e-kind checkout, --server-secret")
		}
	case "payouts":
		if err := o.payouts.validate(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--mode: %q is not engine, e2e or payouts", o.mode)
	}
	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	say := func(format string, a ...any) {
		if tty {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	database := redactDSN(o.db)
	if o.server != "" {
		database = "the server's own (--server " + o.server + ")"
	}
	rep := benchReport{
		Command:   command,
		Machine:   machineDescription(),
		GoVersion: runtime.Version(),
		CPUs:      runtime.NumCPU(),
		Database:  database,
		StartedAt: clock.UTC(),
		Description: "deliveries_per_second: notifications acknowledged per second from the first commit to the last acknowledgement; " +
			"latency: from the commit of the notification's transaction to the receiver's acknowledgement; " +
			"cpu_seconds_per_1000: CPU time of the payhook process (receiver included) per 1000 deliveries; peak_rss_mib: the process's peak resident set.",
	}
	if o.receiverURL != "" {
		rep.Description = "runs delivered to the receiver at " + o.receiverURL + ", in another process; deliveries_per_second: notifications acknowledged per second " +
			"from the first commit to the /metrics poll (every 100 ms) that saw the last one acknowledged; no latencies; " +
			"cpu_seconds_per_1000: CPU time of the payhook-bench process (engine and producers, receiver excluded) per 1000 deliveries; peak_rss_mib: the process's peak resident set."
	}
	if o.mode == "e2e" {
		rep.Description = "e2e: payment addresses created over REST, each paid on the devnet, all mined in one block; " +
			"seconds and callbacks_per_second: from the mine request to the receiver's last acknowledgement of the confirmed and completed callbacks; " +
			"latency: from the mine request to each callback's acknowledgement; mine_call_seconds: how long the mine request took to answer; " +
			"ratio_to_rsa_limit: callbacks per second over RSA-2048 signatures per second (each callback is signed once); " +
			"cpu_seconds_per_1000: CPU time of the process (server, receiver) per 1000 callbacks."
	}
	if o.mode == "payouts" {
		rep.Description = "payouts: payout requests (POST /ltc/payout/request/bulk/process/) on litecoind regtest through a payhook server with a batch interval, a block mined every --block-every; " +
			"blocks_to_done: per payout, the blocks mined (or being mined) when its payout.done webhook arrived less those mined when it was requested; " +
			"cpu_seconds_per_payout: CPU time of the process (server, driver, webhook receiver) from the first request to the last payout.done, per payout; " +
			"every destination is checked on the node: paid exactly its amount, once, by its payout's transaction."
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	say("measuring the machine's limits (%s each)...", o.limitsFor)
	rep.RSALimit = rsaLimit(key, o.limitsFor)
	if rep.HTTPLimit, err = httpLimit(ctx, o.limitsFor); err != nil {
		return err
	}
	if o.cpuProfile != "" && o.mode == "engine" { // e2e profiles the mine phase only (e2eOnce), payouts from the first request to the last done
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close() // the profile's own error is the one to report
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "--cpuprofile: the profile may be incomplete: %v\n", err)
			}
		}()
	}
	run := func(name, transport, signer string, n, rate, dead, queued, backlog int) error {
		say("%s: %d %s notifications (%s)...", name, n, transport, signer)
		r, err := benchOnce(ctx, o, key, name, transport, signer, n, rate, dead, queued, backlog, tty, stderr)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if signer == "rsa" {
			r.RatioRSALimit = r.PerSecond / rep.RSALimit
		}
		r.RatioHTTPLimit = r.PerSecond / rep.HTTPLimit
		rep.Runs = append(rep.Runs, r)
		return nil
	}
	if o.mode == "payouts" {
		r, err := payoutsOnce(ctx, o, tty, stderr)
		rep.Payouts = &r
		if err != nil && !errors.Is(err, errPayouts) {
			return fmt.Errorf("payouts: %w", err)
		}
		// A run whose payouts were not all done, or paid other than
		// requested, is reported, then fails.
		return errors.Join(writeReport(stdout, o.out, rep), err)
	}
	if o.mode == "e2e" {
		say("e2e: %d %s payments through a payhook server...", o.e2eN, o.e2eTicker)
		r, err := e2eOnce(ctx, o, tty, stderr)
		rep.RSALimitBefore, rep.RSALimitAfter = rep.RSALimit, rsaLimit(key, o.limitsFor)
		rep.RSALimit = max(rep.RSALimitBefore, rep.RSALimitAfter)
		if r.Seconds > 0 {
			r.RatioRSALimit = r.PerSecond / rep.RSALimit
		}
		rep.E2E = &r
		if err != nil && !errors.Is(err, errE2E) {
			return fmt.Errorf("e2e: %w", err)
		}
		// A run that lost or duplicated callbacks is reported, then fails.
		return errors.Join(writeReport(stdout, o.out, rep), err)
	}
	for _, t := range o.transports {
		if err := run("throughput", t, o.signer, o.n, 0, 0, o.queued, 0); err != nil {
			return err
		}
	}
	if o.hmacN > 0 {
		if err := run("engine-ceiling", "json", "hmac", o.hmacN, 0, 0, 0, 0); err != nil {
			return err
		}
	}
	if o.rate > 0 {
		var base, dead, backlog []float64
		for range max(o.repeat, 1) {
			if err := run("latency", "json", "rsa", o.latencyN, o.rate, 0, 0, 0); err != nil {
				return err
			}
			base = append(base, rep.Runs[len(rep.Runs)-1].P99ms)
			if o.deadN > 0 {
				if err := run("latency-with-dead-endpoint", "json", "rsa", o.latencyN, o.rate, o.deadN, 0, 0); err != nil {
					return err
				}
				dead = append(dead, rep.Runs[len(rep.Runs)-1].P99ms)
			}
			if o.backlog > 0 {
				if err := run("latency-with-backlog", "json", "rsa", o.latencyN, o.rate, 0, 0, o.backlog); err != nil {
					return err
				}
				backlog = append(backlog, rep.Runs[len(rep.Runs)-1].P99ms)
			}
		}
		if len(dead) > 0 {
			rep.DeadP99Ratio = median(dead) / median(base)
		}
		if len(backlog) > 0 {
			rep.BacklogP99Ratio = median(backlog) / median(base)
		}
	}
	return writeReport(stdout, o.out, rep)
}

// writeReport finishes rep, prints it to stdout and writes it as JSON to
// the file out.
func writeReport(stdout io.Writer, out string, rep benchReport) error {
	rep.FinishedAt = clock.UTC()
	printReport(stdout, rep)
	b, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(stdout, "\nresults written to %s\n", out)
	return nil
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func printReport(w io.Writer, r benchReport) {
	fmt.Fprintf(w, "machine: %s, %d CPUs, %s; database: %s\n", r.Machine, r.CPUs, r.GoVersion, r.Database)
	if r.RSALimitAfter > 0 {
		fmt.Fprintf(w, "limits: RSA-2048 signatures/s (all cores) %.0f (the higher of %.0f before the run and %.0f after); loopback HTTP requests/s %.0f\n\n", r.RSALimit, r.RSALimitBefore, r.RSALimitAfter, r.HTTPLimit)
	} else {
		fmt.Fprintf(w, "limits: RSA-2048 signatures/s (all cores) %.0f; loopback HTTP requests/s %.0f\n\n", r.RSALimit, r.HTTPLimit)
	}
	if r.E2E != nil {
		printE2E(w, *r.E2E)
	}
	if r.Payouts != nil {
		printPayouts(w, *r.Payouts)
	}
	if len(r.Runs) == 0 {
		return
	}
	fmt.Fprintf(w, "%-28s %-5s %-5s %7s %9s %8s %8s %8s %8s %10s %8s %7s %7s\n", "run", "tx", "sign", "n", "deliv/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "cpu s/1k", "rss MiB", "/rsa", "/http")
	for _, x := range r.Runs {
		name := x.Name
		if x.TargetRate > 0 {
			name += fmt.Sprintf(" @%d/s", x.TargetRate)
		}
		ratio := "-"
		if x.RatioRSALimit > 0 {
			ratio = fmt.Sprintf("%.2f", x.RatioRSALimit)
		}
		fmt.Fprintf(w, "%-28s %-5s %-5s %7d %9.0f %8.1f %8.1f %8.1f %8.1f %10.3f %8.0f %7s %7.2f\n", name, x.Transport, x.Signer, x.Notifications, x.PerSecond, x.P50ms, x.P95ms, x.P99ms, x.Maxms, x.CPUPer1000, x.PeakRSSMiB, ratio, x.RatioHTTPLimit)
	}
	fmt.Fprintf(w, "\nread from payhook's /metrics:\n%-28s %-5s %9s %9s %14s %10s %12s\n", "run", "tx", "acked", "not acked", "attempt p99 <=", "max queued", "max oldest s")
	for _, x := range r.Runs {
		name := x.Name
		if x.TargetRate > 0 {
			name += fmt.Sprintf(" @%d/s", x.TargetRate)
		}
		var other float64
		for o, v := range x.Metrics.Attempts {
			if o != "acknowledged" {
				other += v
			}
		}
		fmt.Fprintf(w, "%-28s %-5s %9.0f %9.0f %11.0f ms %10.0f %12.2f\n", name, x.Transport, x.Metrics.Attempts["acknowledged"], other,
			x.Metrics.AttemptP99ms, x.Metrics.MaxQueued, x.Metrics.MaxOldestDueSecs)
	}
	for _, x := range r.Runs {
		if x.DeadQueued > 0 {
			fmt.Fprintf(w, "\ndead endpoint: %d notifications queued, set aside in %.1f s before the measurement", x.DeadQueued, x.DeadSettleSecs)
			break
		}
	}
	if r.DeadP99Ratio > 0 {
		fmt.Fprintf(w, "; healthy p99 with it / without it (medians): %.2f\n", r.DeadP99Ratio)
	}
	for _, x := range r.Runs {
		if x.Backlog > 0 {
			fmt.Fprintf(w, "\nbacklog: %d notifications queued over %d endpoints, %d of them dead (their first attempts timed out %.1f s after the start, before the measurement); peak RSS %.0f MiB",
				x.Backlog, x.BacklogEndpoints, x.BacklogDead, x.BacklogSettleSecs, x.PeakRSSMiB)
			break
		}
	}
	if r.BacklogP99Ratio > 0 {
		fmt.Fprintf(w, "; healthy p99 with it / without it (medians): %.2f\n", r.BacklogP99Ratio)
	}
}

// benchReceiver acknowledges callbacks and records when each uuid was
// acknowledged.
type benchReceiver struct {
	srv      *http.Server
	url      string
	failRate float64
	latency  time.Duration
	mu       sync.Mutex
	acked    map[string]time.Time
	attempts atomic.Int64
	done     chan struct{}
	want     int64
}

func newBenchReceiver(failRate float64, latency time.Duration, want int) (*benchReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &benchReceiver{failRate: failRate, latency: latency, acked: make(map[string]time.Time, want), done: make(chan struct{}), want: int64(want)}
	r.url = "http://" + l.Addr().String() + "/hook"
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *benchReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.attempts.Add(1)
	if r.latency > 0 {
		time.Sleep(r.latency) // the simulated receiver's own processing time
	}
	if r.failRate > 0 && randFloat() < r.failRate {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	id := uuidOf(req, body)
	_, _ = w.Write([]byte(`{"status":"ok"}`))
	now := clock.Now()
	r.mu.Lock()
	if _, seen := r.acked[id]; !seen && id != "" {
		r.acked[id] = now
		if int64(len(r.acked)) == r.want {
			close(r.done)
		}
	}
	r.mu.Unlock()
}

func randFloat() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return float64(uint64(b[0])<<48|uint64(b[1])<<40|uint64(b[2])<<32|uint64(b[3])<<24|uint64(b[4])<<16|uint64(b[5])<<8|uint64(b[6])) / float64(1<<56)
}

// uuidOf finds the uuid field without parsing the whole payload.
func uuidOf(req *http.Request, body []byte) string {
	src := body
	if req.Method == http.MethodGet {
		src = []byte(req.URL.RawQuery)
	}
	for _, marker := range [][]byte{[]byte(`"uuid":"`), []byte("uuid=")} {
		if i := bytes.Index(src, marker); i >= 0 {
			rest := src[i+len(marker):]
			if len(rest) >= 36 {
				return string(rest[:36])
			}
		}
	}
	return ""
}

func (r *benchReceiver) close() { _ = r.srv.Close() }

// ackedCount is how many distinct uuids the receiver acknowledged.
func (r *benchReceiver) ackedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acked)
}

// benchOnce runs one measurement on a fresh database.
func benchOnce(ctx context.Context, o benchOptions, key *rsa.PrivateKey, name, transport, signerName string, n, rate, dead, queued, backlog int, tty bool, stderr io.Writer) (_ benchRun, err error) {
	res := benchRun{Name: name, Transport: transport, Signer: signerName, Notifications: n, TargetRate: rate, DeadQueued: dead, PrefillQueued: queued, Backlog: backlog}
	scratch, err := bench.CreateDB(ctx, o.db)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, scratch.Drop()) }()
	// recv is the receiver in this process; nil with --receiver-url,
	// whose deliveries are counted from payhook's /metrics (polled).
	var recv *benchReceiver
	recvURL := o.receiverURL
	if recvURL == "" {
		if recv, err = newBenchReceiver(o.failRate, o.recvLatency, n); err != nil {
			return res, err
		}
		defer recv.close()
		recvURL = recv.url
	}
	var polled atomic.Int64 // acknowledged, as last polled (--receiver-url)
	ackedCount := func() int {
		if recv == nil {
			return int(polled.Load())
		}
		return recv.ackedCount()
	}
	allow := []string{recvURL}
	var deadURL string
	if dead > 0 {
		var closeDead func()
		deadURL, closeDead, err = deadEndpoint("127.0.0.1")
		if err != nil {
			return res, err
		}
		defer closeDead()
		allow = append(allow, deadURL)
	}
	var backlogDead []string
	if backlog > 0 {
		// Each dead destination of the backlog is a host of its own
		// (127.2.x.y): the notifier bounds and parks by host:port.
		res.BacklogEndpoints = o.backlogEndpoints
		res.BacklogDead = int(float64(o.backlogEndpoints) * o.backlogDead)
		for i := range res.BacklogDead {
			u, closeDead, err := deadEndpoint(fmt.Sprintf("127.2.%d.%d", i/250, i%250+1))
			if err != nil {
				return res, err
			}
			defer closeDead()
			backlogDead = append(backlogDead, u)
		}
		allow = append(allow, backlogDead...)
	}
	// Throughput runs lift the per-host bound (one receiver would otherwise
	// be the bottleneck being measured); latency runs keep the production
	// default, which is what protects a healthy endpoint from a dead one.
	perHost := o.workers
	if rate > 0 {
		perHost = notifier.DefaultPerHost
	}
	eng, err := bench.Open(ctx, bench.Config{
		DSN:            scratch.DSN,
		RSAKey:         key,
		Workers:        o.workers,
		PerHost:        perHost,
		AttemptTimeout: attemptTimeout,
		AllowPrivate:   allow,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, eng.Stop()) }()
	scraper := newMetricsScraper(eng.MetricsURL())
	if queued > 0 {
		if err := eng.Prefill(ctx, queued); err != nil {
			return res, err
		}
	}
	if backlog > 0 {
		if err := eng.PrefillBacklog(ctx, bench.Backlog{Total: backlog, Endpoints: o.backlogEndpoints, Dead: backlogDead, DueWithin: o.backlogDueWithin}); err != nil {
			return res, err
		}
	}
	if dead > 0 {
		for start := 0; start < dead; start += o.batch {
			k := min(o.batch, dead-start)
			if _, _, err := eng.Enqueue(ctx, bench.Batch{URL: deadURL, Transport: transport, Signer: signerName, From: -start - k, Count: k}); err != nil {
				return res, err
			}
		}
	}
	if err := eng.Start(ctx); err != nil {
		return res, err
	}
	if dead > 0 {
		// The measurement is of the steady state: the dead endpoint's
		// attempts hang in their slots and its backlog has been set aside
		// (parked). How long that took is reported.
		settled, err := eng.WaitParked(ctx, deadURL, 60*time.Second)
		if err != nil {
			return res, err
		}
		res.DeadSettleSecs = settled.Seconds()
	}
	if len(backlogDead) > 0 {
		// The measurement is of the steady state: a first wave of attempts
		// to dead destinations (those not yet trusted take a quarter of the
		// workers) has timed out.
		settled, err := eng.WaitTimedOut(ctx, min(len(backlogDead), max(1, o.workers/4)), 3*attemptTimeout)
		if err != nil {
			return res, err
		}
		res.BacklogSettleSecs = settled.Seconds()
	}

	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	scraper.sample(ctx, o.scrapeEvery)
	defer scraper.stopSampling()
	commits := make([]map[string]time.Time, o.producers)
	var bar *progressbar.ProgressBar
	if tty {
		bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription(name+" "+transport), progressbar.OptionClearOnFinish())
	}
	var wg sync.WaitGroup
	errc := make(chan error, o.producers)
	per := (n + o.producers - 1) / o.producers
	for p := 0; p < o.producers; p++ {
		commits[p] = make(map[string]time.Time, per)
		from, to := p*per, min((p+1)*per, n)
		if from >= to {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tick *time.Ticker
			began := clock.Now()
			share := float64(rate) / float64(o.producers)
			if rate > 0 {
				// Each producer offers its share of the rate: every 5ms it
				// stores what the schedule says is due by then.
				tick = time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
			}
			for i := from; i < to; {
				k := min(o.batch, to-i)
				if tick != nil {
					<-tick.C
					due := from + int(share*time.Since(began).Seconds())
					if due <= i {
						continue
					}
					k = min(due-i, to-i)
				}
				ids, committed, err := eng.Enqueue(ctx, bench.Batch{URL: recvURL, Transport: transport, Signer: signerName, From: i, Count: k})
				if err != nil {
					errc <- err
					return
				}
				for _, id := range ids {
					commits[p][id] = committed
				}
				i += k
			}
		}()
	}
	progressDone := make(chan struct{})
	if bar != nil {
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-progressDone:
					return
				case <-t.C:
					_ = bar.Set(ackedCount())
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		close(progressDone)
		return res, err
	}
	timeout := time.Duration(n/100+120) * time.Second
	var allAcked time.Time // when the poll saw every notification acknowledged (--receiver-url)
	if recv != nil {
		select {
		case <-recv.done:
			res.AcknowledgedAll = true
		case <-time.After(timeout):
		case <-ctx.Done():
		}
	} else {
		allAcked, err = pollAcknowledged(ctx, scraper, n, timeout, &polled)
		if err != nil {
			close(progressDone)
			return res, err
		}
		res.AcknowledgedAll = !allAcked.IsZero()
	}
	close(progressDone)
	if bar != nil {
		_ = bar.Finish()
	}
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	firstCommit := time.Time{}
	for _, m := range commits {
		for _, c := range m {
			if firstCommit.IsZero() || c.Before(firstCommit) {
				firstCommit = c
			}
		}
	}
	if recv == nil {
		// The external receiver's own figures are the authority on rate;
		// payhook's are from the first commit to the poll that saw the
		// last acknowledgement (within 100 ms of it: each poll is a scrape, which counts the queue).
		if res.Metrics, err = scraper.settle(ctx, float64(n)); err != nil {
			return res, err
		}
		if res.FailedAttempts, err = eng.FailedAttempts(ctx); err != nil {
			return res, err
		}
		acked := res.Metrics.Finished["acknowledged"]
		if acked == 0 || allAcked.IsZero() {
			return res, fmt.Errorf("%.0f of %d notifications acknowledged by %s within %s", acked, n, recvURL, timeout)
		}
		res.Seconds = allAcked.Sub(firstCommit).Seconds()
		res.PerSecond = acked / res.Seconds
		res.CPUPer1000 = cpuSeconds(ru0, ru1) / acked * 1000
		res.PeakRSSMiB = float64(ru1.Maxrss) / 1024
		for _, v := range res.Metrics.Attempts {
			res.Attempts += int(v)
		}
		return res, nil
	}

	// What /metrics says must agree with what the receiver saw, once the
	// last outcomes are recorded (they are counted after the commit that
	// records them, shortly after the receiver answered). The receiver is
	// not held while waiting: a late request must not stall the record.
	acked := float64(recv.ackedCount())
	if res.Metrics, err = scraper.settle(ctx, acked); err != nil {
		return res, err
	}
	// Attempts that were not acknowledged, by what went wrong (the log is
	// the attempts table).
	if res.FailedAttempts, err = eng.FailedAttempts(ctx); err != nil {
		return res, err
	}
	if got := res.Metrics.Finished["acknowledged"]; got != acked || res.Metrics.Attempts["acknowledged"] != acked {
		return res, fmt.Errorf("/metrics counts %.0f acknowledged attempts and %.0f acknowledged notifications; the receiver acknowledged %.0f",
			res.Metrics.Attempts["acknowledged"], got, acked)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	var lat []float64
	first, last := firstCommit, time.Time{}
	for _, m := range commits {
		for id, c := range m {
			if a, ok := recv.acked[id]; ok {
				lat = append(lat, float64(a.Sub(c))/float64(time.Millisecond))
				if a.After(last) {
					last = a
				}
			}
		}
	}
	if len(lat) == 0 {
		return res, errors.New("nothing was delivered")
	}
	slices.Sort(lat)
	res.Seconds = last.Sub(first).Seconds()
	res.PerSecond = float64(len(lat)) / res.Seconds
	res.P50ms, res.P95ms, res.P99ms, res.Maxms = percentile(lat, 0.50), percentile(lat, 0.95), percentile(lat, 0.99), lat[len(lat)-1]
	res.CPUPer1000 = cpuSeconds(ru0, ru1) / float64(len(lat)) * 1000
	res.PeakRSSMiB = float64(ru1.Maxrss) / 1024
	res.Attempts = int(recv.attempts.Load())
	return res, nil
}

// pollAcknowledged polls payhook's /metrics every 100 ms until n
// notifications are recorded as acknowledged, storing each count in
// polled; it returns when the poll saw them all, or the zero time after
// timeout.
func pollAcknowledged(ctx context.Context, s *metricsScraper, n int, timeout time.Duration, polled *atomic.Int64) (time.Time, error) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	limit := clock.Now().Add(timeout)
	for {
		acked, err := s.acknowledged(ctx)
		if err != nil {
			return time.Time{}, err
		}
		polled.Store(int64(acked))
		if acked >= float64(n) {
			return clock.Now(), nil
		}
		if clock.Now().After(limit) {
			return time.Time{}, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("wait for acknowledgements: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// percentile is the p-quantile (0..1) of sorted, which is not empty.
func percentile(sorted []float64, p float64) float64 {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// cpuSeconds is the process's CPU time (user and system) from ru0 to ru1.
func cpuSeconds(ru0, ru1 syscall.Rusage) float64 {
	return tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// rsaLimit measures RSA-2048 PKCS#1 v1.5 signatures per second on all cores.
func rsaLimit(key *rsa.PrivateKey, d time.Duration) float64 {
	var total atomic.Int64
	deadline := clock.Now().Add(d)
	var wg sync.WaitGroup
	start := clock.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var i uint64
			for clock.Now().Before(deadline) {
				i++
				sum := sha256.Sum256([]byte(fmt.Sprint(i)))
				if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:]); err == nil {
					total.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds()
}

// httpLimit measures plain loopback HTTP requests per second against the
// same receiver, with the same concurrency as the delivery workers' default.
func httpLimit(ctx context.Context, d time.Duration) (float64, error) {
	recv, err := newBenchReceiver(0, 0, 1<<62)
	if err != nil {
		return 0, err
	}
	defer recv.close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	body := []byte(`{"uuid":"00000000-0000-4000-8000-000000000000","payment_status":"confirmed"}`)
	var total atomic.Int64
	deadline := clock.Now().Add(d)
	start := clock.Now()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for clock.Now().Before(deadline) && ctx.Err() == nil {
				resp, err := client.Post(recv.url, "application/json", bytes.NewReader(body))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}

func machineDescription() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					model = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	return fmt.Sprintf("%s/%s, %s", runtime.GOOS, runtime.GOARCH, model)
}

func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}

// attemptTimeout is the benchmark engine's attempt timeout: the spec's 30
// seconds, what a dead endpoint holds an attempt for.
const attemptTimeout = 30 * time.Second

// deadEndpoint listens on ip and accepts connections without ever
// answering: an endpoint whose every attempt times out. It returns the
// endpoint's URL and a function that closes the listener and every
// connection it took.
func deadEndpoint(ip string) (string, func(), error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", nil, fmt.Errorf("dead endpoint: %w", err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return "http://" + l.Addr().String() + "/dead", func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}, nil
}
