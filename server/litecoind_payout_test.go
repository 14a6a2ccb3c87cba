package server_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"

	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// balance reads the project's payout balance of ltc.
func (e *ltcEnv) balance(t *testing.T, key string) decimal.Decimal {
	t.Helper()
	r := e.in.Get(t, "/ltc/payout/balance/", nil, key)
	wantStatus(t, r, 200)
	return decimal.RequireFromString(r.JSON["balance"].(string))
}

// TestLitecoindPayout: on litecoind regtest, held funds on several
// addresses (the payout wallet and two addresses without forwarding) fund
// a payout of twenty requests; its one transaction, accepted and mined by
// the node, pays every output exactly and returns the change to the payout
// wallet; once the change confirms, the balance has fallen by exactly the
// payout's total with fees. Two payouts processed at once, each affordable
// alone and not together, never spend the same balance: one is sent, the
// other is refused and records nothing.
func TestLitecoindPayout(t *testing.T) {
	t.Parallel()
	ms := newMerchantSink(t)
	e := newLTCEnv(t, store.Postgres, func(c *server.Config) {
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(ms.URL+"/merchant", servertest.A, servertest.B)...)
	})
	key := e.in.KeyA
	pr, err := e.in.Server.DB().Client.Project.Get(t.Context(), e.in.ProjectA)
	if err != nil {
		t.Fatal(err)
	}
	ms.secrets = []string{pr.IpnSecret}
	if err := project.SetPayoutNotify(t.Context(), e.in.Server.DB().Client, nil, e.in.ProjectA, ms.URL+"/merchant", false, clock.Now()); err != nil {
		t.Fatal(err)
	}
	r := e.in.Get(t, "/ltc/payout/address/", nil, key)
	wantStatus(t, r, 200)
	wallet := r.JSON["address"].(string)
	if !strings.HasPrefix(wallet, "rltc1q") {
		t.Fatalf("payout wallet %s is not a regtest address", wallet)
	}
	fund := map[string]string{wallet: "1.0"}
	for i, v := range []string{"0.7", "0.5"} {
		c := e.in.Get(t, "/ltc/create/", map[string][]string{"callback": {fmt.Sprintf("%s/hook?held=%d", e.sink.URL, i)}}, key)
		wantStatus(t, c, 200)
		fund[c.JSON["address_in"].(string)] = v
	}
	for a, v := range fund {
		e.n.Must(nil, "sendtoaddress", a, json.Number(v))
	}
	for range 3 {
		e.step(t, 1)
	}
	if b := e.balance(t, key); !b.Equal(decimal.RequireFromString("2.2")) {
		t.Fatalf("balance %s, want 2.2 (the wallet and two held addresses)", b)
	}

	// Twenty requests, one payout, one transaction.
	outputs := map[string]string{}
	for range 20 {
		var a string
		e.n.Must(&a, "getnewaddress")
		outputs[a] = "0.05"
	}
	body, _ := json.Marshal(map[string]any{"outputs": outputs})
	before := e.balance(t, key)
	r = e.postKey(t, "/ltc/payout/request/bulk/process/", string(body), key)
	wantStatus(t, r, 200)
	info := r.JSON["payout_info"].(map[string]any)
	if info["status"] != "done" || info["total_requested"] != "1" || len(info["requests"].(map[string]any)) != 20 {
		t.Fatalf("payout %s", r.Body)
	}
	txid := info["txid"].(string)
	withFee := decimal.RequireFromString(info["total_with_fee"].(string))
	var tx struct {
		Vin  []json.RawMessage `json:"vin"`
		Vout []struct {
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Address   string   `json:"address"`
				Addresses []string `json:"addresses"` // litecoind 0.21
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	e.n.Must(&tx, "getrawtransaction", txid, true)
	paid := map[string]decimal.Decimal{}
	for _, o := range tx.Vout {
		v, _ := decimal.NewFromString(o.Value.String())
		to := o.ScriptPubKey.Address
		if len(o.ScriptPubKey.Addresses) == 1 {
			to = o.ScriptPubKey.Addresses[0]
		}
		paid[to] = paid[to].Add(v)
	}
	for a := range outputs {
		if !paid[a].Equal(decimal.RequireFromString("0.05")) {
			t.Errorf("the payout pays %s %s, want 0.05", a, paid[a])
		}
	}
	if len(tx.Vout) != 21 || paid[wallet].IsZero() {
		t.Errorf("the payout has %d outputs (change %s): want the 20 requests and the change to the wallet", len(tx.Vout), paid[wallet])
	}
	if len(tx.Vin) != 2 {
		t.Errorf("the payout spends %d outputs, want 2 (the wallet's 1.0 and a held 0.7)", len(tx.Vin))
	}
	for range 3 {
		e.step(t, 1)
	}
	// The payout webhook (a GET, as the project chose), signed, with the
	// transaction's hash.
	hooks, errs := ms.take()
	if len(errs) > 0 || len(hooks) != 1 || hooks[0].method != "GET" || hooks[0].event != "payout.done" ||
		hooks[0].form.Get("txid") != txid || hooks[0].form.Get("total_with_fee") != withFee.String() {
		t.Errorf("payout webhooks %+v, errors %v; want one GET payout.done with txid %s", hooks, errs, txid)
	}
	var st map[string]any
	e.n.Must(&st, "getrawtransaction", txid, true)
	if c, _ := st["confirmations"].(json.Number).Int64(); c < 1 {
		t.Fatalf("the payout %s is not mined", txid)
	}
	after := e.balance(t, key)
	if !before.Sub(after).Equal(withFee) {
		t.Errorf("the balance fell from %s to %s, by %s; want by total_with_fee %s", before, after, before.Sub(after), withFee)
	}
	if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountPayout); !got.Equal(decimal.RequireFromString("1").Shift(e.tk.Decimals)) {
		t.Errorf("journal: paid out %s base units, want 1 ltc", got)
	}

	// Two payouts at once, each affordable alone (0.7 and its fee from
	// about 1.2), not together.
	var ids []string
	for range 2 {
		var a string
		e.n.Must(&a, "getnewaddress")
		c := e.postKey(t, "/ltc/payout/request/bulk/", fmt.Sprintf(`{"outputs": {%q: "0.7"}}`, a), key)
		wantStatus(t, c, 200)
		p := e.postForm(t, "/payout/create/", map[string][]string{"request_ids": {fmt.Sprint(c.JSON["request_ids"].([]any)[0])}}, key)
		wantStatus(t, p, 200)
		ids = append(ids, fmt.Sprint(p.JSON["payout_info"].(map[string]any)["id"]))
	}
	var wg sync.WaitGroup
	results := make([]servertest.Response, 2)
	for i, id := range ids {
		wg.Go(func() { results[i] = e.postForm(t, "/payout/process/", map[string][]string{"payout_id": {id}}, key) })
	}
	wg.Wait()
	var sent, refused int
	for _, res := range results {
		switch {
		case res.Code == 200 && res.JSON["payout_info"].(map[string]any)["status"] == "done":
			sent++
		case res.Code == 400 && strings.Contains(fmt.Sprint(res.JSON["error"]), "balance is"):
			refused++
		default:
			t.Errorf("concurrent process: HTTP %d %s", res.Code, res.Body)
		}
	}
	if sent != 1 || refused != 1 {
		t.Fatalf("concurrent payouts: %d sent, %d refused; want one of each", sent, refused)
	}
	var mempool []string
	e.n.Must(&mempool, "getrawmempool")
	if len(mempool) != 1 {
		t.Errorf("the node's mempool holds %d transactions, want the one payout", len(mempool))
	}
}

func (e *ltcEnv) postKey(t *testing.T, path, body, key string) servertest.Response {
	t.Helper()
	return (&devEnv{in: e.in}).postKey(t, path, body, key)
}

func (e *ltcEnv) postForm(t *testing.T, path string, form map[string][]string, key string) servertest.Response {
	t.Helper()
	return (&devEnv{in: e.in}).postForm(t, path, form, key)
}

// TestLitecoindPayoutCrashAfterRecord: the instance stops (a crash the
// engine's fault hook stands for) after the payout's signed transaction is
// recorded and before it reaches the node. Nothing was sent and the payout
// is processing; the next poll of the chain resumes it and sends exactly
// the recorded bytes, once: the node holds that one transaction, and the
// payout is done with its hash.
func TestLitecoindPayoutCrashAfterRecord(t *testing.T) {
	t.Parallel()
	var crashed atomic.Bool
	e := newLTCEnv(t, store.SQLite, func(c *server.Config) {
		c.OutboundFaults.AfterRecord = func() error {
			if crashed.CompareAndSwap(false, true) {
				return errors.New("crash after the bytes are recorded")
			}
			return nil
		}
	})
	key := e.in.KeyA
	r := e.in.Get(t, "/ltc/payout/address/", nil, key)
	wantStatus(t, r, 200)
	e.n.Must(nil, "sendtoaddress", r.JSON["address"].(string), json.Number("1"))
	for range 3 {
		e.step(t, 1)
	}
	var dest string
	e.n.Must(&dest, "getnewaddress")
	r = e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.3"}}`, dest), key)
	wantStatus(t, r, 200)
	if st := r.JSON["payout_info"].(map[string]any)["status"]; st != "processing" || !crashed.Load() {
		t.Fatalf("payout %s after the crash, want processing", r.Body)
	}
	ctx := t.Context()
	o, err := e.in.Server.DB().Client.Outbound.Query().Only(ctx)
	if err != nil || o.SignedTx == nil || o.Txid == "" || o.Sends != 0 {
		t.Fatalf("recorded transaction %+v (%v): want its bytes recorded and nothing sent", o, err)
	}
	var mempool []string
	e.n.Must(&mempool, "getrawmempool")
	if len(mempool) != 0 {
		t.Fatalf("the node has %v before the resume", mempool)
	}
	e.step(t, 0) // the poll resumes what a crash left signed
	e.n.Must(&mempool, "getrawmempool")
	if len(mempool) != 1 || mempool[0] != o.Txid {
		t.Fatalf("the node's mempool %v, want exactly the recorded %s", mempool, o.Txid)
	}
	var raw string
	e.n.Must(&raw, "getrawtransaction", o.Txid)
	if raw != hex.EncodeToString(*o.SignedTx) {
		t.Error("the node holds other bytes than those recorded")
	}
	id := fmt.Sprint(r.JSON["payout_info"].(map[string]any)["id"])
	st := e.postForm(t, "/payout/status/", map[string][]string{"payout_id": {id}}, key)
	if info := st.JSON["payout_info"].(map[string]any); info["status"] != "done" || info["txid"] != o.Txid {
		t.Errorf("payout after the resume: %s", st.Body)
	}
	e.step(t, 1)
	e.n.Must(&mempool, "getrawmempool")
	if n, _ := e.in.Server.DB().Client.Outbound.Query().Count(ctx); len(mempool) != 0 || n != 1 {
		t.Errorf("after a block: mempool %v, %d transactions recorded; want the one payout mined", mempool, n)
	}
}
