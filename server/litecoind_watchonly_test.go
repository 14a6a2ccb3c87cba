package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/watchonly"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// merchantNodeWallet is the merchant's own wallet in the node: watch-only,
// holding the key payhook derives from, and scanning like a wallet with a
// gap limit (BIP 44): it watches every index up to gap past the last one
// that received anything, and widens as payments arrive.
type merchantNodeWallet struct {
	e        *ltcEnv
	name     string
	desc     string // with its checksum
	gap      int
	imported int // indexes 0 to imported-1 are watched
}

func (w *merchantNodeWallet) call(t *testing.T, out any, method string, params ...any) {
	t.Helper()
	if err := w.e.n.CallWallet(w.name, out, method, params...); err != nil {
		t.Fatalf("merchant wallet %s: %v", method, err)
	}
}

// importUpTo watches indexes 0 to end-1, rescanning the chain for them.
func (w *merchantNodeWallet) importUpTo(t *testing.T, end int) {
	t.Helper()
	var res []struct {
		Success bool           `json:"success"`
		Error   map[string]any `json:"error"`
	}
	w.call(t, &res, "importmulti", []map[string]any{{"desc": w.desc, "range": []int{0, end - 1}, "watchonly": true, "timestamp": 0}}, map[string]any{"rescan": true})
	if len(res) != 1 || !res[0].Success {
		t.Fatalf("importmulti: %+v", res)
	}
	w.imported = end
}

// scan is the wallet's gap-limit discovery: widen to gap past the last
// used index until nothing new is found. It returns the received amount of
// each address it watches.
func (w *merchantNodeWallet) scan(t *testing.T, addrs []string) map[string]decimal.Decimal {
	t.Helper()
	for {
		got := map[string]decimal.Decimal{}
		last := -1
		for i := 0; i < w.imported && i < len(addrs); i++ {
			var v json.Number
			w.call(t, &v, "getreceivedbyaddress", addrs[i], 0)
			d := decimal.RequireFromString(v.String())
			if d.IsPositive() {
				got[addrs[i]] = d
				last = i
			}
		}
		if last+1+w.gap <= w.imported {
			return got
		}
		w.importUpTo(t, last+1+w.gap)
	}
}

// TestLitecoindWatchOnly: a project whose ltc wallet is the merchant's key
// (a wpkh tpub descriptor) hands out exactly the addresses the node's
// deriveaddresses gives for that descriptor, in order; payments to them
// are notified confirmed and completed with nothing sent, and a
// watch-only wallet in the node that imports the descriptor sees every one
// of them in the merchant's own wallet. A payment past the merchant
// wallet's gap limit is found by payhook at once, reported as outrunning
// the gap limit, and found by the wallet once the addresses before it are
// used up to it.
func TestLitecoindWatchOnly(t *testing.T) {
	t.Parallel()
	e := newLTCEnv(t, store.SQLite)
	ctx := context.Background()

	// The merchant's hardware wallet: an account key of their seed, of
	// which payhook is given the public half.
	master, err := hdkeychain.NewMaster([]byte(strings.Repeat("ltcmerch", 4)), &chaincfg.TestNet3Params)
	if err != nil {
		t.Fatal(err)
	}
	mpub, _ := master.ECPubKey()
	acct := master
	for _, s := range []uint32{84, 1, 0} {
		if acct, err = acct.Derive(hdkeychain.HardenedKeyStart + s); err != nil {
			t.Fatal(err)
		}
	}
	tpub, _ := acct.Neuter()
	spec := fmt.Sprintf("wpkh([%x/84h/1h/0h]%s/0/*)", btcutil.Hash160(mpub.SerializeCompressed())[:4], tpub.String())
	key, err := watchonly.Parse(e.tk, spec)
	if err != nil {
		t.Fatal(err)
	}
	const gap = 20
	db := e.in.Server.DB().Client
	if _, err := project.SetWatchKey(ctx, db, e.in.ProjectA, project.WatchKeyParams{Ticker: e.tk, Key: key, GapLimit: gap}, clock.Now()); err != nil {
		t.Fatal(err)
	}

	// 32 addresses handed out: exactly the node's derivation, in order.
	const n = 32
	var addrs []string
	for i := range n {
		r := e.in.Get(t, "/ltc/create/", url.Values{"callback": {fmt.Sprintf("%s/hook?n=%d", e.sink.URL, i)}, "json": {"1"}, "confirmations": {"1"}}, e.in.KeyA)
		wantStatus(t, r, 200)
		addrs = append(addrs, r.JSON["address_in"].(string))
	}
	var derived []string
	e.n.Must(&derived, "deriveaddresses", key.Descriptor(), []int{0, n - 1})
	if strings.Join(derived, ",") != strings.Join(addrs, ",") {
		t.Fatalf("payhook handed out\n%v\nthe node derives\n%v", addrs, derived)
	}

	w := &merchantNodeWallet{e: e, name: "merchant", desc: key.Descriptor(), gap: gap}
	e.n.Must(nil, "createwallet", w.name, true) // no private keys
	w.importUpTo(t, gap)

	pay := func(i int, v string) string {
		t.Helper()
		var txid string
		e.n.Must(&txid, "sendtoaddress", addrs[i], json.Number(v))
		return txid
	}
	// Index 5, then index 30: 24 unused addresses before it, past the
	// wallet's gap of 20.
	pay(5, "0.1")
	pay(30, "0.2")
	e.step(t, 1)
	e.step(t, 0)
	completed := 0
	for _, s := range e.sink.statuses() {
		if s == "completed" {
			completed++
		}
	}
	if completed != 2 {
		t.Fatalf("callbacks %v: want both payments completed", e.sink.statuses())
	}
	if n, _ := db.Outbound.Query().Count(ctx); n > 0 {
		t.Fatalf("%d outgoing transactions: nothing may be sent from the merchant's key", n)
	}
	ps, err := db.Payment.Query().Where(entpayment.StatusEQ(entpayment.StatusCompleted)).All(ctx)
	if err != nil || len(ps) != 2 {
		t.Fatalf("completed payments %d, %v", len(ps), err)
	}
	for _, p := range ps {
		if !p.ValueForwardedCoin.Equal(p.ValueCoin) {
			t.Fatalf("payment %s: value_forwarded_coin %s, value_coin %s", p.TxidIn, p.ValueForwardedCoin, p.ValueCoin)
		}
	}
	report := func() project.WatchWallet {
		t.Helper()
		pr, err := project.Get(ctx, db, e.in.ProjectA)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := project.WatchWallets(ctx, db, pr)
		if err != nil || len(ws) != 1 {
			t.Fatalf("watch wallets %v, %v", ws, err)
		}
		return ws[0]
	}
	if r := report(); r.LongestGap != 24 || !r.Outrun() || r.LastUsed != 30 {
		t.Fatalf("report: longest gap %d, last used %d, outrun %v; want 24, 30, true", r.LongestGap, r.LastUsed, r.Outrun())
	}

	// The merchant's wallet, scanning its gap limit, sees index 5 but
	// not yet index 30.
	seen := w.scan(t, addrs)
	if !seen[addrs[5]].Equal(decimal.RequireFromString("0.1")) || seen[addrs[30]].IsPositive() {
		t.Fatalf("merchant wallet sees %v: want index 5 and not yet index 30", seen)
	}
	// A payment to index 12 uses the addresses up to within the gap of
	// index 30: the wallet finds it, and payhook's report is within the
	// gap limit again.
	pay(12, "0.3")
	e.step(t, 1)
	e.step(t, 0)
	seen = w.scan(t, addrs)
	for i, v := range map[int]string{5: "0.1", 12: "0.3", 30: "0.2"} {
		if !seen[addrs[i]].Equal(decimal.RequireFromString(v)) {
			t.Fatalf("merchant wallet sees %v: want index %d with %s", seen, i, v)
		}
	}
	if r := report(); r.LongestGap != 17 || r.Outrun() {
		t.Fatalf("report after index 12: longest gap %d, outrun %v; want 17, false", r.LongestGap, r.Outrun())
	}
	var unspent []struct {
		Address string `json:"address"`
	}
	w.call(t, &unspent, "listunspent", 0)
	if len(unspent) != 3 {
		t.Fatalf("the merchant's wallet holds %d outputs, want the 3 payments: %+v", len(unspent), unspent)
	}
	if errs := e.sink.errs; len(errs) > 0 {
		t.Errorf("signature failures: %v", errs)
	}
}

// TestLitecoindPSBTPayout: a payout of a project whose ltc wallet is the
// merchant's key is prepared as a PSBT from the payments payhook received
// on the key's addresses; the merchant's wallet in the node (the private
// descriptor: their hardware wallet) signs it with walletprocesspsbt;
// payhook refuses an unsigned or edited one, accepts the signed one,
// broadcasts it, and the payout is done: the destination is paid exactly,
// the change goes to the key's /1/0, the journal records the payout from
// the merchant's wallet and the fee owed. A second upload is 409.
func TestLitecoindPSBTPayout(t *testing.T) {
	t.Parallel()
	e := newLTCEnv(t, store.SQLite)
	ctx := context.Background()
	spec := e.n.MerchantWallet(t, "merchant", []byte(strings.Repeat("psbtmerc", 4)))
	key, err := watchonly.Parse(e.tk, spec)
	if err != nil {
		t.Fatal(err)
	}
	// First set without its key origin, as a bare descriptor.
	bare, err := watchonly.Parse(e.tk, regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(spec, ""))
	if err != nil || bare.HasOrigin() {
		t.Fatalf("bare key: %v", err)
	}
	db := e.in.Server.DB().Client
	if _, err := project.SetWatchKey(ctx, db, e.in.ProjectA, project.WatchKeyParams{Ticker: e.tk, Key: bare}, clock.Now()); err != nil {
		t.Fatal(err)
	}

	for i, v := range []string{"1.0", "0.5"} {
		r := e.in.Get(t, "/ltc/create/", url.Values{"callback": {fmt.Sprintf("%s/hook?n=%d", e.sink.URL, i)}, "confirmations": {"1"}}, e.in.KeyA)
		wantStatus(t, r, 200)
		e.n.Must(nil, "sendtoaddress", r.JSON["address_in"], json.Number(v))
	}
	e.step(t, 1)
	e.step(t, 0)

	// The payout wallet is the key's too: what funds it is the merchant's,
	// and costs no fee.
	pw := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA)
	wantStatus(t, pw, 200)
	if want, _ := key.Address(2); pw.JSON["address"] != want {
		t.Fatalf("payout wallet %v, want the key's /0/2 %s", pw.JSON["address"], want)
	}
	e.n.Must(nil, "sendtoaddress", pw.JSON["address"], json.Number("0.25"))
	for range 6 { // the coin's default confirmations
		e.step(t, 1)
	}
	if p, err := db.Payment.Query().Where(entpayment.ValueCoinEQ(decimal.RequireFromString("0.25"))).Only(ctx); err != nil ||
		p.Status != entpayment.StatusCompleted || !p.FeeCoin.IsZero() {
		t.Fatalf("the payout wallet's funding: %+v %v; want completed, no fee", p, err)
	}

	if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != "1.75" {
		t.Fatalf("payout balance %s, want 1.75: what the merchant's payouts may spend", b.Body)
	}

	var dest string
	e.n.Must(&dest, "getnewaddress")
	// Without the key origin a hardware wallet cannot find its key in the
	// PSBT: refused, saying what to do; set again with it, the same key
	// (its addresses, its payments) goes on.
	r := e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.7"}}`, dest), e.in.KeyA)
	if r.Code != 400 || !strings.Contains(string(r.Body), "key origin") {
		t.Fatalf("a payout of a key without origin: HTTP %d %s", r.Code, r.Body)
	}
	if _, err := project.SetWatchKey(ctx, db, e.in.ProjectA, project.WatchKeyParams{Ticker: e.tk, Key: key}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	r = e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.7"}}`, dest), e.in.KeyA)
	wantStatus(t, r, 200)
	info := r.JSON["payout_info"].(map[string]any)
	if info["status"] != "processing" {
		t.Fatalf("payout %s: want processing, waiting for the merchant's signature", r.Body)
	}
	id := fmt.Sprint(info["id"])
	g := e.in.Get(t, "/payout/psbt/", url.Values{"payout_id": {id}}, e.in.KeyA)
	wantStatus(t, g, 200)
	unsigned := g.JSON["psbt"].(string)
	if g.JSON["signed"] == true || unsigned == "" {
		t.Fatalf("GET /payout/psbt/: %s", g.Body)
	}
	if n, _ := db.Outbound.Query().Count(ctx); n != 1 {
		t.Fatalf("%d outgoing transactions, want the one awaiting the signature", n)
	}

	submit := func(p string) servertest.Response {
		t.Helper()
		return e.postKey(t, "/payout/psbt/", fmt.Sprintf(`{"payout_id": %s, "psbt": %q}`, id, p), e.in.KeyA)
	}
	// Unsigned, and not base64: refused, naming why; nothing changes.
	if r := submit(unsigned); r.Code != 400 || !strings.Contains(string(r.Body), "signed") {
		t.Fatalf("an unsigned PSBT: HTTP %d %s", r.Code, r.Body)
	}
	if r := submit("not base64!"); r.Code != 400 || !strings.Contains(string(r.Body), "psbt") {
		t.Fatalf("not base64: HTTP %d %s", r.Code, r.Body)
	}
	// Edited before signing: another destination, signed by the wallet.
	var edited struct {
		PSBT string `json:"psbt"`
	}
	var other string
	e.n.Must(&other, "getnewaddress")
	var decoded struct {
		Tx struct {
			Vin []struct {
				TxID string `json:"txid"`
				Vout int    `json:"vout"`
			} `json:"vin"`
		} `json:"tx"`
	}
	e.n.Must(&decoded, "decodepsbt", unsigned)
	var ins []map[string]any
	for _, in := range decoded.Tx.Vin {
		ins = append(ins, map[string]any{"txid": in.TxID, "vout": in.Vout})
	}
	var forged string
	e.n.Must(&forged, "createpsbt", ins, []map[string]any{{other: json.Number("0.7")}})
	if err := e.n.CallWallet("merchant", &edited, "walletprocesspsbt", forged); err != nil {
		t.Fatal(err)
	}
	if r := submit(edited.PSBT); r.Code != 400 || !strings.Contains(string(r.Body), "differs") {
		t.Fatalf("an edited PSBT: HTTP %d %s", r.Code, r.Body)
	}

	var signed struct {
		PSBT     string `json:"psbt"`
		Complete bool   `json:"complete"`
	}
	if err := e.n.CallWallet("merchant", &signed, "walletprocesspsbt", unsigned); err != nil || !signed.Complete {
		t.Fatalf("walletprocesspsbt: %+v %v", signed, err)
	}
	r = submit(signed.PSBT)
	wantStatus(t, r, 200)
	info = r.JSON["payout_info"].(map[string]any)
	if info["status"] != "done" || info["txid"] == "" {
		t.Fatalf("after the signed PSBT: %s", r.Body)
	}
	txid := info["txid"].(string)
	if r := submit(signed.PSBT); r.Code != 409 {
		t.Fatalf("a second upload: HTTP %d %s", r.Code, r.Body)
	}
	e.step(t, 1)

	var tx struct {
		Vout []struct {
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Address   string   `json:"address"`
				Addresses []string `json:"addresses"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
		Confirmations int `json:"confirmations"`
	}
	e.n.Must(&tx, "getrawtransaction", txid, true)
	changeAddr, _ := key.ChangeAddress(0)
	paid := map[string]decimal.Decimal{}
	for _, o := range tx.Vout {
		a := o.ScriptPubKey.Address
		if a == "" && len(o.ScriptPubKey.Addresses) == 1 {
			a = o.ScriptPubKey.Addresses[0]
		}
		paid[a] = paid[a].Add(decimal.RequireFromString(o.Value.String()))
	}
	if tx.Confirmations < 1 || len(paid) != 2 || !paid[dest].Equal(decimal.RequireFromString("0.7")) || !paid[changeAddr].IsPositive() {
		t.Fatalf("the payout transaction pays %v (confirmations %d); want 0.7 to %s and the change to the key's /1/0 %s", paid, tx.Confirmations, dest, changeAddr)
	}
	var lines []struct {
		Account string          `json:"account"`
		Amount  decimal.Decimal `json:"amount"`
	}
	if err := db.LedgerEntry.Query().Where(entledger.KeyHasPrefix("payout-psbt:")).Select(entledger.FieldAccount, entledger.FieldAmount).Scan(ctx, &lines); err != nil {
		t.Fatal(err)
	}
	got := map[string]decimal.Decimal{}
	for _, l := range lines {
		got[l.Account] = l.Amount
	}
	if !got["payout"].Equal(decimal.NewFromInt(70_000_000)) || !got["direct"].IsNegative() || !got["network_fee"].IsPositive() {
		t.Fatalf("journal of the payout: %v", got)
	}
	// The payout spent the 1.0 payment (largest first): the rest is left.
	if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != "0.75" {
		t.Fatalf("payout balance after the payout %s, want 0.75", b.Body)
	}
}
