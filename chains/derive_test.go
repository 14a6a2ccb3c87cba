package chains_test

import (
	"errors"
	"fmt"
	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/internal/addrtest"
	"strings"
	"sync"
	"testing"
)

// abandonSeed is the BIP39 seed of "abandon abandon abandon abandon abandon
// abandon abandon abandon abandon abandon abandon about" with an empty
// passphrase, the de-facto standard test wallet.
const abandonSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"

func abandonDeriver(t *testing.T) *chains.Deriver {
	t.Helper()
	d, err := chains.NewDeriver(addrtest.Hex(t, abandonSeed), family.All())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeriverKnownVectors pins addresses of the abandon...about wallet that
// wallets and independent libraries publish: BIP84 (btc, ltc), BIP44 (bch,
// doge, eth, tron), and Solana's m/44'/501'/i'/0' (Phantom, solana-keygen).
func TestDeriverKnownVectors(t *testing.T) {
	t.Parallel()
	d := abandonDeriver(t)
	r := family.DefaultRegistry()
	tests := []struct {
		ticker string
		index  uint32
		path   string
		want   string
	}{
		{"btc", 0, "m/84'/0'/0'/0/0", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"}, // BIP84 test vector
		{"btc", 1, "m/84'/0'/0'/0/1", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"}, // BIP84 test vector
		{"ltc", 0, "m/84'/2'/0'/0/0", "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh"},
		{"ltc", 1, "m/84'/2'/0'/0/1", "ltc1qwlezpr3890hcp6vva9twqh27mr6edadreqvhnn"},
		{"bch", 0, "m/44'/145'/0'/0/0", "bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6"},
		{"bch", 1, "m/44'/145'/0'/0/1", "bitcoincash:qp8sfdhgjlq68hlzka9lcsxtcnvuvnd0xqxugfzzc5"},
		{"doge", 0, "m/44'/3'/0'/0/0", "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC"},
		{"doge", 1, "m/44'/3'/0'/0/1", "DAcDAtJRztxBHyA6D6h8du1HguyTR43Mas"},
		{"eth", 0, "m/44'/60'/0'/0/0", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{"eth", 1, "m/44'/60'/0'/0/1", "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"},
		{"erc20/usdt", 0, "m/44'/60'/0'/0/0", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{"bep20/usdt", 0, "m/44'/60'/0'/0/0", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{"polygon/pol", 0, "m/44'/60'/0'/0/0", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{"trx", 0, "m/44'/195'/0'/0/0", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"},
		{"trx", 1, "m/44'/195'/0'/0/1", "TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK"},
		{"trc20/usdt", 0, "m/44'/195'/0'/0/0", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"},
		{"sol", 0, "m/44'/501'/0'/0'", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"},
		{"sol", 1, "m/44'/501'/1'/0'", "Hh8QwFUA6MtVu1qAoq12ucvFHNwCcVTV7hpWjeY1Hztb"},
		{"sol/usdc", 0, "m/44'/501'/0'/0'", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.ticker, tt.index), func(t *testing.T) {
			t.Parallel()
			tk, ok := r.Lookup(tt.ticker)
			if !ok {
				t.Fatalf("unknown ticker %q", tt.ticker)
			}
			if got := d.Path(tk, tt.index); got != tt.path {
				t.Errorf("Path = %q, want %q", got, tt.path)
			}
			got, err := d.Address(tk, tt.index)
			if err != nil || got != tt.want {
				t.Errorf("Address = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestDerivedAddressesValidate derives several indices for every ticker of
// the default registry and checks each passes ValidateAddress, that indices
// give distinct addresses, and that derivation is deterministic.
func TestDerivedAddressesValidate(t *testing.T) {
	t.Parallel()
	seeds := map[string][]byte{
		"abandon":  addrtest.Hex(t, abandonSeed),
		"16 bytes": addrtest.Hex(t, "000102030405060708090a0b0c0d0e0f"),
		"64 bytes": []byte(strings.Repeat("\xfe", 64)),
	}
	indices := []uint32{0, 1, 2, 7, 19, 1000, 1<<31 - 1}
	for name, seed := range seeds {
		d, err := chains.NewDeriver(seed, family.All())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, _ := chains.NewDeriver(seed, family.All())
		for _, tk := range family.DefaultRegistry().All() {
			t.Run(name+"/"+tk.Ticker, func(t *testing.T) {
				t.Parallel()
				seen := map[string]uint32{}
				for _, i := range indices {
					addr, err := d.Address(tk, i)
					if err != nil {
						t.Fatalf("Address(%d): %v", i, err)
					}
					if err := chains.ValidateAddress(tk, addr); err != nil {
						t.Errorf("index %d: derived address fails validation: %v", i, err)
					}
					if prev, dup := seen[addr]; dup {
						t.Errorf("indices %d and %d both give %s", prev, i, addr)
					}
					seen[addr] = i
					if addr2, _ := again.Address(tk, i); addr2 != addr {
						t.Errorf("index %d: %s then %s from the same seed", i, addr, addr2)
					}
				}
			})
		}
	}
}

func TestDeriverPaths(t *testing.T) {
	t.Parallel()
	d := abandonDeriver(t)
	r := family.DefaultRegistry()
	tests := []struct {
		ticker string
		index  uint32
		want   string
	}{
		{"btc", 7, "m/84'/0'/0'/0/7"},
		{"ltc", 7, "m/84'/2'/0'/0/7"},
		{"bch", 7, "m/44'/145'/0'/0/7"},
		{"doge", 7, "m/44'/3'/0'/0/7"},
		{"eth", 7, "m/44'/60'/0'/0/7"},
		{"erc20/usdc", 7, "m/44'/60'/0'/0/7"},
		{"bep20/usdt", 7, "m/44'/60'/0'/0/7"},
		{"polygon/pol", 7, "m/44'/60'/0'/0/7"},
		{"trx", 7, "m/44'/195'/0'/0/7"},
		{"trc20/usdt", 7, "m/44'/195'/0'/0/7"},
		{"sol", 7, "m/44'/501'/7'/0'"},
		{"sol/usdc", 7, "m/44'/501'/7'/0'"},
	}
	for _, tt := range tests {
		tk, _ := r.Lookup(tt.ticker)
		if got := d.Path(tk, tt.index); got != tt.want {
			t.Errorf("Path(%s, %d) = %q, want %q", tt.ticker, tt.index, got, tt.want)
		}
	}
	if got := d.Path(chains.Ticker{Ticker: "dash", Network: "dash", Family: chains.FamilyUTXO}, 1); got != "" {
		t.Errorf("Path for an unsupported network = %q, want \"\"", got)
	}
}

func TestNewDeriverSeedLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    int
		ok   bool
	}{
		{"nil", 0, false},
		{"15 bytes", 15, false},
		{"16 bytes", 16, true},
		{"32 bytes", 32, true},
		{"64 bytes", 64, true},
		{"65 bytes", 65, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seed []byte
			if tt.n > 0 {
				seed = []byte(strings.Repeat("\x42", tt.n))
			}
			d, err := chains.NewDeriver(seed, family.All())
			if tt.ok != (err == nil) || (!tt.ok && !errors.Is(err, chains.ErrInvalidSeed)) || tt.ok != (d != nil) {
				t.Errorf("NewDeriver(%d bytes) = %v, %v; want ok %v or ErrInvalidSeed", tt.n, d, err, tt.ok)
			}
		})
	}
}

func TestNewDeriverDoesNotModifySeed(t *testing.T) {
	t.Parallel()
	seed := addrtest.Hex(t, abandonSeed)
	if _, err := chains.NewDeriver(seed, family.All()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", seed); got != abandonSeed {
		t.Errorf("seed modified: %s", got)
	}
}

func TestDeriverAddressErrors(t *testing.T) {
	t.Parallel()
	d := abandonDeriver(t)
	btc, _ := family.DefaultRegistry().Lookup("btc")
	sol, _ := family.DefaultRegistry().Lookup("sol")
	tests := []struct {
		name  string
		t     chains.Ticker
		index uint32
		want  error
	}{
		{"hardened index utxo", btc, 1 << 31, chains.ErrInvalidIndex},
		{"max index solana", sol, 1<<32 - 1, chains.ErrInvalidIndex},
		{"unknown family", chains.Ticker{Ticker: "xmr", Family: "cryptonote"}, 0, chains.ErrUnsupportedNetwork},
		{"unknown utxo network", chains.Ticker{Ticker: "dash", Network: "dash", Family: chains.FamilyUTXO}, 0, chains.ErrUnsupportedNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, err := d.Address(tt.t, tt.index)
			if !errors.Is(err, tt.want) || addr != "" {
				t.Errorf("Address = %q, %v; want error %v", addr, err, tt.want)
			}
		})
	}
}

func TestDeriverRedacted(t *testing.T) {
	t.Parallel()
	d := abandonDeriver(t)
	for _, format := range []string{"%v", "%+v", "%s", "%#v"} {
		got := fmt.Sprintf(format, d)
		if got != "chains.Deriver{redacted}" {
			t.Errorf("Sprintf(%q) = %q", format, got)
		}
	}
}

// TestDeriverConcurrent exercises one Deriver from many goroutines; run with
// -race to check it is safe for concurrent use.
func TestDeriverConcurrent(t *testing.T) {
	t.Parallel()
	d := abandonDeriver(t)
	tickers := family.DefaultRegistry().All()
	want := map[string]string{}
	for _, tk := range tickers {
		want[tk.Ticker], _ = d.Address(tk, 3)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, tk := range tickers {
				if got, err := d.Address(tk, 3); err != nil || got != want[tk.Ticker] {
					t.Errorf("%s: %q, %v; want %q", tk.Ticker, got, err, want[tk.Ticker])
				}
			}
		})
	}
	wg.Wait()
}
