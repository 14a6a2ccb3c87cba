package watchonly_test

import (
	"errors"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/watchonly"
)

// FuzzParse: Parse never panics, refuses with a *KeyError, and whatever it
// accepts re-parses from its Descriptor() to a key with the same
// addresses 0..2.
func FuzzParse(f *testing.F) {
	tickers := []chains.Ticker{
		ticker(f, "btc", chains.Mainnet), ticker(f, "ltc", chains.Regtest),
		ticker(f, "doge", chains.Mainnet), ticker(f, "bch", chains.Testnet), ticker(f, "eth", chains.Mainnet),
	}
	seed := bip39Seed(f, abandonMnemonic)
	x, _ := accountKey(f, seed, xpubVersion, h+84, h+0, h+0)
	tp, _ := accountKey(f, seed, tpubVersion, h+84, h+1, h+0)
	v, _ := accountKey(f, seed, vpubVersion, h+84, h+1, h+0)
	for _, s := range []string{
		bip84Zpub, bip86Xpub, x, tp, v, "",
		"wpkh([73c5da0a/84h/0h/0h]" + x + "/0/*)",
		"tr(" + bip86Xpub + "/0/*)#00000000",
		"sh(wpkh([73c5da0a/84'/1'/0']" + tp + "/0/*))",
		"pkh(" + tp + "/<0;1>/*)",
		"wsh(multi(1," + x + "/0/*))",
	} {
		for i := range tickers {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, spec string) {
		tk := tickers[int(which)%len(tickers)]
		k, err := watchonly.Parse(tk, spec)
		if err != nil {
			var ke *watchonly.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("error %v is a %T", err, err)
			}
			return
		}
		again, err := watchonly.Parse(tk, k.Descriptor())
		if err != nil {
			t.Fatalf("Parse(%q) accepted, its Descriptor %q refused: %v", spec, k.Descriptor(), err)
		}
		for i := range uint32(3) {
			a, errA := k.Address(i)
			b, errB := again.Address(i)
			if a != b || (errA == nil) != (errB == nil) {
				t.Fatalf("address %d: %s (%v) from %q, %s (%v) from its descriptor", i, a, errA, spec, b, errB)
			}
		}
	})
}
