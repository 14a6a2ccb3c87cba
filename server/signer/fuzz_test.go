package signer_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"google.golang.org/grpc/codes"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
	"github.com/payhook/payhook/server/signer"
)

// FuzzSignRequests: whatever a server (perhaps compromised) sends, the
// signer answers a signature or an error of the codes it documents
// (INVALID_ARGUMENT for what it cannot read, PERMISSION_DENIED for what its
// policy refuses, UNIMPLEMENTED): never a panic, never another code. An EVM
// transaction it signs pays an allowed destination or one of the seed's own
// keys, whatever the request claims.
func FuzzSignRequests(f *testing.F) {
	e := newEnv(f)
	other, _ := chains.NewDeriver(bytes.Repeat([]byte{9}, 32), family.All())
	dest := map[string]string{}
	for _, tk := range []string{"eth", "trx", "sol"} {
		t, _ := family.DefaultRegistry().Lookup(tk)
		dest[tk], _ = other.Address(t, 1)
	}
	pol, err := signer.LoadPolicy(strings.NewReader(fmt.Sprintf(`{"networks": {"ltc": "regtest", "eth": "regtest"}, "chain_ids": {"eth": 31337},
		"projects": [{"project": 1, "ticker": "ltc", "destinations": [%q], "daily_cap": "1"},
		             {"project": 1, "ticker": "eth", "destinations": [%q], "daily_cap": "1"},
		             {"project": 1, "ticker": "trx", "destinations": [%q], "daily_cap": "1"},
		             {"project": 1, "ticker": "sol", "destinations": [%q], "daily_cap": "1"}]}`,
		e.dest, dest["eth"], dest["trx"], dest["sol"])), family.DefaultRegistry())
	if err != nil {
		f.Fatal(err)
	}
	svc, err := signer.NewService(signer.Config{Keys: e.keys, Registry: e.reg, Policy: pol, StateFile: filepath.Join(f.TempDir(), "state.json"),
		Now: func() time.Time { return e.now }}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	eth, _ := family.DefaultRegistry().Lookup("eth")
	own := map[string]bool{}
	for _, k := range []chains.KeyRef{{Operator: true}, {Index: 0}, {Index: 1}, {Index: 2}} {
		var a string
		if k.Operator {
			a, _ = e.keys.OperatorAddress(eth)
		} else {
			priv, _ := e.keys.Secp256k1(eth, k.Index)
			a, _ = chains.PubKeyAddress(eth, priv.PubKey())
		}
		own[strings.ToLower(a)] = true
	}

	to := common.HexToAddress(dest["eth"])
	stranger := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	for _, tx := range []*types.Transaction{
		types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(31337), Nonce: 1, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(2), Gas: 21000, To: &to, Value: big.NewInt(1e15)}),
		types.NewTx(&types.LegacyTx{Nonce: 1, GasPrice: big.NewInt(2), Gas: 21000, To: &stranger, Value: big.NewInt(1)}),
		types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1), Nonce: 1, Gas: 60000, To: &to, Data: append([]byte{0xa9, 0x05, 0x9c, 0xbb}, make([]byte, 64)...)}),
	} {
		raw, _ := tx.MarshalBinary()
		f.Add(uint8(1), raw, uint32(1), uint32(0))
	}
	f.Add(uint8(0), e.request(f, "k", e.dest, 1000).GetTx(), uint32(1), uint32(0))
	f.Add(uint8(2), []byte{0x0a, 0x02, 0x01, 0x02}, uint32(0), uint32(1))
	f.Add(uint8(3), []byte{1, 0, 1, 1}, uint32(0), uint32(1))

	f.Fuzz(func(t *testing.T, which uint8, tx []byte, key, ownKey uint32) {
		key, ownKey = key%(1<<31), ownKey%(1<<31)
		ctx := func(tk string) *signerv1.SignContext {
			net := "regtest"
			if tk == "trx" || tk == "sol" {
				net = ""
			}
			return &signerv1.SignContext{Ticker: tk, Net: net, Purpose: "payout", ProjectId: 1, Key: "fuzz"}
		}
		keyRef := &signerv1.KeyRef{Index: key}
		owns := []*signerv1.KeyRef{{Index: ownKey}}
		var err error
		switch which % 4 {
		case 0:
			_, err = svc.SignUtxo(t.Context(), &signerv1.SignUtxoRequest{Context: ctx("ltc"), Tx: tx,
				Inputs: []*signerv1.UtxoInput{{Value: 200_000_000, Script: e.script(t, e.dest), Key: key}}})
		case 1:
			var resp *signerv1.SignEvmResponse
			resp, err = svc.SignEvm(t.Context(), &signerv1.SignEvmRequest{Context: ctx("eth"), Tx: tx, ChainId: "31337", Key: keyRef, Own: owns})
			if err == nil {
				signed := new(types.Transaction)
				if err := signed.UnmarshalBinary(resp.GetTx()); err != nil {
					t.Fatalf("signed an undecodable transaction: %v", err)
				}
				recipient := strings.ToLower(signed.To().Hex())
				if len(signed.Data()) == 0 && recipient != strings.ToLower(to.Hex()) && !ownOf(t, e, eth, own, recipient, ownKey) {
					t.Fatalf("signed a transfer to %s, neither allowed nor own", recipient)
				}
			}
		case 2:
			_, err = svc.SignTron(t.Context(), &signerv1.SignTronRequest{Context: ctx("trx"), RawData: tx, Key: keyRef, Own: owns})
		case 3:
			_, err = svc.SignSolana(t.Context(), &signerv1.SignSolanaRequest{Context: ctx("sol"), Message: tx, Keys: []*signerv1.KeyRef{{Operator: true}, keyRef}, Own: owns})
		}
		if c := code(err); err != nil && c != codes.InvalidArgument && c != codes.PermissionDenied && c != codes.Unimplemented {
			t.Fatalf("request %d: code %s: %v", which%4, c, err)
		}
	})
}

// ownOf reports whether addr is one of the seed's own eth addresses: the
// operator's, a few indexes, or the index the request named own.
func ownOf(t *testing.T, e *env, eth chains.Ticker, own map[string]bool, addr string, ownKey uint32) bool {
	t.Helper()
	if own[addr] {
		return true
	}
	priv, err := e.keys.Secp256k1(eth, ownKey)
	if err != nil {
		return false
	}
	a, _ := chains.PubKeyAddress(eth, priv.PubKey())
	return strings.ToLower(a) == addr
}
