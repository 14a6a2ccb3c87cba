package server_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// multiEnv is a server watching several EVM tickers on anvil nodes (no
// automining: the test mines), polled and delivering only when the test
// says, with a verifying sink.
type multiEnv struct {
	in      *servertest.Instance
	sink    *callbackSink
	reg     *chains.Registry
	nodes   []*nodetest.Anvil // each mined by step
	tickers []string          // each polled by step
}

// newMultiEnv starts a server with nodes (ticker to node URL, each on
// regtest) and polls every ticker once: the first poll records where
// watching starts, and addresses are handed out only after it.
func newMultiEnv(t *testing.T, d store.Dialect, anvils []*nodetest.Anvil, nodes map[string]string) *multiEnv {
	t.Helper()
	reg := family.DefaultRegistry()
	e := &multiEnv{sink: newSink(t), nodes: anvils}
	for tk := range nodes {
		var err error
		if reg, err = reg.WithNet(tk, chains.Regtest); err != nil {
			t.Fatal(err)
		}
		e.tickers = append(e.tickers, tk)
	}
	e.reg = reg
	e.in = servertest.Start(t, d, func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = nodes
		c.Chains.Prices = server.PricesTable // no network beyond the nodes
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(e.sink.URL+"/hook", servertest.A, servertest.B)
	})
	pub := e.in.Get(t, "/pubkey/", nil, e.in.KeyA).JSON["pubkey"].(string)
	resp, err := http.Post(e.sink.URL+"/pin", "text/plain", strings.NewReader(pub))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	e.step(t, 0)
	return e
}

// ticker returns the registry's ticker (on regtest when it has a node).
func (e *multiEnv) ticker(t *testing.T, name string) chains.Ticker {
	t.Helper()
	tk, ok := e.reg.Lookup(name)
	if !ok {
		t.Fatalf("no ticker %s", name)
	}
	return tk
}

// step mines blocks on every node, has the server poll every ticker (twice:
// the second poll finishes what the first sent or left open) and runs due
// deliveries.
func (e *multiEnv) step(t *testing.T, blocks int) {
	t.Helper()
	ctx := context.Background()
	if blocks > 0 {
		for _, an := range e.nodes {
			an.Mine(t, blocks)
		}
	}
	for range 2 {
		for _, tk := range e.tickers {
			if err := e.in.Server.Watcher(tk).PollOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.in.Server.Notifier().Dispatcher.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
}

// until steps one block at a time until done holds, failing t with what
// (and its state) after limit blocks.
func (e *multiEnv) until(t *testing.T, limit int, done func() bool, what func() string) {
	t.Helper()
	for i := 0; !done(); i++ {
		if i == limit {
			t.Fatalf("after %d blocks: %s", limit, what())
		}
		e.step(t, 1)
	}
}

// create creates an ETH address forwarding to dest with the callback
// /hook?a=name and the options kv.
func (e *multiEnv) create(t *testing.T, name, dest string, kv ...string) string {
	t.Helper()
	r := e.in.Get(t, "/eth/create/", q(append([]string{"callback", e.sink.URL + "/hook?a=" + name, "address", dest}, kv...)...), e.in.KeyA)
	wantStatus(t, r, 200)
	return r.JSON["address_in"].(string)
}

// payments returns the payments recorded for address_in a, of tickers
// when given.
func (e *multiEnv) payments(t *testing.T, a string, tickers ...string) []*entdb.Payment {
	t.Helper()
	q := e.in.Server.DB().Client.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressIn(a)))
	if len(tickers) > 0 {
		q.Where(entpayment.TickerIn(tickers...))
	}
	ps, err := q.WithForward().Order(entdb.Asc(entpayment.FieldID)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// callbacks sorts the callbacks received since the last call by
// address_in, failing t on any that did not verify.
func (e *multiEnv) callbacks(t *testing.T, into map[string][]received) {
	t.Helper()
	for _, r := range e.sink.take() {
		into[r.field("address_in")] = append(into[r.field("address_in")], r)
	}
	e.sink.mu.Lock()
	defer e.sink.mu.Unlock()
	if len(e.sink.errs) > 0 {
		t.Fatalf("callbacks that did not verify: %v", e.sink.errs)
	}
}

// completed returns the completed callback of rs, failing t unless there
// is exactly one.
func completed(t *testing.T, who string, rs []received) received {
	t.Helper()
	var out []received
	for _, r := range rs {
		if r.status() == "completed" {
			out = append(out, r)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s: %d completed callbacks in %v", who, len(out), statusesOf(rs))
	}
	return out[0]
}

func statusesOf(rs []received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.field("event_type") + r.status()
	}
	return out
}

// TestAnvilWrongAssetAndMultiToken: on anvil, with eth and erc20/usdt (the
// test token) watched on one node, test tokens sent to an ETH address
// created with multi_token=1 are credited and forwarded as erc20/usdt: its
// callbacks name usdt, the completed one's txid_out is a token transfer
// from the address that the node executed, and the destination's token
// balance rises by value_forwarded_coin. Sent to an ETH address created
// without it, they are held as wrong_asset: one wrong_asset webhook naming
// both coins, no forward, the tokens stay on the address, until the
// merchant forwards them (/wrong_asset/forward/), when the destination's
// token balance rises by what the API says was forwarded. Each token
// forward's gas comes from the operator's gas address.
func TestAnvilWrongAssetAndMultiToken(t *testing.T) {
	t.Parallel()
	an := nodetest.StartAnvil(t, "--no-mining")
	reg0, err := family.DefaultRegistry().WithNet("erc20/usdt", chains.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	usdt0, _ := reg0.Lookup("erc20/usdt")
	token := an.DeployERC20(t, usdt0.Decimals)
	keys, err := chains.NewKeys(servertest.Seed) // the server's seed
	if err != nil {
		t.Fatal(err)
	}
	operator, err := keys.OperatorAddress(usdt0)
	if err != nil {
		t.Fatal(err)
	}
	an.Send(t, nodetest.AnvilDev0, operator, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil), nil) // 1 ETH for gas
	an.Mine(t, 1)
	node := an.URL + "?network=regtest"
	e := newMultiEnv(t, store.Postgres, []*nodetest.Anvil{an}, map[string]string{
		"eth":        node,
		"erc20/usdt": node + "&contract=" + token,
	})
	usdt := e.ticker(t, "erc20/usdt")
	tokens := func(a string) decimal.Decimal {
		return decimal.NewFromBigInt(an.TokenBalance(t, token, a), -usdt.Decimals)
	}

	destMulti, destPlain := destinations(t, e.ticker(t, "eth"))
	multi := e.create(t, "multi", destMulti, "multi_token", "1")
	plain := e.create(t, "plain", destPlain)
	paid := decimal.NewFromInt(50)
	for _, to := range []string{multi, plain} {
		an.Send(t, nodetest.AnvilDev0, token, nil, nodetest.TransferData(t, to, paid.Shift(usdt.Decimals).BigInt()))
	}
	opBefore := an.Balance(t, operator)
	byAddress := map[string][]received{}
	e.step(t, 1)
	e.until(t, int(usdt.DefaultConfirmations)+6, func() bool {
		return tokens(destMulti).Sign() > 0
	}, func() string {
		return fmt.Sprintf("the multi_token destination holds %s tokens; payments %+v", tokens(destMulti), e.payments(t, multi))
	})
	e.step(t, 1) // the forward's block is seen
	e.callbacks(t, byAddress)

	// multi_token: credited and forwarded as erc20/usdt.
	ps := e.payments(t, multi, "erc20/usdt")
	if len(ps) != 1 || ps[0].Status != entpayment.StatusCompleted || ps[0].HoldReason != entpayment.HoldReasonNone {
		t.Fatalf("the multi_token address's payments %+v", ps)
	}
	var statuses []string
	for _, r := range byAddress[multi] {
		if r.field("coin") != "usdt" { // as an erc20/usdt address's callbacks name it
			t.Errorf("multi_token callback of coin %q", r.field("coin"))
		}
		if r.field("event_type") == "wrong_asset" {
			t.Errorf("a wrong_asset webhook for the multi_token address")
		}
		statuses = append(statuses, r.status())
	}
	if s := strings.Join(statuses, ","); !strings.HasSuffix(s, "confirmed,completed") {
		t.Errorf("multi_token callbacks %v", statuses)
	}
	done := completed(t, "multi_token", byAddress[multi])
	fwd := decimal.RequireFromString(done.field("value_forwarded_coin"))
	if got := tokens(destMulti); !got.Equal(fwd) || !fwd.IsPositive() || fwd.GreaterThan(paid) {
		t.Errorf("the multi_token destination received %s tokens, its completed callback says %s forwarded", got, fwd)
	}
	if rc := an.Receipt(t, done.field("txid_out")); !rc.OK || !sameAddress(rc.From, multi) || !sameAddress(rc.To, token) {
		t.Errorf("txid_out %s: receipt %+v, want a token transfer from %s executed", done.field("txid_out"), rc, multi)
	}
	if got := tokens(multi); !got.Equal(paid.Sub(fwd)) {
		t.Errorf("the multi_token address keeps %s tokens, want %s", got, paid.Sub(fwd))
	}

	// Without multi_token: held as wrong_asset, one webhook, nothing forwarded.
	ps = e.payments(t, plain, "erc20/usdt")
	if len(ps) != 1 || ps[0].Status != entpayment.StatusConfirmed ||
		ps[0].HoldReason != entpayment.HoldReasonWrongAsset || ps[0].Edges.Forward != nil {
		t.Fatalf("the plain address's payments %+v", ps)
	}
	held := ps[0]
	w := byAddress[plain]
	if len(w) != 1 || w[0].field("event_type") != "wrong_asset" || w[0].field("coin") != "erc20_usdt" ||
		w[0].field("expected_coin") != "eth" || w[0].field("value_coin") != "50" || w[0].field("txid_in") != held.TxidIn {
		t.Fatalf("the plain address's callbacks: %+v", w)
	}
	if got := tokens(destPlain); !got.IsZero() {
		t.Errorf("the plain address's destination received %s tokens before the merchant forwarded", got)
	}
	if got := tokens(plain); !got.Equal(paid) {
		t.Errorf("the plain address holds %s tokens, want all %s", got, paid)
	}
	for _, o := range e.outboundsFrom(t, plain) {
		t.Errorf("an outgoing transaction from the held address before the merchant forwarded: %s %s %s", o.Key, o.Purpose, o.State)
	}

	// The merchant forwards it: the destination receives it as tokens.
	body := fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q}`, held.TxidIn)
	wantStatus(t, e.in.PostJSON(t, "/wrong_asset/forward/", body, e.in.KeyB), 404)
	r := e.in.PostJSON(t, "/wrong_asset/forward/", body, e.in.KeyA)
	if r.Code != 200 {
		// Not fatal: what the forward did is checked on chain below.
		t.Errorf("/wrong_asset/forward/: HTTP %d %s, want 200", r.Code, r.Body)
	}
	e.until(t, 6, func() bool {
		return tokens(destPlain).Sign() > 0
	}, func() string {
		return fmt.Sprintf("the forwarded wrong asset's destination holds %s tokens; payments %+v; outbounds %v", tokens(destPlain), e.payments(t, plain), e.outboundsFrom(t, plain))
	})
	e.step(t, 1)
	ps = e.payments(t, plain, "erc20/usdt")
	if len(ps) != 1 || ps[0].Edges.Forward == nil || ps[0].Status != entpayment.StatusCompleted || ps[0].HoldReason != entpayment.HoldReasonNone {
		t.Fatalf("the forwarded wrong-asset payment %+v", ps)
	}
	f := ps[0].Edges.Forward
	if got := tokens(destPlain); !got.Equal(f.ValueForwardedCoin) || !got.IsPositive() {
		t.Errorf("the destination received %s tokens, the forward says %s", got, f.ValueForwardedCoin)
	}
	if v, ok := r.JSON["value_forwarded_coin"]; ok && fmt.Sprint(v) != f.ValueForwardedCoin.String() {
		t.Errorf("/wrong_asset/forward/ said %v forwarded, the forward %s", v, f.ValueForwardedCoin)
	}
	if rc := an.Receipt(t, f.TxidOut); !rc.OK || !sameAddress(rc.From, plain) || !sameAddress(rc.To, token) {
		t.Errorf("the wrong asset's forward %s: receipt %+v, want a token transfer from %s executed", f.TxidOut, rc, plain)
	}
	wantStatus(t, e.in.PostJSON(t, "/wrong_asset/forward/", body, e.in.KeyA), 404)
	e.callbacks(t, byAddress)
	webhooks := 0
	for _, r := range byAddress[plain] {
		if r.field("event_type") == "wrong_asset" {
			webhooks++
		}
	}
	if webhooks != 1 {
		t.Errorf("%d wrong_asset webhooks for one payment: %v", webhooks, statusesOf(byAddress[plain]))
	}
	if spent := new(big.Int).Sub(opBefore, an.Balance(t, operator)); spent.Sign() <= 0 {
		t.Errorf("the operator's gas address paid %s wei for the token forwards' gas", spent)
	}
	// The gas top-ups are the operator's, not payments to the merchant.
	e.step(t, int(usdt.DefaultConfirmations))
	e.callbacks(t, byAddress)
	for _, a := range []string{multi, plain} {
		for _, p := range e.payments(t, a, "eth") {
			t.Errorf("the operator's gas top-up %s to %s is recorded as a payment: %s %s %s (%s)", p.TxidIn, a, p.ValueCoin, p.Status, p.HoldReason, p.Note)
		}
		for _, r := range byAddress[a] {
			if r.field("coin") == "eth" {
				t.Errorf("a callback of the operator's gas top-up to %s: %s %s", a, r.status(), r.field("value_coin"))
			}
		}
	}
	if got := ledgerSum(t, e.in, e.in.ProjectA, "eth", entledger.AccountHeld); !got.IsZero() {
		t.Errorf("journal: the project holds %s base units of ETH, the operator's gas top-ups", got)
	}
}

// outboundsFrom returns the server's outgoing transactions from address a.
func (e *multiEnv) outboundsFrom(t *testing.T, a string) []*entdb.Outbound {
	t.Helper()
	os, err := e.in.Server.DB().Client.Outbound.Query().All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []*entdb.Outbound
	for _, o := range os {
		if sameAddress(o.FromAddress, a) {
			out = append(out, o)
		}
	}
	return out
}

// TestAnvilMultiChain: with eth on one anvil and polygon/pol on another
// (two chain ids), POL sent on the second to an ETH address created with
// multi_chain=1 is credited and forwarded as polygon/pol: its callbacks
// name pol, the completed one's txid_out is a transaction on the Polygon
// node, signed for that node's chain id, from the address, that the node
// executed, and the destination's balance there rises by
// value_forwarded_coin. Sent to an ETH address created without it, it is
// not seen at all: no payment, no callback, nothing moved.
func TestAnvilMultiChain(t *testing.T) {
	t.Parallel()
	const polygonID = 31338
	anA := nodetest.StartAnvil(t, "--no-mining")
	anB := nodetest.StartAnvil(t, "--no-mining", "--chain-id", fmt.Sprint(polygonID))
	var idA, idB string
	anA.Call(t, &idA, "eth_chainId")
	anB.Call(t, &idB, "eth_chainId")
	if idA == idB || idB != fmt.Sprintf("0x%x", polygonID) {
		t.Fatalf("chain ids %s and %s: want two, the second %d", idA, idB, polygonID)
	}
	e := newMultiEnv(t, store.SQLite, []*nodetest.Anvil{anA, anB}, map[string]string{
		"eth":         anA.URL + "?network=regtest",
		"polygon/pol": anB.URL + fmt.Sprintf("?network=regtest&chain_id=%d", polygonID),
	})
	pol := e.ticker(t, "polygon/pol")
	coins := func(an *nodetest.Anvil, a string) decimal.Decimal {
		return decimal.NewFromBigInt(an.Balance(t, a), -pol.Decimals)
	}

	destWide, destOnly := destinations(t, e.ticker(t, "eth"))
	wide := e.create(t, "wide", destWide, "multi_chain", "1")
	only := e.create(t, "only", destOnly)
	paid := decimal.NewFromInt(20)
	for _, to := range []string{wide, only} {
		anB.Send(t, nodetest.AnvilDev0, to, paid.Shift(pol.Decimals).BigInt(), nil)
	}
	byAddress := map[string][]received{}
	e.step(t, 1)
	e.until(t, int(pol.DefaultConfirmations)+6, func() bool {
		return coins(anB, destWide).Sign() > 0
	}, func() string {
		return fmt.Sprintf("the multi_chain destination holds %s POL; payments %+v", coins(anB, destWide), e.payments(t, wide))
	})
	e.step(t, 1)
	e.callbacks(t, byAddress)

	ps := e.payments(t, wide)
	if len(ps) != 1 || ps[0].Ticker != "polygon/pol" || ps[0].Status != entpayment.StatusCompleted || ps[0].Edges.Forward == nil {
		t.Fatalf("the multi_chain address's payments %+v", ps)
	}
	var statuses []string
	for _, r := range byAddress[wide] {
		if r.field("coin") != "pol" { // as a polygon/pol address's callbacks name it
			t.Errorf("multi_chain callback of coin %q", r.field("coin"))
		}
		statuses = append(statuses, r.status())
	}
	if s := strings.Join(statuses, ","); !strings.HasSuffix(s, "confirmed,completed") {
		t.Errorf("multi_chain callbacks %v", statuses)
	}
	done := completed(t, "multi_chain", byAddress[wide])
	fwd := decimal.RequireFromString(done.field("value_forwarded_coin"))
	if got := coins(anB, destWide); !got.Equal(fwd) || !fwd.IsPositive() || fwd.GreaterThan(paid) {
		t.Errorf("the multi_chain destination received %s POL, its completed callback says %s forwarded", got, fwd)
	}
	txid := done.field("txid_out")
	if txid != ps[0].Edges.Forward.TxidOut {
		t.Errorf("txid_out %s, the forward's %s", txid, ps[0].Edges.Forward.TxidOut)
	}
	if rc := anB.Receipt(t, txid); !rc.OK || !sameAddress(rc.From, wide) || !sameAddress(rc.To, destWide) {
		t.Errorf("txid_out %s on the Polygon node: receipt %+v, want a transfer from %s to %s executed", txid, rc, wide, destWide)
	}
	var tx struct {
		ChainID string `json:"chainId"`
	}
	anB.Call(t, &tx, "eth_getTransactionByHash", txid)
	if tx.ChainID != idB {
		t.Errorf("the forward on the Polygon node is signed for chain id %s, want %s", tx.ChainID, idB)
	}
	if rc := anA.Receipt(t, txid); rc.Found {
		t.Errorf("the Polygon forward %s is on the Ethereum node: %+v", txid, rc)
	}
	if got := coins(anA, destWide); !got.IsZero() {
		t.Errorf("the destination holds %s ETH on the Ethereum node", got)
	}

	// Without multi_chain: not watched on Polygon.
	if ps := e.payments(t, only); len(ps) != 0 {
		t.Errorf("the address without multi_chain has payments %+v", ps)
	}
	if cb := byAddress[only]; len(cb) != 0 {
		t.Errorf("the address without multi_chain heard of Polygon: %v", statusesOf(cb))
	}
	if got := coins(anB, only); !got.Equal(paid) {
		t.Errorf("the address without multi_chain holds %s POL, want the %s paid, untouched", got, paid)
	}
	if got := coins(anB, destOnly); !got.IsZero() {
		t.Errorf("the destination of the address without multi_chain received %s POL", got)
	}
	if os := e.outboundsFrom(t, only); len(os) != 0 {
		t.Errorf("outgoing transactions from the address without multi_chain: %d", len(os))
	}
}
