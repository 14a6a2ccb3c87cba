package watchonly_test

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/watchonly"
)

// TestChild: Child gives the public key a signer derives from the master
// key: with a key origin, the origin's fingerprint and its full path then
// chain, i; without one, the account key's own fingerprint and chain, i.
// ChangeAddress is KEY/1/c, distinct from the receive chain.
func TestChild(t *testing.T) {
	seed := bip39Seed(t, abandonMnemonic)
	path := []uint32{h + 84, h + 1, h + 0}
	tpub, fp := accountKey(t, seed, tpubVersion, path...)
	ltc := ticker(t, "ltc", chains.Regtest)

	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	derive := func(steps ...uint32) []byte {
		k := master
		for _, s := range steps {
			if k, err = k.Derive(s); err != nil {
				t.Fatal(err)
			}
		}
		pub, err := k.ECPubKey()
		if err != nil {
			t.Fatal(err)
		}
		return pub.SerializeCompressed()
	}

	withOrigin := mustParse(t, ltc, fmt.Sprintf("wpkh([%08x/84h/1h/0h]%s/0/*)", fp, tpub))
	c, err := withOrigin.Child(watchonly.ChangeChain, 7)
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(c.Fingerprint[:]) != fp {
		t.Errorf("fingerprint %x, want the origin's %08x", c.Fingerprint, fp)
	}
	if want := []uint32{h + 84, h + 1, h + 0, 1, 7}; !slices.Equal(c.Path, want) {
		t.Errorf("path %v, want %v", c.Path, want)
	}
	if !bytes.Equal(c.PubKey, derive(h+84, h+1, h+0, 1, 7)) {
		t.Error("Child(1, 7) is not m/84h/1h/0h/1/7 of the seed")
	}
	change, err := withOrigin.ChangeAddress(7)
	if err != nil || change != c.Address {
		t.Errorf("ChangeAddress(7) = %s, %v; Child's address %s", change, err, c.Address)
	}
	recv, err := withOrigin.Address(7)
	if err != nil || recv == change {
		t.Errorf("Address(7) = %s, %v: must differ from the change address %s", recv, err, change)
	}

	bare := mustParse(t, ltc, fmt.Sprintf("wpkh(%s/0/*)", tpub))
	c, err = bare.Child(watchonly.ReceiveChain, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{0, 3}; !slices.Equal(c.Path, want) {
		t.Errorf("origin-less path %v, want %v", c.Path, want)
	}
	if binary.BigEndian.Uint32(c.Fingerprint[:]) == fp {
		t.Error("origin-less fingerprint is the master's: it must be the account key's own")
	}
	acct, err := master.Derive(h + 84)
	if err == nil {
		acct, err = acct.Derive(h + 1)
	}
	if err == nil {
		acct, err = acct.Derive(h + 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	child, err := acct.Derive(0)
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(c.Fingerprint[:]) != child.ParentFingerprint() {
		t.Errorf("origin-less fingerprint %x, want the account key's %08x", c.Fingerprint, child.ParentFingerprint())
	}

	for _, bad := range []struct{ chain, i uint32 }{{2, 0}, {0, h}, {1, h + 5}} {
		if _, err := withOrigin.Child(bad.chain, bad.i); !errors.Is(err, chains.ErrInvalidIndex) {
			t.Errorf("Child(%d, %d) = %v, want ErrInvalidIndex", bad.chain, bad.i, err)
		}
	}
}

// TestChangeAgainstLitecoind: ChangeAddress(0..9) is what litecoind's
// deriveaddresses makes of the same descriptor with /1/* for each script
// type the node knows.
func TestChangeAgainstLitecoind(t *testing.T) {
	n := nodetest.StartLitecoind(t, 0)
	ltc := ticker(t, "ltc", chains.Regtest)
	seed := make([]byte, 32)
	if _, err := rand.Read(seed); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		function string
		purpose  uint32
	}{{"pkh", 44}, {"sh(wpkh", 49}, {"wpkh", 84}} {
		t.Run(c.function, func(t *testing.T) {
			tpub, fp := accountKey(t, seed, tpubVersion, h+c.purpose, h+1, h+0)
			spec := fmt.Sprintf("%s([%08x/%dh/1h/0h]%s/0/*)", c.function, fp, c.purpose, tpub)
			if strings.HasPrefix(c.function, "sh(") {
				spec += ")"
			}
			k := mustParse(t, ltc, spec)
			change := strings.Replace(spec, "/0/*", "/1/*", 1)
			var info struct {
				Descriptor string `json:"descriptor"`
			}
			n.Must(&info, "getdescriptorinfo", change)
			var want []string
			n.Must(&want, "deriveaddresses", info.Descriptor, []int{0, 9})
			for i, w := range want {
				got, err := k.ChangeAddress(uint32(i))
				if err != nil || got != w {
					t.Errorf("ChangeAddress(%d) = %s, %v; litecoind %s", i, got, err, w)
				}
			}
		})
	}
}
