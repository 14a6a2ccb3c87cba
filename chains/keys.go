package chains

import (
	"crypto/ed25519"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// Keys derives the private keys of payment addresses from the operator's
// master seed: what a backend needs to sign forwards. It uses the key paths
// of each ticker's family, as Deriver does (see DerivationPath), so the key
// at index i controls the address Deriver.Address gives for i.
//
// Keys also derives the operator's own address of each family, on the
// BIP44 internal (change) chain, index 0: m/purpose'/coin'/0'/1/0
// (Solana: m/44'/501'/0'/1'). A UTXO forward returns its service fee there
// as change; an EVM or TRON token forward pays its gas from there. Wallets
// that import the seed see it as their first change address.
//
// Keys holds the seed: treat it as secret. Its String method prints nothing
// of it. It is immutable and safe for concurrent use.
type Keys struct {
	seed []byte
}

// Operator is the internal-chain index of the operator's address.
const operatorIndex = 0

// NewKeys returns Keys for a BIP32 master seed of 16 to 64 bytes (copied).
// Errors wrap ErrInvalidSeed.
func NewKeys(seed []byte) (*Keys, error) {
	master, err := newMaster(seed)
	if err != nil {
		return nil, err
	}
	master.Zero()
	return &Keys{seed: slices.Clone(seed)}, nil
}

// newMaster returns the BIP32 master key of a seed of 16 to 64 bytes;
// errors wrap ErrInvalidSeed.
func newMaster(seed []byte) (*hdkeychain.ExtendedKey, error) {
	if len(seed) < hdkeychain.MinSeedBytes || len(seed) > hdkeychain.MaxSeedBytes {
		return nil, fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalidSeed, len(seed), hdkeychain.MinSeedBytes, hdkeychain.MaxSeedBytes)
	}
	// The params only choose the xprv/xpub serialization version, which is
	// never serialized here.
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSeed, err)
	}
	return master, nil
}

// Secp256k1 returns the private key of t's payment address at index (UTXO,
// EVM and TRON families). Errors wrap ErrInvalidIndex or
// ErrUnsupportedNetwork.
func (k *Keys) Secp256k1(t Ticker, index uint32) (*btcec.PrivateKey, error) {
	return k.secp(t, 0, index)
}

// OperatorSecp256k1 returns the private key of the operator's address of
// t's family (internal chain, index 0).
func (k *Keys) OperatorSecp256k1(t Ticker) (*btcec.PrivateKey, error) {
	return k.secp(t, 1, operatorIndex)
}

// OperatorAddress returns the operator's address of t (on t.Net).
func (k *Keys) OperatorAddress(t Ticker) (string, error) {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return "", err
	}
	if p.Curve == Ed25519 {
		priv, err := k.ed25519(p, operatorIndex, 1)
		if err != nil {
			return "", err
		}
		return t.Rules().Address(t, ed25519Public(priv))
	}
	priv, err := k.OperatorSecp256k1(t)
	if err != nil {
		return "", err
	}
	return t.Rules().Address(t, priv.PubKey().SerializeCompressed())
}

func (k *Keys) secp(t Ticker, branch, index uint32) (*btcec.PrivateKey, error) {
	if index >= hardened {
		return nil, fmt.Errorf("%w: must be below 2^31", ErrInvalidIndex)
	}
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return nil, err
	}
	if p.Curve != Secp256k1 {
		return nil, fmt.Errorf("%w: family %q has no secp256k1 keys", ErrUnsupportedNetwork, t.Family)
	}
	return k.secpAt(p, branch, index)
}

// ExternalPublic returns the extended public key of p's payment address
// chain, m/purpose'/coin'/0'/0 (what a Deriver keeps): a remote signer
// hands it to a server without the seed (NewPublicDeriver).
func (k *Keys) ExternalPublic(p KeyPath) (*hdkeychain.ExtendedKey, error) {
	if p.Curve != Secp256k1 {
		return nil, fmt.Errorf("%w: %s: only secp256k1 keys have public derivation", ErrUnsupportedNetwork, p.Path(0, 0))
	}
	master, err := newMaster(k.seed)
	if err != nil {
		return nil, err
	}
	defer master.Zero()
	return externalChain(master, p.Purpose, p.CoinType)
}

// OperatorPublic returns the public key of p's operator key,
// m/purpose'/coin'/0'/1/0 (secp256k1 paths).
func (k *Keys) OperatorPublic(p KeyPath) (*btcec.PublicKey, error) {
	if p.Curve != Secp256k1 {
		return nil, fmt.Errorf("%w: %s: not a secp256k1 path", ErrUnsupportedNetwork, p.Path(1, 0))
	}
	priv, err := k.secpAt(p, 1, operatorIndex)
	if err != nil {
		return nil, err
	}
	defer priv.Zero()
	return priv.PubKey(), nil
}

// secpAt derives m/purpose'/coin'/0'/branch/index of p.
func (k *Keys) secpAt(p KeyPath, branch, index uint32) (*btcec.PrivateKey, error) {
	key, err := newMaster(k.seed)
	if err != nil {
		return nil, err
	}
	for _, i := range []uint32{hardened + p.Purpose, hardened + p.CoinType, hardened + 0, branch, index} {
		child, err := key.Derive(i)
		key.Zero()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidIndex, err)
		}
		key = child
	}
	defer key.Zero()
	return key.ECPrivKey()
}

// Ed25519 returns the private key of t's payment address at index
// (Solana: m/44'/501'/index'/0'). Errors wrap ErrInvalidIndex, or
// ErrUnsupportedNetwork for a ticker whose keys are not ed25519.
func (k *Keys) Ed25519(t Ticker, index uint32) (ed25519.PrivateKey, error) {
	p, err := k.ed25519Path(t)
	if err != nil {
		return nil, err
	}
	return k.ed25519(p, index, 0)
}

// OperatorEd25519 returns the private key of the operator's address of t
// (Solana: m/44'/501'/0'/1').
func (k *Keys) OperatorEd25519(t Ticker) (ed25519.PrivateKey, error) {
	p, err := k.ed25519Path(t)
	if err != nil {
		return nil, err
	}
	return k.ed25519(p, operatorIndex, 1)
}

// OperatorKey names the operator's key (KeyRef.Operator).
var OperatorKey = KeyRef{Operator: true}

// Ed25519At returns the public key of the ed25519 path p that ref names:
// the payment address key m/purpose'/coin'/index'/0', or the operator's
// m/purpose'/coin'/0'/1'. A remote signer answers these: a server without
// the seed cannot derive them (SLIP-0010 derives only hardened children).
func (k *Keys) Ed25519At(p KeyPath, ref KeyRef) (ed25519.PublicKey, error) {
	if p.Curve != Ed25519 {
		return nil, fmt.Errorf("%w: %s is not an ed25519 key path", ErrUnsupportedNetwork, p.Path(0, 0))
	}
	index, branch := ref.Index, uint32(0)
	if ref.Operator {
		index, branch = operatorIndex, 1
	}
	priv, err := k.ed25519(p, index, branch)
	if err != nil {
		return nil, err
	}
	defer clear(priv)
	return ed25519Public(priv), nil
}

func (k *Keys) ed25519Path(t Ticker) (KeyPath, error) {
	p, err := t.Rules().KeyPath(t)
	if err != nil {
		return KeyPath{}, err
	}
	if p.Curve != Ed25519 {
		return KeyPath{}, fmt.Errorf("%w: family %q has no ed25519 keys", ErrUnsupportedNetwork, t.Family)
	}
	return p, nil
}

func (k *Keys) ed25519(p KeyPath, index, branch uint32) (ed25519.PrivateKey, error) {
	if index >= hardened {
		return nil, fmt.Errorf("%w: must be below 2^31", ErrInvalidIndex)
	}
	n := slip10Master(k.seed)
	var err error
	for _, i := range []uint32{hardened + p.Purpose, hardened + p.CoinType, hardened + index, hardened + branch} {
		if n, err = n.child(i); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidIndex, err)
		}
	}
	return ed25519.NewKeyFromSeed(n.key[:]), nil
}

// String returns a fixed placeholder, so that Keys printed by accident leak
// nothing.
func (k *Keys) String() string { return "chains.Keys{redacted}" }

// GoString returns the same placeholder as String, for %#v.
func (k *Keys) GoString() string { return k.String() }
