package family_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
)

// TestFamilies runs the Family conformance suite over every ticker of the
// embedded registry and of the override example (which adds an EVM
// network), on every network.
func TestFamilies(t *testing.T) {
	t.Run("default", func(t *testing.T) { chaintest.Families(t, family.DefaultRegistry()) })
	t.Run("override", func(t *testing.T) {
		b, err := os.ReadFile("../testdata/override.json")
		if err != nil {
			t.Fatal(err)
		}
		reg, err := family.LoadRegistry(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		// arbitrum has no EIP-681 chain id here: only its URI is refused.
		only := reg.Only(func(tk chains.Ticker) bool { return tk.Network != "arbitrum" })
		chaintest.Families(t, only)
		arb, _ := reg.Lookup("arbitrum/eth")
		if _, err := arb.Rules().PaymentURI(arb, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", nil); !errors.Is(err, chains.ErrUnsupportedNetwork) {
			t.Errorf("PaymentURI(arbitrum/eth) error = %v, want ErrUnsupportedNetwork", err)
		}
	})
}

// TestAllNamesEveryFamilyOnce: the list has one implementation per name,
// each claiming its own networks.
func TestAllNamesEveryFamilyOnce(t *testing.T) {
	t.Parallel()
	names := map[chains.FamilyName]bool{}
	networks := map[string]chains.FamilyName{}
	for _, f := range family.All() {
		if names[f.Name()] {
			t.Errorf("family %q listed twice", f.Name())
		}
		names[f.Name()] = true
		for _, n := range f.Networks() {
			if other, dup := networks[n]; dup {
				t.Errorf("network %q claimed by %q and %q", n, other, f.Name())
			}
			networks[n] = f.Name()
		}
	}
	for _, want := range []chains.FamilyName{chains.FamilyUTXO, chains.FamilyEVM, chains.FamilyTron, chains.FamilySolana} {
		if !names[want] {
			t.Errorf("family %q has no implementation", want)
		}
	}
}

// TestRegistryRefusesFamilyWithoutImplementation: loading the embedded
// registry with a family left out refuses its first entry, naming it.
func TestRegistryRefusesFamilyWithoutImplementation(t *testing.T) {
	t.Parallel()
	var some []chains.Family
	for _, f := range family.All() {
		if f.Name() != chains.FamilyEVM {
			some = append(some, f)
		}
	}
	in := `{"tickers": [{"ticker": "eth", "family": "evm", "token": false, "decimals": 18,
		"default_confirmations": 12, "min_confirmations": 3, "min_transaction": "0.001",
		"fee_rate": "0.01", "network_fee_estimate": "0.0005"}]}`
	_, err := chains.LoadRegistry(strings.NewReader(in), some)
	var re *chains.RegistryError
	if !errors.As(err, &re) || re.Field != "family" || !strings.Contains(re.Reason, `unknown family "evm" (want utxo, tron or solana)`) {
		t.Errorf("LoadRegistry without evm: %v, want a RegistryError on field family", err)
	}
	if _, err := chains.LoadRegistry(strings.NewReader(in), append(some, family.All()[0])); !errors.Is(err, chains.ErrInvalidRegistry) {
		t.Errorf("LoadRegistry with utxo twice: %v, want ErrInvalidRegistry", err)
	}
	if _, err := chains.LoadRegistry(strings.NewReader(in), family.All()); err != nil {
		t.Errorf("LoadRegistry with every family: %v", err)
	}
}
