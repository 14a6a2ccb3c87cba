package chains

import (
	"crypto/ed25519"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// Keys derives the private keys of payment addresses from the operator's
// master seed: what a backend needs to sign forwards. It uses the paths of
// Deriver (see DerivationPath), so the key at index i controls the address
// Deriver.Address gives for i.
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
	if _, err := NewDeriver(seed); err != nil {
		return nil, err
	}
	return &Keys{seed: slices.Clone(seed)}, nil
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
	if t.Family == FamilySolana {
		priv, err := k.solana(operatorIndex, 1)
		if err != nil {
			return "", err
		}
		return base58.Encode(priv.Public().(ed25519.PublicKey)), nil
	}
	priv, err := k.OperatorSecp256k1(t)
	if err != nil {
		return "", err
	}
	return PubKeyAddress(t, priv.PubKey())
}

func (k *Keys) secp(t Ticker, branch, index uint32) (*btcec.PrivateKey, error) {
	if index >= hardened {
		return nil, fmt.Errorf("%w: must be below 2^31", ErrInvalidIndex)
	}
	var purpose, coin uint32
	switch t.Family {
	case FamilyUTXO:
		net, ok := utxoNetworkByName(t.Network)
		if !ok {
			return nil, fmt.Errorf("%w: utxo network %q", ErrUnsupportedNetwork, t.Network)
		}
		purpose, coin = net.purpose, net.coinType
	case FamilyEVM:
		purpose, coin = 44, coinTypeEVM
	case FamilyTron:
		purpose, coin = 44, coinTypeTron
	default:
		return nil, fmt.Errorf("%w: family %q has no secp256k1 keys", ErrUnsupportedNetwork, t.Family)
	}
	master, err := hdkeychain.NewMaster(k.seed, &chaincfg.MainNetParams)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSeed, err)
	}
	key := master
	for _, i := range []uint32{hardened + purpose, hardened + coin, hardened + 0, branch, index} {
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

// Ed25519 returns the private key of the Solana payment address at index
// (m/44'/501'/index'/0').
func (k *Keys) Ed25519(index uint32) (ed25519.PrivateKey, error) {
	return k.solana(index, 0)
}

// OperatorEd25519 returns the private key of the operator's Solana address.
func (k *Keys) OperatorEd25519() (ed25519.PrivateKey, error) {
	return k.solana(operatorIndex, 1)
}

func (k *Keys) solana(index, branch uint32) (ed25519.PrivateKey, error) {
	if index >= hardened {
		return nil, fmt.Errorf("%w: must be below 2^31", ErrInvalidIndex)
	}
	n := slip10Master(k.seed)
	var err error
	for _, i := range []uint32{hardened + 44, hardened + coinTypeSolana, hardened + index, hardened + branch} {
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
