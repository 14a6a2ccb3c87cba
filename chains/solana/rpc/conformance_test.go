package rpc_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/solana/solanatest"
)

// newFake starts a fake node for tk and returns it with a backend on it
// that signs with the suite's keys. The fake's mint replaces the
// ticker's through the URL's mint parameter.
func newFake(t *testing.T, tk chains.Ticker, opts solanatest.Options) (*solanatest.Server, *rpc.Backend, *chains.Keys) {
	t.Helper()
	opts.Decimals = uint8(tk.Decimals)
	fake := solanatest.New(opts)
	t.Cleanup(fake.Close)
	keys, err := chains.NewKeys(chaintest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	url := fake.URL()
	if tk.Token {
		url += "?mint=" + fake.Mint()
	}
	b, err := rpc.New(rpc.Config{Ticker: tk, URL: url, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return fake, b, keys
}

// solanaRegistry is the default registry with its Solana tickers on
// regtest (the fake's genesis is no public cluster's).
func solanaRegistry(t *testing.T) *chains.Registry {
	t.Helper()
	reg := family.DefaultRegistry()
	for _, tk := range reg.All() {
		if tk.Family != chains.FamilySolana {
			continue
		}
		var err error
		if reg, err = reg.WithNet(tk.Ticker, chains.Regtest); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// TestConformance runs chaintest against the backend on the fake node for
// sol and sol/usdc. Every slot the fake produces is confirmed at once
// (ConfirmedDepth 1), since the backend sees the chain at the confirmed
// commitment and the suite expects a mined block to be visible; finalized
// comes two slots later.
func TestConformance(t *testing.T) {
	t.Parallel()
	chaintest.RunRegistry(t, solanaRegistry(t), func(t *testing.T, tk chains.Ticker) chaintest.Driver {
		if tk.Family != chains.FamilySolana {
			t.Skipf("%s is not a Solana ticker", tk.Ticker)
		}
		fake, b, keys := newFake(t, tk, solanatest.Options{ConfirmedDepth: 1, FinalizedDepth: 3})
		return solanatest.NewDriver(fake, b, tk, keys)
	})
}
