package watchonly_test

import (
	"fmt"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/watchonly"
)

// Published keys and addresses of the "abandon ... about" mnemonic, copied
// from the BIP texts (bitcoin/bips, bip-0084, bip-0049 and bip-0086
// mediawiki, "Test vectors").
const (
	// BIP 84: account 0, m/84'/0'/0'.
	bip84Zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	// BIP 49 publishes a testnet vector only: account 0, m/49'/1'/0'.
	bip49Upub = "upub5EFU65HtV5TeiSHmZZm7FUffBGy8UKeqp7vw43jYbvZPpoVsgU93oac7Wk3u6moKegAEWtGNF8DehrnHtv21XXEMYRUocHqguyjknFHYfgY"
	// BIP 86: account 0, m/86'/0'/0'.
	bip86Xpub = "xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ"
)

// SLIP-132 versions the tests serialize keys with.
const (
	xpubVersion = 0x0488b21e
	ypubVersion = 0x049d7cb2
	zpubVersion = 0x04b24746
	tpubVersion = 0x043587cf
	upubVersion = 0x044a5262
	vpubVersion = 0x045f1cf6
)

func mustParse(t testing.TB, tk chains.Ticker, spec string) *watchonly.Key {
	t.Helper()
	k, err := watchonly.Parse(tk, spec)
	if err != nil {
		t.Fatalf("Parse(%s, %.40s...): %v", tk.Ticker, spec, err)
	}
	return k
}

func addresses(t testing.TB, k *watchonly.Key, n uint32) []string {
	t.Helper()
	out := make([]string, 0, n)
	for i := range n {
		a, err := k.Address(i)
		if err != nil {
			t.Fatalf("Address(%d): %v", i, err)
		}
		out = append(out, a)
	}
	return out
}

func assertAddresses(t *testing.T, k *watchonly.Key, want ...string) {
	t.Helper()
	got := addresses(t, k, uint32(len(want)))
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s address %d = %s, want %s", k, i, got[i], want[i])
		}
	}
}

// TestBIPVectors: the published keys give the published addresses, bare
// and as descriptors, and the test's own derivation from the mnemonic
// yields the published keys (so the mainnet P2PKH and P2SH-P2WPKH checks
// below, whose keys it derives, start from the same seed).
func TestBIPVectors(t *testing.T) {
	btc := ticker(t, "btc", chains.Mainnet)
	btcTest := ticker(t, "btc", chains.Testnet)
	seed := bip39Seed(t, abandonMnemonic)

	t.Run("BIP 84 zpub", func(t *testing.T) {
		if got, _ := accountKey(t, seed, zpubVersion, h+84, h+0, h+0); got != bip84Zpub {
			t.Fatalf("derived m/84'/0'/0' = %s, want the BIP's %s", got, bip84Zpub)
		}
		k := mustParse(t, btc, bip84Zpub)
		assertAddresses(t, k, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g")
		if k.Script() != watchonly.P2WPKH {
			t.Errorf("zpub script = %s", k.Script())
		}
	})
	t.Run("BIP 84 descriptor with origin", func(t *testing.T) {
		x, fp := accountKey(t, seed, xpubVersion, h+84, h+0, h+0)
		if fp != 0x73c5da0a {
			t.Fatalf("master fingerprint %08x", fp)
		}
		k := mustParse(t, btc, fmt.Sprintf("wpkh([%08x/84'/0'/0']%s/0/*)", fp, x))
		assertAddresses(t, k, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g")
		want := fmt.Sprintf("wpkh([73c5da0a/84h/0h/0h]%s/0/*)", x)
		sum, err := watchonly.Checksum(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Descriptor(); got != want+"#"+sum {
			t.Errorf("Descriptor() = %s, want %s#%s", got, want, sum)
		}
	})
	t.Run("BIP 86 tr", func(t *testing.T) {
		if got, _ := accountKey(t, seed, xpubVersion, h+86, h+0, h+0); got != bip86Xpub {
			t.Fatalf("derived m/86'/0'/0' = %s, want the BIP's %s", got, bip86Xpub)
		}
		k := mustParse(t, btc, "tr([73c5da0a/86h/0h/0h]"+bip86Xpub+"/0/*)")
		assertAddresses(t, k, "bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr",
			"bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh")
	})
	t.Run("BIP 49 upub, testnet", func(t *testing.T) {
		if got, _ := accountKey(t, seed, upubVersion, h+49, h+1, h+0); got != bip49Upub {
			t.Fatalf("derived m/49'/1'/0' = %s, want the BIP's %s", got, bip49Upub)
		}
		assertAddresses(t, mustParse(t, btcTest, bip49Upub), "2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2")
	})
	// BIP 44 publishes no test vectors, and BIP 49 no mainnet one: these two
	// first addresses of the mnemonic are the values wallets' own test
	// suites pin (Trezor's, among others), checked here from keys derived
	// from the seed whose BIP 84/86/49 keys match the BIPs above.
	t.Run("xpub P2PKH (m/44'/0'/0')", func(t *testing.T) {
		x, _ := accountKey(t, seed, xpubVersion, h+44, h+0, h+0)
		assertAddresses(t, mustParse(t, btc, x), "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA")
		assertAddresses(t, mustParse(t, btc, "pkh("+x+"/0/*)"), "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA")
	})
	t.Run("ypub P2SH-P2WPKH (m/49'/0'/0')", func(t *testing.T) {
		y, _ := accountKey(t, seed, ypubVersion, h+49, h+0, h+0)
		assertAddresses(t, mustParse(t, btc, y), "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf")
		x, _ := accountKey(t, seed, xpubVersion, h+49, h+0, h+0)
		assertAddresses(t, mustParse(t, btc, "sh(wpkh([73c5da0a/49h/0h/0h]"+x+"/0/*))"), "37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf")
	})
}

// TestEVMAnvilAccounts: the account xpub m/44'/60'/0' of anvil's mnemonic
// gives anvil's accounts 0 and 1 (m/44'/60'/0'/0/0 and /0/1), EIP-55, for
// eth and for tokens and coins of other EVM networks (account 1 as
// chains/evm/jsonrpc/anvil_test.go pins it).
func TestEVMAnvilAccounts(t *testing.T) {
	x, _ := accountKey(t, bip39Seed(t, junkMnemonic), xpubVersion, h+44, h+60, h+0)
	for _, name := range []string{"eth", "erc20/usdt", "bep20/usdt", "polygon/pol"} {
		k := mustParse(t, ticker(t, name, chains.Mainnet), x)
		assertAddresses(t, k, "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
		if k.Descriptor() != x || k.String() != x {
			t.Errorf("%s: Descriptor() = %s, want the xpub", name, k.Descriptor())
		}
	}
	// An EVM key is an xpub on a test network too.
	k := mustParse(t, ticker(t, "eth", chains.Regtest), x)
	assertAddresses(t, k, "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
}

// TestChecksumBIP380 runs the checksum test vectors of BIP 380.
func TestChecksumBIP380(t *testing.T) {
	sum, err := watchonly.Checksum("raw(deadbeef)")
	if err != nil || sum != "89f8spxm" {
		t.Fatalf("Checksum(raw(deadbeef)) = %q, %v; want 89f8spxm", sum, err)
	}
	if _, err := watchonly.Checksum("raw(Ü)"); err == nil {
		t.Error("Checksum accepted a character outside the descriptor set")
	}
}
