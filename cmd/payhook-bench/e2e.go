package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/bench"
)

// e2eRun is the end-to-end run: payments made on the devnet of a real
// payhook server, driven through its REST API, and every callback they
// cause acknowledged by a receiver that verifies its signature.
type e2eRun struct {
	// Kind is address (low-level addresses, RSA-signed callbacks) or
	// checkout (a checkout each, a coin chosen, HMAC-signed webhooks).
	Kind string `json:"kind"`
	// Server is the external server's base URL; empty for the in-process
	// server.
	Server    string `json:"server,omitempty"`
	Ticker    string `json:"ticker"`
	Addresses int    `json:"addresses"`
	Producers int    `json:"producers"`
	// Expected is how many callbacks the payments owe: confirmed and
	// completed for each address.
	Expected int `json:"callbacks_expected"`
	// Callbacks is how many distinct notifications (uuids) the receiver
	// acknowledged; ByStatus splits them by payment_status.
	Callbacks int            `json:"callbacks"`
	ByStatus  map[string]int `json:"callbacks_by_status"`
	// CreateSeconds is how long creating the addresses over REST took;
	// PaySeconds how long paying each of them on the devnet took.
	CreateSeconds      float64 `json:"create_seconds"`
	AddressesPerSecond float64 `json:"addresses_per_second"`
	PaySeconds         float64 `json:"pay_seconds"`
	// MineCallSeconds is how long POST /devnet/{ticker}/mine/ took to
	// answer; AckedDuringMine how many callbacks were acknowledged before
	// it did.
	MineCallSeconds float64 `json:"mine_call_seconds"`
	AckedDuringMine int     `json:"acknowledged_before_mine_answered"`
	// Seconds runs from the mine request to the last acknowledgement.
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"callbacks_per_second"`
	// Latencies run from the mine request to each callback's first
	// acknowledgement.
	FirstMs       float64 `json:"latency_first_ms"`
	P50ms         float64 `json:"latency_p50_ms"`
	P95ms         float64 `json:"latency_p95_ms"`
	P99ms         float64 `json:"latency_p99_ms"`
	Maxms         float64 `json:"latency_max_ms"`
	RatioRSALimit float64 `json:"ratio_to_rsa_limit"`
	// CPUPer1000 is CPU time of the whole process (server, database driver,
	// receiver) per 1000 callbacks, from the mine request to the last
	// acknowledgement.
	CPUPer1000 float64 `json:"cpu_seconds_per_1000"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// BenchCPUPer1000 is this process's CPU time per 1000 callbacks when
	// the server runs elsewhere (the receiver and the driver); zero
	// otherwise (it is CPUPer1000's).
	BenchCPUPer1000 float64 `json:"bench_cpu_seconds_per_1000,omitempty"`
	// DatabaseCPUPer1000 is the CPU time of the PostgreSQL server processes
	// on this machine per 1000 callbacks (Linux /proc; zero for SQLite or
	// a database elsewhere).
	DatabaseCPUPer1000 float64 `json:"database_cpu_seconds_per_1000,omitempty"`
	// MachineBusy is the share of the machine's CPU time (all cores) that
	// was not idle from the mine request to the last acknowledgement
	// (Linux /proc/stat).
	MachineBusy float64 `json:"machine_busy,omitempty"`
	// MachineStolen is the share the hypervisor gave other machines
	// (steal time): a noisy neighbour, not payhook.
	MachineStolen float64 `json:"machine_stolen,omitempty"`
	// Attempts counts the requests the receiver answered.
	Attempts int `json:"attempts"`
	// Lost counts (address, status) pairs without a callback, Duplicated
	// those with more than one notification, Redelivered the deliveries of
	// a uuid already acknowledged.
	Lost            int  `json:"lost"`
	Duplicated      int  `json:"duplicated"`
	Redelivered     int  `json:"redelivered"`
	AcknowledgedAll bool `json:"acknowledged_all"`
	// Problems lists what made the run fail (lost, duplicated, unexpected or
	// unverifiable callbacks), at most a few of each kind.
	Problems []string `json:"problems,omitempty"`
	// Metrics is what the server's /metrics reported during and after the
	// run.
	Metrics benchMetrics `json:"metrics"`
}

// e2eStatuses are the callbacks a payment with one required confirmation
// causes on the devnet when its block is mined: confirmed as it is
// credited, completed once it is forwarded.
var e2eStatuses = []string{"confirmed", "completed"}

// e2eOnce starts a payhook server in-process on a scratch database, creates
// o.e2eN payment addresses over REST (o.producers at a time), each with its
// own callback URL on a loopback receiver, pays each on the devnet, mines
// one block and waits until the receiver has acknowledged every callback.
// A run whose callbacks were lost or duplicated returns its figures with
// Problems filled and an error.
func e2eOnce(ctx context.Context, o benchOptions, tty bool, stderr io.Writer) (res e2eRun, err error) {
	res = e2eRun{Kind: o.e2eKind, Server: o.server, Ticker: o.e2eTicker, Addresses: o.e2eN, Producers: o.producers, Expected: len(e2eStatuses) * o.e2eN}
	say := func(format string, a ...any) {
		if tty {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	recv, err := newE2EReceiver(o.e2eN, o.receiverAddr, o.e2eKind)
	if err != nil {
		return res, err
	}
	defer recv.close()
	// The server: in this process on a scratch database, or one running
	// elsewhere (payhook serve --dev --allow-private-endpoint <receiver>).
	base, apiKey, secret := o.server, o.serverKey, o.serverSecret
	var srv *server.Server
	cpu := processCPU(o.serverPID)
	if base == "" {
		var stop func() error
		if srv, base, apiKey, secret, stop, err = e2eServer(ctx, o, recv.endpoint, stderr); err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, stop()) }()
		cpu = processCPU(os.Getpid())
	}
	api := &restClient{
		base: base,
		key:  apiKey,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.producers}},
	}
	defer api.http.CloseIdleConnections()
	var pub struct {
		PubKey string `json:"pubkey"`
	}
	if err := api.do(ctx, http.MethodGet, "/pubkey/", nil, &pub); err != nil {
		return res, err
	}
	key, err := receiver.ParsePublicKeyPEM([]byte(pub.PubKey))
	if err != nil {
		return res, fmt.Errorf("/pubkey/: %w", err)
	}
	verify := receiver.NewVerifier(key).Verify
	if o.e2eKind == e2eCheckout {
		verify = receiver.NewWebhookVerifier([]string{secret}).Verify
	}

	say("e2e: creating %d %s %ss (%d at a time)...", o.e2eN, o.e2eTicker, o.e2eKind, o.producers)
	start := clock.Now()
	payees, err := e2eCreate(ctx, api, o, recv.endpoint)
	if err != nil {
		return res, err
	}
	res.CreateSeconds = time.Since(start).Seconds()
	res.AddressesPerSecond = float64(o.e2eN) / res.CreateSeconds
	subjects := make([]string, len(payees))
	for i, p := range payees {
		subjects[i] = p.subject
	}
	if err := recv.expect(subjects, verify); err != nil {
		return res, err
	}

	say("e2e: paying each %s on the devnet...", o.e2eKind)
	start = clock.Now()
	if err := forEach(ctx, o.e2eN, o.producers, func(i int) error {
		if err := api.do(ctx, http.MethodPost, "/devnet/"+o.e2eTicker+"/pay/", map[string]string{"address_in": payees[i].address, "value_coin": payees[i].value}, nil); err != nil {
			return fmt.Errorf("pay address %d: %w", i, err)
		}
		return nil
	}); err != nil {
		return res, err
	}
	res.PaySeconds = time.Since(start).Seconds()

	scraper := newMetricsScraper(api.base + "/metrics")
	scraper.sample(ctx, o.scrapeEvery)
	defer scraper.stopSampling()
	var bar *progressbar.ProgressBar
	if tty {
		bar = progressbar.NewOptions(res.Expected, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("e2e "+o.e2eTicker), progressbar.OptionClearOnFinish())
	}
	say("e2e: mining one block; waiting for %d callbacks (at most %s)...", res.Expected, o.e2eTimeout)
	stopProfile, err := startProfile(o.cpuProfile, o.memProfile)
	if err != nil {
		return res, err
	}
	cpu0, bench0, db0, mach0 := cpu(), benchCPU(), postgresCPU(), machineTimes()
	mined := clock.Now()
	// The mine call may take long (today it applies every payment before
	// it answers), never longer than the run may.
	mineCtx, cancelMine := context.WithDeadline(ctx, mined.Add(o.e2eTimeout))
	defer cancelMine()
	mineErr := make(chan error, 1)
	var mineDur, ackedDuringMine atomic.Int64
	go func() {
		err := api.do(mineCtx, http.MethodPost, "/devnet/"+o.e2eTicker+"/mine/", map[string]int{"blocks": 1}, nil)
		mineDur.Store(int64(time.Since(mined)))
		ackedDuringMine.Store(int64(recv.count()))
		mineErr <- err
	}()
	progress := time.NewTicker(100 * time.Millisecond)
	defer progress.Stop()
	lastSaid := mined
	deadline := time.NewTimer(o.e2eTimeout)
	defer deadline.Stop()
	var mineDone bool
wait:
	for {
		select {
		case <-recv.done:
			res.AcknowledgedAll = true
			break wait
		case err := <-mineErr:
			if err != nil {
				return res, fmt.Errorf("mine: %w", err)
			}
			mineDone = true
		case now := <-progress.C:
			switch {
			case bar != nil:
				_ = bar.Set(recv.count())
			case now.Sub(lastSaid) >= 10*time.Second:
				// Without a terminal, a line every 10 s (a run may take minutes).
				lastSaid = now
				fmt.Fprintf(stderr, "e2e: %d of %d callbacks acknowledged %s after the mine request (mine call answered: %v)\n",
					recv.count(), res.Expected, now.Sub(mined).Round(time.Second), mineDone)
			}
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	cpu1, bench1, db1, mach1 := cpu(), benchCPU(), postgresCPU(), machineTimes()
	if err := stopProfile(); err != nil {
		fmt.Fprintf(stderr, "--cpuprofile: the profile may be incomplete: %v\n", err)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if !mineDone {
		// Ends by the run's deadline at the latest.
		if err := <-mineErr; err != nil {
			return res, fmt.Errorf("mine: %w", err)
		}
	}
	res.MineCallSeconds = time.Duration(mineDur.Load()).Seconds()
	res.AckedDuringMine = int(ackedDuringMine.Load())
	if res.Metrics, err = scraper.settle(ctx, float64(recv.count())); err != nil {
		return res, err
	}
	// Stopping the server finishes its attempts in flight: a duplicate
	// sent late is counted before the books are closed.
	if srv != nil {
		if err := srv.Stop(); err != nil {
			return res, fmt.Errorf("stop server: %w", err)
		}
	}
	recv.tally(&res, mined)
	res.CPUPer1000 = (cpu1.seconds - cpu0.seconds) / float64(max(res.Callbacks, 1)) * 1000
	res.PeakRSSMiB = cpu1.peakRSSMiB
	per1000 := func(seconds float64) float64 { return seconds / float64(max(res.Callbacks, 1)) * 1000 }
	if srv == nil {
		res.BenchCPUPer1000 = per1000(bench1.seconds - bench0.seconds)
	}
	res.DatabaseCPUPer1000 = per1000(db1 - db0)
	if total := mach1.total - mach0.total; total > 0 {
		res.MachineBusy = 1 - (mach1.idle-mach0.idle)/total
		res.MachineStolen = (mach1.steal - mach0.steal) / total
	}
	if !res.AcknowledgedAll {
		res.Problems = append(res.Problems, fmt.Sprintf("%d of %d callbacks acknowledged within %s of the mine request", recv.count(), res.Expected, o.e2eTimeout))
	}
	if len(res.Problems) > 0 {
		return res, fmt.Errorf("%w: %v", errE2E, res.Problems)
	}
	return res, nil
}

// e2eBTCAddress is the merchant's address BTC payments are forwarded to
// unless --e2e-address says otherwise.
const e2eBTCAddress = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"

// printE2E prints the end-to-end run.
func printE2E(w io.Writer, x e2eRun) {
	where := "a server in this process"
	if x.Server != "" {
		where = "the server at " + x.Server
	}
	fmt.Fprintf(w, "end to end through %s: %d %s %ss created over REST in %.2f s (%.0f/s, %d at a time), paid on the devnet in %.2f s, mined in one block\n",
		where, x.Addresses, x.Ticker, x.Kind, x.CreateSeconds, x.AddressesPerSecond, x.Producers, x.PaySeconds)
	fmt.Fprintf(w, "mine call answered in %.2f s (%d callbacks acknowledged by then)\n", x.MineCallSeconds, x.AckedDuringMine)
	fmt.Fprintf(w, "%9s %9s %9s %9s %8s %8s %8s %8s %8s %10s %8s %7s\n", "callbacks", "expected", "seconds", "cb/s", "first ms", "p50 ms", "p95 ms", "p99 ms", "max ms", "cpu s/1k", "rss MiB", "/rsa")
	fmt.Fprintf(w, "%9d %9d %9.1f %9.0f %8.0f %8.0f %8.0f %8.0f %8.0f %10.3f %8.0f %7.2f\n", x.Callbacks, x.Expected, x.Seconds, x.PerSecond,
		x.FirstMs, x.P50ms, x.P95ms, x.P99ms, x.Maxms, x.CPUPer1000, x.PeakRSSMiB, x.RatioRSALimit)
	fmt.Fprintf(w, "CPU s per 1k callbacks: database (local PostgreSQL) %.3f", x.DatabaseCPUPer1000)
	if x.Server != "" {
		fmt.Fprintf(w, ", this process (receiver, driver) %.3f", x.BenchCPUPer1000)
	}
	fmt.Fprintf(w, "; machine busy %.0f%% (stolen by the hypervisor %.0f%%)\n", x.MachineBusy*100, x.MachineStolen*100)
	fmt.Fprintf(w, "by status: %v; receiver requests %d; lost %d, duplicated %d, redelivered %d\n", x.ByStatus, x.Attempts, x.Lost, x.Duplicated, x.Redelivered)
	fmt.Fprintf(w, "server /metrics: %.0f attempts acknowledged, %.0f notifications acknowledged, attempt p99 <= %.0f ms, max queued %.0f, max oldest due %.2f s\n",
		x.Metrics.Attempts["acknowledged"], x.Metrics.Finished["acknowledged"], x.Metrics.AttemptP99ms, x.Metrics.MaxQueued, x.Metrics.MaxOldestDueSecs)
	for _, p := range x.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
}

// errE2E is the failure of an end-to-end run whose callbacks were lost,
// duplicated, unexpected or unverifiable.
var errE2E = errors.New("end-to-end run failed")

// forEach runs fn for 0..n-1 on at most workers goroutines and returns the
// first error (the others stop taking work).
func forEach(ctx context.Context, n, workers int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// restClient calls payhook's REST API.
type restClient struct {
	base, key string
	http      *http.Client
}

// do sends a request with the API key and a JSON body (when body is not
// nil), and decodes a 200 answer into out (when not nil).
func (c *restClient) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("apikey", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// e2eReceiver is the merchant's server of the end-to-end run: it verifies
// each callback's signature, acknowledges it, and counts deliveries per
// uuid and notifications per (address, status).
type e2eReceiver struct {
	srv *http.Server
	// endpoint is the callback URL without the ?i=N each address adds:
	// what payhook is allowed to reach on loopback.
	endpoint string
	done     chan struct{}

	// subject is the payload field that names what a callback is about:
	// address_in (low-level callbacks) or payment_id (checkout webhooks).
	subject string

	mu       sync.Mutex
	verify   func(*http.Request) ([]byte, error)
	want     int
	index    map[string]int                // subject -> its number
	byUUID   map[string]int                // deliveries per uuid
	acked    map[[2]string]time.Time       // (subject, status) -> first acknowledgement
	notes    map[[2]string]map[string]bool // (subject, status) -> its uuids
	attempts int
	problems []string
}

// maxProblems bounds the problems kept of each run.
const maxProblems = 20

func newE2EReceiver(n int, addr, kind string) (*e2eReceiver, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("receiver listener: %w", err)
	}
	r := &e2eReceiver{
		subject: "address_in",
		done:    make(chan struct{}),
		want:    len(e2eStatuses) * n,
		byUUID:  make(map[string]int, len(e2eStatuses)*n),
		acked:   make(map[[2]string]time.Time, len(e2eStatuses)*n),
		notes:   make(map[[2]string]map[string]bool, len(e2eStatuses)*n),
	}
	if kind == e2eCheckout {
		r.subject = "payment_id"
	}
	r.endpoint = "http://" + l.Addr().String() + "/hook"
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// expect records what the callbacks are about, in order (subject i's
// callbacks must come to ?i=i), and how to verify their signatures.
func (r *e2eReceiver) expect(subjects []string, verify func(*http.Request) ([]byte, error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.verify = verify
	r.index = make(map[string]int, len(subjects))
	for i, a := range subjects {
		if _, dup := r.index[a]; dup || a == "" {
			return fmt.Errorf("subject %d: %q was created twice or is empty", i, a)
		}
		r.index[a] = i
	}
	return nil
}

func (r *e2eReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	verify := r.verify
	r.mu.Unlock()
	var data []byte
	verr := errors.New("no verifier yet: a callback came before any address was paid")
	if verify != nil {
		data, verr = verify(req)
	}
	now := clock.Now()
	// Acknowledged whatever the checks say: a problem fails the run at its
	// end instead of stalling it on payhook's retry schedule.
	_, _ = w.Write([]byte(`{"status":"ok"}`))
	var fields map[string]any
	jerr := json.Unmarshal(data, &fields)
	var cb struct{ UUID, AddressIn, Status string }
	cb.UUID, _ = fields["uuid"].(string)
	cb.AddressIn, _ = fields[r.subject].(string)
	cb.Status, _ = fields["payment_status"].(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	switch {
	case verr != nil:
		r.problem("callback with a bad signature: %v", verr)
		return
	case jerr != nil:
		r.problem("callback body is not JSON: %v", jerr)
		return
	}
	i, known := r.index[cb.AddressIn]
	switch {
	case !known:
		r.problem("callback %s for a %s not created: %q", cb.UUID, r.subject, cb.AddressIn)
		return
	case req.URL.Query().Get("i") != strconv.Itoa(i):
		r.problem("callback %s for address %d reached ?i=%s", cb.UUID, i, req.URL.Query().Get("i"))
	case !slices.Contains(e2eStatuses, cb.Status):
		r.problem("callback %s for address %d has status %q", cb.UUID, i, cb.Status)
	}
	r.byUUID[cb.UUID]++
	k := [2]string{cb.AddressIn, cb.Status}
	if r.notes[k] == nil {
		r.notes[k] = map[string]bool{}
	}
	r.notes[k][cb.UUID] = true
	if _, seen := r.acked[k]; !seen {
		r.acked[k] = now
		if len(r.acked) == r.want {
			close(r.done)
		}
	}
}

// problem records a problem, keeping at most maxProblems; r.mu is held.
func (r *e2eReceiver) problem(format string, a ...any) {
	if len(r.problems) < maxProblems {
		r.problems = append(r.problems, fmt.Sprintf(format, a...))
	}
}

// count is how many (address, status) pairs have been acknowledged.
func (r *e2eReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acked)
}

// tally fills res with what the receiver saw, latencies measured from
// mined: callbacks, statuses, losses, duplicates and problems.
func (r *e2eReceiver) tally(res *e2eRun, mined time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res.Attempts = r.attempts
	res.Callbacks = len(r.byUUID)
	res.ByStatus = map[string]int{}
	var lat []float64
	last := mined
	for k, at := range r.acked {
		res.ByStatus[k[1]]++
		lat = append(lat, float64(at.Sub(mined))/float64(time.Millisecond))
		if at.After(last) {
			last = at
		}
	}
	res.Problems = append(res.Problems, r.problems...)
	addrs := make([]string, len(r.index))
	for a, i := range r.index {
		addrs[i] = a
	}
	for i, a := range addrs {
		for _, s := range e2eStatuses {
			switch n := len(r.notes[[2]string{a, s}]); {
			case n == 0:
				res.Lost++
				if res.Lost <= maxProblems {
					res.Problems = append(res.Problems, fmt.Sprintf("lost: no %s callback for address %d", s, i))
				}
			case n > 1:
				res.Duplicated++
				if res.Duplicated <= maxProblems {
					res.Problems = append(res.Problems, fmt.Sprintf("duplicated: %d %s notifications for address %d", n, s, i))
				}
			}
		}
	}
	for id, n := range r.byUUID {
		if n > 1 {
			res.Redelivered += n - 1
			if res.Redelivered <= maxProblems {
				res.Problems = append(res.Problems, fmt.Sprintf("redelivered: notification %s acknowledged %d times", id, n))
			}
		}
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	res.Seconds = last.Sub(mined).Seconds()
	res.PerSecond = float64(len(lat)) / res.Seconds
	res.FirstMs, res.P50ms, res.P95ms, res.P99ms, res.Maxms = lat[0], percentile(lat, 0.50), percentile(lat, 0.95), percentile(lat, 0.99), lat[len(lat)-1]
}

func (r *e2eReceiver) close() { _ = r.srv.Close() }

// The kinds of e2e run.
const (
	// e2eAddress: low-level addresses, RSA-signed callbacks.
	e2eAddress = "address"
	// e2eCheckout: a checkout each, a coin chosen, HMAC-signed webhooks.
	e2eCheckout = "checkout"
)

// e2eServer starts a payhook server in this process on a scratch database
// of o.db, with the devnet, the receiver's endpoint as the one private
// endpoint allowed and production defaults otherwise, and returns it, its
// REST base URL, an API key, its project's IPN secret and what stops it and
// drops the database.
func e2eServer(ctx context.Context, o benchOptions, endpoint string, stderr io.Writer) (*server.Server, string, string, string, func() error, error) {
	scratch, err := bench.CreateDB(ctx, o.db)
	if err != nil {
		return nil, "", "", "", nil, err
	}
	fail := func(err error) (*server.Server, string, string, string, func() error, error) {
		return nil, "", "", "", nil, errors.Join(err, scratch.Drop())
	}
	// The admin functions work on a database payhook created: migrate the
	// scratch one first, as payhook migrate would.
	if _, err := admin.Migrate(ctx, scratch.DSN, ""); err != nil {
		return fail(err)
	}
	apiKey, err := admin.CreateAPIKey(ctx, scratch.DSN, "payhook-bench", false, clock.Now())
	if err != nil {
		return fail(err)
	}
	keys, err := admin.ListAPIKeys(ctx, scratch.DSN, 0)
	if err != nil || len(keys) != 1 {
		return fail(fmt.Errorf("the benchmark's key: %v", err))
	}
	secret, err := admin.RotateProjectSecret(ctx, scratch.DSN, keys[0].ProjectID, 0)
	if err != nil {
		return fail(err)
	}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	server.TuneGC(server.DefaultGCPercent) // as payhook serve runs
	srv, err := server.New(ctx, server.Config{
		Store:    server.StoreConfig{DB: scratch.DSN},
		API:      server.APIConfig{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"},
		Keys:     server.KeysConfig{Seed: seed},
		Delivery: notifier.Delivery{AllowPrivateEndpoints: []string{endpoint}},
		Dev:      true,
		Out:      io.Discard,
	}, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return fail(fmt.Errorf("new server: %w", err))
	}
	stop := func() error { return errors.Join(srv.Stop(), scratch.Drop()) }
	if err := srv.Start(ctx); err != nil {
		return nil, "", "", "", nil, errors.Join(fmt.Errorf("start server: %w", err), stop())
	}
	return srv, "http://" + srv.HTTPAddr(), apiKey, secret, stop, nil
}

// payee is what one payment of the run pays and what its callbacks name.
type payee struct {
	// subject is what the callbacks name (address_in or payment_id).
	subject string
	// address and value are what the devnet pays.
	address, value string
}

// e2eCreate creates what the run pays, o.producers at a time: o.e2eN
// low-level addresses (each paid a hundred times the coin's minimum), or
// o.e2eN checkouts with the coin chosen (each paid its quoted amount),
// each with its own callback URL on the receiver.
func e2eCreate(ctx context.Context, api *restClient, o benchOptions, endpoint string) ([]payee, error) {
	payees := make([]payee, o.e2eN)
	err := forEach(ctx, o.e2eN, o.producers, func(i int) error {
		cb := endpoint + "?i=" + strconv.Itoa(i)
		if o.e2eKind == e2eCheckout {
			q := url.Values{"notify_url": {cb}, "value": {"25"}, "currency": {"USD"}, "json": {"1"}}
			var c struct {
				PaymentID string `json:"payment_id"`
			}
			if err := api.do(ctx, http.MethodGet, "/checkout/request/?"+q.Encode(), nil, &c); err != nil {
				return fmt.Errorf("checkout %d: %w", i, err)
			}
			var a struct {
				AddressIn string `json:"address_in"`
				ValueCoin string `json:"value_coin"`
			}
			q = url.Values{"payment_id": {c.PaymentID}, "coin": {o.e2eTicker}}
			if err := api.do(ctx, http.MethodGet, "/checkout/address/?"+q.Encode(), nil, &a); err != nil {
				return fmt.Errorf("checkout %d address: %w", i, err)
			}
			payees[i] = payee{subject: c.PaymentID, address: a.AddressIn, value: a.ValueCoin}
			return nil
		}
		q := url.Values{"callback": {cb}, "address": {o.e2eAddress}, "json": {"1"}, "confirmations": {"1"}}
		var created struct {
			AddressIn string `json:"address_in"`
			Minimum   string `json:"minimum_transaction_coin"`
		}
		if err := api.do(ctx, http.MethodGet, "/"+o.e2eTicker+"/create/?"+q.Encode(), nil, &created); err != nil {
			return fmt.Errorf("create address %d: %w", i, err)
		}
		minimum, err := decimal.NewFromString(created.Minimum)
		if err != nil {
			return fmt.Errorf("create address %d: minimum %q: %w", i, created.Minimum, err)
		}
		// A hundred times the smallest forwarded payment: forwarded after fees.
		payees[i] = payee{subject: created.AddressIn, address: created.AddressIn, value: minimum.Mul(decimal.NewFromInt(100)).String()}
		return nil
	})
	return payees, err
}

// cpuReading is a process's CPU time so far and its peak resident set.
type cpuReading struct {
	seconds    float64
	peakRSSMiB float64
}

// processCPU returns a reader of process pid's CPU time: this process's
// from getrusage, another's (an external server: --server-pid) from
// /proc/<pid>/stat and status (Linux); none (zeros) when pid is 0.
func processCPU(pid int) func() cpuReading {
	if pid == 0 {
		return func() cpuReading { return cpuReading{} }
	}
	if pid == os.Getpid() {
		return func() cpuReading {
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			return cpuReading{seconds: tv(ru.Utime) + tv(ru.Stime), peakRSSMiB: float64(ru.Maxrss) / 1024}
		}
	}
	return func() cpuReading {
		var r cpuReading
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil {
			// Fields after the command name (which may hold spaces).
			if i := bytes.LastIndexByte(stat, ')'); i > 0 {
				f := strings.Fields(string(stat[i+1:]))
				if len(f) > 12 {
					ut, _ := strconv.ParseFloat(f[11], 64)
					st, _ := strconv.ParseFloat(f[12], 64)
					r.seconds = (ut + st) / 100 // clock ticks (USER_HZ)
				}
			}
		}
		if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
					r.peakRSSMiB = kb / 1024
				}
			}
		}
		return r
	}
}

// benchCPU reads this process's CPU time.
var benchCPU = processCPU(os.Getpid())

// postgresCPU returns the CPU seconds used so far by the processes of this
// machine named postgres (the server and its backends; a backend that
// exits between two readings takes its share with it), or 0 where /proc
// cannot tell.
func postgresCPU() float64 {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var ticks float64
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || end < open || string(stat[open+1:end]) != "postgres" {
			continue
		}
		if f := strings.Fields(string(stat[end+1:])); len(f) > 12 {
			ut, _ := strconv.ParseFloat(f[11], 64)
			st, _ := strconv.ParseFloat(f[12], 64)
			ticks += ut + st
		}
	}
	return ticks / 100 // USER_HZ
}

// cpuTimes is the machine's CPU time so far, all cores: in total and idle
// (idle and iowait) and stolen by the hypervisor, in clock ticks.
type cpuTimes struct{ total, idle, steal float64 }

// machineTimes reads /proc/stat's cpu line (zeros where there is none).
func machineTimes() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		if i > 7 { // guest time is already counted in user
			break
		}
		t.total += x
		switch i {
		case 3, 4:
			t.idle += x
		case 7:
			t.steal += x
		}
	}
	return t
}

// startProfile starts a CPU profile of the process into path (nothing when
// path is empty) and, when memPath is set, writes the allocations so far to
// memPath.base and, when stopped, to memPath (compare the window's with
// go tool pprof -sample_index=alloc_space -base memPath.base). It returns
// what stops them.
func startProfile(path, memPath string) (func() error, error) {
	writeAllocs := func(p string) error {
		if memPath == "" {
			return nil
		}
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		runtime.GC() // the profile counts allocations up to the last collection
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			_ = f.Close()
			return fmt.Errorf("--memprofile: %w", err)
		}
		return f.Close()
	}
	if err := writeAllocs(memPath + ".base"); err != nil {
		return nil, err
	}
	if path == "" {
		return func() error { return writeAllocs(memPath) }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close() // the profile's own error is the one to report
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(f.Close(), writeAllocs(memPath))
	}, nil
}
