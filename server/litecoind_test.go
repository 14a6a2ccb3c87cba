package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// ltcEnv is a server watching a real litecoind in regtest, polled and
// delivering only when the test says (no sleeps), with a verifying sink.
type ltcEnv struct {
	n    *nodetest.Litecoind
	in   *servertest.Instance
	sink *callbackSink
	tk   chains.Ticker
}

func newLTCEnv(t *testing.T, d store.Dialect, mutate ...func(*server.Config)) *ltcEnv {
	t.Helper()
	n := nodetest.StartLitecoind(t, 110)
	sink := newSink(t)
	in := servertest.Start(t, d, append([]func(*server.Config){func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = map[string]string{"ltc": n.URL + "?network=regtest"}
		c.Chains.Prices = server.PricesTable // no network beyond the node
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(sink.URL+"/hook", servertest.A, servertest.B)
	}}, mutate...)...)
	pub := in.Get(t, "/pubkey/", nil, in.KeyA).JSON["pubkey"].(string)
	resp, err := http.Post(sink.URL+"/pin", "text/plain", strings.NewReader(pub))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reg, _ := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	tk, _ := reg.Lookup("ltc")
	// The first poll records where watching starts; addresses are handed
	// out only after it.
	if err := in.Server.Watcher("ltc").PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &ltcEnv{n: n, in: in, sink: sink, tk: tk}
}

// step mines blocks on the node, has the server poll it, and runs due
// deliveries.
func (e *ltcEnv) step(t *testing.T, blocks int) {
	t.Helper()
	if blocks > 0 {
		var a string
		e.n.Must(&a, "getnewaddress")
		e.n.Must(nil, "generatetoaddress", blocks, a)
	}
	ctx := context.Background()
	for range 2 { // the second poll sees the forward's completion recorded
		if err := e.in.Server.Watcher("ltc").PollOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.in.Server.Notifier().Dispatcher.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLitecoindEndToEnd: a payment to a derived regtest address is
// detected, confirmed at the requested depth and forwarded by a signed
// transaction the node accepts; the merchant gets pending, confirmed and
// completed, with txid_out the forwarding transaction's id, which pays the
// merchant's wallet value_forwarded_coin exactly. Tickers without a node
// are not offered.
func TestLitecoindEndToEnd(t *testing.T) {
	t.Parallel()
	e := newLTCEnv(t, store.SQLite)
	var wallet string
	e.n.Must(&wallet, "getnewaddress")

	info := e.in.Get(t, "/info/", nil, "")
	if _, ok := info.JSON["ltc"]; !ok {
		t.Fatalf("/info/ without ltc: %s", info.Body)
	}
	if _, ok := info.JSON["btc"]; ok {
		t.Errorf("/info/ offers btc, which has no node: %s", info.Body)
	}
	if r := e.in.Get(t, "/btc/create/", url.Values{"callback": {e.sink.URL + "/hook"}}, e.in.KeyA); r.Code != 404 || !strings.Contains(string(r.Body), "btc is not offered") {
		t.Errorf("create of a ticker without a node: HTTP %d %s", r.Code, r.Body)
	}
	bad := e.in.Get(t, "/ltc/create/", url.Values{"callback": {e.sink.URL + "/hook"}, "address": {"ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9"}}, e.in.KeyA)
	if bad.Code != 400 || !strings.Contains(string(bad.Body), "network") {
		t.Errorf("a mainnet forwarding address on a regtest node: HTTP %d %s", bad.Code, bad.Body)
	}

	created := e.in.Get(t, "/ltc/create/", url.Values{"callback": {e.sink.URL + "/hook"}, "address": {wallet}, "confirmations": {"2"}, "json": {"1"}}, e.in.KeyA)
	if created.Code != 200 {
		t.Fatalf("create: HTTP %d %s", created.Code, created.Body)
	}
	addrIn := created.JSON["address_in"].(string)
	if !strings.HasPrefix(addrIn, "rltc1q") {
		t.Fatalf("address_in %s is not a regtest address", addrIn)
	}
	var txid string
	e.n.Must(&txid, "sendtoaddress", addrIn, json.Number("0.5"))
	e.step(t, 0) // mempool: nothing reported
	if got := e.sink.statuses(); len(got) != 0 {
		t.Fatalf("callbacks for a mempool transaction: %v", got)
	}
	e.step(t, 1)
	e.step(t, 1)
	e.step(t, 1) // the forward is in this block's mempool
	got := e.sink.statuses()
	if strings.Join(got, ",") != "pending,confirmed,completed" {
		t.Fatalf("callbacks %v, want pending, confirmed, completed", got)
	}
	var done map[string]json.RawMessage
	e.sink.mu.Lock()
	done = e.sink.got[2].fields
	e.sink.mu.Unlock()
	var txidOut, fwd string
	_ = json.Unmarshal(done["txid_out"], &txidOut)
	fwd = strings.Trim(string(done["value_forwarded_coin"]), `"`)
	var txIn string
	_ = json.Unmarshal(done["txid_in"], &txIn)
	if txIn != txid {
		t.Errorf("txid_in %s, want %s", txIn, txid)
	}
	// The forward is a real transaction paying the wallet exactly.
	var tx struct {
		Vout []struct {
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Addresses []string `json:"addresses"`
				Address   string   `json:"address"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	e.n.Must(&tx, "getrawtransaction", txidOut, true)
	paid := decimal.Zero
	for _, o := range tx.Vout {
		if o.ScriptPubKey.Address == wallet || (len(o.ScriptPubKey.Addresses) == 1 && o.ScriptPubKey.Addresses[0] == wallet) {
			v, _ := decimal.NewFromString(o.Value.String())
			paid = paid.Add(v)
		}
	}
	if want, _ := decimal.NewFromString(fwd); !paid.Equal(want) || paid.IsZero() {
		t.Errorf("forward %s pays the wallet %s, value_forwarded_coin %s", txidOut, paid, fwd)
	}
	// Mined: the merchant's wallet sees it.
	e.step(t, 1)
	var st map[string]any
	e.n.Must(&st, "gettransaction", txidOut)
	if c, _ := st["confirmations"].(json.Number).Int64(); c < 1 {
		t.Errorf("the forward %s is not mined: %v", txidOut, st["confirmations"])
	}
	e.step(t, 1) // the watcher sees the forward executed in a block
	if o, err := e.in.Server.DB().Client.Outbound.Query().Only(context.Background()); err != nil || o.State != entoutbound.StateLanded || o.LandedAt == nil || o.Txid != txidOut {
		t.Errorf("outgoing transaction %+v (%v): want it recorded landed", o, err)
	}
	if errs := e.sink.errs; len(errs) > 0 {
		t.Errorf("signature failures: %v", errs)
	}

	h := e.in.Get(t, "/healthz", nil, e.in.OperatorKey(t))
	chs, _ := h.JSON["chains"].(map[string]any)
	ltc, _ := chs["ltc"].(map[string]any)
	if ltc["healthy"] != true || ltc["network"] != "regtest" || strings.Contains(string(h.Body), "regtest-secret") {
		t.Errorf("/healthz: %s", h.Body)
	}
}

// TestLitecoindReorgBeforeConfirmation: a payment reorganised out before
// its confirmation is un-counted: no confirmed callback, never credited,
// and once mined again it is credited exactly once.
func TestLitecoindReorgBeforeConfirmation(t *testing.T) {
	t.Parallel()
	e := newLTCEnv(t, store.SQLite)
	var wallet string
	e.n.Must(&wallet, "getnewaddress")
	created := e.in.Get(t, "/ltc/create/", url.Values{"callback": {e.sink.URL + "/hook"}, "address": {wallet}, "confirmations": {"3"}, "json": {"1"}}, e.in.KeyA)
	addrIn := created.JSON["address_in"].(string)
	var txid string
	e.n.Must(&txid, "sendtoaddress", addrIn, json.Number("0.3"))
	e.step(t, 1)
	e.step(t, 1)
	if got := strings.Join(e.sink.statuses(), ","); got != "pending,pending" {
		t.Fatalf("before the reorganisation: %s", got)
	}
	var height int64
	e.n.Must(&height, "getblockcount")
	var first string
	e.n.Must(&first, "getblockhash", height-1)
	e.n.Must(nil, "invalidateblock", first) // the payment's block and the next leave the chain
	// Mine empty blocks past the old height: the payment waits in the
	// mempool and is not in the chain.
	var a string
	e.n.Must(&a, "getnewaddress")
	for range 3 {
		e.n.Must(nil, "generateblock", a, []string{})
	}
	e.step(t, 0)
	if got := strings.Join(e.sink.statuses(), ","); got != "pending,pending" {
		t.Fatalf("after the reorganisation: %s (a payment out of the chain was counted)", got)
	}
	logs := e.in.Get(t, "/ltc/logs/", url.Values{"callback": {created.JSON["callback_url"].(string)}}, e.in.KeyA)
	if strings.Contains(string(logs.Body), `"confirmed"`) {
		t.Errorf("logs after the reorganisation: %s", logs.Body)
	}
	// Mined again: counted from its new block, credited once.
	e.step(t, 1)
	e.step(t, 1)
	e.step(t, 1)
	e.step(t, 1)
	got := e.sink.statuses()
	confirmed := 0
	for _, s := range got {
		if s == "confirmed" {
			confirmed++
		}
	}
	if confirmed != 1 || got[len(got)-1] != "completed" {
		t.Fatalf("callbacks %v: want one confirmed, then completed", got)
	}
}

// TestOneNodeDown: a node that is down makes its ticker unhealthy in
// /healthz and the metrics, with the error, while the server stays up and
// serves the other ticker, whose node answers; a node of another network
// than configured is never watched.
func TestOneNodeDown(t *testing.T) {
	t.Parallel()
	n := nodetest.StartLitecoind(t, 0)
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Prices = server.PricesTable
		c.Chains.Nodes = map[string]string{
			"ltc":  n.URL + "?network=regtest",
			"doge": "http://u:p@127.0.0.1:1/v3/path-api-key?network=regtest", // nothing listens
			"btc":  n.URL + "?network=mainnet",                               // a regtest node configured as mainnet
		}
	})
	ctx := context.Background()
	if err := in.Server.Watcher("ltc").PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Server.Watcher("btc").PollOnce(ctx); !errors.Is(err, chains.ErrWrongNetwork) {
		t.Errorf("a regtest node configured as mainnet: %v, want ErrWrongNetwork", err)
	}
	if err := in.Server.Watcher("doge").PollOnce(ctx); err == nil {
		t.Error("a poll of a node that is down succeeded")
	}
	// Anyone sees the status; no node, host or error text.
	if h := in.Get(t, "/healthz", nil, ""); h.Code != 200 || string(h.Body) != "{\"status\":\"success\",\"health\":\"serving\"}\n" {
		t.Errorf("/healthz without a key: HTTP %d %s", h.Code, h.Body)
	}
	h := in.Get(t, "/healthz", nil, in.OperatorKey(t))
	if h.Code != 200 || h.JSON["status"] != "success" {
		t.Fatalf("/healthz with one node down: HTTP %d %s", h.Code, h.Body)
	}
	chs, _ := h.JSON["chains"].(map[string]any)
	doge, _ := chs["doge"].(map[string]any)
	if btc, _ := chs["btc"].(map[string]any); btc["healthy"] != false || !strings.Contains(fmt.Sprint(btc["error"]), "another network") {
		t.Errorf("/healthz btc on the wrong network: %v", btc)
	}
	ltc, _ := chs["ltc"].(map[string]any)
	if doge["healthy"] != false || !strings.Contains(fmt.Sprint(doge["error"]), "node unavailable") || ltc["healthy"] != true {
		t.Errorf("/healthz chains: %s", h.Body)
	}
	if strings.Contains(string(h.Body), "regtest-secret") || strings.Contains(string(h.Body), "u:p@") || strings.Contains(string(h.Body), "path-api-key") {
		t.Errorf("/healthz shows node credentials: %s", h.Body)
	}
	if r := in.Get(t, "/ltc/create/", url.Values{"callback": {"https://shop.example/hook"}}, in.KeyA); r.Code != 200 {
		t.Errorf("ltc create while doge's node is down: HTTP %d %s", r.Code, r.Body)
	}
	// doge's node was never reached: no address is handed out that a
	// payment could reach below where watching will start.
	if r := in.Get(t, "/doge/create/", url.Values{"callback": {"https://shop.example/hook"}}, in.KeyA); r.Code != 503 || !strings.Contains(string(r.Body), "not been reached") {
		t.Errorf("doge create before its node was reached: HTTP %d %s, want 503", r.Code, r.Body)
	}
	m := in.Get(t, "/metrics", nil, in.OperatorKey(t))
	for _, line := range []string{`payhook_chain_up{ticker="doge"} 0`, `payhook_chain_up{ticker="ltc"} 1`, `payhook_chain_poll_errors_total{ticker="doge"}`, `payhook_chain_node_request_duration_seconds_count{outcome="ok",ticker="ltc"}`} {
		if !strings.Contains(string(m.Body), line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}
