package server_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
	remotesigner "github.com/payhook/payhook/server/signer"
)

// signerEnv is a server without a seed that signs on `payhook signer`,
// watching eth and the test token (erc20/usdt) on one anvil (no
// automining: the test mines), polled only when the test says.
type signerEnv struct {
	an     *nodetest.Anvil
	in     *servertest.Instance
	eth    chains.Ticker
	usdt   chains.Ticker
	token  string // the test token's contract
	state  string // the signer's state file
	signer []byte // the signer's seed
}

// step mines blocks and has the server poll both tickers (twice: the
// second poll finishes what the first sent or left open).
func (e *signerEnv) step(t *testing.T, blocks int) {
	t.Helper()
	if blocks > 0 {
		e.an.Mine(t, blocks)
	}
	for range 2 {
		for _, tk := range []string{e.eth.Ticker, e.usdt.Ticker} {
			if err := e.in.Server.Watcher(tk).PollOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// until steps one block at a time until done holds, failing t with what
// after limit blocks.
func (e *signerEnv) until(t *testing.T, limit int, done func() bool, what func() string) {
	t.Helper()
	for i := 0; !done(); i++ {
		if i == limit {
			t.Fatalf("after %d blocks: %s", limit, what())
		}
		e.step(t, 1)
	}
}

// tokens is a's balance of the test token.
func (e *signerEnv) tokens(t *testing.T, a string) decimal.Decimal {
	t.Helper()
	return decimal.NewFromBigInt(e.an.TokenBalance(t, e.token, a), -e.usdt.Decimals)
}

// ether is a's balance of ETH.
func (e *signerEnv) ether(t *testing.T, a string) decimal.Decimal {
	t.Helper()
	return decimal.NewFromBigInt(e.an.Balance(t, a), -e.eth.Decimals)
}

// forward returns the forward of the one payment to address_in a of
// ticker, nil while there is none.
func (e *signerEnv) forward(t *testing.T, a, ticker string) *entdb.Forward {
	t.Helper()
	ps, err := e.in.Server.DB().Client.Payment.Query().
		Where(entpayment.HasAddressWith(entaddress.AddressIn(a)), entpayment.TickerEQ(ticker)).
		WithForward().All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 {
		return nil
	}
	return ps[0].Edges.Forward
}

// spent is what the signer's state file says left project 1's ticker
// today (the daily cap's count).
func (e *signerEnv) spent(t *testing.T, ticker string) decimal.Decimal {
	t.Helper()
	b, err := os.ReadFile(e.state)
	if err != nil {
		t.Fatalf("the signer's state: %v", err)
	}
	var st struct {
		Spent map[string]decimal.Decimal `json:"spent"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("the signer's state %s: %v", b, err)
	}
	return st.Spent["1/"+ticker]
}

// outbounds returns the server's outgoing transactions of ticker and
// purpose.
func (e *signerEnv) outbounds(t *testing.T, ticker string, purpose entoutbound.Purpose) []*entdb.Outbound {
	t.Helper()
	out, err := e.in.Server.DB().Client.Outbound.Query().
		Where(entoutbound.Ticker(ticker), entoutbound.PurposeEQ(purpose)).
		Order(entoutbound.ByID()).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAnvilRemoteSigner: the server, started without a seed and with
// --signer-url, signs its EVM transactions on anvil with `payhook signer`
// running as a separate process (mutual TLS) on a seed only it holds, its
// policy on chain id 31337 with the test token's contract:
//
//   - an eth payment is forwarded to the merchant's wallet, which the
//     policy allows, and counted against the eth cap;
//   - a token payment is forwarded with the operator's gas top-up to the
//     payment address, which is the seed's own: signed under the token's
//     policy and not counted (the token's count is exactly what was
//     forwarded);
//   - an eth payout to an address the policy does not allow is error with
//     the signer's reason, and nothing reaches the node; one to an
//     allowed address is sent;
//   - a token payout funded by held tokens is swept into the project's
//     payout wallet, which the policy does not list (the sweep names it
//     as the seed's own key) with the sweep's and the payout's gas
//     top-ups, and then sent to the allowed address; only the payout
//     counts.
func TestAnvilRemoteSigner(t *testing.T) {
	t.Parallel()
	an := nodetest.StartAnvil(t, "--no-mining")
	bin := buildPayhook(t)
	dir := t.TempDir()
	reg := family.DefaultRegistry()
	for _, name := range []string{"eth", "erc20/usdt"} {
		var err error
		if reg, err = reg.WithNet(name, chains.Regtest); err != nil {
			t.Fatal(err)
		}
	}
	eth, _ := reg.Lookup("eth")
	usdt, _ := reg.Lookup("erc20/usdt")
	e := &signerEnv{an: an, eth: eth, usdt: usdt, state: filepath.Join(dir, "signer", "state.json"), signer: bytes.Repeat([]byte{0x4c}, 32)}
	e.token = common.HexToAddress(an.DeployERC20(t, usdt.Decimals)).Hex()

	// The operator's gas address, of the signer's seed, holds ETH for the
	// token transfers' gas.
	keys, err := chains.NewKeys(e.signer)
	if err != nil {
		t.Fatal(err)
	}
	operator, err := keys.OperatorAddress(usdt)
	if err != nil {
		t.Fatal(err)
	}
	an.Send(t, nodetest.AnvilDev0, operator, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil), nil)
	an.Mine(t, 1)

	wallet, allowed := destinations(t, eth) // the merchant's forwarding wallet; a payout destination
	other, _ := chains.NewDeriver(bytes.Repeat([]byte{0x43}, 32), family.All())
	stranger, _ := other.Address(eth, 1)
	const project = 1 // the first project servertest creates, in a fresh database
	policy := fmt.Sprintf(`{
		"networks": {"eth": "regtest", "erc20/usdt": "regtest"},
		"chain_ids": {"eth": %d, "erc20/usdt": %d},
		"contracts": {"erc20/usdt": %q},
		"projects": [
			{"project": %d, "ticker": "eth", "destinations": [%q, %q], "daily_cap": "10"},
			{"project": %d, "ticker": "erc20/usdt", "destinations": [%q, %q], "daily_cap": "1000"}]}`,
		nodetest.AnvilChainID, nodetest.AnvilChainID, e.token, project, wallet, allowed, project, wallet, allowed)
	writeFile(t, filepath.Join(dir, "signer", "seed"), hex.EncodeToString(e.signer)+"\n")
	writeFile(t, filepath.Join(dir, "signer", "policy.json"), policy)
	pki := newTestPKI(t, filepath.Join(dir, "pki"))
	secrets := filepath.Join(dir, "server", "secrets.key")
	writeFile(t, secrets, hex.EncodeToString(bytes.Repeat([]byte{0x11}, 32))+"\n")
	addr := startSigner(t, bin, "signer",
		"--listen", "127.0.0.1:0",
		"--seed-file", filepath.Join(dir, "signer", "seed"),
		"--state-file", e.state,
		"--policy-file", filepath.Join(dir, "signer", "policy.json"),
		"--cert", pki.serverCert, "--key", pki.serverKey, "--client-ca", pki.ca)

	node := an.URL + "?network=regtest"
	e.in = servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = map[string]string{"eth": node, "erc20/usdt": node + "&contract=" + e.token}
		c.Chains.Prices = server.PricesTable // no network beyond the node
		c.Keys = server.KeysConfig{SecretsKeyFile: secrets, Signer: remotesigner.ClientConfig{
			URL: "https://" + addr, Cert: pki.clientCert, Key: pki.clientKey, CA: pki.ca}}
	})
	if e.in.ProjectA != project {
		t.Fatalf("project A is %d; the policy was written for %d", e.in.ProjectA, project)
	}
	e.step(t, 0) // the first poll records where watching starts
	// create creates an address of ticker with the callback named name
	// and the options kv.
	create := func(ticker, name string, kv ...string) string {
		t.Helper()
		r := e.in.Get(t, "/"+ticker+"/create/", q(append([]string{"callback", "https://shop.example/hook?a=" + name}, kv...)...), e.in.KeyA)
		wantStatus(t, r, 200)
		return r.JSON["address_in"].(string)
	}

	// (a) An eth payment forwarded to the merchant's wallet.
	ethIn := create("eth", "forward", "address", wallet)
	an.Send(t, nodetest.AnvilDev0, ethIn, decimal.NewFromInt(2).Shift(eth.Decimals).BigInt(), nil)
	e.until(t, int(eth.DefaultConfirmations)+6, func() bool { return e.ether(t, wallet).IsPositive() }, func() string {
		return fmt.Sprintf("the wallet holds %s ETH; forward %+v", e.ether(t, wallet), e.forward(t, ethIn, "eth"))
	})
	fwdEth := e.forward(t, ethIn, "eth")
	if fwdEth == nil || !e.ether(t, wallet).Equal(fwdEth.ValueForwardedCoin) {
		t.Fatalf("the wallet received %s ETH; forward %+v", e.ether(t, wallet), fwdEth)
	}
	if rc := an.Receipt(t, fwdEth.TxidOut); !rc.OK || !sameAddress(rc.From, ethIn) || !sameAddress(rc.To, wallet) {
		t.Errorf("the eth forward %s: receipt %+v, want a transfer from %s to the wallet", fwdEth.TxidOut, rc, ethIn)
	}
	if got := e.spent(t, "eth"); !got.Equal(fwdEth.ValueForwardedCoin) {
		t.Errorf("the signer counted %s eth today, want the forward's %s", got, fwdEth.ValueForwardedCoin)
	}

	// (b) A token payment forwarded to the merchant's wallet, its gas
	// topped up from the operator's address.
	opBefore := an.Balance(t, operator)
	tokIn := create("erc20/usdt", "forward", "address", wallet)
	an.Send(t, nodetest.AnvilDev0, e.token, nil, nodetest.TransferData(t, tokIn, decimal.NewFromInt(50).Shift(usdt.Decimals).BigInt()))
	e.until(t, int(usdt.DefaultConfirmations)+8, func() bool { return e.tokens(t, wallet).IsPositive() }, func() string {
		return fmt.Sprintf("the wallet holds %s tokens; forward %+v", e.tokens(t, wallet), e.forward(t, tokIn, "erc20/usdt"))
	})
	fwdTok := e.forward(t, tokIn, "erc20/usdt")
	if fwdTok == nil || !e.tokens(t, wallet).Equal(fwdTok.ValueForwardedCoin) {
		t.Fatalf("the wallet received %s tokens; forward %+v", e.tokens(t, wallet), fwdTok)
	}
	if rc := an.Receipt(t, fwdTok.TxidOut); !rc.OK || !sameAddress(rc.From, tokIn) || !sameAddress(rc.To, e.token) {
		t.Errorf("the token forward %s: receipt %+v, want a token transfer from %s", fwdTok.TxidOut, rc, tokIn)
	}
	if spent := new(big.Int).Sub(opBefore, an.Balance(t, operator)); spent.Sign() <= 0 {
		t.Errorf("the operator's gas address paid %s wei: no gas top-up", spent)
	}
	if got := e.spent(t, "erc20/usdt"); !got.Equal(fwdTok.ValueForwardedCoin) {
		t.Errorf("the signer counted %s erc20/usdt today, want only the forward's %s (the top-up is the seed's own)", got, fwdTok.ValueForwardedCoin)
	}

	// (c) The eth payout wallet, funded directly: a payout to a stranger
	// is refused by the signer and nothing is sent; one to an allowed
	// address is sent.
	r := e.in.Get(t, "/eth/payout/address/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	ethWallet := r.JSON["address"].(string)
	an.Send(t, nodetest.AnvilDev0, ethWallet, decimal.NewFromInt(1).Shift(eth.Decimals).BigInt(), nil)
	e.step(t, 1)
	e.step(t, int(eth.DefaultConfirmations))
	payout := func(ticker, to, amount string) map[string]any {
		t.Helper()
		r := e.in.PostJSON(t, "/"+ticker+"/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, to, amount), e.in.KeyA)
		wantStatus(t, r, 200)
		return r.JSON["payout_info"].(map[string]any)
	}
	p := payout("eth", stranger, "0.1")
	if p["status"] != "error" || !strings.HasPrefix(fmt.Sprint(p["error"]), "the signer refused to sign it: ") ||
		!strings.Contains(fmt.Sprint(p["error"]), stranger+", which project 1's eth policy does not allow") {
		t.Errorf("payout to a destination the policy does not allow: %v", p)
	}
	if n := an.PendingCount(t); n != 0 {
		t.Errorf("a refused payout reached the node: %d transactions pending", n)
	}
	if n := an.Nonce(t, ethWallet, "pending"); n != 0 {
		t.Errorf("the payout wallet's pending nonce is %d after a refused payout", n)
	}
	before := e.ether(t, allowed)
	p = payout("eth", allowed, "0.3")
	if p["status"] != "done" || p["txid"] == "" {
		t.Fatalf("payout within the policy: %v", p)
	}
	e.step(t, 1)
	if got := e.ether(t, allowed).Sub(before); !got.Equal(decimal.RequireFromString("0.3")) {
		t.Errorf("the allowed address received %s ETH, want 0.3", got)
	}
	if got, want := e.spent(t, "eth"), fwdEth.ValueForwardedCoin.Add(decimal.RequireFromString("0.3")); !got.Equal(want) {
		t.Errorf("the signer counted %s eth today, want %s (the forward and the payout; the refused payout nothing)", got, want)
	}

	// (d) Tokens held on a payment address fund a token payout: swept
	// into the project's token payout wallet (not in the policy), then
	// paid from it to the allowed address.
	r = e.in.Get(t, "/erc20/usdt/payout/address/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	tokWallet := r.JSON["address"].(string)
	for _, d := range []string{wallet, allowed} {
		if sameAddress(d, tokWallet) {
			t.Fatalf("the payout wallet %s is in the policy's destinations", tokWallet)
		}
	}
	held := create("erc20/usdt", "held")
	an.Send(t, nodetest.AnvilDev0, e.token, nil, nodetest.TransferData(t, held, decimal.NewFromInt(300).Shift(usdt.Decimals).BigInt()))
	e.step(t, 1)
	e.step(t, int(usdt.DefaultConfirmations))
	before = e.tokens(t, allowed)
	amount := decimal.NewFromInt(250)
	p = payout("erc20/usdt", allowed, amount.String())
	id := fmt.Sprint(p["id"])
	if p["status"] == "error" {
		t.Fatalf("token payout: %v", p)
	}
	e.until(t, int(usdt.DefaultConfirmations)+10, func() bool {
		return e.tokens(t, allowed).Sub(before).Equal(amount)
	}, func() string {
		var sweeps []string
		for _, o := range e.outbounds(t, "erc20/usdt", entoutbound.PurposeSweep) {
			sweeps = append(sweeps, fmt.Sprintf("%s %s: %s", o.FromAddress, o.State, o.LastError))
		}
		return fmt.Sprintf("the allowed address received %s tokens; payout %v; sweeps %v; the payout wallet holds %s",
			e.tokens(t, allowed).Sub(before), (&devEnv{in: e.in}).payoutStatus(t, id, e.in.KeyA), sweeps, e.tokens(t, tokWallet))
	})
	sweeps := e.outbounds(t, "erc20/usdt", entoutbound.PurposeSweep)
	if len(sweeps) != 1 || !sameAddress(sweeps[0].FromAddress, held) || len(sweeps[0].Outputs) != 1 || !sameAddress(sweeps[0].Outputs[0].Address, tokWallet) {
		t.Fatalf("sweeps %+v, want one from %s to the payout wallet %s", sweeps, held, tokWallet)
	}
	if rc := an.Receipt(t, sweeps[0].Txid); !rc.OK || !sameAddress(rc.From, held) || !sameAddress(rc.To, e.token) {
		t.Errorf("the sweep %s: receipt %+v, want a token transfer from %s", sweeps[0].Txid, rc, held)
	}
	if info := (&devEnv{in: e.in}).payoutStatus(t, id, e.in.KeyA); info["status"] != "done" || !sameAddress(fmt.Sprint(info["from"]), tokWallet) {
		t.Errorf("the token payout: %v, want done from the payout wallet", info)
	}
	if got, want := e.spent(t, "erc20/usdt"), fwdTok.ValueForwardedCoin.Add(amount); !got.Equal(want) {
		t.Errorf("the signer counted %s erc20/usdt today, want %s (the forward and the payout; the sweep and top-ups are the seed's own)", got, want)
	}
}
