package httpapi_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/tron/httpapi"
	"github.com/payhook/payhook/chains/tron/trontest"
)

// newDriver starts a fresh fake node for one scenario and a backend on
// it, signing with the suite's keys.
func newDriver(t *testing.T, tk chains.Ticker) chaintest.Driver {
	t.Helper()
	if tk.Family != chains.FamilyTron {
		t.Skip("not a tron ticker")
	}
	opts := trontest.Options{}
	if tk.Token {
		opts.Contracts = []string{tk.Contract}
	}
	node, err := trontest.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	keys, err := chains.NewKeys(chaintest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := httpapi.New(httpapi.Config{Ticker: tk, URL: node.URL(), Signer: keysign.New(keys)})
	if err != nil {
		t.Fatal(err)
	}
	return trontest.NewDriver(node, tk, tk.Contract, keys, b)
}

// TestChaintest runs the conformance suite for trx and trc20/usdt on the
// fake node, which runs a private network (Regtest).
func TestChaintest(t *testing.T) {
	reg := family.DefaultRegistry()
	var err error
	for _, tk := range []string{"trx", "trc20/usdt"} {
		if reg, err = reg.WithNet(tk, chains.Regtest); err != nil {
			t.Fatal(err)
		}
	}
	chaintest.RunRegistry(t, reg, newDriver)
}
