//go:build faults

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/nodetest"
)

// TestFaultKill9AfterSignPayout: payhook (PostgreSQL, litecoind regtest,
// payouts in batches) is killed by SIGKILL after it signed a queued
// payout's transaction and before the bytes were recorded
// (PAYHOOK_FAULT=after-sign, faults_kill.go). With the process's own seed
// the signature is made as the payout is planned, so the planning
// transaction dies with it: nothing is recorded and nothing reaches the
// node, and the payout is still queued. Restarted without the fault,
// payhook plans and signs it again and sends it: the payout ends done,
// the destination receives the amount exactly once, and exactly one
// transaction, in blocks or in the node's pool, spends the payout's
// inputs.
//
// Whether the restart's transaction has the txid of the killed attempt's
// is not observable: that signature never left the process (and the
// hook is told nothing of it). Signing is deterministic (RFC 6979) and the
// plan is made from the same database state, so it would be the same;
// what the test asserts is what matters: one transaction, never a second.
func TestFaultKill9AfterSignPayout(t *testing.T) {
	n := nodetest.StartLitecoind(t, 110)
	dsn, _ := newPGDatabase(t)
	dir := t.TempDir()
	recv := newFaultReceiver(t)
	if out, err := exec.Command(faultBin, "seed", "init", "--seed-file", filepath.Join(dir, "payhook.seed")).CombinedOutput(); err != nil {
		t.Fatalf("seed init: %v: %s", err, out)
	}
	// With a batch interval a payout is queued (committed) first and
	// planned, signed and sent by the chain's watcher afterwards: the
	// kill finds it queued, not lost with an HTTP request.
	flags := []string{"--node", "ltc=" + n.URL + "?network=regtest", "--watch-interval", "200ms", "--prices", "table",
		"--payout-interval", "ltc=1s"}
	marker := filepath.Join(dir, "fault-once")
	a := startPayhookWith(t, nil, []string{"PAYHOOK_FAULT=after-sign", "PAYHOOK_FAULT_ONCE=" + marker}, dsn, dir, recv, flags...)
	key := a.apiKey(t)
	db := openTestDB(t, dsn)

	var wallet string
	waitFor(t, 20*time.Second, "the ltc payout wallet (once ltc's node was first read)", func() (bool, string) {
		r := a.do(t, http.MethodGet, "/ltc/payout/address/", nil, key, "")
		wallet, _ = r.JSON["address"].(string)
		return r.Code == http.StatusOK && wallet != "", fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})
	n.Must(nil, "sendtoaddress", wallet, json.Number("1"))
	mine := func(k int) {
		var to string
		n.Must(&to, "getnewaddress")
		n.Must(nil, "generatetoaddress", k, to)
	}
	mine(3)
	waitFor(t, 30*time.Second, "the payout balance credited", func() (bool, string) {
		r := a.do(t, http.MethodGet, "/ltc/payout/balance/", url.Values{}, key, "")
		b, _ := r.JSON["balance"].(string)
		return b == "1", fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})

	var start int64
	n.Must(&start, "getblockcount")
	var dest string
	n.Must(&dest, "getnewaddress")
	amount := decimal.RequireFromString("0.3")
	r := a.do(t, http.MethodPost, "/ltc/payout/request/bulk/process/", nil, key, fmt.Sprintf(`{"outputs": {%q: %q}}`, dest, amount.String()))
	info, _ := r.JSON["payout_info"].(map[string]any)
	if r.Code != http.StatusOK || info["status"] != "processing" {
		t.Fatalf("payout request: HTTP %d %s; want it queued (processing)", r.Code, r.Body)
	}
	payoutID := fmt.Sprint(info["id"])

	waitFor(t, 30*time.Second, "payhook killed after signing the payout", func() (bool, string) {
		var st, e, q string
		err := db.QueryRow(`SELECT status, error, coalesce(queued_at::text, '') FROM payouts WHERE id = $1`, payoutID).Scan(&st, &e, &q)
		return !a.alive(), fmt.Sprintf("payout %s %q queued %s (%v); outbounds %d", st, e, q, err, count(db, `SELECT count(*) FROM outbounds`))
	})
	if !strings.Contains(a.stderr.String(), "fault after-sign: SIGKILL") {
		t.Fatalf("payhook exited (%v), not by the fault:\n%s", a.err, tail(a.stderr.String(), 2000))
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the fault's marker: %v", err)
	}
	if c := count(db, `SELECT count(*) FROM outbounds`); c != 0 {
		t.Errorf("%d outgoing transactions recorded after the kill, want none", c)
	}
	var status string
	if err := db.QueryRow(`SELECT status FROM payouts WHERE id = $1`, payoutID).Scan(&status); err != nil || status != "processing" {
		t.Errorf("payout after the kill: %q (%v), want processing", status, err)
	}
	var mempool []string
	n.Must(&mempool, "getrawmempool")
	if len(mempool) != 0 {
		t.Errorf("the node's pool after the kill: %v, want nothing sent", mempool)
	}

	b := startPayhook(t, dsn, dir, recv, flags...)
	var txid string
	waitFor(t, 30*time.Second, "the payout done after the restart", func() (bool, string) {
		err := db.QueryRow(`SELECT status, txid FROM payouts WHERE id = $1`, payoutID).Scan(&status, &txid)
		return err == nil && status == "done", fmt.Sprintf("status %q txid %q (%v)", status, txid, err)
	})
	if strings.Contains(b.stderr.String(), "fault after-sign") {
		t.Error("the restarted payhook ran the fault")
	}
	var rows int
	var outTxid, state string
	if err := db.QueryRow(`SELECT count(*), max(txid), max(state) FROM outbounds`).Scan(&rows, &outTxid, &state); err != nil || rows != 1 || outTxid != txid {
		t.Errorf("outgoing transactions: %d, txid %s, state %s (%v); want the payout's one, %s", rows, outTxid, state, err, txid)
	}
	n.Must(&mempool, "getrawmempool")
	if len(mempool) != 1 || mempool[0] != txid {
		t.Errorf("the node's pool %v, want exactly the payout %s", mempool, txid)
	}
	mine(1)

	// The destination received the amount once, in one transaction.
	var received json.Number
	n.Must(&received, "getreceivedbyaddress", dest, 1)
	if got, _ := decimal.NewFromString(received.String()); !got.Equal(amount) {
		t.Errorf("the destination received %s, want %s once", received, amount)
	}
	var listed []struct {
		Address string   `json:"address"`
		TxIDs   []string `json:"txids"`
	}
	n.Must(&listed, "listreceivedbyaddress", 1, false, false, dest)
	if len(listed) != 1 || len(listed[0].TxIDs) != 1 || listed[0].TxIDs[0] != txid {
		t.Errorf("listreceivedbyaddress %s: %+v, want the payout %s alone", dest, listed, txid)
	}

	// Exactly one transaction, in the blocks since the request or in the
	// pool, spends any of the payout's inputs: the payout itself, mined.
	type vin struct {
		TxID string `json:"txid"`
		Vout int    `json:"vout"`
	}
	var ptx struct {
		Confirmations int64 `json:"confirmations"`
		Vin           []vin `json:"vin"`
	}
	n.Must(&ptx, "getrawtransaction", txid, true)
	if ptx.Confirmations < 1 || len(ptx.Vin) == 0 {
		t.Fatalf("payout %s: %d confirmations, %d inputs; want it mined", txid, ptx.Confirmations, len(ptx.Vin))
	}
	inputs := map[vin]bool{}
	for _, in := range ptx.Vin {
		inputs[in] = true
	}
	spenders := map[string]bool{}
	check := func(id string, vins []vin) {
		for _, in := range vins {
			if inputs[in] {
				spenders[id] = true
			}
		}
	}
	var tip int64
	n.Must(&tip, "getblockcount")
	for h := start + 1; h <= tip; h++ {
		var hash string
		n.Must(&hash, "getblockhash", h)
		var blk struct {
			Tx []struct {
				TxID string `json:"txid"`
				Vin  []vin  `json:"vin"`
			} `json:"tx"`
		}
		n.Must(&blk, "getblock", hash, 2)
		for _, tx := range blk.Tx {
			check(tx.TxID, tx.Vin)
		}
	}
	n.Must(&mempool, "getrawmempool")
	for _, id := range mempool {
		var tx struct {
			Vin []vin `json:"vin"`
		}
		n.Must(&tx, "getrawtransaction", id, true)
		check(id, tx.Vin)
	}
	if len(spenders) != 1 || !spenders[txid] {
		t.Errorf("transactions spending the payout's inputs: %v; want the payout %s alone", spenders, txid)
	}
}
