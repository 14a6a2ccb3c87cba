//go:build faults

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

// TestFaultTwoInstancesLitecoind: two payhook processes on one PostgreSQL
// and one litecoind. One instance watches and forwards ltc (the lease);
// kill -9 it mid-stream, after the payment's pending callback and before
// its confirmation: the other takes over within seconds, from the durable
// cursor, and the payment is confirmed, credited and forwarded exactly
// once, every callback stored and acknowledged.
func TestFaultTwoInstancesLitecoind(t *testing.T) {
	cl := newLTCCluster(t, 110)
	a := cl.start(t)
	key := a.apiKey(t)
	b := cl.start(t)
	n, db, recv := cl.n, cl.db, cl.recv

	var wallet string
	n.Must(&wallet, "getnewaddress")
	var created apiResult
	waitFor(t, 20*time.Second, "an ltc address (once ltc's node was first read)", func() (bool, string) {
		created = a.do(t, http.MethodGet, "/ltc/create/", url.Values{"callback": {recv.endpoint()}, "address": {wallet}, "confirmations": {"3"}, "json": {"1"}}, key, "")
		return created.Code == 200, fmt.Sprintf("HTTP %d %s", created.Code, created.Body)
	})
	addrIn := created.JSON["address_in"].(string)
	var txid string
	n.Must(&txid, "sendtoaddress", addrIn, json.Number("0.5"))
	mine := func(k int) { cl.mine(t, k) }
	mine(1)
	waitFor(t, 20*time.Second, "the pending callback stored", func() (bool, string) {
		c := count(db, `SELECT count(*) FROM notifications`)
		return c >= 1, fmt.Sprintf("%d notifications", c)
	})

	leader, survivor := a, b
	if !watching(t, a) {
		leader, survivor = b, a
	}
	if !watching(t, leader) || watching(t, survivor) {
		t.Fatal("not exactly one instance watches ltc")
	}
	leader.kill9(t)
	killed := clock.Now()
	mine(2) // depth 3: confirmed, credited, forwarded — by the survivor
	waitFor(t, 30*time.Second, "the survivor forwards the payment", func() (bool, string) {
		c := count(db, `SELECT count(*) FROM forwards WHERE status = 'done'`)
		return c == 1, fmt.Sprintf("%d forwards done", c)
	})
	t.Logf("the survivor took over and forwarded %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	if !watching(t, survivor) {
		t.Error("the survivor does not report itself watching ltc")
	}
	mine(1)
	waitAllAcknowledged(t, db, recv, 3, takeoverBound())
	assertNothingLost(t, db, recv)

	if c := count(db, `SELECT count(*) FROM payments`); c != 1 {
		t.Errorf("%d payments, want 1", c)
	}
	var status, txidOut string
	if err := db.QueryRow(`SELECT status, txid_out FROM payments`).Scan(&status, &txidOut); err != nil || status != "completed" || txidOut == "" {
		t.Fatalf("payment %s %s (%v)", status, txidOut, err)
	}
	// The forward is on chain and spends the payment's output.
	var tx struct {
		Confirmations int64 `json:"confirmations"`
		Vin           []struct {
			TxID string `json:"txid"`
		} `json:"vin"`
	}
	n.Must(&tx, "getrawtransaction", txidOut, true)
	if tx.Confirmations < 1 || len(tx.Vin) != 1 || tx.Vin[0].TxID != txid {
		t.Errorf("forward %s: %d confirmations, inputs %+v; want mined, spending %s", txidOut, tx.Confirmations, tx.Vin, txid)
	}
	var events []string
	rows, err := db.Query(`SELECT event FROM notifications ORDER BY id`)
	if err == nil {
		for rows.Next() {
			var e string
			_ = rows.Scan(&e)
			events = append(events, e)
		}
		rows.Close()
	}
	if len(events) != 3 {
		t.Errorf("notifications %v, want pending, confirmed and completed once each", events)
	}
}

// watching reports whether p says it watches ltc (/healthz's details, on
// its operator listener).
func watching(t *testing.T, p *payhookProc) bool {
	t.Helper()
	if p.operator == "" {
		t.Fatal("payhook runs without --operator-listen")
	}
	op := *p
	op.http = p.operator
	r := op.do(t, http.MethodGet, "/healthz", nil, "", "")
	chs, _ := r.JSON["chains"].(map[string]any)
	ltc, _ := chs["ltc"].(map[string]any)
	w, _ := ltc["watching"].(bool)
	return w
}

func count(db *sql.DB, q string) int {
	var n int
	_ = db.QueryRow(q).Scan(&n)
	return n
}
