package main

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/bench"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/ratelimit"
)

// payoutsOptions are the flags of the payouts mode.
type payoutsOptions struct {
	// ltc is a litecoind's RPC URL with credentials and a wallet path
	// (http://user:pass@127.0.0.1:19443/wallet/NAME); empty: the run
	// starts litecoind -regtest itself.
	ltc string
	// n payouts, perRequest destinations in each request (one payout per
	// request).
	n, perRequest int
	// amount is the smallest payout; destination i is paid amount plus i
	// base units, so that every destination's amount is its own.
	amount string
	// interval is the server's PayoutInterval for ltc; blockEvery how often
	// the run mines a block; watch the server's WatchInterval.
	interval, blockEvery, watch time.Duration
	// timeout bounds the wait for every payout's payout.done webhook.
	timeout time.Duration
	// maxBlocks is the target: every payout done within this many blocks
	// of its request.
	maxBlocks int
}

// payoutsFlags registers the payouts mode's flags on fs.
func payoutsFlags(fs *flag.FlagSet, o *payoutsOptions) {
	fs.StringVar(&o.ltc, "ltc", "", "payouts: a litecoind regtest RPC URL with credentials and a wallet with spendable coins, http://USER:PASS@HOST:PORT/wallet/NAME (the run mines on it); default: start litecoind -regtest in a temporary directory")
	fs.IntVar(&o.n, "payouts-n", 1000, "payouts: payouts requested, each to a fresh address of the node's wallet")
	fs.IntVar(&o.perRequest, "payouts-per-request", 1, "payouts: destinations per POST /ltc/payout/request/bulk/process/ (one payout each)")
	fs.StringVar(&o.amount, "payout-amount", "0.001", "payouts: the smallest amount (destination i gets it plus i litoshi)")
	fs.DurationVar(&o.interval, "payout-interval", 3*time.Second, "payouts: the server's batch interval for ltc (server.Config PayoutInterval, serve --payout-interval)")
	fs.DurationVar(&o.blockEvery, "block-every", 5*time.Second, "payouts: the run mines a block this often while payouts are requested and sent")
	fs.DurationVar(&o.watch, "watch-interval", time.Second, "payouts: how often the server polls the node (serve --watch-interval; queued payouts are planned after each poll)")
	fs.DurationVar(&o.timeout, "payouts-timeout", 5*time.Minute, "payouts: how long after the first request every payout must be done")
	fs.IntVar(&o.maxBlocks, "payouts-max-blocks", 2, "payouts: the target, every payout done within this many blocks of its request")
}

// validate reports the first bad payouts flag.
func (o payoutsOptions) validate() error {
	if o.n < 1 || o.perRequest < 1 || o.perRequest > 1000 {
		return errors.New("--payouts-n must be positive and --payouts-per-request from 1 to 1000")
	}
	if a, err := decimal.NewFromString(o.amount); err != nil || a.Sign() <= 0 || a.Exponent() < -8 {
		return fmt.Errorf("--payout-amount: %q is not a positive amount of ltc with at most 8 decimals", o.amount)
	}
	if o.interval <= 0 || o.blockEvery <= 0 || o.watch <= 0 || o.timeout <= 0 || o.maxBlocks < 1 {
		return errors.New("--payout-interval, --block-every, --watch-interval, --payouts-timeout and --payouts-max-blocks must be positive")
	}
	if o.ltc != "" {
		if _, err := parseLTC(o.ltc); err != nil {
			return fmt.Errorf("--ltc: %w", err)
		}
	}
	return nil
}

// payoutsRun is the payouts run: payout requests on litecoind regtest
// through a real payhook server, sent in batches, each destination checked
// on the node.
type payoutsRun struct {
	// Node is the litecoind (its URL without credentials, or "started by
	// the run").
	Node string `json:"node"`
	// Payouts is how many payouts were requested (destinations), Requests
	// the HTTP requests carrying them, Producers how many at a time.
	Payouts   int    `json:"payouts"`
	Requests  int    `json:"requests"`
	Producers int    `json:"producers"`
	Amount    string `json:"amount_coin"`
	// The server's batch interval and watch interval, and how often the
	// run mined a block.
	IntervalSeconds   float64 `json:"payout_interval_seconds"`
	WatchSeconds      float64 `json:"watch_interval_seconds"`
	BlockEverySeconds float64 `json:"block_every_seconds"`
	// QueueSeconds runs from the first request to the last answer;
	// PerSecond is payouts requested per second over it; RequestP50ms and
	// RequestP99ms are the requests' answer times.
	QueueSeconds float64 `json:"queue_seconds"`
	PerSecond    float64 `json:"payouts_requested_per_second"`
	RequestP50ms float64 `json:"request_p50_ms"`
	RequestP99ms float64 `json:"request_p99_ms"`
	// Batches is how many transactions the payouts became; BatchSizes
	// their destinations, in the order they were mined.
	Batches    int   `json:"batches"`
	BatchSizes []int `json:"batch_sizes"`
	// BlocksToDone counts, for each number of blocks, the payouts done
	// within it of their request: blocks mined (or being mined) when the
	// payout.done webhook arrived less blocks mined when the request was
	// sent, an upper bound. BlocksToDoneMax is the largest; the target is
	// TargetBlocks.
	BlocksToDone    map[int]int `json:"blocks_to_done"`
	BlocksToDoneMax int         `json:"blocks_to_done_max"`
	TargetBlocks    int         `json:"target_blocks"`
	WithinTarget    bool        `json:"within_target"`
	// BlocksToMinedMax is the most blocks from a request to the block that
	// holds its payout's transaction (that block included).
	BlocksToMinedMax int `json:"blocks_to_mined_max"`
	// BlocksMined is how many blocks the run's miner mined, from just
	// before the first request until it stopped after the last
	// payout.done.
	BlocksMined int64 `json:"blocks_mined"`
	// AllDoneSeconds runs from the first request to the last payout.done
	// webhook; DoneP50s and DoneMaxs are each payout's request to its
	// webhook.
	AllDoneSeconds float64 `json:"all_done_seconds"`
	DoneP50s       float64 `json:"done_p50_seconds"`
	DoneMaxs       float64 `json:"done_max_seconds"`
	// CPUPerPayout is this process's CPU time (server, driver, webhook
	// receiver) from the first request to the last payout.done, per
	// payout; DatabaseCPUPerPayout the local PostgreSQL's and
	// NodeCPUPerPayout litecoind's (when the run started it).
	CPUSeconds           float64 `json:"cpu_seconds"`
	CPUPerPayout         float64 `json:"cpu_seconds_per_payout"`
	DatabaseCPUPerPayout float64 `json:"database_cpu_seconds_per_payout,omitempty"`
	NodeCPUPerPayout     float64 `json:"node_cpu_seconds_per_payout,omitempty"`
	PeakRSSMiB           float64 `json:"peak_rss_mib"`
	MachineBusy          float64 `json:"machine_busy,omitempty"`
	MachineStolen        float64 `json:"machine_stolen,omitempty"`
	// Webhooks counts the payout webhooks the receiver acknowledged;
	// Verified the destinations the node shows paid exactly their amount,
	// once, by their payout's transaction.
	Webhooks int  `json:"webhooks"`
	Verified int  `json:"verified"`
	AllDone  bool `json:"all_done"`
	// Problems lists what made the run fail, at most a few of each kind.
	Problems []string `json:"problems,omitempty"`
}

// errPayouts is the failure of a payouts run whose payouts were not all
// done, or paid other than requested.
var errPayouts = errors.New("payouts run failed")

// payoutFundOutputs is how many coins the run sends to the payout wallet,
// each covering every payout: a batch spends the largest first and its
// change is spendable only once it is in a block, so the next batches
// spend the others meanwhile.
const payoutFundOutputs = 10

// payoutRequest is one request of the run: its destinations, what was
// mined when it was sent, and its payout.
type payoutRequest struct {
	dests    []int
	blocks   int64
	sent     time.Time
	answered time.Time
	payoutID int64
}

// payoutsOnce runs the payouts mode (see payoutsRun).
func payoutsOnce(ctx context.Context, o benchOptions, tty bool, stderr io.Writer) (res payoutsRun, err error) {
	po := o.payouts
	res = payoutsRun{Payouts: po.n, Producers: o.producers, Amount: po.amount, TargetBlocks: po.maxBlocks,
		IntervalSeconds: po.interval.Seconds(), WatchSeconds: po.watch.Seconds(), BlockEverySeconds: po.blockEvery.Seconds()}
	say := func(format string, a ...any) {
		if tty {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	var node *ltcNode
	if po.ltc == "" {
		say("payouts: starting litecoind -regtest...")
		var stop func() error
		if node, stop, err = startLitecoind(ctx); err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, stop()) }()
		res.Node = "litecoind -regtest started by the run"
	} else {
		if node, err = parseLTC(po.ltc); err != nil {
			return res, fmt.Errorf("--ltc: %w", err)
		}
		res.Node = node.base + "wallet/" + node.wallet
	}
	defer node.http.CloseIdleConnections()
	var chain struct {
		Chain string `json:"chain"`
	}
	if err := node.call(ctx, &chain, "getblockchaininfo"); err != nil {
		return res, err
	}
	if chain.Chain != "regtest" {
		return res, fmt.Errorf("--ltc: the node's chain is %q; the run mines and spends, on regtest only", chain.Chain)
	}
	amount := decimal.RequireFromString(po.amount)
	each := amount.Add(decimal.New(int64(po.n), -8)).Mul(decimal.NewFromInt(int64(po.n))).Add(decimal.NewFromInt(1)).Round(8)
	if err := node.fundWallet(ctx, each.Mul(decimal.NewFromInt(payoutFundOutputs+1))); err != nil {
		return res, err
	}

	recv, err := newPayoutReceiver()
	if err != nil {
		return res, err
	}
	defer recv.close()
	base, apiKey, secret, stop, err := payoutsServer(ctx, o, node, recv.endpoint, stderr)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	api := &restClient{base: base, key: apiKey, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.producers}}}
	defer api.http.CloseIdleConnections()

	// The payout wallet, once the watcher has first read the node, and
	// its funds: payoutFundOutputs coins, credited once in a block.
	var wallet string
	if err := poll(ctx, 60*time.Second, "the ltc payout wallet", func() (bool, error) {
		var a struct {
			Address string `json:"address"`
		}
		err := api.do(ctx, http.MethodGet, "/ltc/payout/address/", nil, &a)
		wallet = a.Address
		return err == nil && wallet != "", err
	}); err != nil {
		return res, err
	}
	say("payouts: funding the payout wallet %s with %d coins of %s ltc...", wallet, payoutFundOutputs, each)
	for range payoutFundOutputs {
		if err := node.walletCall(ctx, nil, "sendtoaddress", wallet, json.Number(each.String())); err != nil {
			return res, err
		}
	}
	miner, err := node.newAddress(ctx)
	if err != nil {
		return res, err
	}
	funded := each.Mul(decimal.NewFromInt(payoutFundOutputs))
	lastMined := time.Time{}
	if err := poll(ctx, 120*time.Second, "the payout wallet's funds credited", func() (bool, error) {
		var b struct {
			Balance string `json:"balance"`
		}
		if err := api.do(ctx, http.MethodGet, "/ltc/payout/balance/", nil, &b); err != nil {
			return false, err
		}
		if v, err := decimal.NewFromString(b.Balance); err == nil && v.GreaterThanOrEqual(funded) {
			return true, nil
		}
		if time.Since(lastMined) >= time.Second { // as many confirmations as ltc needs, a block a second
			lastMined = clock.Now()
			return false, node.call(ctx, nil, "generatetoaddress", 1, miner)
		}
		return false, nil
	}); err != nil {
		return res, err
	}

	say("payouts: %d fresh destinations on the node's wallet...", po.n)
	dests := make([]string, po.n)
	if err := forEach(ctx, po.n, o.producers, func(i int) error {
		var err error
		dests[i], err = node.newAddress(ctx)
		return err
	}); err != nil {
		return res, err
	}
	amountOf := func(i int) decimal.Decimal { return amount.Add(decimal.New(int64(i), -8)) }
	var reqs []*payoutRequest
	for i := 0; i < po.n; i += po.perRequest {
		r := &payoutRequest{}
		for j := i; j < min(i+po.perRequest, po.n); j++ {
			r.dests = append(r.dests, j)
		}
		reqs = append(reqs, r)
	}
	res.Requests = len(reqs)

	// The blocks: one every --block-every from now on. started counts the
	// blocks being mined or mined, mined those the node has answered for.
	var started, mined atomic.Int64
	var height0 int64
	if err := node.call(ctx, &height0, "getblockcount"); err != nil {
		return res, err
	}
	minerErr := make(chan error, 1)
	minerCtx, stopMiner := context.WithCancel(ctx)
	var minerDone sync.WaitGroup
	minerDone.Add(1)
	go func() {
		defer minerDone.Done()
		t := time.NewTicker(po.blockEvery)
		defer t.Stop()
		for {
			select {
			case <-minerCtx.Done():
				return
			case <-t.C:
			}
			started.Add(1)
			err := node.call(minerCtx, nil, "generatetoaddress", 1, miner)
			mined.Add(1)
			if err != nil && minerCtx.Err() == nil {
				minerErr <- fmt.Errorf("mine: %w", err)
				return
			}
		}
	}()
	defer func() {
		stopMiner()
		minerDone.Wait()
	}()
	recv.expect(func() int64 { return started.Load() }, receiver.NewWebhookVerifier([]string{secret}).Verify)

	stopProfile, err := startProfile(o.cpuProfile, o.memProfile)
	if err != nil {
		return res, err
	}
	cpu, nodeCPU := processCPU(os.Getpid()), processCPU(node.pid)
	cpu0, node0, db0, mach0 := cpu(), nodeCPU(), postgresCPU(), machineTimes()
	first := clock.Now()
	say("payouts: requesting %d payouts (%d requests, %d at a time), a block every %s...", po.n, len(reqs), o.producers, po.blockEvery)
	if err := forEach(ctx, len(reqs), o.producers, func(i int) error {
		r := reqs[i]
		outputs := make(map[string]string, len(r.dests))
		for _, d := range r.dests {
			outputs[dests[d]] = amountOf(d).String()
		}
		var answer struct {
			PayoutInfo struct {
				ID     any    `json:"id"`
				Status string `json:"status"`
			} `json:"payout_info"`
			Queued bool `json:"queued"`
		}
		r.blocks, r.sent = mined.Load(), clock.Now()
		if err := api.do(ctx, http.MethodPost, "/ltc/payout/request/bulk/process/", map[string]any{"outputs": outputs}, &answer); err != nil {
			return fmt.Errorf("payout request %d: %w", i, err)
		}
		r.answered = clock.Now()
		id, err := strconv.ParseInt(fmt.Sprint(answer.PayoutInfo.ID), 10, 64)
		if err != nil || !answer.Queued || (answer.PayoutInfo.Status != "processing" && answer.PayoutInfo.Status != "done") {
			return fmt.Errorf("payout request %d: payout %v %q, queued %v: want it queued", i, answer.PayoutInfo.ID, answer.PayoutInfo.Status, answer.Queued)
		}
		r.payoutID = id
		return nil
	}); err != nil {
		_ = stopProfile()
		return res, err
	}
	queued := clock.Now()
	ids := make(map[int64]*payoutRequest, len(reqs))
	for _, r := range reqs {
		ids[r.payoutID] = r
	}

	say("payouts: waiting for %d payouts to be done (at most %s from the first request)...", len(reqs), po.timeout)
	deadline := time.NewTimer(po.timeout - time.Since(first))
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastSaid := clock.Now()
wait:
	for {
		n := recv.doneOf(ids)
		if n == len(ids) {
			res.AllDone = true
			break
		}
		select {
		case <-deadline.C:
			break wait
		case err := <-minerErr:
			_ = stopProfile()
			return res, err
		case <-ctx.Done():
			_ = stopProfile()
			return res, ctx.Err()
		case now := <-tick.C:
			if now.Sub(lastSaid) >= 10*time.Second {
				lastSaid = now
				fmt.Fprintf(stderr, "payouts: %d of %d done %s after the first request, %d blocks mined\n", n, len(ids), now.Sub(first).Round(time.Second), mined.Load())
			}
		}
	}
	last := recv.lastDone()
	cpu1, node1, db1, mach1 := cpu(), nodeCPU(), postgresCPU(), machineTimes()
	if err := stopProfile(); err != nil {
		fmt.Fprintf(stderr, "--cpuprofile: the profile may be incomplete: %v\n", err)
	}
	stopMiner()
	minerDone.Wait()
	res.BlocksMined = mined.Load()

	res.QueueSeconds = queued.Sub(first).Seconds()
	res.PerSecond = float64(po.n) / res.QueueSeconds
	var lat []float64
	for _, r := range reqs {
		lat = append(lat, float64(r.answered.Sub(r.sent))/float64(time.Millisecond))
	}
	slices.Sort(lat)
	res.RequestP50ms, res.RequestP99ms = percentile(lat, 0.5), percentile(lat, 0.99)
	res.CPUSeconds = cpu1.seconds - cpu0.seconds
	res.CPUPerPayout = res.CPUSeconds / float64(po.n)
	res.PeakRSSMiB = cpu1.peakRSSMiB
	// A backend that exited meanwhile takes its share with it: never below 0.
	res.DatabaseCPUPerPayout = max(db1-db0, 0) / float64(po.n)
	res.NodeCPUPerPayout = (node1.seconds - node0.seconds) / float64(po.n)
	if total := mach1.total - mach0.total; total > 0 {
		res.MachineBusy = 1 - (mach1.idle-mach0.idle)/total
		res.MachineStolen = (mach1.steal - mach0.steal) / total
	}
	if !last.IsZero() {
		res.AllDoneSeconds = last.Sub(first).Seconds()
	}

	// Stopping the server finishes its webhook attempts in flight: a
	// duplicate sent late is counted before the books are closed.
	err = stop()
	stop = func() error { return nil }
	if err != nil {
		return res, fmt.Errorf("stop server: %w", err)
	}
	say("payouts: checking every destination on the node...")
	verifyPayouts(ctx, node, &res, recv, reqs, dests, amountOf, height0, miner)
	if !res.AllDone {
		res.Problems = append(res.Problems, fmt.Sprintf("%d of %d payouts done within %s of the first request", recv.doneOf(ids), len(ids), po.timeout))
	}
	if len(res.Problems) > 0 {
		return res, fmt.Errorf("%w: %v", errPayouts, res.Problems)
	}
	return res, nil
}

// verifyPayouts fills res with the blocks each payout took and the
// batches (height0 is the node's height when the run's miner started),
// mining until every payout's transaction is in a block, and
// checks on the node that every destination received exactly its amount,
// once, in its payout's transaction (Problems otherwise).
func verifyPayouts(ctx context.Context, node *ltcNode, res *payoutsRun, recv *payoutReceiver, reqs []*payoutRequest, dests []string, amountOf func(int) decimal.Decimal, height0 int64, miner string) {
	problem := func(format string, a ...any) {
		if len(res.Problems) < 3*maxProblems {
			res.Problems = append(res.Problems, fmt.Sprintf(format, a...))
		}
	}
	res.BlocksToDone = map[int]int{}
	txOf := make([]string, len(dests))
	var txids []string
	var done []float64
	for _, r := range reqs {
		d, ok := recv.doneFor(r.payoutID)
		if !ok {
			continue
		}
		if d.status != "done" || d.txid == "" {
			problem("payout %d: webhook %s, status %q, txid %q", r.payoutID, d.event, d.status, d.txid)
			continue
		}
		b := int(d.blocks - r.blocks)
		for range r.dests {
			done = append(done, d.at.Sub(r.sent).Seconds())
		}
		res.BlocksToDone[b] += len(r.dests)
		res.BlocksToDoneMax = max(res.BlocksToDoneMax, b)
		for _, i := range r.dests {
			txOf[i] = d.txid
			if got := d.requests[dests[i]]; !amountOf(i).Equal(decimal.RequireFromString(orZero(got))) {
				problem("payout %d: its webhook pays destination %d %q, want %s", r.payoutID, i, got, amountOf(i))
			}
		}
		if len(d.requests) != len(r.dests) {
			problem("payout %d: its webhook lists %d requests, want %d", r.payoutID, len(d.requests), len(r.dests))
		}
		if !slices.Contains(txids, d.txid) {
			txids = append(txids, d.txid)
		}
	}
	if len(done) > 0 {
		slices.Sort(done)
		res.DoneP50s, res.DoneMaxs = percentile(done, 0.5), done[len(done)-1]
	}
	res.WithinTarget = res.AllDone && res.BlocksToDoneMax <= res.TargetBlocks
	res.Webhooks, res.Batches = recv.total(), len(txids)
	for id, n := range recv.duplicates() {
		problem("payout %d: %d payout webhooks (distinct notifications), want one", id, n)
	}
	for _, p := range recv.problemList() {
		problem("%s", p)
	}

	// Each transaction's block, mining one more at a time (at most 6).
	heights := map[string]int64{}
	for range 6 {
		missing := 0
		for _, id := range txids {
			if _, ok := heights[id]; ok {
				continue
			}
			var tx struct {
				BlockHash string `json:"blockhash"`
			}
			if err := node.call(ctx, &tx, "getrawtransaction", id, true); err != nil {
				problem("transaction %s: %v", id, err)
				heights[id] = -1
				continue
			}
			if tx.BlockHash == "" {
				missing++
				continue
			}
			var h struct {
				Height int64 `json:"height"`
			}
			if err := node.call(ctx, &h, "getblockheader", tx.BlockHash); err != nil {
				problem("block of %s: %v", id, err)
				heights[id] = -1
				continue
			}
			heights[id] = h.Height
		}
		if missing == 0 {
			break
		}
		if err := node.call(ctx, nil, "generatetoaddress", 1, miner); err != nil {
			problem("mine: %v", err)
			break
		}
	}
	slices.SortStableFunc(txids, func(a, b string) int { return int(heights[a] - heights[b]) })
	perTx := map[string]int{}
	for _, id := range txOf {
		perTx[id]++
	}
	for _, id := range txids {
		res.BatchSizes = append(res.BatchSizes, perTx[id])
	}
	for _, r := range reqs {
		if len(r.dests) == 0 || txOf[r.dests[0]] == "" {
			continue
		}
		if h, ok := heights[txOf[r.dests[0]]]; ok && h > 0 {
			// The block holding it less the height when it was sent.
			res.BlocksToMinedMax = max(res.BlocksToMinedMax, int(h-height0-r.blocks))
		}
	}

	// What the node's wallet received, by address: exactly the amount,
	// in one transaction, the payout's.
	var received []struct {
		Address string      `json:"address"`
		Amount  json.Number `json:"amount"`
		TxIDs   []string    `json:"txids"`
	}
	if err := node.walletCall(ctx, &received, "listreceivedbyaddress", 1, false, false); err != nil {
		problem("listreceivedbyaddress: %v", err)
		return
	}
	byAddr := make(map[string]int, len(received))
	for i, r := range received {
		byAddr[r.Address] = i
	}
	for i, a := range dests {
		k, ok := byAddr[a]
		if !ok {
			problem("destination %d (%s) received nothing", i, a)
			continue
		}
		got := received[k]
		v, err := decimal.NewFromString(got.Amount.String())
		switch {
		case err != nil || !v.Equal(amountOf(i)):
			problem("destination %d (%s) received %s, want %s", i, a, got.Amount, amountOf(i))
		case len(got.TxIDs) != 1 || got.TxIDs[0] != txOf[i]:
			problem("destination %d (%s) was paid by %v, want its payout's transaction %q alone", i, a, got.TxIDs, txOf[i])
		default:
			res.Verified++
		}
	}
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// poll calls cond every 100 ms until it is true, ctx ends or timeout
// passes; the error names what and cond's last error.
func poll(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := clock.Now().Add(timeout)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if clock.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s (last error: %v)", what, timeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

// payoutsServer starts a payhook server in this process on a scratch
// database of o.db, watching node for ltc, with o.payouts' batch and watch
// intervals, no request limits and the prices of the embedded table; its
// project's payout webhooks go to endpoint (the one private endpoint
// allowed) as signed form POSTs. It returns its REST base URL, an API key,
// the project's IPN secret and what stops it and drops the database.
func payoutsServer(ctx context.Context, o benchOptions, node *ltcNode, endpoint string, stderr io.Writer) (string, string, string, func() error, error) {
	scratch, err := bench.CreateDB(ctx, o.db)
	if err != nil {
		return "", "", "", nil, err
	}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	server.TuneGC(server.DefaultGCPercent) // as payhook serve runs
	srv, err := server.New(ctx, server.Config{
		Store:    server.StoreConfig{DB: scratch.DSN},
		API:      server.APIConfig{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", OperatorAddr: "127.0.0.1:0"},
		Keys:     server.KeysConfig{Seed: seed},
		Delivery: notifier.Delivery{AllowPrivateEndpoints: []string{endpoint}},
		Chains: server.ChainsConfig{
			Nodes:          map[string]string{"ltc": node.nodeURL()},
			Prices:         server.PricesTable, // no network beyond the node
			WatchInterval:  o.payouts.watch,
			PayoutInterval: map[string]time.Duration{"ltc": o.payouts.interval},
		},
		// Requests as fast as the run makes them (serve --key-rate 0).
		Limits: ratelimit.Limits{KeyRate: ratelimit.Off, AnonRate: ratelimit.Off},
		Out:    io.Discard,
	}, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return "", "", "", nil, errors.Join(fmt.Errorf("new server: %w", err), scratch.Drop())
	}
	stop := func() error { return errors.Join(srv.Stop(), scratch.Drop()) }
	fail := func(err error) (string, string, string, func() error, error) {
		return "", "", "", nil, errors.Join(err, stop())
	}
	// The key and the project's secret are made through the server's own
	// database handle, which holds the key that seals secrets.
	db := srv.DB().Client
	apiKey, k, err := apikey.Create(ctx, db, "payhook-bench", clock.Now())
	if err != nil {
		return fail(err)
	}
	secret, err := project.RotateSecret(ctx, db, k.ProjectID, 0, clock.Now())
	if err != nil {
		return fail(err)
	}
	if err := project.SetPayoutNotify(ctx, db, nil, k.ProjectID, endpoint, true, clock.Now()); err != nil {
		return fail(err)
	}
	if err := srv.Start(ctx); err != nil {
		return fail(fmt.Errorf("start server: %w", err))
	}
	return "http://" + srv.HTTPAddr(), apiKey, secret, stop, nil
}

// ltcNode is a litecoind's JSON-RPC interface, with the wallet the run
// funds the payout wallet from and pays the destinations of.
type ltcNode struct {
	// base is the RPC URL without credentials, ending in "/".
	base, user, pass, wallet string
	// pid is litecoind's process id when the run started it, else 0.
	pid  int
	http *http.Client
}

// parseLTC reads --ltc: http://USER:PASS@HOST:PORT/wallet/NAME.
func parseLTC(raw string) (*ltcNode, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	wallet, ok := strings.CutPrefix(strings.TrimSuffix(u.Path, "/"), "/wallet/")
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User == nil || !ok || wallet == "" || strings.Contains(wallet, "/") {
		return nil, errors.New("want http://USER:PASS@HOST:PORT/wallet/NAME")
	}
	pass, _ := u.User.Password()
	return &ltcNode{base: u.Scheme + "://" + u.Host + "/", user: u.User.Username(), pass: pass, wallet: wallet, http: &http.Client{}}, nil
}

// nodeURL is the node as payhook's --node ltc=URL takes it.
func (n *ltcNode) nodeURL() string {
	u, _ := url.Parse(n.base)
	u.User = url.UserPassword(n.user, n.pass)
	return u.String() + "?network=regtest"
}

// call calls a node method; walletCall one of the wallet.
func (n *ltcNode) call(ctx context.Context, out any, method string, params ...any) error {
	return n.callAt(ctx, n.base, out, method, params...)
}

func (n *ltcNode) walletCall(ctx context.Context, out any, method string, params ...any) error {
	return n.callAt(ctx, n.base+"wallet/"+url.PathEscape(n.wallet), out, method, params...)
}

func (n *ltcNode) callAt(ctx context.Context, u string, out any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("litecoind %s: %w", method, err)
	}
	req.SetBasicAuth(n.user, n.pass)
	resp, err := n.http.Do(req)
	if err != nil {
		return fmt.Errorf("litecoind %s: %w", method, err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return fmt.Errorf("litecoind %s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	if r.Error != nil {
		return fmt.Errorf("litecoind %s: error %d: %s", method, r.Error.Code, r.Error.Message)
	}
	if out != nil {
		d := json.NewDecoder(bytes.NewReader(r.Result))
		d.UseNumber()
		if err := d.Decode(out); err != nil {
			return fmt.Errorf("litecoind %s: %w", method, err)
		}
	}
	return nil
}

// newAddress is a fresh address of the wallet.
func (n *ltcNode) newAddress(ctx context.Context) (string, error) {
	var a string
	err := n.walletCall(ctx, &a, "getnewaddress")
	return a, err
}

// fundWallet mines to the wallet (regtest: a coinbase is spendable after
// 100 blocks) until it can spend need.
func (n *ltcNode) fundWallet(ctx context.Context, need decimal.Decimal) error {
	for range 5 {
		var b json.Number
		if err := n.walletCall(ctx, &b, "getbalance"); err != nil {
			return err
		}
		if v, err := decimal.NewFromString(b.String()); err == nil && v.GreaterThanOrEqual(need) {
			return nil
		}
		a, err := n.newAddress(ctx)
		if err != nil {
			return err
		}
		if err := n.call(ctx, nil, "generatetoaddress", 110, a); err != nil {
			return err
		}
	}
	return fmt.Errorf("the wallet %s cannot spend %s ltc after mining 550 blocks to it", n.wallet, need)
}

// litecoindInstall says how to install litecoind.
const litecoindInstall = "apt-get install litecoind (Debian), or put Litecoin Core's litecoind on PATH"

// startLitecoind starts litecoind -regtest in a temporary data directory
// (HOME too: Debian's wrapper writes ~/.litecoin) with a wallet, and
// returns it and what stops it and removes the directory.
func startLitecoind(ctx context.Context) (_ *ltcNode, _ func() error, err error) {
	bin := "/usr/lib/litecoin/litecoind" // Debian's, without the wrapper
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("litecoind"); err != nil {
			return nil, nil, fmt.Errorf("litecoind is not installed (%s): %w", litecoindInstall, err)
		}
	}
	dir, err := os.MkdirTemp("", "payhook-bench-litecoind-")
	if err != nil {
		return nil, nil, err
	}
	ports := make([]int, 2)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, errors.Join(err, os.RemoveAll(dir))
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	cmd := exec.Command(bin, "-regtest", "-datadir="+dir,
		"-rpcuser=payhook", "-rpcpassword=regtest-secret", fmt.Sprintf("-rpcport=%d", ports[0]), fmt.Sprintf("-port=%d", ports[1]),
		"-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", "-listen=0", "-connect=0", "-dnsseed=0", "-server=1",
		"-txindex=1", "-fallbackfee=0.0002", "-spendzeroconfchange=0", "-printtoconsole=0", "-rpcworkqueue=64", "-keypool=100")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("start litecoind: %w", err), os.RemoveAll(dir))
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	n := &ltcNode{base: fmt.Sprintf("http://127.0.0.1:%d/", ports[0]), user: "payhook", pass: "regtest-secret", wallet: "bench", pid: cmd.Process.Pid, http: &http.Client{}}
	stop := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = n.call(sctx, nil, "stop") // its answer may be lost as it stops: the exit says
		var exit error
		select {
		case exit = <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // its error says killed
			exit = errors.New("killed: it did not stop within 30 s")
		}
		if exit != nil {
			exit = fmt.Errorf("litecoind: %w", exit)
		}
		return errors.Join(exit, os.RemoveAll(dir))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, stop())
		}
	}()
	if err := poll(ctx, 60*time.Second, "litecoind answering", func() (bool, error) {
		select {
		case e := <-exited:
			exited <- e // stop waits for it too
			return false, fmt.Errorf("litecoind exited (%v): %s", e, bytes.TrimSpace(out.Bytes()))
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err := n.call(cctx, nil, "getblockchaininfo")
		return err == nil, err
	}); err != nil {
		return nil, nil, err
	}
	if err := n.call(ctx, nil, "createwallet", n.wallet); err != nil {
		return nil, nil, err
	}
	return n, stop, nil
}

// payoutReceiver is the project's payout_notify_url: it verifies each
// payout webhook's signature, acknowledges it and records, per payout, the
// first done or error webhook and the blocks mined by then.
type payoutReceiver struct {
	srv      *http.Server
	endpoint string

	mu       sync.Mutex
	verify   func(*http.Request) ([]byte, error)
	blocks   func() int64
	first    map[int64]payoutWebhook
	uuids    map[int64]map[string]bool
	requests int
	last     time.Time
	problems []string
}

// payoutWebhook is what a payout's first webhook said, and when it came.
type payoutWebhook struct {
	event, status, txid string
	requests            map[string]string
	at                  time.Time
	blocks              int64
}

func newPayoutReceiver() (*payoutReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver listener: %w", err)
	}
	r := &payoutReceiver{endpoint: "http://" + l.Addr().String() + "/payouts", first: map[int64]payoutWebhook{}, uuids: map[int64]map[string]bool{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// expect sets how to verify the webhooks and how many blocks are mined
// (or being mined) at a moment.
func (r *payoutReceiver) expect(blocks func() int64, verify func(*http.Request) ([]byte, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blocks, r.verify = blocks, verify
}

func (r *payoutReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	verify, blocks := r.verify, r.blocks
	r.mu.Unlock()
	var b int64
	if blocks != nil {
		b = blocks()
	}
	now := clock.Now()
	data, verr := []byte(nil), errors.New("a webhook before any payout was requested")
	if verify != nil {
		data, verr = verify(req)
	}
	// Acknowledged whatever the checks say: a problem fails the run at its
	// end instead of stalling it on payhook's retry schedule.
	_, _ = w.Write([]byte(`{"status":"ok"}`))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if verr != nil {
		r.problem("payout webhook with a bad signature: %v", verr)
		return
	}
	form, err := url.ParseQuery(string(data))
	if err != nil {
		r.problem("payout webhook body is not a form: %v", err)
		return
	}
	id, err := strconv.ParseInt(form.Get("payout_id"), 10, 64)
	if err != nil {
		r.problem("payout webhook without a payout_id: %q", form.Get("payout_id"))
		return
	}
	if r.uuids[id] == nil {
		r.uuids[id] = map[string]bool{}
	}
	r.uuids[id][form.Get("uuid")] = true
	if _, seen := r.first[id]; seen {
		return
	}
	var requests map[string]string
	if err := json.Unmarshal([]byte(form.Get("requests")), &requests); err != nil {
		r.problem("payout %d webhook: requests %q: %v", id, form.Get("requests"), err)
	}
	r.first[id] = payoutWebhook{event: req.Header.Get("x-service-event"), status: form.Get("status"), txid: form.Get("txid"), requests: requests, at: now, blocks: b}
	r.last = now
}

// problem records a problem, keeping at most maxProblems; r.mu is held.
func (r *payoutReceiver) problem(format string, a ...any) {
	if len(r.problems) < maxProblems {
		r.problems = append(r.problems, fmt.Sprintf(format, a...))
	}
}

// doneOf counts the payouts of ids with a webhook.
func (r *payoutReceiver) doneOf(ids map[int64]*payoutRequest) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id := range ids {
		if _, ok := r.first[id]; ok {
			n++
		}
	}
	return n
}

// doneFor is payout id's first webhook.
func (r *payoutReceiver) doneFor(id int64) (payoutWebhook, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.first[id]
	return w, ok
}

// lastDone is when the last payout's first webhook came.
func (r *payoutReceiver) lastDone() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// total is how many webhook requests came.
func (r *payoutReceiver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// duplicates are the payouts with more than one notification (uuids).
func (r *payoutReceiver) duplicates() map[int64]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := map[int64]int{}
	for id, u := range r.uuids {
		if len(u) > 1 {
			d[id] = len(u)
		}
	}
	return d
}

func (r *payoutReceiver) problemList() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.problems)
}

func (r *payoutReceiver) close() { _ = r.srv.Close() }

// printPayouts prints the payouts run.
func printPayouts(w io.Writer, x payoutsRun) {
	fmt.Fprintf(w, "payouts on %s through a server in this process: %d payouts of %s ltc and up in %d requests (%d at a time), batch interval %.1f s, watch interval %.1f s, a block every %.1f s\n",
		x.Node, x.Payouts, x.Amount, x.Requests, x.Producers, x.IntervalSeconds, x.WatchSeconds, x.BlockEverySeconds)
	fmt.Fprintf(w, "requested in %.2f s (%.0f payouts/s; request p50 %.0f ms, p99 %.0f ms); all done %.2f s after the first request (payout done p50 %.2f s, max %.2f s), %d blocks mined\n",
		x.QueueSeconds, x.PerSecond, x.RequestP50ms, x.RequestP99ms, x.AllDoneSeconds, x.DoneP50s, x.DoneMaxs, x.BlocksMined)
	fmt.Fprintf(w, "batches: %d transactions, destinations each %v\n", x.Batches, x.BatchSizes)
	fmt.Fprintf(w, "blocks from request to done (payouts): %v; max %d (target <= %d: %v); to the block holding it: max %d\n",
		x.BlocksToDone, x.BlocksToDoneMax, x.TargetBlocks, x.WithinTarget, x.BlocksToMinedMax)
	fmt.Fprintf(w, "CPU: %.1f s, %.4f s per payout (this process); database %.4f s, litecoind %.4f s per payout; peak RSS %.0f MiB; machine busy %.0f%% (stolen %.0f%%)\n",
		x.CPUSeconds, x.CPUPerPayout, x.DatabaseCPUPerPayout, x.NodeCPUPerPayout, x.PeakRSSMiB, x.MachineBusy*100, x.MachineStolen*100)
	fmt.Fprintf(w, "verified on the node: %d of %d destinations paid exactly their amount once; %d payout webhooks\n", x.Verified, x.Payouts, x.Webhooks)
	for _, p := range x.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
}
