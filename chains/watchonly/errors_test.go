package watchonly_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/watchonly"
)

// privateKey derives the extended private key at path from seed, with
// version.
func privateKey(t *testing.T, seed []byte, version uint32, path ...uint32) string {
	t.Helper()
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range path {
		if k, err = k.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], version)
	if k, err = k.CloneWithVersion(v[:]); err != nil {
		t.Fatal(err)
	}
	return k.String()
}

// TestParseErrors: every refusal is a *KeyError wrapping ErrInvalidKey
// whose message names the problem, and none repeats key material.
func TestParseErrors(t *testing.T) {
	seed := bip39Seed(t, abandonMnemonic)
	x, _ := accountKey(t, seed, xpubVersion, h+84, h+0, h+0)
	z, _ := accountKey(t, seed, zpubVersion, h+84, h+0, h+0)
	y, _ := accountKey(t, seed, ypubVersion, h+49, h+0, h+0)
	tp, _ := accountKey(t, seed, tpubVersion, h+84, h+1, h+0)
	deep, _ := accountKey(t, seed, xpubVersion, h+84, h+0, h+0, 0)
	shallow, _ := accountKey(t, seed, xpubVersion, h+84, h+0)
	multisig, _ := accountKey(t, seed, 0x02aa7ed3, h+48, h+0, h+0)
	ltub, _ := accountKey(t, seed, 0x019da462, h+44, h+2, h+0)
	evmDeep, _ := accountKey(t, seed, xpubVersion, h+44, h+60, h+0, 0)
	xprv := privateKey(t, seed, 0x0488ade4, h+84, h+0, h+0)
	tprv := privateKey(t, seed, 0x04358394, h+84, h+1, h+0)
	good := "wpkh([73c5da0a/84h/0h/0h]" + x + "/0/*)"
	sum, _ := watchonly.Checksum(good)
	badSum := good + "#" + strings.Map(func(r rune) rune {
		if r == 'q' {
			return 'p'
		}
		return 'q'
	}, sum)
	swap := byte('A')
	if x[50] == swap {
		swap = 'B'
	}
	mistyped := x[:50] + string(swap) + x[51:]

	btc, ltcReg := ticker(t, "btc", chains.Mainnet), ticker(t, "ltc", chains.Regtest)
	doge, bch, eth, trx := ticker(t, "doge", chains.Mainnet), ticker(t, "bch", chains.Mainnet), ticker(t, "eth", chains.Mainnet), ticker(t, "trx", chains.Mainnet)
	cases := []struct {
		name string
		tk   chains.Ticker
		spec string
		want string
	}{
		{"bad descriptor checksum", btc, badSum, "bad checksum #"},
		{"checksum of 3 characters", btc, good + "#abc", "has 3 characters, want 8"},
		{"empty checksum", btc, good + "#", "empty checksum"},
		{"mistyped key", btc, mistyped, "bad checksum in the extended key"},
		{"truncated key", btc, x[:100], "want 82"},
		{"not base58", btc, x[:20] + "0" + x[21:], "is not base58"},
		{"tpub on mainnet", btc, tp, "tpub is a testnet/regtest key, and btc runs on mainnet"},
		{"xpub on regtest", ltcReg, "wpkh(" + x + "/0/*)", "xpub is a mainnet key, and ltc runs on regtest"},
		{"zpub on regtest", ltcReg, z, "zpub is a mainnet key"},
		{"xprv", btc, xprv, "private key (xprv)"},
		{"xprv in a descriptor", btc, "wpkh(" + xprv + "/0/*)", "never give payhook a private key"},
		{"tprv", ltcReg, tprv, "export the account's extended public key (tpub)"},
		{"xprv for eth", eth, xprv, "private key"},
		{"bare key at depth 4", btc, deep, "depth 4"},
		{"bare key at depth 2", btc, shallow, "depth 2 (child 0')"},
		{"origin shorter than the depth", btc, "wpkh([73c5da0a/84h/0h]" + x + "/0/*)", "the key origin has 2 steps but the key has depth 3"},
		{"origin of another child", btc, "wpkh([73c5da0a/84h/0h/1h]" + x + "/0/*)", "ends with step 1h but the key is child 0h"},
		{"short fingerprint", btc, "wpkh([73c5da0/84h/0h/0h]" + x + "/0/*)", "fingerprint, 8 hex characters"},
		{"bad origin step", btc, "wpkh([73c5da0a/84H/0h/0h]" + x + "/0/*)", `step "84H"`},
		{"origin not closed", btc, "wpkh([73c5da0a/84h/0h/0h" + x + "/0/*)", "not closed"},
		{"change chain", btc, "wpkh(" + x + "/1/*)", "/1/* is the change chain"},
		{"hardened wildcard", btc, "wpkh(" + x + "/0/*h)", "hardened children"},
		{"hardened wildcard '", btc, "wpkh(" + x + "/0/*')", "hardened children"},
		{"multipath", btc, "wpkh(" + x + "/<0;1>/*)", "multipath"},
		{"no path", btc, "wpkh(" + x + ")", "needs the path /0/*"},
		{"one key, not a chain", btc, "wpkh(" + x + "/0/5)", `"/0/5" names one key`},
		{"deeper chain", btc, "wpkh(" + x + "/0/0/*)", "only /0/*"},
		{"multi", btc, "wsh(multi(1," + x + "/0/*))", "wsh() descriptors are not accepted"},
		{"sortedmulti", btc, "sortedmulti(1," + x + "/0/*," + x + "/0/*)", "sortedmulti() descriptors are not accepted"},
		{"sh(multi)", btc, "sh(multi(1," + x + "/0/*))", "the only sh() descriptor accepted is sh(wpkh("},
		{"two keys", btc, "wpkh(" + x + "/0/*," + x + "/0/*)", "takes exactly one key"},
		{"tr with a tree", btc, "tr(" + x + "/0/*,pk(" + x + "/1/*))", "script tree"},
		{"unknown function", btc, "foo(" + x + "/0/*)", `unknown descriptor function "foo"`},
		{"key before a parenthesis", btc, x + "(", "must start with its function"},
		{"trailing garbage", btc, good + "xyz", "3 characters of unexpected text after the closing parenthesis of wpkh()"},
		{"unbalanced", btc, "wpkh(" + x + "/0/*", "unbalanced parentheses"},
		{"inner space", btc, x + " garbage", "without spaces"},
		{"bare key with path", btc, x + "/0/*", "a bare key takes no key origin, path or checksum"},
		{"too long", btc, strings.Repeat("a", watchonly.MaxLen+1), "1001 bytes is too long (at most 1000)"},
		{"empty", btc, "  ", "empty"},
		{"segwit descriptor on doge", doge, "wpkh(" + x + "/0/*)", "doge has no segwit"},
		{"zpub on doge", doge, z, "zpub keys give wpkh (segwit) addresses, and doge has no segwit"},
		{"sh(wpkh) on bch", bch, "sh(wpkh(" + x + "/0/*))", "bch has no segwit"},
		{"tr on bch", bch, "tr(" + x + "/0/*)", "bch has no segwit"},
		{"ypub in a descriptor", btc, "sh(wpkh(" + y + "/0/*))", "inside a descriptor write the key as xpub"},
		{"multisig prefix", btc, multisig, "Zpub is a multisig key prefix"},
		{"Ltub for btc", btc, ltub, "Ltub is a ltc key prefix, not for btc"},
		{"unknown version", btc, base58.CheckEncode(make([]byte, 77), 0x11), "unknown extended key version"},
		{"descriptor for eth", eth, "pkh(" + x + "/0/*)", "not a descriptor or a path"},
		{"zpub for eth", eth, z, "an EVM account key is written xpub"},
		{"eth key at depth 4", eth, evmDeep, "must be the account key at m/44'/60'/0' (depth 3"},
		{"tron", trx, x, `"tron" coin: watch-only keys are for UTXO coins`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := watchonly.Parse(c.tk, c.spec)
			if err == nil {
				t.Fatalf("Parse accepted it: %s", k)
			}
			var ke *watchonly.KeyError
			if !errors.As(err, &ke) || !errors.Is(err, watchonly.ErrInvalidKey) || ke.Ticker != c.tk.Ticker {
				t.Errorf("error %v (%T) is not a *KeyError of %s", err, err, c.tk.Ticker)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			for _, secret := range []string{x, xprv, tprv, z, tp} {
				if strings.Contains(err.Error(), secret[4:24]) {
					t.Errorf("error %q repeats key material", err)
				}
			}
		})
	}
}

// TestAccepted: forms Parse takes, beyond the vectors: white space around,
// ' and h, an upper-case fingerprint, a master key with its own
// fingerprint, a checksum, Litecoin's Ltub/Mtub, P2PKH on doge and bch
// (CashAddr).
func TestAccepted(t *testing.T) {
	seed := bip39Seed(t, abandonMnemonic)
	x, _ := accountKey(t, seed, xpubVersion, h+84, h+0, h+0)
	master, fp := accountKey(t, seed, xpubVersion)
	btc := ticker(t, "btc", chains.Mainnet)
	first := "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	for _, spec := range []string{
		"\n  wpkh([73C5DA0A/84'/0h/0']" + x + "/0/*)\t",
		mustParse(t, btc, "wpkh("+x+"/0/*)").Descriptor(),
	} {
		assertAddresses(t, mustParse(t, btc, spec), first)
	}
	// A master key with an empty origin path derives m/0/i.
	mk := mustParse(t, btc, fmt.Sprintf("pkh([%08x]%s/0/*)", fp, master))
	if _, err := mk.Address(0); err != nil {
		t.Fatal(err)
	}
	if _, err := watchonly.Parse(btc, fmt.Sprintf("pkh([%08x]%s/0/*)", fp+1, master)); err == nil || !strings.Contains(err.Error(), "fingerprint is not this master key's") {
		t.Errorf("a master key with another fingerprint: %v", err)
	}

	ltc := ticker(t, "ltc", chains.Mainnet)
	ltub, _ := accountKey(t, seed, 0x019da462, h+44, h+2, h+0)
	xl, _ := accountKey(t, seed, xpubVersion, h+44, h+2, h+0)
	mtub, _ := accountKey(t, seed, 0x01b26ef6, h+49, h+2, h+0)
	xm, _ := accountKey(t, seed, xpubVersion, h+49, h+2, h+0)
	for _, pair := range [][2]string{{ltub, "pkh(" + xl + "/0/*)"}, {mtub, "sh(wpkh(" + xm + "/0/*))"}} {
		a, b := addresses(t, mustParse(t, ltc, pair[0]), 3), addresses(t, mustParse(t, ltc, pair[1]), 3)
		if strings.Join(a, " ") != strings.Join(b, " ") {
			t.Errorf("%.4s gives %v, %s gives %v", pair[0], a, pair[1], b)
		}
		if !strings.HasPrefix(a[0], "L") && !strings.HasPrefix(a[0], "M") {
			t.Errorf("ltc address %s", a[0])
		}
	}

	for _, c := range []struct {
		name, prefix string
	}{{"doge", "D"}, {"bch", "bitcoincash:q"}} {
		tk := ticker(t, c.name, chains.Mainnet)
		x44, _ := accountKey(t, seed, xpubVersion, h+44, h+0, h+0)
		for _, a := range addresses(t, mustParse(t, tk, x44), 3) {
			if !strings.HasPrefix(a, c.prefix) {
				t.Errorf("%s address %s", c.name, a)
			}
			if err := tk.Rules().ValidateAddress(tk, a); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
}

// TestAddressIndex: indices from 2^31 are refused with chains.ErrInvalidIndex.
func TestAddressIndex(t *testing.T) {
	k := mustParse(t, ticker(t, "btc", chains.Mainnet), bip84Zpub)
	if _, err := k.Address(1<<31 - 1); err != nil {
		t.Errorf("Address(2^31-1): %v", err)
	}
	if _, err := k.Address(1 << 31); !errors.Is(err, chains.ErrInvalidIndex) {
		t.Errorf("Address(2^31) = %v, want ErrInvalidIndex", err)
	}
}

// TestAddressConcurrent: one Key serves concurrent callers (run with -race).
func TestAddressConcurrent(t *testing.T) {
	k := mustParse(t, ticker(t, "btc", chains.Mainnet), bip84Zpub)
	want := addresses(t, k, 8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, w := range want {
				if a, err := k.Address(uint32(i)); err != nil || a != w {
					t.Errorf("Address(%d) = %s, %v; want %s", i, a, err, w)
				}
			}
		})
	}
	wg.Wait()
}
