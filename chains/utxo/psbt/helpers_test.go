package psbt_test

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"go.uber.org/goleak"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ticker returns a ticker of the default registry on net.
func ticker(t testing.TB, name string, net chains.Net) chains.Ticker {
	t.Helper()
	reg := family.DefaultRegistry()
	if net != chains.Mainnet {
		var err error
		if reg, err = reg.WithNet(name, net); err != nil {
			t.Fatal(err)
		}
	}
	tk, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no ticker %q", name)
	}
	return tk
}

func hash160(b []byte) []byte { return btcutil.Hash160(b) }
