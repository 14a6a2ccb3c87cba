package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBenchSmoke runs every kind of bench run, small, on the embedded
// database, and checks the report: each run delivered everything, the
// machine's limits and the ratios are filled in, the dead endpoint's
// backlog was set aside before its measurement.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark")
	}
	rep, stdout := runReport(t, "--db", "sqlite", "--transports", "get,json", "--n", "60", "--hmac-n", "60",
		"--rate", "200", "--latency-n", "60", "--dead", "40", "--limits-for", "100ms", "--scrape-every", "20ms")
	var names []string
	for _, r := range rep.Runs {
		names = append(names, r.Name+"/"+r.Transport+"/"+r.Signer)
		if !r.AcknowledgedAll || r.PerSecond <= 0 || r.P99ms <= 0 || r.CPUPer1000 <= 0 {
			t.Errorf("run %s: %+v", r.Name, r)
		}
		if r.DeadQueued > 0 && r.DeadSettleSecs <= 0 {
			t.Errorf("run %s: the dead endpoint's backlog was not waited for", r.Name)
		}
		// What payhook's /metrics said, read over HTTP during and after the
		// run (bench itself fails if the counts disagree with the receiver).
		m := r.Metrics
		if m.Scrapes < 2 || m.Attempts["acknowledged"] != float64(r.Notifications) || m.Finished["acknowledged"] != float64(r.Notifications) ||
			m.AttemptP99ms <= 0 || m.Blocked != 0 {
			t.Errorf("run %s: metrics %+v", r.Name, m)
		}
		if r.DeadQueued > 0 && m.MaxQueued < float64(r.DeadQueued) {
			t.Errorf("run %s: the scrapes saw at most %.0f queued with %d queued for the dead endpoint", r.Name, m.MaxQueued, r.DeadQueued)
		}
	}
	want := "throughput/get/rsa throughput/json/rsa engine-ceiling/json/hmac latency/json/rsa latency-with-dead-endpoint/json/rsa"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("runs %q, want %q", got, want)
	}
	if rep.RSALimit <= 0 || rep.HTTPLimit <= 0 || rep.DeadP99Ratio <= 0 || rep.Runs[0].RatioRSALimit <= 0 {
		t.Errorf("limits or ratios missing: rsa %v http %v dead ratio %v", rep.RSALimit, rep.HTTPLimit, rep.DeadP99Ratio)
	}
	if !strings.Contains(stdout, "healthy p99 with it / without it") {
		t.Errorf("report misses the dead-endpoint summary:\n%s", stdout)
	}
}

// runReport runs payhook-bench with args and --out in a temporary
// directory, fails the test if it fails, and returns the JSON report and
// what it printed.
func runReport(t *testing.T, args ...string) (benchReport, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bench.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), append(args, "--out", out), &stdout, &stderr); err != nil {
		t.Fatalf("payhook-bench %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, stdout.String()
}

// TestBenchExternalReceiver delivers a run to a receiver outside the
// engine (--receiver-url), as bench/webhookx/run.sh does, and checks that
// it received every notification, JSON and HMAC-signed, and that the
// report has the rate and the CPU cost read without a receiver in the
// process.
func TestBenchExternalReceiver(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark")
	}
	var mu sync.Mutex
	var posts, signed, jsonBodies int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost {
			posts++
		}
		if r.Header.Get("x-service-signature") != "" {
			signed++
		}
		if json.Valid(body) && r.Header.Get("Content-Type") == "application/json" {
			jsonBodies++
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	rep, _ := runReport(t, "--db", "sqlite", "--receiver-url", srv.URL+"/hook", "--transports", "json", "--signer", "hmac",
		"--n", "50", "--hmac-n", "0", "--rate", "0", "--limits-for", "100ms", "--scrape-every", "20ms")
	if len(rep.Runs) != 1 {
		t.Fatalf("%d runs, want 1: %+v", len(rep.Runs), rep.Runs)
	}
	r := rep.Runs[0]
	if !r.AcknowledgedAll || r.PerSecond <= 0 || r.Seconds <= 0 || r.CPUPer1000 <= 0 || r.Attempts != 50 || r.Metrics.Finished["acknowledged"] != 50 {
		t.Errorf("run: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if posts != 50 || signed != 50 || jsonBodies != 50 {
		t.Errorf("the receiver got %d POSTs, %d signed, %d JSON; want 50 of each", posts, signed, jsonBodies)
	}
	if !strings.Contains(rep.Description, srv.URL) {
		t.Errorf("the report does not say where it delivered: %q", rep.Description)
	}
}

// TestBenchExternalReceiverFlags refuses what --receiver-url cannot
// measure.
func TestBenchExternalReceiverFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--receiver-url", "ftp://127.0.0.1/x", "--rate", "0"},
		{"--receiver-url", "http://127.0.0.1:9/x"}, // --rate defaults to 500
		{"--receiver-url", "http://127.0.0.1:9/x", "--rate", "0", "--dead", "5"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--receiver-url") {
			t.Errorf("%v: %v, want a --receiver-url error", args, err)
		}
	}
}
