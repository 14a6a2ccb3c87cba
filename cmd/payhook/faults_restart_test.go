//go:build faults

package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/internal/clock"
)

// TestFaultLitecoindRestart: payhook (PostgreSQL, litecoind regtest,
// payouts in batches) with payments at every stage and payouts sent and
// queued when litecoind is killed by SIGKILL: two payments confirmed
// whose forwards wait in the node's pool, two confirming (two blocks of
// three), two pending (one block), two in the node's pool (not yet
// payments), one payout sent (in the pool) and one queued a moment before
// the kill. A payout requested while the node is dead answers 503 (the
// fee cannot be quoted) and is not recorded. payhook runs against the dead
// node for several watch intervals: it stays up, /healthz reports ltc
// unhealthy with the error, and its polls fail. Then litecoind restarts
// on the same data directory and port (nodetest's Restart: the block
// index SIGKILL left unflushed is rebuilt with -reindex, the same chain,
// which a poll during the reindex would see behind its old tip) with an
// empty pool: the node's wallet puts the payers' transactions back; the
// forwards and payouts it held are gone, since their destinations are in
// no wallet of the node, and only payhook can send them again. Then
// blocks are mined on.
//
// Asserted: payhook never exits; every payment is credited once and
// completed; exactly one transaction on chain (or in the pool) spends
// each payment's output, its forward, and its destination receives that
// forward once; every payout is done, its destination received exactly
// its amount once, and exactly one transaction spends each of payhook's
// outgoing transactions' inputs; every callback (pending, confirmed,
// completed per payment) is stored once, delivered and acknowledged.
func TestFaultLitecoindRestart(t *testing.T) {
	n := nodetest.StartLitecoind(t, 110)
	dsn, _ := newPGDatabase(t)
	dir := t.TempDir()
	recv := newFaultReceiver(t)
	if out, err := exec.Command(faultBin, "seed", "init", "--seed-file", filepath.Join(dir, "payhook.seed")).CombinedOutput(); err != nil {
		t.Fatalf("seed init: %v: %s", err, out)
	}
	flags := deliveryFlags("--node", "ltc="+n.URL+"?network=regtest", "--watch-interval", "200ms", "--prices", "table",
		"--operator-listen", "127.0.0.1:0", "--payout-interval", "ltc=1s")
	p := startPayhook(t, dsn, dir, recv, flags...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	ltc := &ltcChain{n: n}
	n.Must(&ltc.start, "getblockcount")

	// The payout wallet, funded and credited.
	var wallet string
	waitFor(t, 20*time.Second, "the ltc payout wallet (once ltc's node was first read)", func() (bool, string) {
		r := p.do(t, http.MethodGet, "/ltc/payout/address/", nil, key, "")
		wallet, _ = r.JSON["address"].(string)
		return r.Code == http.StatusOK && wallet != "", fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})
	// Two outputs: a payout's change is spendable only once confirmed, so
	// the second payout, queued while the first waits in the pool, needs
	// an output of its own.
	n.Must(nil, "sendtoaddress", wallet, json.Number("1"))
	n.Must(nil, "sendtoaddress", wallet, json.Number("1"))
	ltc.mine(t, 3)
	waitFor(t, 30*time.Second, "the payout balance credited", func() (bool, string) {
		r := p.do(t, http.MethodGet, "/ltc/payout/balance/", nil, key, "")
		b, _ := r.JSON["balance"].(string)
		return b == "2", fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})

	// Eight payments, each to its own address forwarding to its own
	// destination, 3 confirmations. The destinations (and the payouts')
	// are in no wallet of the node: the forwards and payouts waiting in
	// its pool at the kill are lost with it, and only payhook can send
	// them again (the payers' transactions are the node wallet's, which
	// puts them back in the pool).
	pays := make([]*ltcPayment, 8)
	for i := range pays {
		pays[i] = &ltcPayment{n: i, value: decimal.RequireFromString(fmt.Sprintf("0.%d", i+2))}
		pays[i].dest = ltcFreshAddress(t)
		r := p.do(t, http.MethodGet, "/ltc/create/", url.Values{"callback": {callbackFor(recv, i)}, "address": {pays[i].dest},
			"confirmations": {"3"}, "json": {"1"}}, key, "")
		pays[i].addrIn, _ = r.JSON["address_in"].(string)
		if r.Code != http.StatusOK || pays[i].addrIn == "" {
			t.Fatalf("create %d: HTTP %d %s", i, r.Code, r.Body)
		}
	}
	pay := func(ps ...*ltcPayment) {
		for _, pm := range ps {
			n.Must(&pm.txid, "sendtoaddress", pm.addrIn, json.Number(pm.value.String()))
		}
	}
	// 0, 1: three confirmations, forwards sent; 2, 3: two confirmations;
	// 4, 5: one (pending callbacks); 6, 7: in the pool, not a payment yet
	// (a pool sighting is never stored or notified).
	pay(pays[0], pays[1])
	ltc.mine(t, 1)
	pay(pays[2], pays[3])
	ltc.mine(t, 1)
	pay(pays[4], pays[5])
	ltc.mine(t, 1)
	waitFor(t, 30*time.Second, "the first two payments' forwards sent", func() (bool, string) {
		c := count(db, `SELECT count(*) FROM outbounds WHERE purpose = 'forward' AND state = 'sent'`)
		return c == 2, fmt.Sprintf("%d forwards sent", c)
	})
	waitFor(t, 30*time.Second, "a callback per mined payment", func() (bool, string) {
		c := count(db, `SELECT count(DISTINCT url) FROM notifications`)
		return c == 6, fmt.Sprintf("%d addresses notified", c)
	})
	pay(pays[6], pays[7])

	// One payout sent and waiting in the node's pool.
	outs := []*ltcPayout{{amount: decimal.RequireFromString("0.3")}, {amount: decimal.RequireFromString("0.4")}}
	for _, o := range outs {
		o.dest = ltcFreshAddress(t)
	}
	requestPayout(t, p, key, outs[0])
	waitFor(t, 30*time.Second, "the first payout sent", func() (bool, string) {
		st := payoutStatus(db, outs[0].id)
		return st == "done", st
	})
	// The second payout is queued just before the kill: the next batch
	// (every second) finds the node dead, or sent it in the moment
	// between; either way it is in flight.
	requestPayout(t, p, key, outs[1])
	var pool []string
	n.Must(&pool, "getrawmempool")
	t.Logf("killing litecoind at height %d with %d transactions in its pool; second payout %s", ltc.height(t), len(pool), payoutStatus(db, outs[1].id))

	n.Kill9(t)
	killed := clock.Now()
	// A payout request while the node is dead cannot quote the network
	// fee: 503, try again (not 500), naming no node.
	r := p.do(t, http.MethodPost, "/ltc/payout/request/bulk/process/", nil, key, `{"outputs": {"`+outs[0].dest+`": "0.1"}}`)
	if r.Code != http.StatusServiceUnavailable || strings.Contains(r.Body, "127.0.0.1") {
		t.Errorf("a payout request while the node is down: HTTP %d %s, want 503 naming no node", r.Code, r.Body)
	}
	errsAtKill := chainStatus(t, p)["poll_errors"].(float64)
	waitFor(t, 30*time.Second, "payhook reports ltc's node down for several watch intervals", func() (bool, string) {
		st := chainStatus(t, p)
		errs, _ := st["poll_errors"].(float64)
		return st["healthy"] == false && errs >= errsAtKill+5 && clock.Now().Sub(killed) > 2*time.Second, fmt.Sprint(st)
	})
	st := chainStatus(t, p)
	t.Logf("ltc while its node is down: %v", st)
	if e, _ := st["error"].(string); e == "" {
		t.Error("/healthz reports ltc unhealthy without an error")
	}
	if !p.alive() || !p.healthy() {
		t.Fatalf("payhook with ltc's node down: alive %v, /healthz OK %v", p.alive(), p.healthy())
	}

	n.Restart(t)
	n.Must(&pool, "getrawmempool")
	t.Logf("litecoind back after %s at height %d with %d transactions in its pool",
		time.Since(killed).Round(100*time.Millisecond), ltc.height(t), len(pool))

	// Mine on until every payment is completed and every payout done.
	var addrs []string
	for _, pm := range pays {
		addrs = append(addrs, pm.addrIn)
	}
	var mined time.Time
	waitFor(t, 90*time.Second, "every payment completed, every payout done", func() (bool, string) {
		if !p.alive() {
			t.Fatalf("payhook exited: %v", p.err)
		}
		done := count(db, `SELECT count(*) FROM payments p JOIN addresses a ON a.id = p.address_id
			WHERE p.status = 'completed' AND a.address_in IN (`+quoted(addrs)+`)`)
		paid := count(db, `SELECT count(*) FROM payouts WHERE status = 'done'`)
		landed := count(db, `SELECT count(*) FROM outbounds WHERE state = 'landed'`)
		all := count(db, `SELECT count(*) FROM outbounds`)
		if done == len(pays) && paid == len(outs) && landed == all {
			return true, ""
		}
		// A block at a time, once payhook has processed the tip: no more
		// blocks than needed (litecoind on regtest stops making blocks,
		// bad-txns-vin-empty, once its MWEB soft fork activates a few
		// hundred blocks in).
		if cur := count(db, `SELECT height FROM chain_cursors WHERE ticker = 'ltc'`); int64(cur) == ltc.height(t) && clock.Now().Sub(mined) > 300*time.Millisecond {
			ltc.mine(t, 1)
			mined = clock.Now()
		}
		return false, fmt.Sprintf("%d payments completed, %d payouts done, %d of %d outgoing transactions landed", done, paid, landed, all)
	})
	waitAllAcknowledged(t, db, recv, 2*len(pays), takeoverBound())
	assertNothingLost(t, db, recv)
	if !p.alive() {
		t.Fatalf("payhook exited: %v", p.err)
	}
	if c := count(db, `SELECT count(*) FROM payouts`); c != len(outs) {
		t.Errorf("%d payouts recorded, want %d (the one refused with 503 is not)", c, len(outs))
	}

	// Callbacks: pending, confirmed and completed once per payment.
	checkCallbacks(t, db, recv, len(pays))

	// Payments: one each, credited once, forwarded once.
	for _, pm := range pays {
		pm.check(t, db, ltc)
	}
	// Payouts: done once, the destination received exactly the amount.
	for _, o := range outs {
		o.check(t, db, ltc)
	}
	// Every outgoing transaction payhook recorded: landed, and the one
	// spender of its inputs; none replaced.
	ltc.checkOutbounds(t, db)
}

// ltcChain reads litecoind for the assertions: the blocks mined since
// start and the node's pool.
type ltcChain struct {
	n     *nodetest.Litecoind
	start int64
}

func (c *ltcChain) mine(t *testing.T, k int) {
	t.Helper()
	var to string
	c.n.Must(&to, "getnewaddress")
	c.n.Must(nil, "generatetoaddress", k, to)
}

func (c *ltcChain) height(t *testing.T) int64 {
	t.Helper()
	var h int64
	c.n.Must(&h, "getblockcount")
	return h
}

// outpoint is one transaction output.
type outpoint struct {
	TxID string `json:"txid"`
	Vout int64  `json:"vout"`
}

// spenders maps each output spent since start (in a block or in the pool)
// to the transactions that spend it.
func (c *ltcChain) spenders(t *testing.T) map[outpoint][]string {
	t.Helper()
	type tx struct {
		TxID string     `json:"txid"`
		Vin  []outpoint `json:"vin"`
	}
	m := map[outpoint][]string{}
	add := func(x tx) {
		for _, in := range x.Vin {
			if in.TxID != "" { // not a coinbase
				m[in] = append(m[in], x.TxID)
			}
		}
	}
	tip := c.height(t)
	for h := c.start + 1; h <= tip; h++ {
		var hash string
		c.n.Must(&hash, "getblockhash", h)
		var blk struct {
			Tx []tx `json:"tx"`
		}
		c.n.Must(&blk, "getblock", hash, 2)
		for _, x := range blk.Tx {
			add(x)
		}
	}
	var pool []string
	c.n.Must(&pool, "getrawmempool")
	for _, id := range pool {
		var x tx
		c.n.Must(&x, "getrawtransaction", id, true)
		add(x)
	}
	return m
}

// received returns what addr received in the blocks since start, and in
// which transactions.
func (c *ltcChain) received(t *testing.T, addr string) (decimal.Decimal, []string) {
	t.Helper()
	sum := decimal.Zero
	var txids []string
	tip := c.height(t)
	for h := c.start + 1; h <= tip; h++ {
		var hash string
		c.n.Must(&hash, "getblockhash", h)
		var blk struct {
			Tx []struct {
				TxID string `json:"txid"`
				Vout []struct {
					Value  json.Number `json:"value"`
					Script struct {
						Address   string   `json:"address"`
						Addresses []string `json:"addresses"`
					} `json:"scriptPubKey"`
				} `json:"vout"`
			} `json:"tx"`
		}
		c.n.Must(&blk, "getblock", hash, 2)
		for _, tx := range blk.Tx {
			for _, out := range tx.Vout {
				if out.Script.Address != addr && !slices.Contains(out.Script.Addresses, addr) {
					continue
				}
				v, err := decimal.NewFromString(out.Value.String())
				if err != nil {
					t.Fatal(err)
				}
				sum = sum.Add(v)
				txids = append(txids, tx.TxID)
			}
		}
	}
	return sum, txids
}

// ltcFreshAddress is a random litecoin regtest P2WPKH address: in no
// wallet, paid by nothing else.
func ltcFreshAddress(t *testing.T) string {
	t.Helper()
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	params := chaincfg.RegressionNetParams
	params.Bech32HRPSegwit = "rltc"
	a, err := btcutil.NewAddressWitnessPubKeyHash(b, &params)
	if err != nil {
		t.Fatal(err)
	}
	return a.EncodeAddress()
}

// checkOutbounds: every outgoing transaction payhook recorded landed and
// is the only transaction spending any of its inputs; none was replaced.
func (c *ltcChain) checkOutbounds(t *testing.T, db *sql.DB) {
	t.Helper()
	spent := c.spenders(t)
	rows, err := db.Query(`SELECT id, purpose, state, txid, inputs FROM outbounds ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var purpose, state, txid string
		var raw []byte
		if err := rows.Scan(&id, &purpose, &state, &txid, &raw); err != nil {
			t.Fatal(err)
		}
		n++
		if state != "landed" {
			t.Errorf("outbound %d (%s) %s, want landed", id, purpose, state)
		}
		var ins []struct {
			TxID  string `json:"txid"`
			Index int64  `json:"index"`
		}
		if err := json.Unmarshal(raw, &ins); err != nil || len(ins) == 0 {
			t.Errorf("outbound %d inputs %s (%v)", id, raw, err)
		}
		for _, in := range ins {
			if s := spent[outpoint{in.TxID, in.Index}]; len(s) != 1 || s[0] != txid {
				t.Errorf("outbound %d (%s): input %s:%d spent by %v, want by %s alone", id, purpose, in.TxID, in.Index, s, txid)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// One per forward, one per payout: nothing replaced.
	if want := count(db, `SELECT count(*) FROM forwards WHERE NOT held`) + count(db, `SELECT count(*) FROM payouts`); n != want {
		t.Errorf("%d outgoing transactions, want %d (one per forward and per payout)", n, want)
	}
}

// ltcPayment is one test payment.
type ltcPayment struct {
	n      int
	value  decimal.Decimal
	dest   string // where its address forwards
	addrIn string
	txid   string // the payer's transaction
}

// check: one payment of the address, completed, credited once; its
// output spent by its forward alone; the destination received the
// forward once.
func (pm *ltcPayment) check(t *testing.T, db *sql.DB, c *ltcChain) {
	t.Helper()
	var id, vout int64
	var status, txidIn, txidOut string
	var value decimal.Decimal
	err := db.QueryRow(`SELECT p.id, p.status, p.txid_in, p.output_index, p.value_coin, coalesce(p.txid_out, '')
		FROM payments p JOIN addresses a ON a.id = p.address_id WHERE a.address_in = $1`, pm.addrIn).
		Scan(&id, &status, &txidIn, &vout, &value, &txidOut)
	if err != nil {
		t.Fatalf("payment %d: %v (payments of its address: %d)", pm.n, err,
			count(db, fmt.Sprintf(`SELECT count(*) FROM payments p JOIN addresses a ON a.id = p.address_id WHERE a.address_in = '%s'`, pm.addrIn)))
	}
	if status != "completed" || txidIn != pm.txid || !value.Equal(pm.value) || txidOut == "" {
		t.Errorf("payment %d: %s, %s of %s in %s, forwarded in %q; want completed, %s in %s", pm.n, status, value, pm.addrIn, txidIn, txidOut, pm.value, pm.txid)
	}
	if c := count(db, fmt.Sprintf(`SELECT count(*) FROM ledger_entries WHERE payment_id = %d AND event = 'credit' AND account = 'pending'`, id)); c != 1 {
		t.Errorf("payment %d credited %d times, want once", pm.n, c)
	}
	var fwdStatus, fwdTxid string
	var forwarded decimal.Decimal
	if err := db.QueryRow(`SELECT status, txid_out, value_forwarded_coin FROM forwards WHERE payment_id = $1`, id).Scan(&fwdStatus, &fwdTxid, &forwarded); err != nil ||
		fwdStatus != "done" || fwdTxid != txidOut {
		t.Errorf("payment %d: forward %s %s (%v), want done in %s", pm.n, fwdStatus, fwdTxid, err, txidOut)
	}
	spent := c.spenders(t)
	if s := spent[outpoint{txidIn, vout}]; len(s) != 1 || s[0] != txidOut {
		t.Errorf("payment %d: its output %s:%d spent by %v, want by its forward %s alone", pm.n, txidIn, vout, s, txidOut)
	}
	got, txids := c.received(t, pm.dest)
	if !got.Equal(forwarded) || len(txids) != 1 || txids[0] != txidOut {
		t.Errorf("payment %d: its destination received %s in %v, want %s once in %s", pm.n, got, txids, forwarded, txidOut)
	}
}

// ltcPayout is one test payout of one output.
type ltcPayout struct {
	dest   string
	amount decimal.Decimal
	id     string
}

// requestPayout requests o; with --payout-interval it is queued.
func requestPayout(t *testing.T, p *payhookProc, key string, o *ltcPayout) {
	t.Helper()
	r := p.do(t, http.MethodPost, "/ltc/payout/request/bulk/process/", nil, key, fmt.Sprintf(`{"outputs": {%q: %q}}`, o.dest, o.amount.String()))
	info, _ := r.JSON["payout_info"].(map[string]any)
	if r.Code != http.StatusOK || info["status"] != "processing" {
		t.Fatalf("payout request: HTTP %d %s; want it queued (processing)", r.Code, r.Body)
	}
	o.id = fmt.Sprint(info["id"])
}

func payoutStatus(db *sql.DB, id string) string {
	var st, txid, e string
	if err := db.QueryRow(`SELECT status, txid, error FROM payouts WHERE id = $1`, id).Scan(&st, &txid, &e); err != nil {
		return err.Error()
	}
	if e != "" {
		return st + ": " + e
	}
	return st
}

// check: done, its transaction the one the destination received, exactly
// the amount, once.
func (o *ltcPayout) check(t *testing.T, db *sql.DB, c *ltcChain) {
	t.Helper()
	var status, txid string
	if err := db.QueryRow(`SELECT status, txid FROM payouts WHERE id = $1`, o.id).Scan(&status, &txid); err != nil || status != "done" || txid == "" {
		t.Errorf("payout %s: %s %s (%v), want done", o.id, status, txid, err)
	}
	got, txids := c.received(t, o.dest)
	if !got.Equal(o.amount) || len(txids) != 1 || txids[0] != txid {
		t.Errorf("payout %s: the destination received %s in %v, want %s once in %s", o.id, got, txids, o.amount, txid)
	}
}

// chainStatus is ltc's entry in /healthz's details (operator listener).
func chainStatus(t *testing.T, p *payhookProc) map[string]any {
	t.Helper()
	return tickerStatus(t, p, "ltc")
}

// tickerStatus is ticker's entry in /healthz's details.
func tickerStatus(t *testing.T, p *payhookProc, ticker string) map[string]any {
	t.Helper()
	op := *p
	op.http = p.operator
	r := op.do(t, http.MethodGet, "/healthz", nil, "", "")
	chs, _ := r.JSON["chains"].(map[string]any)
	st, _ := chs[ticker].(map[string]any)
	if st == nil {
		t.Fatalf("/healthz has no %s: HTTP %d %s", ticker, r.Code, r.Body)
	}
	return st
}

// checkCallbacks: the callbacks of each of the first n test addresses
// (callbackFor) tell each state once, in order: pending at the
// confirmation counts below the required that payhook saw (none when the
// blocks came faster than its polls), each once, then confirmed once, then
// completed once.
func checkCallbacks(t *testing.T, db *sql.DB, recv *faultReceiver, n int) {
	t.Helper()
	byURL := map[string][]string{}
	rows, err := db.Query(`SELECT url, body FROM notifications ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		var b []byte
		if err := rows.Scan(&u, &b); err != nil {
			t.Fatal(err)
		}
		byURL[u] = append(byURL[u], string(b))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cb := callbackFor(recv, i)
		seen := map[string]int{}
		var order []string
		for u, bodies := range byURL {
			if u != cb && !strings.HasPrefix(u, cb+"&") {
				continue
			}
			for _, b := range bodies {
				var v struct {
					Status        string `json:"payment_status"`
					Confirmations int64  `json:"confirmations"`
				}
				if err := json.Unmarshal([]byte(b), &v); err != nil {
					t.Errorf("payment %d: callback %s: %v", i, b, err)
				}
				st := fmt.Sprintf("%s@%d", v.Status, v.Confirmations)
				seen[st]++
				seen[v.Status+"*"]++
				order = append(order, st)
			}
		}
		ok := seen["confirmed*"] == 1 && seen["completed*"] == 1 && len(order) == seen["pending*"]+2 &&
			strings.HasPrefix(order[len(order)-2], "confirmed@") && strings.HasPrefix(order[len(order)-1], "completed@")
		for st, c := range seen {
			ok = ok && (c == 1 || strings.HasSuffix(st, "*"))
		}
		if !ok {
			t.Errorf("payment %d: callbacks %v; want pending at distinct confirmation counts, then confirmed once, then completed once", i, order)
		}
	}
}

// quoted is xs as a list of SQL string literals (test values: addresses).
func quoted(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	return strings.Join(q, ", ")
}

// TestFaultAnvilRestart: payhook (PostgreSQL, anvil, eth, payouts in
// batches) with payments at every stage and payouts in flight when anvil
// is killed by SIGKILL, then restarted on the same port from its state
// file.
//
// What anvil keeps: it holds its chain in memory and dumps it (blocks with
// their hashes, transactions, receipts, accounts) to its state file every
// few seconds (nodetest.StartAnvilRestartable); Restart loads the last
// dump. What it loses: every block mined since that dump, and its whole
// pool. The test kills it right after a block it mined since the last
// dump and payhook processed: that block held the first two payments'
// forwards, the first payout and the fourth payment, so after the restart
// payhook meets a chain one block lower (a reorganisation to a lower
// height), on which its forwards and payout are in no block and no pool
// and the fourth payment is gone, until payhook sends its recorded bytes
// again and the payer's wallet rebroadcasts its payment (the test sends
// the same raw transaction again). Should a dump fall between that block
// and the kill, nothing is lost; the test logs which happened and asserts
// the same either way.
//
// Asserted: payhook never exits and reports eth's node down while it is;
// every payment is credited once and completed; each payment address sent
// exactly one transaction (its forward, nonce 0) and each destination
// received exactly the forwarded value; every payout is done, its
// destination received exactly its amount, and the payout wallet sent
// exactly one transaction per payout; every callback is stored once per
// state, delivered and acknowledged.
func TestFaultAnvilRestart(t *testing.T) {
	const dumpEvery = 4 // seconds between anvil's dumps of its chain
	an := nodetest.StartAnvilRestartable(t, dumpEvery, "--no-mining")
	dsn, _ := newPGDatabase(t)
	dir := t.TempDir()
	recv := newFaultReceiver(t)
	if out, err := exec.Command(faultBin, "seed", "init", "--seed-file", filepath.Join(dir, "payhook.seed")).CombinedOutput(); err != nil {
		t.Fatalf("seed init: %v: %s", err, out)
	}
	flags := deliveryFlags("--node", "eth="+an.URL+"?network=regtest", "--watch-interval", "200ms", "--prices", "table",
		"--operator-listen", "127.0.0.1:0", "--payout-interval", "eth=1s")
	p := startPayhook(t, dsn, dir, recv, flags...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	eth := &ethChain{an: an}
	// One block at a time, once payhook has processed the tip.
	var mined time.Time
	step := func() {
		if cur := count(db, `SELECT height FROM chain_cursors WHERE ticker = 'eth'`); int64(cur) == an.Height(t) && clock.Now().Sub(mined) > 300*time.Millisecond {
			an.Mine(t, 1)
			mined = clock.Now()
		}
	}

	// The payout wallet, funded and credited.
	var wallet string
	waitFor(t, 20*time.Second, "the eth payout wallet (once eth's node was first read)", func() (bool, string) {
		r := p.do(t, http.MethodGet, "/eth/payout/address/", nil, key, "")
		wallet, _ = r.JSON["address"].(string)
		return r.Code == http.StatusOK && wallet != "", fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})
	an.Send(t, nodetest.AnvilDev0, wallet, eth.wei(decimal.NewFromInt(1)), nil)
	waitFor(t, 30*time.Second, "the payout balance credited", func() (bool, string) {
		r := p.do(t, http.MethodGet, "/eth/payout/balance/", nil, key, "")
		b, _ := r.JSON["balance"].(string)
		step()
		return b == "1", fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})

	// Four payments, each to its own address forwarding to its own fresh
	// destination, 3 confirmations.
	pays := make([]*ethPayment, 4)
	for i := range pays {
		pays[i] = &ethPayment{n: i, value: decimal.RequireFromString(fmt.Sprintf("0.%d", i+1)), dest: eth.freshAddress(t)}
		r := p.do(t, http.MethodGet, "/eth/create/", url.Values{"callback": {callbackFor(recv, i)}, "address": {pays[i].dest},
			"confirmations": {"3"}, "json": {"1"}}, key, "")
		pays[i].addrIn, _ = r.JSON["address_in"].(string)
		if r.Code != http.StatusOK || pays[i].addrIn == "" {
			t.Fatalf("create %d: HTTP %d %s", i, r.Code, r.Body)
		}
	}
	pay := func(pm *ethPayment) {
		pm.txid = an.Send(t, nodetest.AnvilDev0, pm.addrIn, eth.wei(pm.value), nil)
		an.Call(t, &pm.raw, "eth_getRawTransactionByHash", pm.txid)
	}
	// 0, 1: confirmed, forwards sent; 2: one confirmation.
	pay(pays[0])
	pay(pays[1])
	an.Mine(t, 2)
	pay(pays[2])
	an.Mine(t, 1)
	waitFor(t, 30*time.Second, "the first two payments' forwards sent", func() (bool, string) {
		c := count(db, `SELECT count(*) FROM outbounds WHERE purpose = 'forward' AND state = 'sent'`)
		return c == 2, fmt.Sprintf("%d forwards sent", c)
	})
	outs := []*ethPayout{{amount: decimal.RequireFromString("0.25"), dest: eth.freshAddress(t)}, {amount: decimal.RequireFromString("0.15"), dest: eth.freshAddress(t)}}
	requestEthPayout(t, p, key, outs[0])
	waitFor(t, 30*time.Second, "the first payout sent", func() (bool, string) {
		st := payoutStatus(db, outs[0].id)
		return st == "done", st
	})
	// 3: in the pool.
	pay(pays[3])

	// Mid-stream: right after a dump, one block with the forwards, the
	// payout and the fourth payment, processed by payhook; then the kill,
	// before the next dump if the machine keeps up.
	tip := an.Height(t)
	var dumpedAt time.Time
	waitFor(t, 3*dumpEvery*time.Second, "anvil dumped its chain at the tip", func() (bool, string) {
		h, at := an.DumpedHeight(t)
		if h == tip && dumpedAt.IsZero() {
			dumpedAt = at // a dump at the tip; now wait for the next one
		}
		return h == tip && !dumpedAt.IsZero() && at.After(dumpedAt), fmt.Sprintf("dumped height %d at %s, tip %d", h, at, tip)
	})
	fresh := clock.Now()
	lost := an.Mine(t, 1)
	waitFor(t, 10*time.Second, "payhook processed the block and saw its transactions land", func() (bool, string) {
		cur := count(db, `SELECT height FROM chain_cursors WHERE ticker = 'eth'`)
		landed := count(db, `SELECT count(*) FROM outbounds WHERE state = 'landed'`)
		return int64(cur) == lost && landed == 3, fmt.Sprintf("cursor %d, %d outgoing transactions landed", cur, landed)
	})
	requestEthPayout(t, p, key, outs[1]) // queued: the wallet's next transaction waits for the last to land
	an.Kill9(t)
	killed := clock.Now()
	t.Logf("killed anvil %s after its last dump, at height %d with block %d's forwards and payout landed for payhook",
		killed.Sub(fresh).Round(10*time.Millisecond), lost, lost)

	errsAtKill := tickerStatus(t, p, "eth")["poll_errors"].(float64)
	waitFor(t, 30*time.Second, "payhook reports eth's node down for several watch intervals", func() (bool, string) {
		st := tickerStatus(t, p, "eth")
		errs, _ := st["poll_errors"].(float64)
		return st["healthy"] == false && errs >= errsAtKill+5 && clock.Now().Sub(killed) > 2*time.Second, fmt.Sprint(st)
	})
	if !p.alive() || !p.healthy() {
		t.Fatalf("payhook with eth's node down: alive %v, /healthz OK %v", p.alive(), p.healthy())
	}

	an.Restart(t)
	kept := an.Height(t)
	if kept < lost {
		t.Logf("anvil back at height %d: block %d is lost (a reorganisation to a lower height), with its pool", kept, lost)
	} else {
		t.Logf("anvil back at height %d: a dump came before the kill; nothing lost but the pool", kept)
	}
	// The payer's wallet rebroadcasts its payment that is in no block.
	for _, pm := range pays {
		if !an.Receipt(t, pm.txid).Found {
			an.Call(t, nil, "eth_sendRawTransaction", pm.raw)
		}
	}

	var addrs []string
	for _, pm := range pays {
		addrs = append(addrs, pm.addrIn)
	}
	waitFor(t, 90*time.Second, "every payment completed, every payout done", func() (bool, string) {
		if !p.alive() {
			t.Fatalf("payhook exited: %v", p.err)
		}
		done := count(db, `SELECT count(*) FROM payments p JOIN addresses a ON a.id = p.address_id
			WHERE p.status = 'completed' AND a.address_in IN (`+quoted(addrs)+`)`)
		paid := count(db, `SELECT count(*) FROM payouts WHERE status = 'done'`)
		landed := count(db, `SELECT count(*) FROM outbounds WHERE state = 'landed'`)
		all := count(db, `SELECT count(*) FROM outbounds`)
		pool := an.PendingCount(t)
		if done == len(pays) && paid == len(outs) && landed == all && pool == 0 {
			return true, ""
		}
		step()
		return false, fmt.Sprintf("%d payments completed, %d payouts done, %d of %d outgoing transactions landed, %d in the pool", done, paid, landed, all, pool)
	})
	// The forwards' blocks seen: nothing left to follow.
	an.Mine(t, 1)
	waitAllAcknowledged(t, db, recv, 2*len(pays), takeoverBound())
	assertNothingLost(t, db, recv)
	if !p.alive() {
		t.Fatalf("payhook exited: %v", p.err)
	}
	checkCallbacks(t, db, recv, len(pays))

	for _, pm := range pays {
		pm.check(t, db, eth)
	}
	for _, o := range outs {
		o.check(t, db, eth)
	}
	// The payout wallet sent one transaction per payout, no more.
	if got := eth.sentBy(t, wallet); len(got) != len(outs) {
		t.Errorf("the payout wallet sent %v, want one transaction per payout (%d)", got, len(outs))
	}
	if c := count(db, `SELECT count(*) FROM outbounds WHERE state <> 'landed'`); c != 0 {
		t.Errorf("%d outgoing transactions not landed", c)
	}
}

// ethChain reads anvil for the assertions.
type ethChain struct {
	an *nodetest.Anvil
}

// wei is v ether in wei.
func (c *ethChain) wei(v decimal.Decimal) *big.Int { return v.Shift(18).BigInt() }

// ether is v wei in ether.
func (c *ethChain) ether(v *big.Int) decimal.Decimal { return decimal.NewFromBigInt(v, -18) }

// freshAddress is a random address nothing ever paid.
func (c *ethChain) freshAddress(t *testing.T) string {
	t.Helper()
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "0x" + hex.EncodeToString(b)
}

// sentBy lists the transactions from addr in every block.
func (c *ethChain) sentBy(t *testing.T, addr string) []string {
	t.Helper()
	var out []string
	tip := c.an.Height(t)
	for h := int64(1); h <= tip; h++ {
		for _, tx := range c.an.BlockTxs(t, h) {
			if strings.EqualFold(tx.From, addr) {
				out = append(out, tx.Hash)
			}
		}
	}
	return out
}

// ethPayment is one test payment.
type ethPayment struct {
	n      int
	value  decimal.Decimal
	dest   string
	addrIn string
	txid   string
	raw    string // the signed transaction, for the payer's rebroadcast
}

// check: one payment of the address, completed, credited once; the
// address sent one transaction, its forward, executed; the destination
// received exactly the forwarded value.
func (pm *ethPayment) check(t *testing.T, db *sql.DB, c *ethChain) {
	t.Helper()
	var id int64
	var status, txidIn, txidOut string
	var value decimal.Decimal
	err := db.QueryRow(`SELECT p.id, p.status, p.txid_in, p.value_coin, coalesce(p.txid_out, '')
		FROM payments p JOIN addresses a ON a.id = p.address_id WHERE a.address_in = $1`, pm.addrIn).
		Scan(&id, &status, &txidIn, &value, &txidOut)
	if err != nil {
		t.Fatalf("payment %d: %v (payments of its address: %d)", pm.n, err,
			count(db, fmt.Sprintf(`SELECT count(*) FROM payments p JOIN addresses a ON a.id = p.address_id WHERE a.address_in = '%s'`, pm.addrIn)))
	}
	if status != "completed" || !strings.EqualFold(txidIn, pm.txid) || !value.Equal(pm.value) || txidOut == "" {
		t.Errorf("payment %d: %s, %s of %s in %s, forwarded in %q; want completed, %s in %s", pm.n, status, value, pm.addrIn, txidIn, txidOut, pm.value, pm.txid)
	}
	if c := count(db, fmt.Sprintf(`SELECT count(*) FROM ledger_entries WHERE payment_id = %d AND event = 'credit' AND account = 'pending'`, id)); c != 1 {
		t.Errorf("payment %d credited %d times, want once", pm.n, c)
	}
	var fwdStatus, fwdTxid string
	var forwarded decimal.Decimal
	if err := db.QueryRow(`SELECT status, txid_out, value_forwarded_coin FROM forwards WHERE payment_id = $1`, id).Scan(&fwdStatus, &fwdTxid, &forwarded); err != nil ||
		fwdStatus != "done" || fwdTxid != txidOut {
		t.Errorf("payment %d: forward %s %s (%v), want done in %s", pm.n, fwdStatus, fwdTxid, err, txidOut)
	}
	if sent := c.sentBy(t, pm.addrIn); len(sent) != 1 || !strings.EqualFold(sent[0], txidOut) {
		t.Errorf("payment %d: its address sent %v, want its forward %s alone", pm.n, sent, txidOut)
	}
	if rc := c.an.Receipt(t, txidOut); !rc.OK {
		t.Errorf("payment %d: forward %s: receipt %+v, want executed", pm.n, txidOut, rc)
	}
	if got := c.ether(c.an.Balance(t, pm.dest)); !got.Equal(forwarded) {
		t.Errorf("payment %d: its destination holds %s, want the forwarded %s once", pm.n, got, forwarded)
	}
}

// ethPayout is one test payout of one output.
type ethPayout struct {
	dest   string
	amount decimal.Decimal
	id     string
}

func requestEthPayout(t *testing.T, p *payhookProc, key string, o *ethPayout) {
	t.Helper()
	r := p.do(t, http.MethodPost, "/eth/payout/request/bulk/process/", nil, key, fmt.Sprintf(`{"outputs": {%q: %q}}`, o.dest, o.amount.String()))
	info, _ := r.JSON["payout_info"].(map[string]any)
	if r.Code != http.StatusOK || info["status"] != "processing" {
		t.Fatalf("payout request: HTTP %d %s; want it queued (processing)", r.Code, r.Body)
	}
	o.id = fmt.Sprint(info["id"])
}

// check: done, its transaction executed, the destination holds exactly
// the amount.
func (o *ethPayout) check(t *testing.T, db *sql.DB, c *ethChain) {
	t.Helper()
	var status, txid string
	if err := db.QueryRow(`SELECT status, txid FROM payouts WHERE id = $1`, o.id).Scan(&status, &txid); err != nil || status != "done" || txid == "" {
		t.Errorf("payout %s: %s %s (%v), want done", o.id, status, txid, err)
	}
	if rc := c.an.Receipt(t, txid); !rc.OK {
		t.Errorf("payout %s: %s: receipt %+v, want executed", o.id, txid, rc)
	}
	if got := c.ether(c.an.Balance(t, o.dest)); !got.Equal(o.amount) {
		t.Errorf("payout %s: the destination holds %s, want %s once", o.id, got, o.amount)
	}
}
