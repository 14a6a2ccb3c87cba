package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// Reorganisations deeper than the confirmations a low-level address asked
// for, after its confirmed and completed callbacks were acknowledged and its
// forward was mined (issue 27). What payhook does is the documented
// behaviour (docs/callbacks.md, "After a reorganisation"): nothing more is
// sent to the merchant, the payment is marked reorged (its note in the logs
// says so) and the journal moves its value to loss, and back if it returns;
// no forward or payout is ever built a second time.

// deepReorgDepth is how many blocks the reorganisations replace: deeper
// than the one confirmation the addresses ask for.
const deepReorgDepth = 3

// newLTCEnvLogged is newLTCEnv with the server's log kept in logs (what
// an operator sees).
func newLTCEnvLogged(t *testing.T, d store.Dialect, logs *syncBuffer) *ltcEnv {
	t.Helper()
	n := nodetest.StartLitecoind(t, 110)
	sink := newSink(t)
	in := servertest.StartLogged(t, d, slog.New(slog.NewTextHandler(logs, nil)), func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = map[string]string{"ltc": n.URL + "?network=regtest"}
		c.Chains.Prices = server.PricesTable
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(sink.URL+"/hook", servertest.A, servertest.B)
	})
	pub := in.Get(t, "/pubkey/", nil, in.KeyA).JSON["pubkey"].(string)
	resp, err := http.Post(sink.URL+"/pin", "text/plain", strings.NewReader(pub))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reg, _ := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	tk, _ := reg.Lookup("ltc")
	if err := in.Server.Watcher("ltc").PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &ltcEnv{n: n, in: in, sink: sink, tk: tk}
}

// forwarded is a low-level payment confirmed at one confirmation, called
// back (confirmed, completed, acknowledged) and forwarded, its forward
// mined and recorded landed.
type forwarded struct {
	created  servertest.Response
	wallet   string // the merchant's wallet (address_out)
	txid     string // the payment
	height   int64  // the block that first included the payment
	payment  *entdb.Payment
	outbound *entdb.Outbound
}

func (e *ltcEnv) payAndForward(t *testing.T, amount string) forwarded {
	t.Helper()
	var f forwarded
	e.n.Must(&f.wallet, "getnewaddress")
	f.created = e.in.Get(t, "/ltc/create/", url.Values{"callback": {e.sink.URL + "/hook"}, "address": {f.wallet}, "confirmations": {"1"}, "json": {"1"}}, e.in.KeyA)
	wantStatus(t, f.created, 200)
	e.n.Must(&f.txid, "sendtoaddress", f.created.JSON["address_in"].(string), json.Number(amount))
	e.step(t, 1) // confirmed at one confirmation; forwarded; completed
	e.n.Must(&f.height, "getblockcount")
	e.step(t, 1) // the forward is mined
	e.step(t, 1) // and recorded landed
	if got := strings.Join(e.sink.statuses(), ","); got != "confirmed,completed" {
		t.Fatalf("callbacks before the reorganisation: %s, want confirmed,completed", got)
	}
	f.payment = e.payment(t, f.txid)
	f.outbound = e.onlyOutbound(t, entoutbound.PurposeForward)
	if f.payment.Status != entpayment.StatusCompleted || f.payment.TxidOut != f.outbound.Txid || f.outbound.State != entoutbound.StateLanded {
		t.Fatalf("before the reorganisation: payment %s txid_out %s, forward %s %s; want completed, forwarded by a landed transaction",
			f.payment.Status, f.payment.TxidOut, f.outbound.Txid, f.outbound.State)
	}
	if e.confirmations(t, f.outbound.Txid) < 1 {
		t.Fatalf("the forward %s is not mined", f.outbound.Txid)
	}
	return f
}

// logged is what the merchant's logs (GET /ltc/logs/) show of f's
// payment: its status and its note.
func (e *ltcEnv) logged(t *testing.T, f forwarded) (status, note string) {
	t.Helper()
	r := e.in.Get(t, "/ltc/logs/", url.Values{"callback": {f.created.JSON["callback_url"].(string)}}, e.in.KeyA)
	wantStatus(t, r, 200)
	cbs, _ := r.JSON["callbacks"].([]any)
	for _, c := range cbs {
		if m, _ := c.(map[string]any); m["txid_in"] == f.txid {
			return fmt.Sprint(m["payment_status"]), fmt.Sprint(m["note"])
		}
	}
	t.Fatalf("the logs do not list the payment %s: %s", f.txid, r.Body)
	return "", ""
}

// reversals are the amounts of the accounting export's reversal rows
// (GET /ledger/export/, what the merchant's books see) of payment txid, in
// order.
func (e *ltcEnv) reversals(t *testing.T, txid string) []string {
	t.Helper()
	now := clock.Now().UTC()
	r := e.in.Get(t, "/ledger/export/", url.Values{"from": {now.AddDate(0, 0, -1).Format("2006-01-02")}, "to": {now.AddDate(0, 0, 2).Format("2006-01-02")}, "format": {"json"}}, e.in.KeyA)
	if r.Code != 200 {
		t.Fatalf("export: HTTP %d %s", r.Code, r.Body)
	}
	var rows []map[string]string
	if err := json.Unmarshal(r.Body, &rows); err != nil {
		t.Fatalf("export: %v: %s", err, r.Body)
	}
	var out []string
	for _, row := range rows {
		if row["kind"] == "reversal" && row["txid"] == txid {
			out = append(out, row["amount"])
		}
	}
	return out
}

// payment is the recorded payment of txid.
func (e *ltcEnv) payment(t *testing.T, txid string) *entdb.Payment {
	t.Helper()
	p, err := e.in.Server.DB().Client.Payment.Query().Where(entpayment.TxidIn(txid)).Only(context.Background())
	if err != nil {
		t.Fatalf("payment %s: %v", txid, err)
	}
	return p
}

// onlyOutbound is the one outgoing transaction of purpose p: a second one
// would be a second forward or payout.
func (e *ltcEnv) onlyOutbound(t *testing.T, p entoutbound.Purpose) *entdb.Outbound {
	t.Helper()
	os, err := e.in.Server.DB().Client.Outbound.Query().Where(entoutbound.PurposeEQ(p)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(os) != 1 {
		for _, o := range os {
			t.Logf("outbound %s %s %s", o.Key, o.Txid, o.State)
		}
		t.Fatalf("%d outgoing transactions of purpose %s, want exactly one", len(os), p)
	}
	return os[0]
}

// confirmations is how deep txid is in the node's best chain: 0 in the
// mempool or only in a block off the best chain (the node's transaction
// index remembers it), -1 unknown.
func (e *ltcEnv) confirmations(t *testing.T, txid string) int64 {
	t.Helper()
	var tx struct {
		Confirmations int64 `json:"confirmations"`
	}
	if err := e.n.Call(&tx, "getrawtransaction", txid, true); err != nil {
		return -1
	}
	return tx.Confirmations
}

// reorganise takes the block at height and every block above it out of
// the node's best chain; the transactions they held wait in the mempool
// (those the new chain conflicts with are evicted). fork, when set, is
// called once the blocks are out of the chain and returns the raw
// transactions the first replacement block holds. The replacement chain is
// one block longer than the chain it replaces and holds nothing else: the
// payment is out of the chain when the server polls.
func (e *ltcEnv) reorganise(t *testing.T, height int64, fork func() []string) {
	t.Helper()
	var tip int64
	e.n.Must(&tip, "getblockcount")
	var hash string
	e.n.Must(&hash, "getblockhash", height)
	e.n.Must(nil, "invalidateblock", hash)
	var a string
	e.n.Must(&a, "getnewaddress")
	include := []string{}
	if fork != nil {
		include = fork()
	}
	e.n.Must(nil, "generateblock", a, include)
	for h := height + 1; h <= tip+1; h++ {
		e.n.Must(nil, "generateblock", a, []string{})
	}
	var now int64
	e.n.Must(&now, "getblockcount")
	if now != tip+1 {
		t.Fatalf("the new chain's tip is at %d, want %d", now, tip+1)
	}
}

// doubleSpend returns a fork for reorganise: a transaction that spends
// txid's first input to the node's own wallet, signed once txid's block is
// out of the chain (the input is unspent there). Mined in the fork, it
// evicts txid and whatever spends it from the mempool.
func (e *ltcEnv) doubleSpend(t *testing.T, txid string) func() []string {
	t.Helper()
	var tx struct {
		Vin []struct {
			Txid string `json:"txid"`
			Vout int    `json:"vout"`
		} `json:"vin"`
	}
	e.n.Must(&tx, "getrawtransaction", txid, true)
	in := tx.Vin[0]
	var prev struct {
		Vout []struct {
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Hex string `json:"hex"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	e.n.Must(&prev, "getrawtransaction", in.Txid, true)
	value := decimal.RequireFromString(prev.Vout[in.Vout].Value.String())
	var back string
	e.n.Must(&back, "getnewaddress")
	return func() []string {
		var raw string
		e.n.Must(&raw, "createrawtransaction", []map[string]any{{"txid": in.Txid, "vout": in.Vout}},
			map[string]json.Number{back: json.Number(value.Sub(decimal.RequireFromString("0.001")).String())})
		var signed struct {
			Hex      string `json:"hex"`
			Complete bool   `json:"complete"`
		}
		e.n.Must(&signed, "signrawtransactionwithwallet", raw, []map[string]any{{"txid": in.Txid, "vout": in.Vout,
			"scriptPubKey": prev.Vout[in.Vout].ScriptPubKey.Hex, "amount": json.Number(value.String())}})
		if !signed.Complete {
			t.Fatal("the double spend could not be signed")
		}
		return []string{signed.Hex}
	}
}

// events counts the journal's events of kind ev about payment id.
func (e *ltcEnv) events(t *testing.T, id int64, ev entledger.Event) int {
	t.Helper()
	ls, err := e.in.Server.DB().Client.LedgerEntry.Query().Where(entledger.PaymentID(id), entledger.EventEQ(ev)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, l := range ls {
		keys[l.Key] = true
	}
	return len(keys)
}

// balanced checks that the journal's lines of every ticker sum to zero.
func (e *ltcEnv) balanced(t *testing.T) {
	t.Helper()
	ls, err := e.in.Server.DB().Client.LedgerEntry.Query().All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := decimal.Zero
	for _, l := range ls {
		sum = sum.Add(l.Amount)
	}
	if !sum.IsZero() {
		t.Errorf("the journal's lines sum to %s, want 0", sum)
	}
}

// mempool is what the node's mempool holds.
func (e *ltcEnv) mempool(t *testing.T) []string {
	t.Helper()
	var txs []string
	e.n.Must(&txs, "getrawmempool")
	return txs
}

// TestLitecoindDeepReorgPaymentReturns: a payment confirmed at one
// confirmation, called back (confirmed, completed) and forwarded, leaves the
// chain in a reorganisation three blocks deep, its forward with it: the
// payment is marked reorged (the logs' note says so) and its value is
// journaled as a loss; nothing is sent to the merchant. The payment and its
// forward come back in the new chain (they waited in the node's mempool):
// the payment is restored, the same forward transaction is mined again,
// no second forward is built, the merchant's wallet receives the forward
// once and the merchant has had exactly one confirmed and one completed
// callback.
func TestLitecoindDeepReorgPaymentReturns(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := newLTCEnvLogged(t, store.SQLite, logs)
	ctx := context.Background()
	f := e.payAndForward(t, "0.5")
	units := f.payment.ValueCoin.Shift(e.tk.Decimals)

	e.reorganise(t, f.height, nil)
	if m := e.mempool(t); len(m) != 2 || !slices.Contains(m, f.txid) || !slices.Contains(m, f.outbound.Txid) {
		t.Fatalf("after the reorganisation the mempool holds %v, want the payment %s and its forward %s", m, f.txid, f.outbound.Txid)
	}
	e.step(t, 0)
	e.step(t, 0) // a second poll changes nothing
	p := e.payment(t, f.txid)
	if !p.Reorged || p.ReorgCount != 1 || p.Status != entpayment.StatusCompleted || p.TxidOut != f.outbound.Txid {
		t.Errorf("out of the chain: payment reorged=%v count=%d %s txid_out %s; want reorged once, still completed by %s",
			p.Reorged, p.ReorgCount, p.Status, p.TxidOut, f.outbound.Txid)
	}
	if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountLoss); !got.Equal(units.Neg()) {
		t.Errorf("journal out of the chain: loss %s base units, want -%s", got, units)
	}
	if status, note := e.logged(t, f); status != "completed" || !strings.HasSuffix(note, "left the chain after it was credited (reorganisation); recorded, not reversed") {
		t.Errorf("the merchant's logs out of the chain: %s, note %q", status, note)
	}
	if l := logs.String(); !strings.Contains(l, `level=WARN msg="a credited payment left the chain (reorganisation)`) || !strings.Contains(l, "txid="+f.txid) {
		t.Errorf("the operator's log does not name the payment that left the chain:\n%s", l)
	}

	// Mined again, both: the payment's block is in the chain once more.
	e.step(t, 1)
	e.step(t, 1)
	e.step(t, 1)
	p = e.payment(t, f.txid)
	if p.Reorged || p.ReorgCount != 1 || p.Status != entpayment.StatusCompleted || p.TxidOut != f.outbound.Txid {
		t.Errorf("back in the chain: payment reorged=%v count=%d %s txid_out %s; want not reorged, completed by %s",
			p.Reorged, p.ReorgCount, p.Status, p.TxidOut, f.outbound.Txid)
	}
	if status, note := e.logged(t, f); status != "completed" || !strings.HasSuffix(note, "left the chain after it was credited (reorganisation); recorded, not reversed; back in the chain") {
		t.Errorf("the merchant's logs back in the chain: %s, note %q", status, note)
	}
	if got := strings.Join(e.reversals(t, f.txid), ","); got != "-0.5,0.5" {
		t.Errorf("the accounting export's reversal rows: %s, want -0.5 then 0.5", got)
	}
	if l := logs.String(); !strings.Contains(l, `level=INFO msg="a reorganised payment is back in the chain; its loss is restored"`) {
		t.Errorf("the operator's log does not say the payment is back:\n%s", l)
	}
	if n, r := e.events(t, p.ID, entledger.EventReversal), e.events(t, p.ID, entledger.EventRestore); n != 1 || r != 1 {
		t.Errorf("journal: %d reversals and %d restores, want one of each", n, r)
	}
	if n := e.events(t, p.ID, entledger.EventCredit); n != 1 {
		t.Errorf("journal: %d credits, want one", n)
	}
	if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountLoss); !got.IsZero() {
		t.Errorf("journal back in the chain: loss %s, want 0", got)
	}
	e.balanced(t)
	o := e.onlyOutbound(t, entoutbound.PurposeForward)
	if o.Txid != f.outbound.Txid || o.State != entoutbound.StateLanded {
		t.Errorf("the forward after the reorganisation: %s %s; want the same transaction %s, landed", o.Txid, o.State, f.outbound.Txid)
	}
	if c := e.confirmations(t, f.outbound.Txid); c < 1 {
		t.Errorf("the forward %s is not mined again (%d)", f.outbound.Txid, c)
	}
	var got json.Number
	e.n.Must(&got, "getreceivedbyaddress", f.wallet, 1)
	if !decimal.RequireFromString(got.String()).Equal(*p.ValueForwardedCoin) {
		t.Errorf("the merchant's wallet received %s, want value_forwarded_coin %s once", got, p.ValueForwardedCoin)
	}
	if m := e.mempool(t); len(m) != 0 {
		t.Errorf("the mempool holds %v, want nothing (no second forward)", m)
	}
	if got := strings.Join(e.sink.statuses(), ","); got != "confirmed,completed" {
		t.Errorf("callbacks: %s, want confirmed,completed (nothing after the reorganisation)", got)
	}
	if n, err := e.in.Server.DB().Client.Notification.Query().Count(ctx); err != nil || n != 2 {
		t.Errorf("%d notifications stored (%v), want the confirmed and completed callbacks only", n, err)
	}
	if errs := e.sink.errs; len(errs) > 0 {
		t.Errorf("signature failures: %v", errs)
	}
}

// TestLitecoindDeepReorgPaymentDoubleSpent: as above, but the new chain
// spends the payment's input elsewhere (a double spend mined in the fork):
// the payment and its forward are gone for good. The payment stays
// reorged, its value journaled as a loss once; the forward, whose input no
// longer exists, is neither sent again nor planned anew; nothing is
// credited twice and nothing is sent to the merchant.
func TestLitecoindDeepReorgPaymentDoubleSpent(t *testing.T) {
	t.Parallel()
	e := newLTCEnv(t, store.Postgres)
	ctx := context.Background()
	f := e.payAndForward(t, "0.5")
	units := f.payment.ValueCoin.Shift(e.tk.Decimals)

	e.reorganise(t, f.height, e.doubleSpend(t, f.txid))
	if c1, c2 := e.confirmations(t, f.txid), e.confirmations(t, f.outbound.Txid); c1 > 0 || c2 > 0 {
		t.Fatalf("after the double spend the payment (%d) or its forward (%d) is still in the chain", c1, c2)
	}
	if m := e.mempool(t); len(m) != 0 {
		t.Fatalf("the mempool holds %v after the double spend, want nothing", m)
	}

	for range 4 { // the payment is gone; more blocks change nothing
		e.step(t, 1)
	}
	p := e.payment(t, f.txid)
	if !p.Reorged || p.ReorgCount != 1 || p.Status != entpayment.StatusCompleted || p.TxidOut != f.outbound.Txid {
		t.Errorf("double spent: payment reorged=%v count=%d %s txid_out %s; want reorged once, completed by %s",
			p.Reorged, p.ReorgCount, p.Status, p.TxidOut, f.outbound.Txid)
	}
	if n, r := e.events(t, p.ID, entledger.EventReversal), e.events(t, p.ID, entledger.EventRestore); n != 1 || r != 0 {
		t.Errorf("journal: %d reversals and %d restores, want one reversal", n, r)
	}
	if n := e.events(t, p.ID, entledger.EventCredit); n != 1 {
		t.Errorf("journal: %d credits, want one", n)
	}
	if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountLoss); !got.Equal(units.Neg()) {
		t.Errorf("journal: loss %s base units, want -%s", got, units)
	}
	e.balanced(t)
	// Its block is gone: the rollback follows it again (sent). Its input
	// is spent by the double spend, so no node takes its recorded bytes
	// again, and nothing new is ever planned or signed for it.
	o := e.onlyOutbound(t, entoutbound.PurposeForward)
	if o.Txid != f.outbound.Txid || o.State != entoutbound.StateSent {
		t.Errorf("the forward after the double spend: %s %s; want the one transaction %s, followed again (sent)", o.Txid, o.State, f.outbound.Txid)
	}
	if m := e.mempool(t); len(m) != 0 {
		t.Errorf("the mempool holds %v, want nothing (the forward is never sent again)", m)
	}
	if c := e.confirmations(t, f.outbound.Txid); c > 0 {
		t.Errorf("the forward %s is in the chain (%d) though its input was double spent", f.outbound.Txid, c)
	}
	if got := strings.Join(e.sink.statuses(), ","); got != "confirmed,completed" {
		t.Errorf("callbacks: %s, want confirmed,completed (nothing after the reorganisation)", got)
	}
	if n, err := e.in.Server.DB().Client.Notification.Query().Count(ctx); err != nil || n != 2 {
		t.Errorf("%d notifications stored (%v), want the confirmed and completed callbacks only", n, err)
	}
	if status, note := e.logged(t, f); status != "completed" || !strings.HasSuffix(note, "left the chain after it was credited (reorganisation); recorded, not reversed") {
		t.Errorf("the merchant's logs after the double spend: %s, note %q", status, note)
	}
	if got := strings.Join(e.reversals(t, f.txid), ","); got != "-0.5" {
		t.Errorf("the accounting export's reversal rows: %s, want -0.5", got)
	}
}

// TestLitecoindDeepReorgPayout: a payout's transaction, sent and mined,
// leaves the chain in a reorganisation at least three blocks deep:
//
//   - in flight: mined, not yet seen landed (the engine's row is sent). It
//     waits in the node's mempool; the engine follows its own transaction
//     (the same bytes, sent again at most) until it is mined again.
//   - landed: seen landed, its change to the payout wallet credited. The
//     change leaves the chain with it (reversal) and comes back (restore)
//     when the same transaction is mined again.
//   - funding double spent: the payment that funded the payout wallet is
//     double spent in the fork, so the payout's transaction can never be
//     mined. The funding payment is reorged and journaled as a loss; the
//     engine never builds a second transaction (payhook does not pay the
//     payout again from other funds by itself: docs/decisions.md).
//
// In every case there is one payout transaction, one payout.done webhook,
// the destination is paid at most once, the journal balances.
func TestLitecoindDeepReorgPayout(t *testing.T) {
	t.Parallel()
	for _, v := range []struct {
		name        string
		landed      bool // followed to landed before the reorganisation
		doubleSpend bool // the wallet's funding payment is double spent in the fork
	}{
		{name: "in flight"},
		{name: "landed", landed: true},
		{name: "funding double spent", doubleSpend: true},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ms := newMerchantSink(t)
			e := newLTCEnv(t, store.Postgres, func(c *server.Config) {
				c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(ms.URL+"/merchant", servertest.A, servertest.B)...)
			})
			ctx := context.Background()
			key := e.in.KeyA
			pr, err := e.in.Server.DB().Client.Project.Get(ctx, e.in.ProjectA)
			if err != nil {
				t.Fatal(err)
			}
			ms.secrets = []string{pr.IpnSecret}
			if err := project.SetPayoutNotify(ctx, e.in.Server.DB().Client, nil, e.in.ProjectA, ms.URL+"/merchant", false, clock.Now()); err != nil {
				t.Fatal(err)
			}
			r := e.in.Get(t, "/ltc/payout/address/", nil, key)
			wantStatus(t, r, 200)
			wallet := r.JSON["address"].(string)
			var funding string
			e.n.Must(&funding, "sendtoaddress", wallet, json.Number("1.0"))
			e.step(t, 1)
			var fundedAt int64
			e.n.Must(&fundedAt, "getblockcount")
			e.step(t, 1)
			e.step(t, 1)
			if b := e.balance(t, key); !b.Equal(decimal.RequireFromString("1")) {
				t.Fatalf("balance %s, want 1 (the funded payout wallet)", b)
			}
			var dest string
			e.n.Must(&dest, "getnewaddress")
			r = e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.3"}}`, dest), key)
			wantStatus(t, r, 200)
			info := r.JSON["payout_info"].(map[string]any)
			if info["status"] != "done" {
				t.Fatalf("payout %s", r.Body)
			}
			txid := info["txid"].(string)

			var a string
			e.n.Must(&a, "getnewaddress")
			e.n.Must(nil, "generatetoaddress", 1, a)
			var height int64
			e.n.Must(&height, "getblockcount")
			e.n.Must(nil, "generatetoaddress", deepReorgDepth-1, a)
			if c := e.confirmations(t, txid); c != deepReorgDepth {
				t.Fatalf("the payout %s has %d confirmations, want %d", txid, c, deepReorgDepth)
			}
			want := entoutbound.StateSent
			if v.landed {
				e.step(t, 0)
				want = entoutbound.StateLanded
				if ps, err := e.in.Server.DB().Client.Payment.Query().Where(entpayment.TxidIn(txid)).All(ctx); err != nil || len(ps) != 1 {
					t.Fatalf("the payout's change: %d payments (%v), want one credited", len(ps), err)
				}
			}
			if o := e.onlyOutbound(t, entoutbound.PurposePayout); o.State != want {
				t.Fatalf("the payout before the reorganisation: %s, want %s", o.State, want)
			}

			var fork func() []string
			if v.doubleSpend {
				height = fundedAt
				fork = e.doubleSpend(t, funding)
			}
			e.reorganise(t, height, fork)
			switch c := e.confirmations(t, txid); {
			case v.doubleSpend && c > 0:
				t.Fatalf("after the double spend the payout has %d confirmations, want none (gone)", c)
			case !v.doubleSpend && c != 0:
				t.Fatalf("after the reorganisation the payout has %d confirmations, want 0 (in the mempool)", c)
			}
			e.step(t, 0)
			e.step(t, 0)
			// Out of the chain, a payout seen landed is followed again
			// (sent) until a block has it again.
			o := e.onlyOutbound(t, entoutbound.PurposePayout)
			if o.Txid != txid || o.State != entoutbound.StateSent {
				t.Errorf("the payout out of the chain: %s %s, want %s sent", o.Txid, o.State, txid)
			}
			wantPool := []string{txid}
			if v.doubleSpend {
				wantPool = nil
			}
			if m := e.mempool(t); strings.Join(m, ",") != strings.Join(wantPool, ",") {
				t.Errorf("the mempool holds %v, want %v", m, wantPool)
			}

			for range 3 {
				e.step(t, 1)
			}
			o = e.onlyOutbound(t, entoutbound.PurposePayout)
			if o.Txid != txid || (!v.doubleSpend && o.State != entoutbound.StateLanded) {
				t.Errorf("the payout after the reorganisation: %s %s, want %s landed", o.Txid, o.State, txid)
			}
			paid := decimal.RequireFromString("0.3")
			if v.doubleSpend {
				paid = decimal.Zero
			}
			var got json.Number
			e.n.Must(&got, "getreceivedbyaddress", dest, 1)
			if !decimal.RequireFromString(got.String()).Equal(paid) {
				t.Errorf("the destination received %s, want %s", got, paid)
			}
			if m := e.mempool(t); len(m) != 0 {
				t.Errorf("the mempool holds %v, want nothing (no second payout)", m)
			}
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountPayout); !got.Equal(decimal.RequireFromString("0.3").Shift(e.tk.Decimals)) {
				t.Errorf("journal: paid out %s base units, want 0.3 ltc once", got)
			}
			loss := decimal.Zero
			if v.doubleSpend {
				loss = decimal.RequireFromString("-1").Shift(e.tk.Decimals)
			}
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountLoss); !got.Equal(loss) {
				t.Errorf("journal: loss %s, want %s", got, loss)
			}
			e.balanced(t)
			hooks, errs := ms.take()
			var events []string
			for _, h := range hooks {
				events = append(events, h.event)
			}
			if len(errs) > 0 || strings.Join(events, ",") != "payout.done" || hooks[0].form.Get("txid") != txid {
				t.Errorf("payout webhooks %v (errors %v), want one payout.done with txid %s", events, errs, txid)
			}
			// The funding payment, and the payout's change to the wallet:
			// each credited once; reorged only if it is gone.
			ps, err := e.in.Server.DB().Client.Payment.Query().Where(entpayment.TxidInIn(funding, txid)).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				gone := v.doubleSpend && p.TxidIn == funding
				if p.Reorged != gone || e.events(t, p.ID, entledger.EventCredit) != 1 {
					t.Errorf("payment %s of %s: reorged=%v, %d credits; want credited once, reorged=%v",
						p.TxidIn, p.ValueCoin, p.Reorged, e.events(t, p.ID, entledger.EventCredit), gone)
				}
				var wantReorgs int64
				if gone || (v.landed && p.TxidIn == txid) {
					wantReorgs = 1
				}
				if p.ReorgCount != wantReorgs || int64(e.events(t, p.ID, entledger.EventReversal)) != wantReorgs {
					t.Errorf("payment %s: %d reorganisations, %d reversals; want %d", p.TxidIn, p.ReorgCount, e.events(t, p.ID, entledger.EventReversal), wantReorgs)
				}
			}
		})
	}
}
