package signer_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/tron/httpapi"
	"github.com/payhook/payhook/chains/tron/trontest"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
	"github.com/payhook/payhook/server/signer"
)

// tronEnv is a Service over seed with a policy for project 1's trx and
// trc20/usdt on regtest: dest allowed, a cap of 10 a day each.
type tronEnv struct {
	keys  *chains.Keys
	reg   *chains.Registry
	pol   *signer.Policy
	state string
	trx   chains.Ticker
	usdt  chains.Ticker
	dest  string
	other string
}

func newTronEnv(t *testing.T) *tronEnv {
	t.Helper()
	keys, _ := chains.NewKeys(seed)
	reg, err := family.DefaultRegistry().WithNet("trx", chains.Regtest)
	if err == nil {
		reg, err = reg.WithNet("trc20/usdt", chains.Regtest)
	}
	if err != nil {
		t.Fatal(err)
	}
	trx, _ := reg.Lookup("trx")
	usdt, _ := reg.Lookup("trc20/usdt")
	d, _ := chains.NewDeriver(bytes.Repeat([]byte{9}, 32), family.All())
	dest, _ := d.Address(trx, 1)
	other, _ := d.Address(trx, 2)
	pol, err := signer.LoadPolicy(strings.NewReader(fmt.Sprintf(`{"networks": {"trx": "regtest", "trc20/usdt": "regtest"},
		"contracts": {"trc20/usdt": %q},
		"projects": [{"project": 1, "ticker": "trx", "destinations": [%[2]q], "daily_cap": "10"},
		             {"project": 1, "ticker": "trc20/usdt", "destinations": [%[2]q], "daily_cap": "10"}]}`, usdt.Contract, dest)), family.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &tronEnv{keys: keys, reg: family.DefaultRegistry(), pol: pol, state: filepath.Join(t.TempDir(), "state.json"),
		trx: trx, usdt: usdt, dest: dest, other: other}
}

func (e *tronEnv) service(t *testing.T) *signer.Service {
	t.Helper()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	s, err := signer.NewService(signer.Config{Keys: e.keys, Registry: e.reg, Policy: e.pol, StateFile: e.state, Now: func() time.Time { return now }},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// addr returns the seed's address of k on trx (TRON addresses are the same
// for a token).
func (e *tronEnv) addr(t *testing.T, k chains.KeyRef) string {
	t.Helper()
	if k.Operator {
		return must(e.keys.OperatorAddress(e.trx))
	}
	priv, err := e.keys.Secp256k1(e.trx, k.Index)
	if err != nil {
		t.Fatal(err)
	}
	return must(chains.PubKeyAddress(e.trx, priv.PubKey()))
}

// tronAccount is addr as the protobuf carries it: 0x41 and 20 bytes.
func tronAccount(t *testing.T, addr string) []byte {
	t.Helper()
	payload, version, err := base58.CheckDecode(addr)
	if err != nil || version != 0x41 || len(payload) != 20 {
		t.Fatalf("%s: not a TRON address", addr)
	}
	return append([]byte{0x41}, payload...)
}

// tronContract is one contract of a raw_data: its type, type URL and
// encoded message.
type tronContract struct {
	typ   uint64
	url   string
	value []byte
}

// transferContract is a TransferContract of sun from owner to to.
func transferContract(t *testing.T, owner, to string, sun int64) tronContract {
	t.Helper()
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, tronAccount(t, owner))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, tronAccount(t, to))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(sun))
	return tronContract{1, "type.googleapis.com/protocol.TransferContract", b}
}

// trigger is a TriggerSmartContract's fields.
type trigger struct {
	owner, contract           string
	callValue, callTokenValue int64
	tokenID                   int64
	data                      []byte
}

// transferData is the call data of transfer(to, amount).
func transferData(t *testing.T, to string, amount int64) []byte {
	t.Helper()
	d := []byte{0xa9, 0x05, 0x9c, 0xbb}
	d = append(d, make([]byte, 12)...)
	d = append(d, tronAccount(t, to)[1:]...)
	return append(d, big.NewInt(amount).FillBytes(make([]byte, 32))...)
}

// encode encodes tr as a TriggerSmartContract.
func (tr trigger) encode(t *testing.T) tronContract {
	t.Helper()
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, tronAccount(t, tr.owner))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, tronAccount(t, tr.contract))
	for _, f := range []struct {
		num protowire.Number
		v   int64
	}{{3, tr.callValue}, {5, tr.callTokenValue}, {6, tr.tokenID}} {
		if f.v != 0 {
			b = protowire.AppendTag(b, f.num, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(f.v))
		}
	}
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, tr.data)
	return tronContract{31, "type.googleapis.com/protocol.TriggerSmartContract", b}
}

// rawData encodes a raw_data of cs, as java-tron builds one.
func rawData(cs ...tronContract) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0x12, 0x34})
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendBytes(b, bytes.Repeat([]byte{0xab}, 8))
	b = protowire.AppendTag(b, 8, protowire.VarintType)
	b = protowire.AppendVarint(b, 1_800_000_060_000)
	for _, c := range cs {
		var anyMsg []byte
		anyMsg = protowire.AppendTag(anyMsg, 1, protowire.BytesType)
		anyMsg = protowire.AppendString(anyMsg, c.url)
		anyMsg = protowire.AppendTag(anyMsg, 2, protowire.BytesType)
		anyMsg = protowire.AppendBytes(anyMsg, c.value)
		var cm []byte
		cm = protowire.AppendTag(cm, 1, protowire.VarintType)
		cm = protowire.AppendVarint(cm, c.typ)
		cm = protowire.AppendTag(cm, 2, protowire.BytesType)
		cm = protowire.AppendBytes(cm, anyMsg)
		b = protowire.AppendTag(b, 11, protowire.BytesType)
		b = protowire.AppendBytes(b, cm)
	}
	b = protowire.AppendTag(b, 14, protowire.VarintType)
	b = protowire.AppendVarint(b, 1_800_000_000_000)
	if len(cs) == 1 && cs[0].typ == 31 {
		b = protowire.AppendTag(b, 18, protowire.VarintType)
		b = protowire.AppendVarint(b, 15_000_000)
	}
	return b
}

// tronRequest asks project 1's signature of raw under ticker with key;
// own are the keys named as the seed's own.
func tronRequest(ticker, outKey string, raw []byte, key chains.KeyRef, own ...chains.KeyRef) *signerv1.SignTronRequest {
	r := &signerv1.SignTronRequest{
		Context: &signerv1.SignContext{Ticker: ticker, Net: "regtest", Purpose: "forward", ProjectId: 1, Key: outKey},
		RawData: raw,
		Key:     &signerv1.KeyRef{Operator: key.Operator, Index: key.Index},
	}
	for _, k := range own {
		r.Own = append(r.Own, &signerv1.KeyRef{Operator: k.Operator, Index: k.Index})
	}
	return r
}

// TestSignTronPolicy: a TRX transfer and a token transfer to an allowed
// destination within the cap are signed by the key asked for; the same
// raw_data signed twice counts once against the cap; a destination not
// allowed, the cap exceeded, another contract, TRX under a token to an
// address that is not the seed's, a transaction from another address
// than the signing key's, and contracts payhook never builds are refused,
// each saying why.
func TestSignTronPolicy(t *testing.T) {
	e := newTronEnv(t)
	s := e.service(t)
	ctx := context.Background()
	k1 := chains.KeyRef{Index: 1}
	op := chains.KeyRef{Operator: true}
	from := e.addr(t, k1)

	// 6 TRX of the 10 a day, signed twice (under two outbound keys, as
	// a retry may): counted once.
	six := rawData(transferContract(t, from, e.dest, 6_000_000))
	for i := range 2 {
		resp, err := s.SignTron(ctx, tronRequest("trx", fmt.Sprintf("f1-%d", i), six, k1))
		if err != nil {
			t.Fatalf("signing %d: %v", i+1, err)
		}
		id := sha256.Sum256(six)
		sig := resp.GetSignature()
		if len(sig) != 65 {
			t.Fatalf("a signature of %d bytes", len(sig))
		}
		pub, _, err := ecdsa.RecoverCompact(append([]byte{sig[64]}, sig[:64]...), id[:])
		if err != nil || must(chains.PubKeyAddress(e.trx, pub)) != from {
			t.Errorf("the signature is not of %s's key: %v", from, err)
		}
	}
	// 4 more fit (6 + 4 = 10), unless the first was counted twice.
	if _, err := s.SignTron(ctx, tronRequest("trx", "f2", rawData(transferContract(t, from, e.dest, 4_000_000)), k1)); err != nil {
		t.Errorf("the rest of the cap: %v", err)
	}
	// The seed's own keys are not counted: 100 TRX to key 5, named own,
	// and from the operator.
	if _, err := s.SignTron(ctx, tronRequest("trx", "f3", rawData(transferContract(t, e.addr(t, op), e.addr(t, chains.KeyRef{Index: 5}), 100_000_000)), op, chains.KeyRef{Index: 5})); err != nil {
		t.Errorf("TRX to an own key: %v", err)
	}
	// Tokens: 7 of 10.
	usdt := e.usdt.Contract
	if _, err := s.SignTron(ctx, tronRequest("trc20/usdt", "f4", rawData(trigger{owner: from, contract: usdt, data: transferData(t, e.dest, 7_000_000)}.encode(t)), k1)); err != nil {
		t.Errorf("a token transfer: %v", err)
	}
	// A gas top-up: TRX from the operator to key 1, named own.
	if _, err := s.SignTron(ctx, tronRequest("trc20/usdt", "f5", rawData(transferContract(t, e.addr(t, op), from, 30_000_000)), op, k1)); err != nil {
		t.Errorf("a gas top-up to an own key: %v", err)
	}

	other := e.other // as a contract: not the policy's
	for name, c := range map[string]struct {
		req  *signerv1.SignTronRequest
		code codes.Code
		want string
	}{
		"destination not allowed": {tronRequest("trx", "r1", rawData(transferContract(t, from, e.other, 1)), k1),
			codes.PermissionDenied, "which project 1's trx policy does not allow"},
		"over the cap": {tronRequest("trx", "r2", rawData(transferContract(t, from, e.dest, 1)), k1),
			codes.PermissionDenied, "at most 10 trx a day (UTC); 0 left today, and this transaction sends 0.000001"},
		"token over the cap": {tronRequest("trc20/usdt", "r3", rawData(trigger{owner: from, contract: usdt, data: transferData(t, e.dest, 3_000_001)}.encode(t)), k1),
			codes.PermissionDenied, "at most 10 trc20/usdt a day (UTC); 3 left today, and this transaction sends 3.000001"},
		"token to a destination not allowed": {tronRequest("trc20/usdt", "r4", rawData(trigger{owner: from, contract: usdt, data: transferData(t, e.other, 1)}.encode(t)), k1),
			codes.PermissionDenied, "does not allow"},
		"another contract": {tronRequest("trc20/usdt", "r5", rawData(trigger{owner: from, contract: other, data: transferData(t, e.dest, 1)}.encode(t)), k1),
			codes.PermissionDenied, chains.ErrSignerRefused.Error() + ": the transaction calls " + other + ", not trc20/usdt's contract " + usdt},
		"TRX under a token to another address": {tronRequest("trc20/usdt", "r6", rawData(transferContract(t, e.addr(t, op), e.dest, 1)), op),
			codes.PermissionDenied, "pays TRX to " + e.dest + ", which is none of the seed's own keys"},
		"TRX under a token to a key not named own": {tronRequest("trc20/usdt", "r7", rawData(transferContract(t, e.addr(t, op), from, 1)), op),
			codes.PermissionDenied, "none of the seed's own keys"},
		"another owner than the key's": {tronRequest("trx", "r8", rawData(transferContract(t, e.addr(t, chains.KeyRef{Index: 2}), e.dest, 1)), k1),
			codes.InvalidArgument, "the transaction is sent from " + e.addr(t, chains.KeyRef{Index: 2}) + ", and key 1 controls " + from},
		"the operator's key on key 1's transaction": {tronRequest("trx", "r9", rawData(transferContract(t, from, e.dest, 1)), op),
			codes.InvalidArgument, "the operator's key controls"},
		"a token call with TRX": {tronRequest("trc20/usdt", "r10", rawData(trigger{owner: from, contract: usdt, callValue: 1, data: transferData(t, e.dest, 1)}.encode(t)), k1),
			codes.InvalidArgument, "also sends 1 sun"},
		"a token call with a TRC-10 token": {tronRequest("trc20/usdt", "r11", rawData(trigger{owner: from, contract: usdt, callTokenValue: 1, tokenID: 1000001, data: transferData(t, e.dest, 1)}.encode(t)), k1),
			codes.InvalidArgument, "TRC-10 token 1000001"},
		"another call": {tronRequest("trc20/usdt", "r12", rawData(trigger{owner: from, contract: usdt, data: append([]byte{0x09, 0x5e, 0xa7, 0xb3}, transferData(t, e.dest, 1)[4:]...)}.encode(t)), k1),
			codes.InvalidArgument, "data other than transfer(address,uint256)"},
		"a contract call under trx": {tronRequest("trx", "r13", rawData(trigger{owner: from, contract: usdt, data: transferData(t, e.dest, 1)}.encode(t)), k1),
			codes.InvalidArgument, "the signer signs TRX transfers of a native coin"},
		"two contracts": {tronRequest("trx", "r14", rawData(transferContract(t, from, e.dest, 1), transferContract(t, from, e.dest, 1)), k1),
			codes.InvalidArgument, "2 contracts, want 1"},
		"another contract type": {tronRequest("trx", "r15", rawData(tronContract{2, "type.googleapis.com/protocol.TransferAssetContract", transferContract(t, from, e.dest, 1).value}), k1),
			codes.InvalidArgument, "neither a TransferContract nor a TriggerSmartContract"},
		"garbage": {tronRequest("trx", "r16", []byte{0xff, 0xff}, k1),
			codes.InvalidArgument, "raw_data: malformed protobuf"},
		"a zero transfer": {tronRequest("trx", "r17", rawData(transferContract(t, from, e.dest, 0)), k1),
			codes.InvalidArgument, "a TRX transfer of 0 sun"},
		"not tron": {tronRequest("ltc", "r18", rawData(transferContract(t, from, e.dest, 1)), k1),
			codes.InvalidArgument, "this method signs the tron family"},
	} {
		_, err := s.SignTron(ctx, c.req)
		if code(err) != c.code || !strings.Contains(status.Convert(err).Message(), c.want) {
			t.Errorf("%s: %v, want %s saying %q", name, err, c.code, c.want)
		}
	}
}

// TestTronRemoteSigner: the TRON backend on the fake node, signing through
// the signer over mutual TLS, forwards a payment to an allowed destination
// (a token's with the operator's gas top-up); a forward to another
// destination is refused with chains.ErrSignerRefused and
// chains.ErrInvalidForward.
func TestTronRemoteSigner(t *testing.T) {
	for _, name := range []string{"trx", "trc20/usdt"} {
		t.Run(name, func(t *testing.T) {
			e := newTronEnv(t)
			tk := e.trx
			opts := trontest.Options{}
			contract := ""
			if name != "trx" {
				tk, contract = e.usdt, e.usdt.Contract
				opts.Contracts = []string{contract}
			}
			node, err := trontest.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(node.Close)
			client := serveSigner(t, e.service(t))
			b, err := httpapi.New(httpapi.Config{Ticker: tk, URL: node.URL(), Signer: client})
			if err != nil {
				t.Fatal(err)
			}
			d := trontest.NewDriver(node, tk, contract, e.keys, b)
			if err := d.FundOperator(); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			deriver, err := client.PublicDeriver(ctx, family.All())
			if err != nil {
				t.Fatal(err)
			}
			from, err := deriver.Address(tk, 0)
			if err != nil {
				t.Fatal(err)
			}
			txid, err := d.Pay(from, decimal.NewFromInt(20), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := node.Mine(1); err != nil {
				t.Fatal(err)
			}
			forward := func(id, to string) chains.Forward {
				return chains.Forward{ID: id, From: from, Purpose: chains.PurposeForward, ProjectID: 1,
					Inputs:  []chains.Transfer{{TxID: txid, To: from, Value: decimal.NewFromInt(20)}},
					Outputs: []chains.Output{{Address: to, Amount: decimal.NewFromInt(5)}}}
			}

			signed, err := b.Sign(ctx, forward("f1", e.dest))
			if err != nil {
				t.Fatalf("a forward to an allowed destination: %v", err)
			}
			if err := b.Send(ctx, signed); err != nil {
				t.Fatal(err)
			}
			if _, err := node.Mine(1); err != nil {
				t.Fatal(err)
			}
			if contract == "" {
				if got := node.Balance(e.dest); got != 5_000_000 {
					t.Errorf("the destination holds %d sun, want 5000000", got)
				}
			} else if got := node.TokenBalance(contract, e.dest); got.Cmp(big.NewInt(5_000_000)) != 0 {
				t.Errorf("the destination holds %s base units, want 5000000", got)
			}
			if st, err := b.State(ctx, chains.Transfer{TxID: signed.TxID, To: e.dest}); err != nil || !st.Executed {
				t.Errorf("state of the forward: %+v, %v", st, err)
			}

			_, err = b.Sign(ctx, forward("f2", e.other))
			if !errors.Is(err, chains.ErrSignerRefused) || !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), "does not allow") {
				t.Errorf("a forward to a destination not allowed: %v, want ErrSignerRefused", err)
			}
		})
	}
}
