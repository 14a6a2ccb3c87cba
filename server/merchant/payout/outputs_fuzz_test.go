package payout

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/outbound"
)

// fuzzPayoutTickers are the networks FuzzCheckOutputs exercises, one per
// address family; a fuzzed byte picks one.
var fuzzPayoutTickers = [...]string{"btc", "eth", "trc20/usdt", "sol", "ltc", "erc20/usdc"}

// fuzzMinimum is the smallest output the fuzzed engine lets through.
var fuzzMinimum = decimal.RequireFromString("0.00001")

// fixedMinimums answers fuzzMinimum for every address.
type fixedMinimums struct{}

// MinOutput implements outbound.Minimums.
func (fixedMinimums) MinOutput(chains.Ticker, string) (decimal.Decimal, error) {
	return fuzzMinimum, nil
}

// fuzzOutputs splits raw into outputs: entries separated by "|", each
// "address=amount" (cut at the last "="; an entry without one is an
// address with no amount), as a bulk request's JSON object of address to
// amount carries them.
func fuzzOutputs(raw string) []Output {
	var out []Output
	for _, e := range strings.Split(raw, "|") {
		i := strings.LastIndex(e, "=")
		if i < 0 {
			out = append(out, Output{Address: e})
			continue
		}
		out = append(out, Output{Address: e[:i], Amount: e[i+1:]})
	}
	return out
}

// FuzzCheckOutputs checks that checkOutputs, the parser of a payout
// request's outputs (the merchant's addresses and amounts, as strings),
// never panics, refuses only with an *address.InvalidError naming
// "outputs" or one "outputs.<address>", and accepts only well-formed
// outputs: 1 to maxOutputs of them, in order, each a valid address of the
// ticker as given, no destination twice, a positive amount of at most the
// ticker's decimals and at least the network's minimum.
func FuzzCheckOutputs(f *testing.F) {
	const (
		btc1 = "12ZG96sFFMjvv4c2TyoaZS8Y1PMK6RR6Up"
		btc2 = "33FH4eMgoG4K1EJTb5UAz4VU9ue2eK8Ysu"
		btc3 = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"
		btc4 = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
		eth1 = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		eth2 = "0x1111111111111111111111111111111111111111"
		eth3 = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
		trx1 = "TBFYWKikEjGSuookTS5v2XKpw7LnA8dfar"
		trx2 = "TCSYvcePwGWKwzsM4JgZb7p9s4HSuhQZtS"
		sol1 = "USxhdMQhkMoYC52vEK6giwuQeu2F5SWuXeqS3EeyidB"
		sol2 = "wt2hjcUqqSPWppayKbXirMF7mNRxXFFpPKRqhYrD3t8"
		ltc1 = "LVg2kJoFNg45Nbpy53h7Fe1wKyeXVRhMH9"
	)
	for _, s := range []struct {
		ticker byte
		raw    string
	}{
		{0, btc1 + "=0.001"},
		{0, btc1 + "=0.001|" + btc2 + "=1.5|" + btc3 + "=0.00001"},
		{0, btc4 + "=0.000000001"},
		{0, btc4 + "=0.000009"},
		{0, btc1 + "=1|" + btc1 + "=2"},
		{0, btc4 + "=1|" + strings.ToUpper(btc4) + "=2"},
		{0, btc1 + "=-1"},
		{0, btc1 + "=0"},
		{0, btc1 + "=1e3"},
		{0, btc1 + "= 1"},
		{0, btc1 + "=99999999999999999999999999999999"},
		{0, btc1},
		{0, ""},
		{0, "=1"},
		{0, strings.Repeat(btc1+"=1|", 3)},
		{1, eth1 + "=0.5|" + eth2 + "=0.000000000000000001"},
		{1, eth1 + "=0.5|" + eth2 + "=0.00001"},
		{1, eth1 + "=1|" + eth3 + "=1"},
		{1, "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED=1"},
		{2, trx1 + "=10.123456|" + trx2 + "=1.1234567"},
		{3, sol1 + "=0.5|" + sol2 + "=0.000000001"},
		{3, sol1 + "=0.5|" + sol2 + "=0.00001"},
		{4, ltc1 + "=0.01|" + btc1 + "=0.01"},
		{5, eth1 + "=12.345678"},
	} {
		f.Add(s.ticker, s.raw)
	}
	reg := family.DefaultRegistry()
	var tickers [len(fuzzPayoutTickers)]chains.Ticker
	for i, name := range fuzzPayoutTickers {
		t, err := reg.Get(name)
		if err != nil {
			f.Fatal(err)
		}
		tickers[i] = t
	}
	s := &Service{engine: outbound.New(nil, outbound.Config{Minimums: fixedMinimums{}}, slog.New(slog.DiscardHandler))}
	f.Fuzz(func(t *testing.T, pick byte, raw string) {
		tk := tickers[int(pick)%len(tickers)]
		in := fuzzOutputs(raw)
		got, err := s.checkOutputs(tk, in)
		if err != nil {
			var inv *address.InvalidError
			if !errors.As(err, &inv) || (inv.Param != "outputs" && !strings.HasPrefix(inv.Param, "outputs.")) {
				t.Fatalf("checkOutputs(%s, %q) = %v (%T): want an *address.InvalidError naming outputs", tk.Ticker, raw, err, err)
			}
			return
		}
		if len(got) == 0 || len(got) > maxOutputs(tk) || len(got) != len(in) {
			t.Fatalf("checkOutputs(%s, %q): %d outputs of %d given", tk.Ticker, raw, len(got), len(in))
		}
		seen := map[string]bool{}
		for i, o := range got {
			if o.Address != in[i].Address {
				t.Fatalf("checkOutputs(%s, %q): output %d pays %q, %q was given", tk.Ticker, raw, i, o.Address, in[i].Address)
			}
			if err := chains.ValidateAddress(tk, o.Address); err != nil {
				t.Fatalf("checkOutputs(%s, %q): accepted %q: %v", tk.Ticker, raw, o.Address, err)
			}
			key, err := tk.Rules().DestinationKey(tk, o.Address)
			if err != nil || seen[key] {
				t.Fatalf("checkOutputs(%s, %q): destination of %q accepted twice (%v)", tk.Ticker, raw, o.Address, err)
			}
			seen[key] = true
			if !o.Amount.IsPositive() || !o.Amount.Equal(o.Amount.Truncate(tk.Decimals)) || o.Amount.LessThan(fuzzMinimum) {
				t.Fatalf("checkOutputs(%s, %q): amount %s to %q accepted (decimals %d, minimum %s)", tk.Ticker, raw, o.Amount, o.Address, tk.Decimals, fuzzMinimum)
			}
			if want, err := decimal.NewFromString(in[i].Amount); err != nil || !want.Equal(o.Amount) {
				t.Fatalf("checkOutputs(%s, %q): amount %s to %q, %q was given", tk.Ticker, raw, o.Amount, o.Address, in[i].Amount)
			}
		}
	})
}
