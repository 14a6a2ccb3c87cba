package rpc_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/solana/solanatest"
)

// lamports returns v SOL in lamports.
func units(tk chains.Ticker, v decimal.Decimal) uint64 { return uint64(v.Shift(tk.Decimals).IntPart()) }

// TestSendTwiceOneTransaction: sending the same signed forward twice
// before a slot, and again after it, puts one transaction on the chain,
// which pays each output exactly once.
func TestSendTwiceOneTransaction(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sol", "sol/usdc"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, name, nil)
			ctx := t.Context()
			for range 2 {
				if err := fx.b.Send(ctx, fx.signed); err != nil {
					t.Fatal(err)
				}
			}
			mine(t, fx.d, 1)
			if err := fx.b.Send(ctx, fx.signed); err != nil {
				t.Fatalf("Send after inclusion: %v", err)
			}
			mine(t, fx.d, 1)
			if n := fx.fake.Included(fx.signed.TxID); n != 1 {
				t.Fatalf("forward in %d slots, want 1", n)
			}
			to := fx.forward.Outputs[0].Address
			want := units(fx.tk, fx.forward.Outputs[0].Amount)
			got := fx.fake.Balance(to)
			if fx.tk.Token {
				got = fx.fake.TokenBalance(to)
			}
			if got != want {
				t.Errorf("%s holds %d base units, want %d", to, got, want)
			}
			st, err := fx.b.State(ctx, chains.Transfer{TxID: fx.signed.TxID})
			if err != nil || !st.Present || !st.Executed || st.Confirmations != 2 {
				t.Errorf("forward state %+v, %v", st, err)
			}
		})
	}
}

// TestNativeForwardEmptiesThePaymentAddress: a SOL forward pays the
// outputs, and what the inputs leave after the fee goes to the operator;
// dust beside them (below the rent-exempt minimum, which the runtime would
// refuse to leave) goes too, while other funds stay.
func TestNativeForwardEmptiesThePaymentAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		extra    uint64 // lamports paid to the address besides the input
		wantLeft uint64
	}{
		{"inputs only", 0, 0},
		{"dust beside", 1000, 0},
		{"another payment beside", 5_000_000, 5_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, "sol", nil)
			ctx := t.Context()
			from := fx.forward.From
			if tt.extra > 0 {
				if _, err := fx.fake.PaySOL(from, tt.extra); err != nil {
					t.Fatal(err)
				}
				mine(t, fx.d, 1)
			}
			op := operator(t, fx.tk)
			opBefore := fx.fake.Balance(op)
			s, err := fx.b.Sign(ctx, fx.forward)
			if err != nil {
				t.Fatal(err)
			}
			if err := fx.b.Send(ctx, s); err != nil {
				t.Fatal(err)
			}
			mine(t, fx.d, 1)
			in, out := units(fx.tk, fx.payment.Value), units(fx.tk, fx.forward.Outputs[0].Amount)
			const fee = solanatest.DefaultLamportsPerSignature
			sweep := in - out - fee
			if tt.extra < 890880 {
				sweep += tt.extra
			}
			if got := fx.fake.Balance(from); got != tt.wantLeft {
				t.Errorf("payment address holds %d lamports, want %d", got, tt.wantLeft)
			}
			if got := fx.fake.Balance(op) - opBefore; got != sweep {
				t.Errorf("operator received %d lamports, want %d", got, sweep)
			}
			if got := fx.fake.Balance(fx.forward.Outputs[0].Address); got != out {
				t.Errorf("output received %d lamports, want %d", got, out)
			}
		})
	}
}

// TestTokenForwardOperatorPays: an SPL forward's fee and the new token
// account's rent come from the operator's address; the payment address
// needs no SOL, and the service fee stays in its token account.
func TestTokenForwardOperatorPays(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol/usdc", nil)
	ctx := t.Context()
	op := operator(t, fx.tk)
	before := fx.fake.Balance(op)
	if err := fx.b.Send(ctx, fx.signed); err != nil {
		t.Fatal(err)
	}
	mine(t, fx.d, 1)
	const fee = 2 * solanatest.DefaultLamportsPerSignature // the operator's and the owner's signatures
	rent := uint64(165+128) * 3480 * 2
	if got := before - fx.fake.Balance(op); got != fee+rent {
		t.Errorf("operator paid %d lamports, want %d (fee %d, rent %d)", got, fee+rent, fee, rent)
	}
	if got := fx.fake.Balance(fx.forward.From); got != 0 {
		t.Errorf("payment address holds %d lamports", got)
	}
	in, out := units(fx.tk, fx.payment.Value), units(fx.tk, fx.forward.Outputs[0].Amount)
	if got := fx.fake.TokenBalance(fx.forward.From); got != in-out {
		t.Errorf("payment token account holds %d, want %d", got, in-out)
	}
	if got := fx.fake.TokenBalance(fx.forward.Outputs[0].Address); got != out {
		t.Errorf("output holds %d, want %d", got, out)
	}
}

// TestSendExpired: a signed forward never sent until its blockhash is
// past the finalized block height cannot land: Send says ErrExpired
// (without sending), and a forward signed again is sent.
func TestSendExpired(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol", nil)
	ctx := t.Context()
	mine(t, fx.d, solanatest.DefaultMaxAge+solanatest.DefaultFinalizedDepth+1)
	err := fx.b.Send(ctx, fx.signed)
	if !errors.Is(err, rpc.ErrExpired) {
		t.Fatalf("Send of an expired forward: %v, want ErrExpired", err)
	}
	if errors.Is(err, chains.ErrNode) {
		t.Errorf("ErrExpired also wraps chains.ErrNode: %v", err)
	}
	if n := fx.fake.Calls("sendTransaction"); n != 0 {
		t.Errorf("%d sendTransaction calls for an expired transaction", n)
	}
	again, err := fx.b.Sign(ctx, fx.forward)
	if err != nil {
		t.Fatal(err)
	}
	if again.TxID == fx.signed.TxID {
		t.Fatal("signing again gave the same transaction")
	}
	if err := fx.b.Send(ctx, again); err != nil {
		t.Fatal(err)
	}
	mine(t, fx.d, 1)
	if fx.fake.Included(again.TxID) != 1 || fx.fake.Included(fx.signed.TxID) != 0 {
		t.Error("want the new forward on the chain and the expired one not")
	}
}

// TestSendUnknownBlockhashIsNotExpiry: a blockhash the node does not know
// (here: its block was reorganised away) while the chain is not past the
// transaction's last valid height is a node error, not ErrExpired: the
// transaction might still land through another node.
func TestSendUnknownBlockhashIsNotExpiry(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol", nil)
	if _, err := fx.d.Reorg(1); err != nil {
		t.Fatal(err)
	}
	err := fx.b.Send(t.Context(), fx.signed)
	var re *rpc.RPCError
	if !errors.As(err, &re) || re.Reason != "BlockhashNotFound" || !errors.Is(err, chains.ErrNode) || errors.Is(err, rpc.ErrExpired) {
		t.Fatalf("Send with an unknown blockhash: %v, want a node error (BlockhashNotFound)", err)
	}
}

// TestSendFailed: a forward included with a failed execution (here: a
// second forward of the same tokens, sent before the first landed) gives
// ErrFailed once its block is finalized.
func TestSendFailed(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol/usdc", nil)
	ctx := t.Context()
	twice := fx.forward
	twice.ID = "fixture-again"
	twice.Outputs = []chains.Output{{Address: addr(t, fx.tk, 2), Amount: fx.payment.Value}}
	second, err := fx.b.Sign(ctx, twice)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []chains.Signed{fx.signed, second} {
		if err := fx.b.Send(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	mine(t, fx.d, 1)
	if err := fx.b.Send(ctx, fx.signed); err != nil {
		t.Errorf("first forward: %v", err)
	}
	// Failed in a confirmed, not finalized, block: on another fork the same
	// bytes could still land, so it is not final yet.
	err = fx.b.Send(ctx, second)
	if errors.Is(err, rpc.ErrFailed) || errors.Is(err, chains.ErrNeverLands) || !errors.Is(err, chains.ErrNode) {
		t.Fatalf("second forward, failed but not finalized: %v, want a node error, not ErrFailed", err)
	}
	mine(t, fx.d, 3)
	err = fx.b.Send(ctx, second)
	if !errors.Is(err, rpc.ErrFailed) || !errors.Is(err, chains.ErrNeverLands) || errors.Is(err, chains.ErrNode) {
		t.Fatalf("second forward, failed and finalized: %v, want ErrFailed", err)
	}
	st, err := fx.b.State(ctx, chains.Transfer{TxID: second.TxID})
	if err != nil || !st.Present || st.Executed {
		t.Errorf("failed forward's state %+v, %v; want present, not executed", st, err)
	}
}

// TestSignRefuses: forwards that cannot be signed, and why.
func TestSignRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ticker string
		edit   func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend
		want   error
	}{
		{"watch-only", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			b, err := rpc.New(rpc.Config{Ticker: fx.tk, URL: fx.fake.URL()})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, rpc.ErrWatchOnly},
		{"key index of another address", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.FromIndex = 7
			return nil
		}, chains.ErrInvalidForward},
		{"input to another address", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Inputs = []chains.Transfer{{TxID: "x", To: addr(t, fx.tk, 5), Value: fx.payment.Value}}
			return nil
		}, chains.ErrInvalidForward},
		{"no inputs", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Inputs = nil
			return nil
		}, chains.ErrInvalidForward},
		{"inputs short of outputs and fee", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Outputs[0].Amount = fx.payment.Value.Sub(decimal.New(1, -fx.tk.Decimals))
			return nil
		}, chains.ErrInvalidForward},
		{"inputs short of outputs (token)", "sol/usdc", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Outputs[0].Amount = fx.payment.Value.Add(decimal.New(1, -fx.tk.Decimals))
			return nil
		}, chains.ErrInvalidForward},
		{"new account below rent-exempt", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Outputs[0] = chains.Output{Address: addr(t, fx.tk, 9), Amount: decimal.New(1000, -fx.tk.Decimals)}
			return nil
		}, chains.ErrInvalidForward},
		{"output to the payment address", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Outputs[0].Address = f.From
			return nil
		}, chains.ErrInvalidForward},
		{"too many outputs", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Outputs = nil
			for i := range 25 {
				f.Outputs = append(f.Outputs, chains.Output{Address: addr(t, fx.tk, uint32(10+i)), Amount: decimal.New(1_000_000, -fx.tk.Decimals)})
			}
			return nil
		}, chains.ErrInvalidForward},
		{"inputs not on the address", "sol", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Inputs = append(f.Inputs, chains.Transfer{TxID: "y", To: f.From, Value: fx.payment.Value})
			return nil
		}, rpc.ErrInsufficientFunds},
		{"tokens not on the address", "sol/usdc", func(t *testing.T, fx *fixture, f *chains.Forward) *rpc.Backend {
			f.Inputs = append(f.Inputs, chains.Transfer{TxID: "y", To: f.From, Value: fx.payment.Value})
			f.Outputs[0].Amount = fx.payment.Value.Add(fx.tk.MinTransaction)
			return nil
		}, rpc.ErrInsufficientFunds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, tt.ticker, nil)
			f := fx.forward
			f.Outputs = append([]chains.Output(nil), f.Outputs...)
			b := tt.edit(t, fx, &f)
			if b == nil {
				b = fx.b
			}
			s, err := b.Sign(t.Context(), f)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Sign: %q, %v; want an error wrapping %v", s.TxID, err, tt.want)
			}
			t.Log(err)
		})
	}
}

// TestSignOperatorUnfunded: forwards that need the operator's SOL fail
// with ErrOperatorUnfunded while it has none.
func TestSignOperatorUnfunded(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sol", "sol/usdc"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tk := ticker(t, name)
			fake, b, keys := newFake(t, tk, solanatest.Options{ConfirmedDepth: 1})
			d := solanatest.NewDriver(fake, b, tk, keys)
			from := addr(t, tk, 0)
			// SOL: the remainder after the output (the service fee) is
			// below the rent-exempt minimum, and the operator's address
			// is empty.
			value := tk.MinTransaction.Mul(decimal.NewFromInt(3))
			out := value.Sub(decimal.New(100_000, -tk.Decimals))
			if _, err := d.Pay(from, value, false); err != nil {
				t.Fatal(err)
			}
			mine(t, d, 1)
			trs, err := b.Transfers(t.Context(), 0, 1, nil)
			if err != nil || len(trs) != 1 {
				t.Fatal(trs, err)
			}
			f := chains.Forward{ID: "unfunded", From: from, Inputs: trs, Outputs: []chains.Output{{Address: addr(t, tk, 1), Amount: out}}}
			if _, err := b.Sign(t.Context(), f); !errors.Is(err, rpc.ErrOperatorUnfunded) {
				t.Fatalf("Sign with an empty operator address: %v, want ErrOperatorUnfunded", err)
			}
			if err := d.FundOperator(); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Sign(t.Context(), f); err != nil {
				t.Fatalf("Sign once funded: %v", err)
			}
		})
	}
}

// operator returns the operator's address of tk under the suite's seed.
func operator(t *testing.T, tk chains.Ticker) string {
	t.Helper()
	keys, err := chains.NewKeys(seed())
	if err != nil {
		t.Fatal(err)
	}
	a, err := keys.OperatorAddress(tk)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSendRefusesForeignBytes: recorded bytes that are not a transaction
// this backend signed (not its envelope, not base64, not a transaction,
// tampered, another txid) wrap chains.ErrInvalidForward; random bytes
// never panic.
func TestSendRefusesForeignBytes(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol", nil)
	ctx := t.Context()
	var env struct {
		Transaction          string `json:"transaction"`
		LastValidBlockHeight uint64 `json:"lastValidBlockHeight"`
	}
	if err := json.Unmarshal(fx.signed.Raw, &env); err != nil {
		t.Fatal(err)
	}
	wire, err := base64.StdEncoding.DecodeString(env.Transaction)
	if err != nil {
		t.Fatal(err)
	}
	withTx := func(b []byte) []byte {
		raw, _ := json.Marshal(map[string]any{"transaction": base64.StdEncoding.EncodeToString(b), "lastValidBlockHeight": env.LastValidBlockHeight})
		return raw
	}
	tampered := append([]byte(nil), wire...)
	tampered[len(tampered)-1] ^= 1
	tests := map[string]chains.Signed{
		"not JSON":        {TxID: fx.signed.TxID, Raw: []byte("\x00garbage")},
		"devnet's format": {TxID: fx.signed.TxID, Raw: []byte(`{"id":"x","from":"y","outputs":[]}`)},
		"not base64":      {TxID: fx.signed.TxID, Raw: []byte(`{"transaction":"%%%","lastValidBlockHeight":1}`)},
		"truncated":       {TxID: fx.signed.TxID, Raw: withTx(wire[:len(wire)/2])},
		"tampered":        {TxID: fx.signed.TxID, Raw: withTx(tampered)},
		"another txid":    {TxID: fx.payment.TxID, Raw: fx.signed.Raw},
	}
	for name, s := range tests {
		if err := fx.b.Send(ctx, s); !errors.Is(err, chains.ErrInvalidForward) {
			t.Errorf("%s: %v, want an error wrapping chains.ErrInvalidForward", name, err)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rnd.IntN(300))
		for i := range b {
			b[i] = byte(rnd.UintN(256))
		}
		if rnd.IntN(2) == 0 && len(b) > 0 { // a plausible signature count
			b[0] = 1
		}
		if err := fx.b.Send(ctx, chains.Signed{Raw: withTx(b)}); err == nil {
			t.Fatalf("random bytes %x sent", b)
		}
	}
	if fx.fake.Calls("sendTransaction") != 0 {
		t.Error("foreign bytes reached the node")
	}
}
