package signer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
	"github.com/payhook/payhook/server/signer"
)

// evmChainID is the chain id of the EVM policy (anvil's).
const evmChainID = 31337

// evmContract is the test token's contract in the EVM policy.
var evmContract = common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")

// evmEnv is a Service over seed with a policy for project 1's eth and
// erc20/usdt on regtest, chain id evmChainID, the token at evmContract:
// dest allowed for both, caps of 1 eth and 100 usdt a day.
type evmEnv struct {
	*env
	eth, usdt chains.Ticker
	// dest is allowed, stranger is not (both another seed's).
	dest, stranger common.Address
	derive         *chains.Deriver // of seed: the signer's own addresses
}

func newEVMEnv(t *testing.T) *evmEnv {
	t.Helper()
	keys, _ := chains.NewKeys(seed)
	reg := family.DefaultRegistry()
	for _, name := range []string{"eth", "erc20/usdt"} {
		reg, _ = reg.WithNet(name, chains.Regtest)
	}
	eth, _ := reg.Lookup("eth")
	usdt, _ := reg.Lookup("erc20/usdt")
	other, _ := chains.NewDeriver(bytes.Repeat([]byte{9}, 32), family.All())
	dest, _ := other.Address(eth, 1)
	stranger, _ := other.Address(eth, 2)
	pol, err := signer.LoadPolicy(strings.NewReader(fmt.Sprintf(`{
		"networks": {"eth": "regtest", "erc20/usdt": "regtest"},
		"chain_ids": {"eth": %d, "erc20/usdt": %d},
		"contracts": {"erc20/usdt": %q},
		"projects": [
			{"project": 1, "ticker": "eth", "destinations": [%q], "daily_cap": "1"},
			{"project": 1, "ticker": "erc20/usdt", "destinations": [%q], "daily_cap": "100"}]}`,
		evmChainID, evmChainID, evmContract.Hex(), dest, dest)), family.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	derive, _ := chains.NewDeriver(seed, family.All())
	return &evmEnv{
		env: &env{keys: keys, reg: family.DefaultRegistry(), pol: pol, state: filepath.Join(t.TempDir(), "state.json"),
			now: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)},
		eth: eth, usdt: usdt, dest: common.HexToAddress(dest), stranger: common.HexToAddress(stranger), derive: derive,
	}
}

// own is the seed's address of index.
func (e *evmEnv) own(t *testing.T, index uint32) common.Address {
	t.Helper()
	a, err := e.derive.Address(e.eth, index)
	if err != nil {
		t.Fatal(err)
	}
	return common.HexToAddress(a)
}

// operator is the seed's operator address.
func (e *evmEnv) operator(t *testing.T) common.Address {
	t.Helper()
	a, err := e.keys.OperatorAddress(e.eth)
	if err != nil {
		t.Fatal(err)
	}
	return common.HexToAddress(a)
}

// evmTx is an unsigned EIP-1559 transaction for evmChainID (to nil: a
// contract creation).
func evmTx(to *common.Address, nonce uint64, value *big.Int, data []byte) []byte {
	raw, err := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(evmChainID), Nonce: nonce, GasTipCap: big.NewInt(1e9),
		GasFeeCap: big.NewInt(3e9), Gas: 60000, To: to, Value: value, Data: data}).MarshalBinary()
	if err != nil {
		panic(err)
	}
	return raw
}

// transferCall is the call data of transfer(to, amount).
func transferCall(to common.Address, amount *big.Int) []byte {
	return append(append([]byte{0xa9, 0x05, 0x9c, 0xbb}, common.LeftPadBytes(to.Bytes(), 32)...), common.LeftPadBytes(amount.Bytes(), 32)...)
}

// units is v coins of decimals in base units.
func units(v string, decimals int32) *big.Int {
	d, ok := new(big.Float).SetPrec(256).SetString(v)
	if !ok {
		panic(v)
	}
	d.Mul(d, new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	i, _ := d.Int(nil)
	return i
}

// evmRequest asks to sign raw of ticker for project 1 with the key of
// index 1, naming own as the seed's keys it may pay.
func evmRequest(ticker, key string, raw []byte, own ...uint32) *signerv1.SignEvmRequest {
	r := &signerv1.SignEvmRequest{
		Context: &signerv1.SignContext{Ticker: ticker, Net: "regtest", Purpose: "forward", ProjectId: 1, Key: key},
		Tx:      raw, ChainId: fmt.Sprint(evmChainID), Key: &signerv1.KeyRef{Index: 1},
	}
	for _, i := range own {
		r.Own = append(r.Own, &signerv1.KeyRef{Index: i})
	}
	return r
}

// wantRefused fails t unless err is code with a message saying want.
func wantRefused(t *testing.T, what string, err error, c codes.Code, want string) {
	t.Helper()
	if code(err) != c || !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("%s: %v, want %s saying %q", what, err, c, want)
	}
}

// TestSignEvmNative: a value transfer of eth to an allowed destination is
// signed, by the key asked, for the policy's chain id, with the bytes
// keysign.Local signs (RFC 6979: deterministic); the same transaction
// signed again counts once against the daily cap, another one anew, and
// one over the cap is refused; a legacy transaction is signed under
// EIP-155. Refused: a stranger, call data, a contract creation, another
// chain id (asked, or in the transaction), another transaction type, and
// an own key that is not the recipient. The seed's own addresses (the
// operator's, a key the request names) are signed without counting.
func TestSignEvmNative(t *testing.T) {
	e := newEVMEnv(t)
	s := e.service(t)
	ctx := context.Background()
	dest := e.dest
	raw := evmTx(&dest, 0, units("0.6", 18), nil)
	resp, err := s.SignEvm(ctx, evmRequest("eth", "f1", raw))
	if err != nil {
		t.Fatal(err)
	}
	signed := new(types.Transaction)
	if err := signed.UnmarshalBinary(resp.GetTx()); err != nil {
		t.Fatalf("the signed transaction: %v", err)
	}
	ethSigner := types.LatestSignerForChainID(big.NewInt(evmChainID))
	if from, err := types.Sender(ethSigner, signed); err != nil || from != e.own(t, 1) {
		t.Errorf("signed by %s (%v), want the key of index 1, %s", from, err, e.own(t, 1))
	}
	unsigned := new(types.Transaction)
	_ = unsigned.UnmarshalBinary(raw)
	if ethSigner.Hash(signed) != ethSigner.Hash(unsigned) {
		t.Errorf("the signer signed another transaction")
	}
	local, err := keysign.New(e.keys).SignEVM(ctx, chains.EVMSignRequest{
		Context: chains.SignContext{Ticker: e.eth, Purpose: "forward", ProjectID: 1, Key: "f1"}, Tx: raw, ChainID: fmt.Sprint(evmChainID), Key: chains.KeyRef{Index: 1}})
	if err != nil || !bytes.Equal(local, resp.GetTx()) {
		t.Errorf("the signer's transaction differs from keysign.Local's (%v)", err)
	}

	// The same transaction again (a retry after a crash): counted once.
	if again, err := s.SignEvm(ctx, evmRequest("eth", "f1", raw)); err != nil || !bytes.Equal(again.GetTx(), resp.GetTx()) {
		t.Errorf("the same transaction again: %v", err)
	}
	// Another transaction, even under the same key, counts anew.
	_, err = s.SignEvm(ctx, evmRequest("eth", "f1", evmTx(&dest, 1, units("0.5", 18), nil)))
	wantRefused(t, "over the cap", err, codes.PermissionDenied, "at most 1 eth a day (UTC); 0.4 left today, and this transaction sends 0.5")
	if _, err := s.SignEvm(ctx, evmRequest("eth", "f2", evmTx(&dest, 1, units("0.4", 18), nil))); err != nil {
		t.Errorf("the rest of the cap: %v", err)
	}

	// The seed's own addresses: signed though the cap is reached.
	op := e.operator(t)
	if _, err := s.SignEvm(ctx, evmRequest("eth", "own1", evmTx(&op, 2, units("5", 18), nil))); err != nil {
		t.Errorf("to the operator's address: %v", err)
	}
	seven := e.own(t, 7)
	if _, err := s.SignEvm(ctx, evmRequest("eth", "own2", evmTx(&seven, 3, units("5", 18), nil), 7)); err != nil {
		t.Errorf("to an own key the request names: %v", err)
	}

	// A legacy transaction (a chain without a base fee): signed for the
	// policy's chain id (EIP-155).
	legacyRaw, _ := types.NewTx(&types.LegacyTx{Nonce: 4, GasPrice: big.NewInt(1e9), Gas: 21000, To: &op, Value: big.NewInt(1)}).MarshalBinary()
	if resp, err := s.SignEvm(ctx, evmRequest("eth", "own3", legacyRaw)); err != nil {
		t.Errorf("a legacy transaction: %v", err)
	} else {
		legacy := new(types.Transaction)
		if err := legacy.UnmarshalBinary(resp.GetTx()); err != nil || !legacy.Protected() || legacy.ChainId().Int64() != evmChainID {
			t.Errorf("the signed legacy transaction: %v, protected %v, chain id %v", err, legacy.Protected(), legacy.ChainId())
		}
	}

	stranger := e.stranger
	otherChain := evmRequest("eth", "r2", evmTx(&dest, 5, big.NewInt(1), nil))
	otherChain.ChainId = "1"
	mainnet := evmRequest("eth", "r11", raw)
	mainnet.Context.Net = "mainnet"
	ltcTicker := evmRequest("eth", "r12", raw)
	ltcTicker.Context.Ticker = "ltc"
	project2 := evmRequest("eth", "r13", raw)
	project2.Context.ProjectId = 2
	txOtherChain, _ := types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1), Nonce: 5, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(1), Gas: 21000, To: &dest, Value: big.NewInt(1)}).MarshalBinary()
	accessList, _ := types.NewTx(&types.AccessListTx{ChainID: big.NewInt(evmChainID), Nonce: 5, GasPrice: big.NewInt(1), Gas: 21000, To: &op, Value: big.NewInt(1)}).MarshalBinary()
	for name, c := range map[string]struct {
		req  *signerv1.SignEvmRequest
		code codes.Code
		want string
	}{
		"a stranger":                      {evmRequest("eth", "r1", evmTx(&stranger, 5, big.NewInt(1), nil)), codes.PermissionDenied, "which project 1's eth policy does not allow"},
		"another chain id asked":          {otherChain, codes.PermissionDenied, "the signer's policy signs for chain id 31337; the server asked for \"1\""},
		"another chain id in the tx":      {evmRequest("eth", "r3", txOtherChain), codes.PermissionDenied, "the transaction is for chain id 1, not 31337"},
		"call data on a native ticker":    {evmRequest("eth", "r4", evmTx(&dest, 5, big.NewInt(1), transferCall(dest, big.NewInt(1)))), codes.InvalidArgument, "with call data"},
		"call data to own":                {evmRequest("eth", "r5", evmTx(&op, 5, big.NewInt(0), []byte{1, 2, 3, 4})), codes.InvalidArgument, "with call data"},
		"a contract creation":             {evmRequest("eth", "r6", evmTx(nil, 5, big.NewInt(0), []byte{0x60, 0x00})), codes.InvalidArgument, "creates a contract"},
		"an access-list transaction":      {evmRequest("eth", "r7", accessList), codes.InvalidArgument, "a transaction of type 1"},
		"an own key that is not it":       {evmRequest("eth", "r8", evmTx(&stranger, 5, big.NewInt(1), nil), 7), codes.PermissionDenied, "does not allow"},
		"no transaction":                  {evmRequest("eth", "r9", nil), codes.InvalidArgument, "a transaction of 0 bytes"},
		"not a transaction":               {evmRequest("eth", "r10", []byte{2, 1, 2, 3}), codes.InvalidArgument, "not an EVM transaction"},
		"another network":                 {mainnet, codes.PermissionDenied, "the signer's policy has it on regtest"},
		"a ticker of another family":      {ltcTicker, codes.InvalidArgument, "of the utxo family"},
		"a project without an eth policy": {project2, codes.PermissionDenied, "project 2 has no eth policy"},
	} {
		_, err := s.SignEvm(ctx, c.req)
		wantRefused(t, name, err, c.code, c.want)
	}

	// The day's count survives a restart.
	s = e.service(t)
	_, err = s.SignEvm(ctx, evmRequest("eth", "f3", evmTx(&dest, 6, big.NewInt(1), nil)))
	wantRefused(t, "over the cap after a restart", err, codes.PermissionDenied, "at most 1 eth a day")
	if _, err := s.SignEvm(ctx, evmRequest("eth", "f1", raw)); err != nil {
		t.Errorf("the first transaction again after a restart: %v", err)
	}
}

// TestSignEvmToken: under erc20/usdt, a call of the policy's contract's
// transfer(address,uint256) to an allowed destination is signed and
// counted in the token's units; one on another contract, with a value,
// with other call data, or to a stranger is refused. The native coin is
// signed under the token only to the seed's own addresses (a gas top-up
// to the operator's or to a key the request names), and not counted; to
// a stranger it is refused. A transfer to a key the request names (a
// sweep into the payout wallet) is signed without counting.
func TestSignEvmToken(t *testing.T) {
	e := newEVMEnv(t)
	s := e.service(t)
	ctx := context.Background()
	contract, dest, stranger, op, four := evmContract, e.dest, e.stranger, e.operator(t), e.own(t, 4)
	tok := func(v string) *big.Int { return units(v, e.usdt.Decimals) }

	resp, err := s.SignEvm(ctx, evmRequest("erc20/usdt", "t1", evmTx(&contract, 0, big.NewInt(0), transferCall(dest, tok("60")))))
	if err != nil {
		t.Fatal(err)
	}
	signed := new(types.Transaction)
	if err := signed.UnmarshalBinary(resp.GetTx()); err != nil || *signed.To() != contract || !bytes.Equal(signed.Data(), transferCall(dest, tok("60"))) {
		t.Fatalf("the signed token transfer: %v", err)
	}

	// Gas top-ups of a wei amount that, read as tokens, would pass the
	// cap: not counted.
	if _, err := s.SignEvm(ctx, evmRequest("erc20/usdt", "g1", evmTx(&four, 1, units("1", 18), nil), 4)); err != nil {
		t.Errorf("ETH to an own key under the token: %v", err)
	}
	if _, err := s.SignEvm(ctx, evmRequest("erc20/usdt", "g2", evmTx(&op, 2, units("1", 18), nil))); err != nil {
		t.Errorf("ETH to the operator under the token: %v", err)
	}
	// A sweep into an own key (the payout wallet), not in the policy:
	// signed, not counted.
	seven := e.own(t, 7)
	if _, err := s.SignEvm(ctx, evmRequest("erc20/usdt", "s1", evmTx(&contract, 3, big.NewInt(0), transferCall(seven, tok("1000"))), 7)); err != nil {
		t.Errorf("a sweep to an own key: %v", err)
	}
	// Nothing of the above counted: the rest of the cap is exactly 40.
	_, err = s.SignEvm(ctx, evmRequest("erc20/usdt", "t2", evmTx(&contract, 4, big.NewInt(0), transferCall(dest, tok("40.000001")))))
	wantRefused(t, "over the token's cap", err, codes.PermissionDenied, "at most 100 erc20/usdt a day (UTC); 40 left today, and this transaction sends 40.000001")
	if _, err := s.SignEvm(ctx, evmRequest("erc20/usdt", "t3", evmTx(&contract, 4, big.NewInt(0), transferCall(dest, tok("40"))))); err != nil {
		t.Errorf("the rest of the token's cap: %v", err)
	}

	other := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	approve := append([]byte{0x09, 0x5e, 0xa7, 0xb3}, transferCall(dest, big.NewInt(1))[4:]...)
	for name, c := range map[string]struct {
		req  *signerv1.SignEvmRequest
		code codes.Code
		want string
	}{
		"another contract":         {evmRequest("erc20/usdt", "r1", evmTx(&other, 5, big.NewInt(0), transferCall(dest, big.NewInt(1)))), codes.PermissionDenied, "not erc20/usdt's contract"},
		"a transfer with value":    {evmRequest("erc20/usdt", "r2", evmTx(&contract, 5, big.NewInt(1), transferCall(dest, big.NewInt(1)))), codes.InvalidArgument, "also sends 1 wei"},
		"approve":                  {evmRequest("erc20/usdt", "r3", evmTx(&contract, 5, big.NewInt(0), approve)), codes.InvalidArgument, "other than transfer(address,uint256)"},
		"transfer with extra data": {evmRequest("erc20/usdt", "r4", evmTx(&contract, 5, big.NewInt(0), append(transferCall(dest, big.NewInt(1)), 0))), codes.InvalidArgument, "other than transfer(address,uint256)"},
		"a token stranger":         {evmRequest("erc20/usdt", "r5", evmTx(&contract, 5, big.NewInt(0), transferCall(stranger, big.NewInt(1)))), codes.PermissionDenied, "which project 1's erc20/usdt policy does not allow"},
		"ETH to a stranger":        {evmRequest("erc20/usdt", "r6", evmTx(&stranger, 5, big.NewInt(1), nil)), codes.PermissionDenied, "none of the seed's own keys"},
		"ETH to an allowed dest":   {evmRequest("erc20/usdt", "r7", evmTx(&dest, 5, big.NewInt(1), nil)), codes.PermissionDenied, "none of the seed's own keys"},
		"ETH to a key not named":   {evmRequest("erc20/usdt", "r8", evmTx(&four, 5, big.NewInt(1), nil), 5), codes.PermissionDenied, "none of the seed's own keys"},
	} {
		_, err := s.SignEvm(ctx, c.req)
		wantRefused(t, name, err, c.code, c.want)
	}
}

// TestSignEvmClient: through the client over mutual TLS (the server's
// chains.Signer), an EVM transaction is signed as keysign.Local signs it,
// the own keys the request names reach the signer, and refusals (another
// chain id, a stranger) wrap ErrSignerRefused and ErrInvalidForward.
func TestSignEvmClient(t *testing.T) {
	e := newEVMEnv(t)
	c := serveSigner(t, e.service(t))
	ctx := context.Background()
	dest, seven, stranger := e.dest, e.own(t, 7), e.stranger
	req := func(key string, raw []byte, chainID string, own ...chains.KeyRef) chains.EVMSignRequest {
		return chains.EVMSignRequest{Context: chains.SignContext{Ticker: e.eth, Purpose: "payout", ProjectID: 1, Key: key},
			Tx: raw, ChainID: chainID, Key: chains.KeyRef{Index: 1}, Own: own}
	}
	r := req("k1", evmTx(&dest, 0, units("0.5", 18), nil), "31337")
	raw, err := c.SignEVM(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if local, err := keysign.New(e.keys).SignEVM(ctx, r); err != nil || !bytes.Equal(local, raw) {
		t.Errorf("the remote signer's transaction differs from keysign.Local's (%v)", err)
	}
	if _, err := c.SignEVM(ctx, req("k2", evmTx(&seven, 1, units("5", 18), nil), "31337", chains.KeyRef{Index: 7})); err != nil {
		t.Errorf("to an own key the request names: %v", err)
	}
	for name, r := range map[string]chains.EVMSignRequest{
		"another chain id": req("k3", evmTx(&dest, 2, big.NewInt(1), nil), "1"),
		"a stranger":       req("k4", evmTx(&stranger, 2, big.NewInt(1), nil), "31337"),
		"own not named":    req("k5", evmTx(&seven, 2, big.NewInt(1), nil), "31337"),
	} {
		if _, err := c.SignEVM(ctx, r); !errors.Is(err, chains.ErrSignerRefused) || !errors.Is(err, chains.ErrInvalidForward) {
			t.Errorf("%s: %v, want ErrSignerRefused and ErrInvalidForward", name, err)
		}
	}
}
