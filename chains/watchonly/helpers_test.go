package watchonly_test

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

const (
	abandonMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
	junkMnemonic    = "test test test test test test test test test test test junk"
	h               = hdkeychain.HardenedKeyStart
)

// bip39Seed is the BIP 39 seed of a mnemonic without passphrase:
// PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic".
func bip39Seed(t testing.TB, mnemonic string) []byte {
	t.Helper()
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"), 2048, 64)
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// accountKey derives the extended public key at path from seed, serialized
// with version, and the master key's fingerprint.
func accountKey(t testing.TB, seed []byte, version uint32, path ...uint32) (string, uint32) {
	t.Helper()
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	fp := fingerprint(t, k)
	for _, i := range path {
		if k, err = k.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	if k, err = k.Neuter(); err != nil {
		t.Fatal(err)
	}
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], version)
	if k, err = k.CloneWithVersion(v[:]); err != nil {
		t.Fatal(err)
	}
	return k.String(), fp
}

// fingerprint is a key's BIP 32 fingerprint.
func fingerprint(t testing.TB, k *hdkeychain.ExtendedKey) uint32 {
	t.Helper()
	child, err := k.Derive(0)
	if err != nil {
		t.Fatal(err)
	}
	return child.ParentFingerprint()
}

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
