package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains/nodetest"
)

// TestPayoutsSmoke runs the payouts mode, small, on the embedded database
// and a litecoind regtest the run starts: 20 payouts, in requests of one
// and of two destinations, become batched transactions (fewer than the
// payouts), every payout is done within two blocks of its request, the
// node shows every destination paid exactly its amount once by its
// payout's transaction, and the report has the run's figures and the CPU
// profile.
func TestPayoutsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the benchmark")
	}
	nodetest.Need(t, "litecoind", litecoindInstall, "/usr/lib/litecoin/litecoind")
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	const n = 20
	rep, stdout := runReport(t, "payouts", "--db", "sqlite", "--payouts-n", "20", "--payouts-per-request", "2", "--producers", "4",
		"--payout-interval", "1s", "--block-every", "3s", "--watch-interval", "250ms", "--payouts-timeout", "2m",
		"--limits-for", "100ms", "--cpuprofile", prof)
	if len(rep.Runs) != 0 || rep.E2E != nil || rep.Payouts == nil {
		t.Fatalf("report has engine runs %d, e2e %v and payouts %v", len(rep.Runs), rep.E2E, rep.Payouts)
	}
	x := *rep.Payouts
	if x.Payouts != n || x.Requests != n/2 || x.Verified != n || !x.AllDone || len(x.Problems) != 0 {
		t.Errorf("counts: payouts %d requests %d verified %d all done %v problems %v", x.Payouts, x.Requests, x.Verified, x.AllDone, x.Problems)
	}
	// One webhook per payout (per request of two destinations).
	if x.Webhooks != n/2 {
		t.Errorf("%d payout webhooks, want %d", x.Webhooks, n/2)
	}
	sum := 0
	for _, s := range x.BatchSizes {
		sum += s
	}
	if x.Batches < 1 || x.Batches >= n/2 || len(x.BatchSizes) != x.Batches || sum != n {
		t.Errorf("batches %d of sizes %v: want fewer transactions than payouts, paying all %d destinations", x.Batches, x.BatchSizes, n)
	}
	done := 0
	for b, k := range x.BlocksToDone {
		if b < 0 || b > x.BlocksToDoneMax {
			t.Errorf("blocks to done %v, max %d", x.BlocksToDone, x.BlocksToDoneMax)
		}
		done += k
	}
	if done != n || x.TargetBlocks != 2 || x.BlocksToDoneMax > 2 || !x.WithinTarget || x.BlocksToMinedMax < 1 {
		t.Errorf("blocks: to done %v (max %d, target %d, within %v), to the block %d", x.BlocksToDone, x.BlocksToDoneMax, x.TargetBlocks, x.WithinTarget, x.BlocksToMinedMax)
	}
	// All done is read from the first request, each payout's done from its
	// own, on two readings of the clock: a few milliseconds apart at most.
	if x.PerSecond <= 0 || x.QueueSeconds <= 0 || x.AllDoneSeconds < x.DoneMaxs-0.05 || x.DoneMaxs < x.DoneP50s || x.DoneP50s <= 0 ||
		x.CPUPerPayout <= 0 || x.NodeCPUPerPayout <= 0 || x.PeakRSSMiB <= 0 {
		t.Errorf("figures: %+v", x)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("CPU profile: %v", err)
	}
	if !strings.HasPrefix(rep.Command, "payhook-bench payouts") || !strings.Contains(stdout, "20 of 20 destinations paid exactly their amount once") {
		t.Errorf("command %q; printed:\n%s", rep.Command, stdout)
	}
}

// TestPayoutsRejectsBadFlags names the bad flag.
func TestPayoutsRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"payouts", "--payouts-n", "0"}, "--payouts-n"},
		{[]string{"payouts", "--payout-amount", "0.000000001"}, "--payout-amount"},
		{[]string{"payouts", "--block-every", "0s"}, "--block-every"},
		{[]string{"payouts", "--ltc", "http://u:p@127.0.0.1:19443/"}, "--ltc"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to name %s", c.args, err, c.want)
		}
	}
}
