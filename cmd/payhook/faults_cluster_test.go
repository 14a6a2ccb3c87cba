//go:build faults

package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/internal/clock"
)

// TestFaultThreeInstances: three payhook processes on one PostgreSQL and
// one litecoind, with merchant webhooks (deposits of a project made through
// the CLI), low-level payments with callbacks, the ltc watcher (one
// instance holds its lease) and batched payouts (--payout-interval) running
// at once. The watching instance is killed with SIGKILL while payments,
// forwards, payouts and deliveries are in flight; later the instance that
// took over is killed too. The last one takes over watching within
// seconds, and in the end nothing is lost (every webhook and callback
// stored, signed with the project's secret, acknowledged), no payment is
// credited or forwarded twice (checked on the node: what the merchant's
// wallets received is the sum of the forwards, each spending its payment),
// and every payout is done, its destination paid exactly once.
func TestFaultThreeInstances(t *testing.T) {
	c := newLTCCluster(t, 160, "--payout-interval", "ltc=1s")
	s := c.newShop(t)
	procs := []*payhookProc{c.start(t), c.start(t), c.start(t)}
	c.setWallet(t, s, procs...)
	w := c.newWork(t)
	w.fundPayouts(t, procs[0], s, 4, "0.5")
	// Deliveries take a while: some are in flight at each kill.
	c.recv.delay.Store(int64(300 * time.Millisecond))

	// The first wave: payments seen (pending webhooks), then a block that
	// confirms them (forwards to plan) with payouts queued, and the
	// watcher killed at once.
	w.wave(t, procs, s, 0, 4)
	w.mine(t, 1)
	waitStored(t, c.db, 2*4)
	w.payouts(t, procs, s, 2, "0.03")
	w.mine(t, 1)
	leader := watcher(t, procs)
	t.Logf("instance %d watches ltc; kill -9 it with %s", leader, storedState(c.db, c.recv))
	procs[leader].kill9(t)
	procs = append(procs[:leader:leader], procs[leader+1:]...)
	took := waitWatching(t, procs)
	t.Logf("first takeover: a survivor watches ltc %s after the kill", took.Round(10*time.Millisecond))

	// The second wave on the survivors, then the new watcher killed too.
	stored, _ := queryInt(c.db, "SELECT count(*) FROM notifications")
	w.wave(t, procs, s, 4, 4)
	w.mine(t, 1)
	waitStored(t, c.db, stored+2*4)
	w.payouts(t, procs, s, 2, "0.04")
	w.mine(t, 1)
	leader = watcher(t, procs)
	t.Logf("the survivor %d watches ltc; kill -9 it with %s", leader, storedState(c.db, c.recv))
	procs[leader].kill9(t)
	last := procs[1-leader]
	took = waitWatching(t, []*payhookProc{last})
	t.Logf("second takeover: the last instance watches ltc %s after the kill", took.Round(10*time.Millisecond))

	// The last instance finishes everything.
	w.payouts(t, []*payhookProc{last}, s, 2, "0.05")
	w.finish(t)
	if !watching(t, last) {
		t.Error("the last instance no longer watches ltc")
	}
}

// TestFaultPostgresRestartPayouts restarts the PostgreSQL cluster under a
// burst of merchant webhooks, low-level callbacks, forwards and batched
// payouts on litecoind: payhook stays up, logs the outage, and ends with
// the same invariants as TestFaultThreeInstances. It restarts the cluster
// of TEST_DATABASE_URL (pgCluster): run the fault tests alone with -p 1.
func TestFaultPostgresRestartPayouts(t *testing.T) {
	version, cluster := pgCluster(t)
	c := newLTCCluster(t, 160, "--payout-interval", "ltc=1s")
	s := c.newShop(t)
	p := c.start(t)
	procs := []*payhookProc{p}
	c.setWallet(t, s, p)
	w := c.newWork(t)
	w.fundPayouts(t, p, s, 4, "0.5")
	c.recv.delay.Store(int64(storingDelay))

	w.wave(t, procs, s, 0, 6)
	w.mine(t, 1)
	waitStored(t, c.db, 2*6)
	w.payouts(t, procs, s, 3, "0.03")
	w.mine(t, 1) // confirmed: forwards planned and sent while the database goes away
	waitFor(t, 30*time.Second, "money on its way out (a forward or payout recorded)", func() (bool, string) {
		k, err := queryInt(c.db, "SELECT count(*) FROM outbounds")
		return k > 0, fmt.Sprintf("%d outgoing transactions (%v)", k, err)
	})
	c.recv.delay.Store(int64(100 * time.Millisecond))

	mark := p.stderr.Len()
	t.Cleanup(func() {
		// Never leave the cluster down.
		if _, err := queryInt(c.db, "SELECT 1"); err != nil {
			if err := pgctl(version, cluster, "start"); err != nil {
				t.Errorf("PostgreSQL left down: %v", err)
			}
		}
	})
	began := clock.Now()
	state := storedState(c.db, c.recv)
	if err := pgctl(version, cluster, "restart"); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s/%s restarted in %s; before it: %s", version, cluster, time.Since(began).Round(10*time.Millisecond), state)
	waitFor(t, 30*time.Second, "payhook healthy after the restart", func() (bool, string) {
		if !p.alive() {
			t.Fatalf("payhook exited during the PostgreSQL restart: %v\n%s", p.err, tail(p.stderr.String(), 4096))
		}
		return p.healthy(), "healthz not OK"
	})
	// More payouts and payments after the outage.
	w.payouts(t, procs, s, 2, "0.04")
	w.wave(t, procs, s, 6, 2)
	w.finish(t)
	t.Logf("everything done %s after the restart began", time.Since(began).Round(100*time.Millisecond))
	if !p.alive() || !p.healthy() {
		t.Fatalf("payhook not alive and healthy at the end (alive %v): %v", p.alive(), p.err)
	}
	var errLines []string
	for _, l := range strings.Split(p.stderr.String()[mark:], "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) == 0 {
		t.Error("payhook logged no error or warning for the database outage")
	} else {
		t.Logf("payhook logged %d error/warning lines, first ones:\n%s", len(errLines), strings.Join(errLines[:min(len(errLines), 4)], "\n"))
	}
}

// ---------------------------------------------------------------- cluster

// ltcCluster is what payhook instances on litecoind share: the node
// (regtest, its wallet funded), one PostgreSQL database, one seed and one
// receiver for every callback and webhook.
type ltcCluster struct {
	n     *nodetest.Litecoind
	dsn   string
	dir   string
	recv  *faultReceiver
	flags []string
	db    *sql.DB // the tests' own pool, once an instance has migrated
}

// newLTCCluster starts litecoind with blocks mined to its wallet, creates
// the database and the seed; start runs instances. extra flags are added
// to every instance's: the node, a 200ms watch interval, table prices, the
// operator listener (for /healthz's watching) and deliveryFlags.
func newLTCCluster(t *testing.T, blocks int, extra ...string) *ltcCluster {
	t.Helper()
	n := nodetest.StartLitecoind(t, blocks)
	dsn, _ := newPGDatabase(t)
	dir := t.TempDir()
	// With a node the seed is never generated silently: make it first.
	if out, err := exec.Command(faultBin, "seed", "init", "--seed-file", filepath.Join(dir, "payhook.seed")).CombinedOutput(); err != nil {
		t.Fatalf("seed init: %v: %s", err, out)
	}
	flags := deliveryFlags(append([]string{"--node", "ltc=" + n.URL + "?network=regtest", "--watch-interval", "200ms",
		"--prices", "table", "--operator-listen", "127.0.0.1:0"}, extra...)...)
	return &ltcCluster{n: n, dsn: dsn, dir: dir, recv: newFaultReceiver(t), flags: flags}
}

// start runs one more instance.
func (c *ltcCluster) start(t *testing.T) *payhookProc {
	t.Helper()
	p := startPayhook(t, c.dsn, c.dir, c.recv, c.flags...)
	if c.db == nil {
		c.db = openTestDB(t, c.dsn)
	}
	return p
}

// mine mines k blocks to a fresh address of the node's wallet.
func (c *ltcCluster) mine(t *testing.T, k int) {
	t.Helper()
	var to string
	c.n.Must(&to, "getnewaddress")
	c.n.Must(nil, "generatetoaddress", k, to)
}

// cli runs a payhook command on the cluster's database and seed and
// returns its standard output.
func (c *ltcCluster) cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(faultBin, append(args, "--db", c.dsn)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PAYHOOK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// The project's secrets are sealed with a key derived from the seed.
	cmd.Env = append(cmd.Env, "PAYHOOK_SEED_FILE="+filepath.Join(c.dir, "payhook.seed"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("payhook %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// shop is a merchant's project, made through the CLI.
type shop struct {
	id     int64
	key    string
	secret string // the IPN secret that signs its webhooks
	wallet string // its ltc wallet: deposits are forwarded there
	// operator is an operator's API key.
	operator string
}

// newShop makes a project with the CLI on a database it migrates first
// (two confirmations for ltc, payout webhooks as GETs to the receiver),
// and an operator key; the instances started afterwards may call the
// receiver for it, which verifies every request with the project's IPN
// secret. Call it before start; setWallet once instances run.
func (c *ltcCluster) newShop(t *testing.T) *shop {
	t.Helper()
	c.cli(t, "migrate")
	var created struct {
		ProjectID int64  `json:"project_id"`
		APIKey    string `json:"apikey"`
		Secret    string `json:"ipn_secret"`
	}
	if err := json.Unmarshal([]byte(c.cli(t, "project", "create", "--name", "shop", "--confirmations", "ltc=2", "--json")), &created); err != nil || created.APIKey == "" || created.Secret == "" {
		t.Fatalf("project create: %+v (%v)", created, err)
	}
	s := &shop{id: created.ProjectID, key: created.APIKey, secret: created.Secret}
	id := strconv.FormatInt(s.id, 10)
	c.cli(t, "project", "update", "--project", id, "--payout-notify-url", c.recv.endpoint()+"?payouts=1", "--payout-notify-get")
	s.operator = apiKeyRE.FindString(c.cli(t, "apikey", "create", "--operator", "--name", "ops"))
	if s.operator == "" {
		t.Fatal("apikey create --operator printed no key")
	}
	c.flags = append(c.flags, "--allow-private-endpoint", id+"="+c.recv.endpoint())
	c.recv.verifyWith(s.secret)
	c.n.Must(&s.wallet, "getnewaddress")
	return s
}

// setWallet sets the project's ltc wallet to one of the node's addresses
// through the operator API (the CLI checks addresses against the mainnet
// forms; the server knows its node's network). It returns once every
// instance of procs has read ltc's node.
func (c *ltcCluster) setWallet(t *testing.T, s *shop, procs ...*payhookProc) {
	t.Helper()
	for _, p := range procs {
		waitFor(t, 30*time.Second, "ltc's node read (the payout wallet answers)", func() (bool, string) {
			r := p.do(t, http.MethodGet, "/ltc/payout/address/", nil, s.key, "")
			return r.Code == http.StatusOK, fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
		})
	}
	r := procs[0].do(t, http.MethodPost, "/operator/project/wallet/set", nil, s.operator, fmt.Sprintf(`{"project_id":%d,"wallet":"ltc=%s"}`, s.id, s.wallet))
	if r.Code != http.StatusOK {
		t.Fatalf("operator wallet set: HTTP %d %s", r.Code, r.Body)
	}
}

// ---------------------------------------------------------------- work

// ltcWork is what a test asked of payhook on litecoind, checked by finish.
type ltcWork struct {
	c *ltcCluster
	// lowWallet is where low-level addresses forward.
	lowWallet string
	// payments: txid on chain -> the wallet its forward must reach.
	payments map[string]string
	// funding: the transactions that funded the payout wallet.
	funding map[string]bool
	// dests: payout destination -> amount; payoutIDs: the payouts asked for.
	dests     map[string]decimal.Decimal
	payoutIDs []string
	// start is the node's height before any of it.
	start int64
}

func (c *ltcCluster) newWork(t *testing.T) *ltcWork {
	t.Helper()
	w := &ltcWork{c: c, payments: map[string]string{}, funding: map[string]bool{}, dests: map[string]decimal.Decimal{}}
	c.n.Must(&w.lowWallet, "getnewaddress")
	c.n.Must(&w.start, "getblockcount")
	return w
}

func (w *ltcWork) mine(t *testing.T, k int) { t.Helper(); w.c.mine(t, k) }

// fundPayouts sends k outputs of amount to the project's payout wallet and
// waits until its payout balance counts them.
func (w *ltcWork) fundPayouts(t *testing.T, p *payhookProc, s *shop, k int, amount string) {
	t.Helper()
	r := p.do(t, http.MethodGet, "/ltc/payout/address/", nil, s.key, "")
	wallet, _ := r.JSON["address"].(string)
	if wallet == "" {
		t.Fatalf("payout wallet: HTTP %d %s", r.Code, r.Body)
	}
	for range k {
		var txid string
		w.c.n.Must(&txid, "sendtoaddress", wallet, json.Number(amount))
		w.funding[txid] = true
	}
	want := decimal.RequireFromString(amount).Mul(decimal.NewFromInt(int64(k)))
	w.mine(t, 3)
	waitFor(t, 30*time.Second, "the payout balance credited", func() (bool, string) {
		r := p.do(t, http.MethodGet, "/ltc/payout/balance/", nil, s.key, "")
		b, err := decimal.NewFromString(fmt.Sprint(r.JSON["balance"]))
		return err == nil && b.Equal(want), fmt.Sprintf("HTTP %d %s, want %s", r.Code, r.Body, want)
	})
}

// wave creates k low-level addresses (callbacks, forwarding to lowWallet)
// and k deposits (merchant webhooks, forwarding to the project's wallet),
// numbered from `from`, round robin over procs, and pays each on the node.
func (w *ltcWork) wave(t *testing.T, procs []*payhookProc, s *shop, from, k int) {
	t.Helper()
	recv := w.c.recv
	for i := from; i < from+k; i++ {
		p := procs[i%len(procs)]
		q := url.Values{"callback": {callbackFor(recv, i)}, "address": {w.lowWallet}, "confirmations": {"2"}}
		if i%2 == 0 {
			q.Set("json", "1")
		}
		r := p.do(t, http.MethodGet, "/ltc/create/", q, s.key, "")
		low, _ := r.JSON["address_in"].(string)
		if r.Code != http.StatusOK || low == "" {
			t.Fatalf("ltc create %d: HTTP %d %s", i, r.Code, r.Body)
		}
		q = url.Values{"notify_url": {fmt.Sprintf("%s?deposit=%d", recv.endpoint(), i)}}
		if i%2 == 0 {
			q.Set("json", "1")
		}
		r = p.do(t, http.MethodGet, "/deposit/request/", q, s.key, "")
		id, _ := r.JSON["payment_id"].(string)
		if r.Code != http.StatusOK || id == "" {
			t.Fatalf("deposit request %d: HTTP %d %s", i, r.Code, r.Body)
		}
		r = p.do(t, http.MethodGet, "/deposit/address/", url.Values{"payment_id": {id}, "coin": {"ltc"}}, s.key, "")
		dep, _ := r.JSON["address_in"].(string)
		if r.Code != http.StatusOK || dep == "" {
			t.Fatalf("deposit address %d: HTTP %d %s", i, r.Code, r.Body)
		}
		w.pay(t, low, "0.05", w.lowWallet)
		w.pay(t, dep, "0.04", s.wallet)
	}
}

func (w *ltcWork) pay(t *testing.T, addr, amount, forwardTo string) {
	t.Helper()
	var txid string
	w.c.n.Must(&txid, "sendtoaddress", addr, json.Number(amount))
	w.payments[txid] = forwardTo
}

// payouts asks for k payouts of amount, each to a fresh address of the
// node, round robin over procs; each is queued (processing) for the next
// batch.
func (w *ltcWork) payouts(t *testing.T, procs []*payhookProc, s *shop, k int, amount string) {
	t.Helper()
	for i := range k {
		var dest string
		w.c.n.Must(&dest, "getnewaddress")
		p := procs[i%len(procs)]
		r := p.do(t, http.MethodPost, "/ltc/payout/request/bulk/process/", nil, s.key, fmt.Sprintf(`{"outputs": {%q: %q}}`, dest, amount))
		info, _ := r.JSON["payout_info"].(map[string]any)
		if r.Code != http.StatusOK || info["status"] != "processing" {
			t.Fatalf("payout request: HTTP %d %s; want it queued (processing)", r.Code, r.Body)
		}
		w.dests[dest] = decimal.RequireFromString(amount)
		w.payoutIDs = append(w.payoutIDs, fmt.Sprint(info["id"]))
	}
}

// finish mines a block a second until every payment is completed (credited
// and forwarded), every payout done and every notification acknowledged,
// then mines one more and checks that nothing was lost, credited,
// forwarded or paid out twice.
func (w *ltcWork) finish(t *testing.T) {
	t.Helper()
	c, db := w.c, w.c.db
	payments, payouts := len(w.payments), len(w.payoutIDs)
	txids := w.txids()
	began := clock.Now()
	mined := clock.Now()
	waitFor(t, takeoverBound()+30*time.Second, "every payment completed, payout done and notification acknowledged", func() (bool, string) {
		if clock.Now().Sub(mined) >= time.Second {
			w.mine(t, 1)
			mined = clock.Now()
		}
		completed, err1 := queryInt(db, "SELECT count(*) FROM payments WHERE status = 'completed' AND txid_out <> '' AND txid_in = ANY($1)", pq.Array(txids))
		done, err2 := queryInt(db, "SELECT count(*) FROM payouts WHERE status = 'done'")
		failed, err3 := queryInt(db, "SELECT count(*) FROM payouts WHERE status NOT IN ('done', 'processing')")
		hooks, err4 := queryInt(db, "SELECT count(*) FROM notifications WHERE event LIKE '%completed' OR event = 'payout.done'")
		stored, acked, state := deliveryProgress(db, c.recv)
		if failed > 0 {
			t.Fatalf("%d payouts neither done nor processing", failed)
		}
		state = fmt.Sprintf("payments completed %d/%d, payouts done %d/%d, completed and payout webhooks %d/%d; %s (%v %v %v %v)",
			completed, payments, done, payouts, hooks, payments+payouts, state, err1, err2, err3, err4)
		return completed == payments && done == payouts && hooks == payments+payouts && acked == stored, state
	})
	t.Logf("everything done and acknowledged %s after the last request", time.Since(began).Round(100*time.Millisecond))
	w.mine(t, 1)
	assertNothingLost(t, db, c.recv)
	outcomes := attemptsByOutcome(t, db)
	seen, _ := c.recv.counts()
	dups, _ := duplicates(seen)
	t.Logf("%d notifications, receiver %d requests (%d repeated); attempts by outcome %v", len(seen), c.recv.total.Load(), dups, outcomes)

	// One webhook per payment and stage, one per payout.
	rows, err := db.Query(`SELECT coalesce(sequence, subject), event, count(*) FROM notifications GROUP BY 1, 2 HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var seq, ev string
		var k int
		if err := rows.Scan(&seq, &ev, &k); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%d %s notifications of %s", k, ev, seq)
	}
	rows.Close()

	w.checkPayments(t)
	w.checkPayouts(t)
}

// txids are the payments' transactions.
func (w *ltcWork) txids() []string {
	l := make([]string, 0, len(w.payments))
	for txid := range w.payments {
		l = append(l, txid)
	}
	return l
}

// checkPayments: every payment made on the node is one payment, credited
// once, and forwarded once by a mined transaction spending its output;
// each wallet received exactly the sum of the forwards to it. The payout
// wallet's payments are its funding and the payouts' change, nothing else.
func (w *ltcWork) checkPayments(t *testing.T) {
	t.Helper()
	c, db := w.c, w.c.db
	txids := pq.Array(w.txids())
	if k, err := queryInt(db, "SELECT count(*) FROM payments WHERE txid_in = ANY($1)", txids); err != nil || k != len(w.payments) {
		t.Errorf("%d payments stored, %d made (%v)", k, len(w.payments), err)
	}
	if k, err := queryInt(db, `SELECT count(DISTINCT l.key) FROM ledger_entries l JOIN payments p ON p.id = l.payment_id
		WHERE l.event = 'credit' AND p.txid_in = ANY($1)`, txids); err != nil || k != len(w.payments) {
		t.Errorf("%d payments credited, %d made (%v)", k, len(w.payments), err)
	}
	type pay struct {
		in, out string
		vout    int64
		value   decimal.Decimal
	}
	var all []pay
	rows, err := db.Query("SELECT txid_in, output_index, coalesce(txid_out, ''), coalesce(value_forwarded_coin, 0) FROM payments")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p pay
		if err := rows.Scan(&p.in, &p.vout, &p.out, &p.value); err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	rows.Close()
	payoutTx := map[string]bool{}
	for _, txid := range w.payoutTxids(t) {
		payoutTx[txid] = true
	}
	forwarded := map[string]decimal.Decimal{}
	for _, p := range all {
		to, ok := w.payments[p.in]
		if !ok {
			if !w.funding[p.in] && !payoutTx[p.in] {
				t.Errorf("payment %s:%d is neither the test's, the payout wallet's funding nor a payout's change", p.in, p.vout)
			}
			if p.out != "" {
				t.Errorf("the payout wallet's payment %s:%d was forwarded by %s", p.in, p.vout, p.out)
			}
			continue
		}
		forwarded[to] = forwarded[to].Add(p.value)
		var tx struct {
			Confirmations int64 `json:"confirmations"`
			Vin           []struct {
				TxID string `json:"txid"`
				Vout int64  `json:"vout"`
			} `json:"vin"`
		}
		c.n.Must(&tx, "getrawtransaction", p.out, true)
		spends := false
		for _, in := range tx.Vin {
			spends = spends || (in.TxID == p.in && in.Vout == p.vout)
		}
		if tx.Confirmations < 1 || !spends {
			t.Errorf("forward %s of %s:%d: %d confirmations, spends it %v; want mined, spending the payment", p.out, p.in, p.vout, tx.Confirmations, spends)
		}
	}
	for wallet, want := range forwarded {
		var got json.Number
		c.n.Must(&got, "getreceivedbyaddress", wallet, 1)
		if g, _ := decimal.NewFromString(got.String()); !g.Equal(want) {
			t.Errorf("wallet %s received %s, the forwards to it total %s", wallet, got, want)
		}
	}
	if len(forwarded) != 2 {
		t.Errorf("forwards reached %d wallets, want the low-level one and the project's", len(forwarded))
	}
}

// payoutTxids are the transactions of the payouts.
func (w *ltcWork) payoutTxids(t *testing.T) []string {
	t.Helper()
	rows, err := w.c.db.Query("SELECT DISTINCT txid FROM payouts WHERE txid <> ''")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var l []string
	for rows.Next() {
		var txid string
		if err := rows.Scan(&txid); err != nil {
			t.Fatal(err)
		}
		l = append(l, txid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return l
}

// checkPayouts: every payout is done, and each destination received its
// amount once, in its payout's transaction.
func (w *ltcWork) checkPayouts(t *testing.T) {
	t.Helper()
	c, db := w.c, w.c.db
	txOf := map[string]string{}
	rows, err := db.Query(`SELECT r.address, p.status, p.txid FROM payout_requests r JOIN payouts p ON p.id = r.payout_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var addr, st, txid string
		if err := rows.Scan(&addr, &st, &txid); err != nil {
			t.Fatal(err)
		}
		if st != "done" || txid == "" {
			t.Errorf("payout to %s: %s, txid %q", addr, st, txid)
		}
		txOf[addr] = txid
	}
	rows.Close()
	if k := count(db, "SELECT count(*) FROM payouts"); k != len(w.payoutIDs) {
		t.Errorf("%d payouts stored, %d asked for", k, len(w.payoutIDs))
	}
	for dest, amount := range w.dests {
		var got json.Number
		c.n.Must(&got, "getreceivedbyaddress", dest, 1)
		if g, _ := decimal.NewFromString(got.String()); !g.Equal(amount) {
			t.Errorf("payout destination %s received %s, want %s once", dest, got, amount)
		}
		var listed []struct {
			TxIDs []string `json:"txids"`
		}
		c.n.Must(&listed, "listreceivedbyaddress", 0, false, false, dest)
		if len(listed) != 1 || len(listed[0].TxIDs) != 1 || listed[0].TxIDs[0] != txOf[dest] {
			t.Errorf("payout destination %s: transactions %+v, want its payout's %s alone", dest, listed, txOf[dest])
		}
	}
	var mempool []string
	c.n.Must(&mempool, "getrawmempool")
	if len(mempool) != 0 {
		t.Errorf("transactions left in the node's pool after the last block: %v", mempool)
	}
}

// ---------------------------------------------------------------- watching

// watcher is the index of the one instance of procs that watches ltc; the
// test fails unless exactly one does.
func watcher(t *testing.T, procs []*payhookProc) int {
	t.Helper()
	var ws []int
	for i, p := range procs {
		if watching(t, p) {
			ws = append(ws, i)
		}
	}
	if len(ws) != 1 {
		t.Fatalf("instances %v of %d watch ltc, want exactly one", ws, len(procs))
	}
	return ws[0]
}

// watchTakeover is how soon after a kill -9 another instance must watch:
// the dead instance's session (and with it its advisory lock) ends when
// its connection closes, and the others try every watch interval.
const watchTakeover = 15 * time.Second

// waitWatching waits until exactly one of procs watches ltc, at most
// watchTakeover, and returns how long that took.
func waitWatching(t *testing.T, procs []*payhookProc) time.Duration {
	t.Helper()
	began := clock.Now()
	waitFor(t, watchTakeover, "an instance watching ltc after the kill", func() (bool, string) {
		k := 0
		for _, p := range procs {
			if watching(t, p) {
				k++
			}
		}
		return k == 1, fmt.Sprintf("%d of %d instances watch", k, len(procs))
	})
	return time.Since(began)
}

// waitStored waits until at least want notifications are stored.
func waitStored(t *testing.T, db *sql.DB, want int) {
	t.Helper()
	waitFor(t, 60*time.Second, "notifications stored", func() (bool, string) {
		k, err := queryInt(db, "SELECT count(*) FROM notifications")
		return k >= want, fmt.Sprintf("%d of %d (%v)", k, want, err)
	})
}

// storedState describes the work in flight, for the log.
func storedState(db *sql.DB, recv *faultReceiver) string {
	_, _, state := deliveryProgress(db, recv)
	queued, _ := queryInt(db, "SELECT count(*) FROM payouts WHERE status = 'processing'")
	planned, _ := queryInt(db, "SELECT count(*) FROM outbounds WHERE state NOT IN ('landed', 'failed', 'replaced')")
	return fmt.Sprintf("%s; payouts queued %d, outgoing transactions not landed %d", state, queued, planned)
}
