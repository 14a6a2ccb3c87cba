package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ESmoke runs the end-to-end mode, small, on the embedded database:
// every address owes a confirmed and a completed callback, each arrives
// exactly once, and the report has the run's figures next to the RSA
// limit, and the CPU profile is written.
func TestE2ESmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark")
	}
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	const n = 20
	rep, stdout := runReport(t, "e2e", "--db", "sqlite", "--e2e-n", "20", "--producers", "4", "--limits-for", "100ms",
		"--scrape-every", "20ms", "--cpuprofile", prof)
	if len(rep.Runs) != 0 || rep.E2E == nil {
		t.Fatalf("report has engine runs %d and e2e %v", len(rep.Runs), rep.E2E)
	}
	x := *rep.E2E
	if x.Addresses != n || x.Expected != 2*n || x.Callbacks != 2*n || x.ByStatus["confirmed"] != n || x.ByStatus["completed"] != n || len(x.ByStatus) != 2 {
		t.Errorf("counts: addresses %d expected %d callbacks %d by status %v", x.Addresses, x.Expected, x.Callbacks, x.ByStatus)
	}
	if !x.AcknowledgedAll || x.Lost != 0 || x.Duplicated != 0 || x.Redelivered != 0 || len(x.Problems) != 0 || x.Attempts != 2*n {
		t.Errorf("integrity: %+v", x)
	}
	if x.PerSecond <= 0 || x.Seconds <= 0 || x.P50ms <= 0 || x.P99ms < x.P50ms || x.Maxms < x.P99ms || x.FirstMs > x.P50ms ||
		x.MineCallSeconds <= 0 || x.CreateSeconds <= 0 || x.PaySeconds <= 0 || x.CPUPer1000 <= 0 {
		t.Errorf("figures: %+v", x)
	}
	if rep.RSALimit <= 0 || x.RatioRSALimit <= 0 || x.RatioRSALimit != x.PerSecond/rep.RSALimit {
		t.Errorf("ratio to the RSA limit %v (limit %v, %v callbacks/s)", x.RatioRSALimit, rep.RSALimit, x.PerSecond)
	}
	// The server's own /metrics, read over HTTP, agree with the receiver.
	if m := x.Metrics; m.Scrapes < 2 || m.Attempts["acknowledged"] != 2*n || m.Finished["acknowledged"] != 2*n {
		t.Errorf("metrics %+v", m)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("CPU profile: %v", err)
	}
	if !strings.Contains(rep.Command, "e2e") || !strings.Contains(stdout, "lost 0, duplicated 0, redelivered 0") {
		t.Errorf("command %q; printed:\n%s", rep.Command, stdout)
	}
}

// TestE2ERejectsBadFlags names the bad flag.
func TestE2ERejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "both"}, "--mode"},
		{[]string{"e2e", "--e2e-n", "0"}, "--e2e-n"},
		{[]string{"e2e", "--e2e-ticker", "ltc"}, "--e2e-address"},
		{[]string{"e2e", "extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to name %s", c.args, err, c.want)
		}
	}
}
