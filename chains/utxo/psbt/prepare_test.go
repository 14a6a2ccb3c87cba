package psbt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo/psbt"
	"github.com/payhook/payhook/chains/watchonly"
)

// offline builds a request on a fixed regtest key without a node.
func offline(t testing.TB) psbt.Request {
	t.Helper()
	seed := make([]byte, 32)
	_, tpub, fp := account(t, seed, h+84, h+1, h+0)
	k, err := watchonly.Parse(ticker(t, "ltc", chains.Regtest), fmt.Sprintf("wpkh([%08x/84h/1h/0h]%s/0/*)", fp, tpub))
	if err != nil {
		t.Fatal(err)
	}
	in := func(i uint32, value int64) psbt.UTXO {
		return psbt.UTXO{TxID: strings.Repeat(fmt.Sprintf("%02x", i+1), 32), Vout: i, Value: value, Script: script(t, k, i), Index: i}
	}
	dest, _ := k.Address(100) // any regtest address
	return psbt.Request{Key: k, Inputs: []psbt.UTXO{in(0, 1_000_000), in(1, 2_000_000)}, ChangeIndex: 0, FeeRate: 10,
		Outputs: []psbt.Output{{Address: dest, Amount: 1_500_000}}}
}

// script is the P2WPKH script of k's receive address i.
func script(t testing.TB, k *watchonly.Key, i uint32) []byte {
	t.Helper()
	c, err := k.Child(watchonly.ReceiveChain, i)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{0x00, 0x14}, hash160(c.PubKey)...)
}

// TestPrepareRefuses: requests Prepare cannot build are ErrInvalid (or
// ErrInsufficient) naming the problem.
func TestPrepareRefuses(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *psbt.Request)
		want   string
	}{
		{"no inputs", func(r *psbt.Request) { r.Inputs = nil }, "no inputs"},
		{"no outputs", func(r *psbt.Request) { r.Outputs = nil }, "no outputs"},
		{"zero fee rate", func(r *psbt.Request) { r.FeeRate = 0 }, "fee rate 0"},
		{"dust output", func(r *psbt.Request) { r.Outputs[0].Amount = 100 }, "below the network's dust threshold 2940"},
		{"negative output", func(r *psbt.Request) { r.Outputs[0].Amount = -1 }, "must be positive"},
		{"bad address", func(r *psbt.Request) { r.Outputs[0].Address = "nope" }, "output 0"},
		{"foreign script", func(r *psbt.Request) { r.Inputs[1].Index = 7 }, "does not pay the merchant's receive address 7"},
		{"duplicate input", func(r *psbt.Request) { r.Inputs[1] = r.Inputs[0] }, "both spend"},
		{"bad txid", func(r *psbt.Request) { r.Inputs[0].TxID = "zz" }, "txid"},
		{"short funds", func(r *psbt.Request) { r.Outputs[0].Amount = 3_000_000 }, "insufficient funds"},
		{"bad change index", func(r *psbt.Request) { r.ChangeIndex = 1 << 31 }, "change index"},
		{"prev tx not the txid", func(r *psbt.Request) { r.Inputs[0].PrevTx = []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0} }, "previous transaction"},
	}
	for _, c := range cases {
		r := offline(t)
		c.change(&r)
		_, err := psbt.Prepare(r)
		if err == nil || !strings.Contains(err.Error(), c.want) || !(errors.Is(err, psbt.ErrInvalid) || errors.Is(err, psbt.ErrInsufficient)) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestPrepareOffline: the prepared PSBT balances, its change is on /1/c,
// and Check refuses it unsigned and refuses a PSBT of another payout.
func TestPrepareOffline(t *testing.T) {
	r := offline(t)
	p, err := psbt.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Fee+p.Change+1_500_000 != 3_000_000 || p.Fee < 10*p.VSize {
		t.Errorf("fee %d change %d vsize %d do not balance", p.Fee, p.Change, p.VSize)
	}
	if c, _ := r.Key.ChangeAddress(0); p.ChangeAddress != c {
		t.Errorf("change address %s, want %s", p.ChangeAddress, c)
	}
	if _, err := psbt.Check(p.PSBT, p.PSBT); !errors.Is(err, psbt.ErrUnsigned) || !strings.Contains(err.Error(), "input 0") {
		t.Errorf("Check(unsigned) = %v", err)
	}
	r.Outputs[0].Amount++
	other, err := psbt.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := psbt.Check(p.PSBT, []byte(other.Base64())); !errors.Is(err, psbt.ErrMismatch) || !strings.Contains(err.Error(), "output 0 is 1500001 base units, prepared 1500000") {
		t.Errorf("Check(other payout) = %v", err)
	}
	if _, err := psbt.Check(p.PSBT, []byte("hello")); !errors.Is(err, psbt.ErrMalformed) {
		t.Errorf("Check(garbage) = %v", err)
	}
}

// FuzzCheck: Check never panics on arbitrary signed bytes.
func FuzzCheck(f *testing.F) {
	p, err := psbt.Prepare(offline(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p.PSBT)
	f.Add([]byte(p.Base64()))
	f.Add([]byte("psbt\xff"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, signed []byte) {
		raw, err := psbt.Check(p.PSBT, signed)
		if err == nil && len(raw) == 0 {
			t.Fatal("no error and no transaction")
		}
	})
}
