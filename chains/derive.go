package chains

import (
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// Deriver derives deposit addresses from an operator-held BIP32 master seed,
// at the key path of each ticker's family (Family.KeyPath), i being the
// address index:
//
//	secp256k1   m/purpose'/coin'/0'/0/i   (btc m/84'/0', ltc m/84'/2', bch m/44'/145',
//	                                       doge m/44'/3', every EVM ticker m/44'/60',
//	                                       TRON m/44'/195')
//	ed25519     m/purpose'/coin'/i'/0'    (Solana m/44'/501', SLIP-0010)
//
// These are the paths common wallets use, so an operator can recover funds by
// importing the seed (as a BIP39 seed) into such a wallet. Tickers of one
// family share keys: the payment record, not the address, tells which asset
// was expected.
//
// A Deriver does not keep the seed. For secp256k1 paths it keeps only
// extended public keys at m/purpose'/coin'/0'/0; for ed25519, whose SLIP-0010
// scheme has only hardened derivation, it must keep the extended private key
// at m/purpose'/coin'. Treat a Deriver as secret; its String method prints
// nothing of it. A Deriver is immutable and safe for concurrent use.
type Deriver struct {
	secp  map[KeyPath]*hdkeychain.ExtendedKey // public, at m/purpose'/coin'/0'/0
	ed    map[KeyPath]slip10Node              // private, at m/purpose'/coin'
	edPub map[KeyPath]Ed25519Source           // public keys from whoever holds the seed
}

// Ed25519Source answers the public key of the payment address key of index
// of an ed25519 key path (m/purpose'/coin'/index'/0'), for a Deriver that
// holds no seed: SLIP-0010 derives only hardened children, so the holder
// of the seed (a remote signer) is asked.
type Ed25519Source func(index uint32) (ed25519.PublicKey, error)

// NewDeriver builds a Deriver for the key paths of families (Family.KeyPaths)
// from a BIP32 master seed of 16 to 64 bytes (typically the 64-byte BIP39
// seed of the operator's mnemonic). It returns an error wrapping
// ErrInvalidSeed for a seed of another length or, with probability below
// 2^-127, one that yields no valid master key. The seed slice is not
// retained or modified.
func NewDeriver(seed []byte, families []Family) (*Deriver, error) {
	master, err := newMaster(seed)
	if err != nil {
		return nil, err
	}
	defer master.Zero()

	d := &Deriver{secp: map[KeyPath]*hdkeychain.ExtendedKey{}, ed: map[KeyPath]slip10Node{}}
	for _, f := range families {
		for _, p := range f.KeyPaths() {
			switch p.Curve {
			case Secp256k1:
				if _, done := d.secp[p]; done {
					continue
				}
				if d.secp[p], err = externalChain(master, p.Purpose, p.CoinType); err != nil {
					return nil, fmt.Errorf("%w: deriving %s keys: %w", ErrInvalidSeed, p.Path(0, 0), err)
				}
			case Ed25519:
				n := slip10Master(seed)
				for _, i := range []uint32{hardened + p.Purpose, hardened + p.CoinType} {
					if n, err = n.child(i); err != nil {
						return nil, fmt.Errorf("%w: deriving %s keys: %w", ErrInvalidSeed, p.Path(0, 0), err)
					}
				}
				d.ed[p] = n
			default:
				return nil, fmt.Errorf("%w: family %q: key path with unknown curve %d", ErrUnsupportedNetwork, f.Name(), p.Curve)
			}
		}
	}
	return d, nil
}

// NewPublicDeriver builds a Deriver from the extended public keys of the
// payment address chains of secp256k1 key paths (external: each
// m/purpose'/coin'/0'/0, as Keys.ExternalPublic returns it), for a server
// that holds no seed (a remote signer holds it). Ed25519 (Solana) keys
// have only hardened derivation, which needs the private key: their
// addresses come from ed, which asks the seed's holder. Address answers
// ErrUnsupportedNetwork for any path in neither.
func NewPublicDeriver(external map[KeyPath]*hdkeychain.ExtendedKey, ed map[KeyPath]Ed25519Source) (*Deriver, error) {
	d := &Deriver{secp: map[KeyPath]*hdkeychain.ExtendedKey{}, ed: map[KeyPath]slip10Node{}, edPub: map[KeyPath]Ed25519Source{}}
	for p, f := range ed {
		if p.Curve != Ed25519 || f == nil {
			return nil, fmt.Errorf("%w: %s: not an ed25519 key path with a source", ErrUnsupportedNetwork, p.Path(0, 0))
		}
		d.edPub[p] = f
	}
	for p, k := range external {
		if p.Curve != Secp256k1 {
			return nil, fmt.Errorf("%w: %s: only secp256k1 keys derive publicly", ErrUnsupportedNetwork, p.Path(0, 0))
		}
		if k == nil || k.IsPrivate() || k.Depth() != 4 || k.ChildIndex() != 0 {
			return nil, fmt.Errorf("%w: %s: want the extended public key of m/%d'/%d'/0'/0", ErrInvalidSeed, p.Path(0, 0), p.Purpose, p.CoinType)
		}
		d.secp[p] = k
	}
	return d, nil
}

// externalChain derives m/purpose'/coin'/0'/0 and returns it as an extended
// public key that shares no memory with the private keys, which are zeroed.
func externalChain(master *hdkeychain.ExtendedKey, purpose, coin uint32) (*hdkeychain.ExtendedKey, error) {
	k := master
	for _, i := range []uint32{hardened + purpose, hardened + coin, hardened + 0, 0} {
		child, err := k.Derive(i)
		if k != master {
			k.Zero()
		}
		if err != nil {
			return nil, err
		}
		k = child
	}
	defer k.Zero()
	pub, err := k.ECPubKey()
	if err != nil {
		return nil, err
	}
	var parentFP [4]byte
	binary.BigEndian.PutUint32(parentFP[:], k.ParentFingerprint())
	return hdkeychain.NewExtendedKey(slices.Clone(chaincfg.MainNetParams.HDPublicKeyID[:]),
		pub.SerializeCompressed(), k.ChainCode(), parentFP[:], k.Depth(), k.ChildIndex(), false), nil
}

// Address returns the deposit address of t (on t.Net) at index, derived at
// Path(t, index). The result always passes ValidateAddress for t. Errors wrap
// ErrInvalidIndex (index of 2^31 or more, or the rare index BIP32 declares
// invalid: skip to the next one) or ErrUnsupportedNetwork (a ticker without
// a family, or whose key path the Deriver was not built for).
func (d *Deriver) Address(t Ticker, index uint32) (string, error) {
	addr, err := d.address(t, index)
	if err != nil {
		return "", fmt.Errorf("derive %s address at index %d: %w", t.Ticker, index, err)
	}
	return addr, nil
}

func (d *Deriver) address(t Ticker, index uint32) (string, error) {
	if index >= hardened {
		return "", fmt.Errorf("%w: must be below 2^31", ErrInvalidIndex)
	}
	f := t.Rules()
	p, err := f.KeyPath(t)
	if err != nil {
		return "", err
	}
	switch p.Curve {
	case Secp256k1:
		parent, ok := d.secp[p]
		if !ok {
			break
		}
		pub, err := childPubKey(parent, index)
		if err != nil {
			return "", err
		}
		return f.Address(t, pub.SerializeCompressed())
	case Ed25519:
		if src, ok := d.edPub[p]; ok {
			pub, err := src(index)
			if err != nil {
				return "", err
			}
			if len(pub) != ed25519.PublicKeySize {
				return "", fmt.Errorf("%w: %s: a public key of %d bytes", ErrInvalidSeed, p.Path(0, index), len(pub))
			}
			return f.Address(t, pub)
		}
		n, ok := d.ed[p]
		if !ok {
			break
		}
		if n, err = n.child(hardened + index); err != nil {
			return "", err
		}
		if n, err = n.child(hardened + 0); err != nil {
			return "", err
		}
		return f.Address(t, n.publicKey())
	}
	return "", fmt.Errorf("%w: no keys prepared for %s (the Deriver was built without family %q)", ErrUnsupportedNetwork, p.Path(0, index), t.Family)
}

// PubKeyAddress returns the address of t (on t.Net) that a secp256k1 key
// controls, in the form Deriver uses (Family.Address): P2WPKH for btc and
// ltc, P2PKH (as CashAddr for bch) for bch and doge, EIP-55 for EVM,
// base58check T... for TRON. Solana keys are ed25519: it returns
// ErrUnsupportedNetwork.
func PubKeyAddress(t Ticker, pub *btcec.PublicKey) (string, error) {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return "", err
	}
	if p.Curve != Secp256k1 {
		return "", fmt.Errorf("%w: family %q has no secp256k1 addresses", ErrUnsupportedNetwork, t.Family)
	}
	return t.Rules().Address(t, pub.SerializeCompressed())
}

// childPubKey derives the non-hardened child index of an extended public key.
func childPubKey(parent *hdkeychain.ExtendedKey, index uint32) (*btcec.PublicKey, error) {
	child, err := parent.Derive(index)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidIndex, err)
	}
	return child.ECPubKey()
}

// Path returns DerivationPath(t, index).
func (d *Deriver) Path(t Ticker, index uint32) string { return DerivationPath(t, index) }

// DerivationPath returns the derivation path of t's address at index, in
// the usual notation with ' for hardened steps (e.g. "m/84'/0'/0'/0/7"), for
// recovery and for sweeping held funds; it needs no seed. It returns "" for
// a Ticker without a family or whose network its family does not serve.
func DerivationPath(t Ticker, index uint32) string {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return ""
	}
	return p.Path(0, index)
}

// ed25519Public is the public key of an ed25519 private key.
func ed25519Public(k ed25519.PrivateKey) []byte { return k.Public().(ed25519.PublicKey) }

// String returns a fixed placeholder, so that a Deriver printed by accident
// (logs, %v) leaks nothing.
func (d *Deriver) String() string { return "chains.Deriver{redacted}" }

// GoString returns the same placeholder as String, for %#v.
func (d *Deriver) GoString() string { return d.String() }
