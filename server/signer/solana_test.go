package signer_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"testing"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/solana/solanatest"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
	"github.com/payhook/payhook/server/signer"
)

// solEnv is an env whose policy is project 1's sol (a cap of 1 sol a
// day) and sol/usdc (100 a day, of mint) on regtest, dest allowed for
// both; from is the seed's Solana address of index 1, op the operator's.
type solEnv struct {
	*env
	sol, usdc chains.Ticker
	mint      solana.PublicKey
	from, op  solana.PublicKey
	dest      solana.PublicKey
	other     solana.PublicKey
}

func newSolanaEnv(t *testing.T, mint string) *solEnv {
	t.Helper()
	e := newEnv(t)
	reg, err := family.DefaultRegistry().WithNet("sol", chains.Regtest)
	if err == nil {
		reg, err = reg.WithNet("sol/usdc", chains.Regtest)
	}
	if err != nil {
		t.Fatal(err)
	}
	sol, _ := reg.Lookup("sol")
	usdc, _ := reg.Lookup("sol/usdc")
	d, _ := chains.NewDeriver(bytes.Repeat([]byte{9}, 32), family.All())
	dest, _ := d.Address(sol, 1)
	other, _ := d.Address(sol, 2)
	e.pol, err = signer.LoadPolicy(strings.NewReader(fmt.Sprintf(`{"networks": {"sol": "regtest", "sol/usdc": "regtest"},
		"contracts": {"sol/usdc": %q},
		"projects": [{"project": 1, "ticker": "sol", "destinations": [%[2]q], "daily_cap": "1"},
		             {"project": 1, "ticker": "sol/usdc", "destinations": [%[2]q], "daily_cap": "100"}]}`, mint, dest)), family.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	local, _ := chains.NewDeriver(seed, family.All())
	return &solEnv{env: e, sol: sol, usdc: usdc, mint: solana.MustPublicKeyFromBase58(mint),
		from: solana.MustPublicKeyFromBase58(must(local.Address(sol, 1))), op: solana.MustPublicKeyFromBase58(must(e.keys.OperatorAddress(sol))),
		dest: solana.MustPublicKeyFromBase58(dest), other: solana.MustPublicKeyFromBase58(other)}
}

// testMint is the unit tests' SPL mint.
var testMint = solana.PublicKeyFromBytes(bytes.Repeat([]byte{4}, 32)).String()

// message is a legacy message of ixs paid by payer, its serialisation and
// the keys of its signers in order (from: index 1, op: the operator's).
func (e *solEnv) message(t *testing.T, payer solana.PublicKey, ixs ...solana.Instruction) ([]byte, []*signerv1.KeyRef) {
	t.Helper()
	tx, err := solana.NewTransaction(ixs, solana.Hash{7}, solana.TransactionPayer(payer))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tx.Message.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var keys []*signerv1.KeyRef
	for _, k := range tx.Message.Signers() {
		switch k {
		case e.from:
			keys = append(keys, &signerv1.KeyRef{Index: 1})
		case e.op:
			keys = append(keys, &signerv1.KeyRef{Operator: true})
		default:
			t.Fatalf("signer %s is none of the test's keys", k)
		}
	}
	return raw, keys
}

// native is a SOL forward as the backend builds it: lamports from from to
// to, 1000 lamports swept to the operator, from paying the fee.
func (e *solEnv) native(t *testing.T, lamports uint64, to solana.PublicKey) ([]byte, []*signerv1.KeyRef) {
	t.Helper()
	return e.message(t, e.from, system.NewTransferInstruction(lamports, e.from, to).Build(), system.NewTransferInstruction(1000, e.from, e.op).Build())
}

// tokenForward is an SPL forward as the backend builds it: the creation
// of wallet's token account of mint and a TransferChecked of amount from
// from's, the operator paying the fee and the rent.
func (e *solEnv) tokenForward(t *testing.T, amount uint64, wallet, mint solana.PublicKey) ([]byte, []*signerv1.KeyRef) {
	t.Helper()
	src, _, _ := solana.FindAssociatedTokenAddress(e.from, mint)
	dst, _, _ := solana.FindAssociatedTokenAddress(wallet, mint)
	return e.message(t, e.op, createATAIdempotent(e.op, wallet, mint),
		token.NewTransferCheckedInstruction(amount, uint8(e.usdc.Decimals), src, mint, dst, e.from, nil).Build())
}

// createATAIdempotent is the Associated Token Account program's
// CreateIdempotent, as chains/solana/rpc builds it.
func createATAIdempotent(payer, wallet, mint solana.PublicKey) solana.Instruction {
	ix := ata.NewCreateInstruction(payer, wallet, mint).Build()
	return solana.NewInstruction(solana.SPLAssociatedTokenAccountProgramID, ix.Accounts(), []byte{1})
}

// solRequest asks to sign msg under ticker for project 1.
func solRequest(ticker, key string, msg []byte, keys []*signerv1.KeyRef) *signerv1.SignSolanaRequest {
	return &signerv1.SignSolanaRequest{Context: &signerv1.SignContext{Ticker: ticker, Net: "regtest", Purpose: chains.PurposeForward, ProjectId: 1, Key: key},
		Message: msg, Keys: keys}
}

// verify checks that sigs are msg's signers' signatures of it.
func verify(t *testing.T, msg []byte, sigs [][]byte) {
	t.Helper()
	var m solana.Message
	if err := m.UnmarshalLegacy(bin.NewBinDecoder(msg)); err != nil {
		t.Fatal(err)
	}
	signers := m.Signers()
	if len(sigs) != len(signers) {
		t.Fatalf("%d signatures for %d signers", len(sigs), len(signers))
	}
	for i, k := range signers {
		if !ed25519.Verify(k[:], msg, sigs[i]) {
			t.Errorf("signature %d does not verify for %s", i, k)
		}
	}
}

// TestSignSolanaForwards: a SOL forward (an output to an allowed
// destination, the rest to the operator) and an SPL forward (its token
// account created, a TransferChecked to it) are signed by each signer's
// key, with the bytes the process's own signer gives.
func TestSignSolanaForwards(t *testing.T) {
	e := newSolanaEnv(t, testMint)
	s := e.service(t)
	ctx := context.Background()
	nativeMsg, nativeKeys := e.native(t, 100_000_000, e.dest)
	tokenMsg, tokenKeys := e.tokenForward(t, 5_000_000, e.dest, e.mint)
	for name, c := range map[string]struct {
		tk   chains.Ticker
		msg  []byte
		keys []*signerv1.KeyRef
	}{
		"sol":      {e.sol, nativeMsg, nativeKeys},
		"sol/usdc": {e.usdc, tokenMsg, tokenKeys},
	} {
		resp, err := s.SignSolana(ctx, solRequest(c.tk.Ticker, "f-"+name, c.msg, c.keys))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		verify(t, c.msg, resp.GetSignatures())
		refs := make([]chains.KeyRef, len(c.keys))
		for i, k := range c.keys {
			refs[i] = chains.KeyRef{Operator: k.GetOperator(), Index: k.GetIndex()}
		}
		local, err := keysign.New(e.keys).SignSolana(ctx, chains.SolanaSignRequest{Context: chains.SignContext{Ticker: c.tk}, Message: c.msg, Keys: refs})
		if err != nil || len(local) != len(resp.GetSignatures()) {
			t.Fatalf("%s: keysign.Local: %v", name, err)
		}
		for i := range local {
			if !bytes.Equal(local[i], resp.GetSignatures()[i]) {
				t.Errorf("%s: signature %d differs from keysign.Local's", name, i)
			}
		}
	}
}

// TestSignSolanaCap: the day's SOL cap counts what leaves for
// destinations (not what goes to the seed's own addresses: the operator's,
// or those the request names); the same message signed twice counts once,
// another one counts anew and is refused over the cap.
func TestSignSolanaCap(t *testing.T) {
	e := newSolanaEnv(t, testMint)
	s := e.service(t)
	ctx := context.Background()
	msg, keys := e.native(t, 600_000_000, e.dest)
	for i := range 2 {
		if _, err := s.SignSolana(ctx, solRequest("sol", "k1", msg, keys)); err != nil {
			t.Fatalf("signing %d of the same message: %v", i+1, err)
		}
	}
	// Under another outbound key, the same message still counts once.
	if _, err := s.SignSolana(ctx, solRequest("sol", "k2", msg, keys)); err != nil {
		t.Fatalf("the same message under another key: %v", err)
	}
	msg2, keys2 := e.native(t, 500_000_000, e.dest)
	_, err := s.SignSolana(ctx, solRequest("sol", "k1", msg2, keys2))
	if want := "at most 1 sol a day (UTC); 0.4 left today, and this transaction sends 0.5"; code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("another message over the cap: %v, want PERMISSION_DENIED saying %q", err, want)
	}
	msg3, keys3 := e.native(t, 400_000_000, e.dest)
	if _, err := s.SignSolana(ctx, solRequest("sol", "k3", msg3, keys3)); err != nil {
		t.Errorf("the rest of the cap: %v", err)
	}
	// A sweep into another of the seed's addresses, which the request
	// names (Own), stays: not a destination, not counted.
	local, _ := chains.NewDeriver(seed, family.All())
	own := solana.MustPublicKeyFromBase58(must(local.Address(e.sol, 5)))
	msg4, keys4 := e.native(t, 2_000_000_000, own)
	r := solRequest("sol", "k4", msg4, keys4)
	if _, err := s.SignSolana(ctx, r); code(err) != codes.PermissionDenied {
		t.Errorf("a sweep to an address the request does not name as own: %v, want PERMISSION_DENIED", err)
	}
	r.Own = []*signerv1.KeyRef{{Index: 5}}
	if _, err := s.SignSolana(ctx, r); err != nil {
		t.Errorf("a sweep to an own address with the cap spent: %v", err)
	}
}

// TestSignSolanaRefusals: a message paying a destination the policy does
// not allow (SOL, tokens, a token account created for a stranger), of
// another mint, or of a project without a policy is refused
// (PERMISSION_DENIED, saying why); one with an instruction or program
// payhook does not use, signers that are not the keys named, or bytes
// that are not a message is malformed (INVALID_ARGUMENT, naming it).
func TestSignSolanaRefusals(t *testing.T) {
	e := newSolanaEnv(t, testMint)
	s := e.service(t)
	ctx := context.Background()
	otherMint := solana.PublicKeyFromBytes(bytes.Repeat([]byte{5}, 32))
	srcATA, _, _ := solana.FindAssociatedTokenAddress(e.from, e.mint)
	destATA, _, _ := solana.FindAssociatedTokenAddress(e.dest, e.mint)

	type tc struct {
		req  *signerv1.SignSolanaRequest
		code codes.Code
		want string
	}
	cases := map[string]tc{}
	add := func(name, ticker string, msg []byte, keys []*signerv1.KeyRef, c codes.Code, want string) {
		cases[name] = tc{solRequest(ticker, name, msg, keys), c, want}
	}
	msg, keys := e.native(t, 1000, e.other)
	add("sol to a stranger", "sol", msg, keys, codes.PermissionDenied, "which project 1's sol policy does not allow")
	msg, keys = e.tokenForward(t, 1000, e.other, e.mint)
	add("tokens to a stranger", "sol/usdc", msg, keys, codes.PermissionDenied, "which project 1's sol/usdc policy does not allow")
	// A TransferChecked to the allowed wallet's token account, after a
	// creation for a stranger.
	msg, keys = e.message(t, e.op, createATAIdempotent(e.op, e.other, e.mint),
		token.NewTransferCheckedInstruction(1000, 6, srcATA, e.mint, destATA, e.from, nil).Build())
	add("token account created for a stranger", "sol/usdc", msg, keys, codes.PermissionDenied, e.other.String()+" (instruction 0 creates its token account)")
	// Tokens to a token account that is no allowed wallet's.
	msg, keys = e.message(t, e.op, token.NewTransferCheckedInstruction(1000, 6, srcATA, e.mint, e.dest, e.from, nil).Build())
	add("tokens to a token account of no allowed wallet", "sol/usdc", msg, keys, codes.PermissionDenied, "the associated token account of none of the allowed destinations")
	msg, keys = e.tokenForward(t, 1000, e.dest, otherMint)
	add("wrong mint", "sol/usdc", msg, keys, codes.PermissionDenied, "not sol/usdc's mint "+e.mint.String())
	msg, keys = e.message(t, e.op, token.NewTransferCheckedInstruction(1000, 6, srcATA, otherMint, destATA, e.from, nil).Build())
	add("wrong mint in the transfer", "sol/usdc", msg, keys, codes.PermissionDenied, "transfers mint "+otherMint.String())
	msg, keys = e.message(t, e.from, system.NewTransferInstruction(1000, e.from, e.dest).Build())
	add("sol under a token", "sol/usdc", msg, keys, codes.PermissionDenied, "only top-ups to them are signed under a token")
	msg, keys = e.native(t, 1000, e.dest)
	r := solRequest("sol", "no policy", msg, keys)
	r.Context.ProjectId = 2
	cases["project without a policy"] = tc{r, codes.PermissionDenied, "project 2 has no sol policy"}

	memo := solana.MustPublicKeyFromBase58("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
	msg, keys = e.message(t, e.from, system.NewTransferInstruction(1000, e.from, e.dest).Build(),
		solana.NewInstruction(memo, solana.AccountMetaSlice{solana.Meta(e.from).SIGNER()}, []byte("hi")))
	add("unknown program", "sol", msg, keys, codes.InvalidArgument, "instruction 1: calls program "+memo.String())
	msg, keys = e.message(t, e.from, system.NewAssignInstruction(memo, e.from).Build())
	add("another System instruction", "sol", msg, keys, codes.InvalidArgument, "System Program Assign")
	msg, keys = e.message(t, e.op, token.NewApproveInstruction(1000, srcATA, e.other, e.from, nil).Build())
	add("another SPL Token instruction", "sol/usdc", msg, keys, codes.InvalidArgument, "SPL Token Approve")
	msg, keys = e.tokenForward(t, 1000, e.dest, e.mint)
	add("a token instruction under sol", "sol", msg, keys, codes.InvalidArgument, "under sol, a native coin")
	msg, keys = e.native(t, 1000, e.dest)
	add("a signer key mismatch", "sol", msg, []*signerv1.KeyRef{{Index: 2}}, codes.InvalidArgument, "keys[0]: key 2 is")
	add("the operator for the payment address", "sol", msg, []*signerv1.KeyRef{{Operator: true}}, codes.InvalidArgument, "keys[0]: the operator's key is")
	add("too many keys", "sol", msg, []*signerv1.KeyRef{{Index: 1}, {Operator: true}}, codes.InvalidArgument, "2 keys for a message that 1 signatures sign")
	add("trailing bytes", "sol", append(bytes.Clone(msg), 0), keys, codes.InvalidArgument, "not a message's exact serialisation")
	add("not a message", "sol", []byte{1, 0, 0, 200}, keys, codes.InvalidArgument, "not a Solana message")

	for name, c := range cases {
		_, err := s.SignSolana(ctx, c.req)
		if code(err) != c.code || !strings.Contains(status.Convert(err).Message(), c.want) {
			t.Errorf("%s: %v, want %s saying %q", name, err, c.code, c.want)
		}
	}
}

// TestSolanaRemoteForward: the Solana backend, signing through the
// remote signer over mutual TLS, forwards a payment (SOL, and SPL tokens)
// on the fake chain to an allowed destination, which receives it; a
// forward to a stranger fails with chains.ErrSignerRefused.
func TestSolanaRemoteForward(t *testing.T) {
	for _, name := range []string{"sol", "sol/usdc"} {
		t.Run(name, func(t *testing.T) {
			fake := solanatest.New(solanatest.Options{ConfirmedDepth: 1})
			t.Cleanup(fake.Close)
			e := newSolanaEnv(t, fake.Mint())
			tk := e.sol
			url := fake.URL()
			if name == "sol/usdc" {
				tk, url = e.usdc, url+"?mint="+fake.Mint()
			}
			b, err := rpc.New(rpc.Config{Ticker: tk, URL: url, Signer: serveSigner(t, e.env.service(t))})
			if err != nil {
				t.Fatal(err)
			}
			d := solanatest.NewDriver(fake, b, tk, e.keys)
			ctx := t.Context()
			local, _ := chains.NewDeriver(seed, family.All())
			from := must(local.Address(tk, 0))
			txid, err := d.Pay(from, tk.MinTransaction.Mul(decimal.NewFromInt(3)), false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Mine(5); err != nil {
				t.Fatal(err)
			}
			trs, err := b.Transfers(ctx, 0, 5, nil)
			if err != nil || len(trs) != 1 || trs[0].TxID != txid {
				t.Fatalf("Transfers = %+v, %v; want the payment %s", trs, err, txid)
			}
			if err := d.FundOperator(); err != nil {
				t.Fatal(err)
			}
			forward := func(id string, to solana.PublicKey) chains.Forward {
				return chains.Forward{ID: id, From: from, FromIndex: 0, Inputs: trs, Purpose: chains.PurposeForward, ProjectID: 1,
					Outputs: []chains.Output{{Address: to.String(), Amount: tk.MinTransaction}}, NetworkFee: tk.NetworkFeeEstimate}
			}

			_, err = d.Sign(ctx, forward("stranger", e.other))
			if !errors.Is(err, chains.ErrSignerRefused) || !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), "does not allow") {
				t.Fatalf("a forward to a stranger: %v, want ErrSignerRefused", err)
			}

			s, err := d.Sign(ctx, forward("allowed", e.dest))
			if err != nil {
				t.Fatalf("a forward to an allowed destination: %v", err)
			}
			if err := b.Send(ctx, s); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Mine(1); err != nil {
				t.Fatal(err)
			}
			if n := fake.Included(s.TxID); n != 1 {
				t.Fatalf("the forward is in %d slots, want 1", n)
			}
			want := uint64(tk.MinTransaction.Shift(tk.Decimals).IntPart())
			got := fake.Balance(e.dest.String())
			if tk.Token {
				got = fake.TokenBalance(e.dest.String())
			}
			if got != want {
				t.Errorf("the destination holds %d base units, want %d", got, want)
			}
		})
	}
}
