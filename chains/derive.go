package chains

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// BIP44 coin types of the account-based families.
const (
	coinTypeEVM    = 60
	coinTypeTron   = 195
	coinTypeSolana = 501
)

// Deriver derives deposit addresses from an operator-held BIP32 master seed.
//
// Paths (i is the address index):
//
//	btc      m/84'/0'/0'/0/i     P2WPKH, bc1q...
//	ltc      m/84'/2'/0'/0/i     P2WPKH, ltc1q...
//	bch      m/44'/145'/0'/0/i   P2PKH as CashAddr, bitcoincash:q...
//	doge     m/44'/3'/0'/0/i     P2PKH, D...
//	evm      m/44'/60'/0'/0/i    EIP-55 0x... (every EVM ticker: one key per index across eth, erc20, bep20, polygon)
//	tron     m/44'/195'/0'/0/i   T... (trx and trc20 share keys)
//	solana   m/44'/501'/i'/0'    SLIP-0010 ed25519, base58 public key (sol and SPL tokens share keys)
//
// These are the paths common wallets use, so an operator can recover funds by
// importing the seed (as a BIP39 seed) into such a wallet. Tickers of one
// family share keys: the payment record, not the address, tells which asset
// was expected.
//
// A Deriver does not keep the seed. For secp256k1 families it keeps only
// extended public keys at m/purpose'/coin'/0'/0; for Solana, whose SLIP-0010
// ed25519 scheme has only hardened derivation, it must keep the extended
// private key at m/44'/501'. Treat a Deriver as secret; its String method
// prints nothing of it. A Deriver is immutable and safe for concurrent use.
type Deriver struct {
	utxo   map[string]*hdkeychain.ExtendedKey // by network; public
	evm    *hdkeychain.ExtendedKey            // public
	tron   *hdkeychain.ExtendedKey            // public
	solana slip10Node                         // private, m/44'/501'
}

// NewDeriver builds a Deriver from a BIP32 master seed of 16 to 64 bytes
// (typically the 64-byte BIP39 seed of the operator's mnemonic). It returns
// an error wrapping ErrInvalidSeed for a seed of another length or, with
// probability below 2^-127, one that yields no valid master key. The seed
// slice is not retained or modified.
func NewDeriver(seed []byte) (*Deriver, error) {
	if len(seed) < hdkeychain.MinSeedBytes || len(seed) > hdkeychain.MaxSeedBytes {
		return nil, fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalidSeed, len(seed), hdkeychain.MinSeedBytes, hdkeychain.MaxSeedBytes)
	}
	// The params only choose the xprv/xpub serialization version, which is
	// never serialized here.
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSeed, err)
	}
	defer master.Zero()

	d := &Deriver{utxo: make(map[string]*hdkeychain.ExtendedKey, 4)}
	for _, name := range []string{"btc", "ltc", "bch", "doge"} {
		net, _ := utxoNetworkByName(name)
		if d.utxo[name], err = externalChain(master, net.purpose, net.coinType); err != nil {
			return nil, fmt.Errorf("%w: deriving %s keys: %w", ErrInvalidSeed, name, err)
		}
	}
	if d.evm, err = externalChain(master, 44, coinTypeEVM); err != nil {
		return nil, fmt.Errorf("%w: deriving evm keys: %w", ErrInvalidSeed, err)
	}
	if d.tron, err = externalChain(master, 44, coinTypeTron); err != nil {
		return nil, fmt.Errorf("%w: deriving tron keys: %w", ErrInvalidSeed, err)
	}
	sol := slip10Master(seed)
	for _, i := range []uint32{hardened + 44, hardened + coinTypeSolana} {
		if sol, err = sol.child(i); err != nil {
			return nil, fmt.Errorf("%w: deriving solana keys: %w", ErrInvalidSeed, err)
		}
	}
	d.solana = sol
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
// invalid: skip to the next one) or ErrUnsupportedNetwork.
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
	switch t.Family {
	case FamilyUTXO:
		net, ok := utxoNetworkOn(t.Network, t.Net)
		if !ok {
			return "", fmt.Errorf("%w: utxo network %q on %q", ErrUnsupportedNetwork, t.Network, t.Net)
		}
		pub, err := childPubKey(d.utxo[net.name], index)
		if err != nil {
			return "", err
		}
		return PubKeyAddress(t, pub)
	case FamilyEVM, FamilyTron:
		key := d.evm
		if t.Family == FamilyTron {
			key = d.tron
		}
		pub, err := childPubKey(key, index)
		if err != nil {
			return "", err
		}
		return PubKeyAddress(t, pub)
	case FamilySolana:
		n, err := d.solana.child(hardened + index)
		if err != nil {
			return "", err
		}
		if n, err = n.child(hardened + 0); err != nil {
			return "", err
		}
		return base58.Encode(n.publicKey()), nil
	}
	return "", fmt.Errorf("%w: family %q", ErrUnsupportedNetwork, t.Family)
}

// PubKeyAddress returns the address of t (on t.Net) that a secp256k1 key
// controls, in the form Deriver uses: P2WPKH for btc and ltc, P2PKH (as
// CashAddr for bch) for bch and doge, EIP-55 for EVM, base58check T... for
// TRON. Solana keys are ed25519: it returns ErrUnsupportedNetwork.
func PubKeyAddress(t Ticker, pub *btcec.PublicKey) (string, error) {
	switch t.Family {
	case FamilyUTXO:
		net, ok := utxoNetworkOn(t.Network, t.Net)
		if !ok {
			return "", fmt.Errorf("%w: utxo network %q on %q", ErrUnsupportedNetwork, t.Network, t.Net)
		}
		hash := btcutil.Hash160(pub.SerializeCompressed())
		switch {
		case net.cashAddr:
			return cashAddrEncode(net.cashPrefix, 0x00, hash) // type 0 (P2PKH), 160-bit
		case net.purpose == 84:
			a, err := btcutil.NewAddressWitnessPubKeyHash(hash, net.params)
			if err != nil {
				return "", err
			}
			return a.EncodeAddress(), nil
		default:
			a, err := btcutil.NewAddressPubKeyHash(hash, net.params)
			if err != nil {
				return "", err
			}
			return a.EncodeAddress(), nil
		}
	case FamilyEVM, FamilyTron:
		// The account is the last 20 bytes of keccak256 of the 64-byte
		// uncompressed public key without its 0x04 prefix.
		account := keccak256(pub.SerializeUncompressed()[1:])[12:]
		if t.Family == FamilyTron {
			return base58.CheckEncode(account, tronVersion), nil
		}
		return eip55(account), nil
	}
	return "", fmt.Errorf("%w: family %q has no secp256k1 addresses", ErrUnsupportedNetwork, t.Family)
}

// EncodeUTXOAddress returns a btcutil address (decoded with UTXOParams(t))
// in t's own encoding: CashAddr for bch, the btcutil encoding elsewhere.
// ok is false for an address type t does not use (bch has no segwit).
func EncodeUTXOAddress(t Ticker, a btcutil.Address) (string, bool) {
	net, ok := utxoNetworkOn(t.Network, t.Net)
	if !ok {
		return "", false
	}
	if !net.cashAddr {
		return a.EncodeAddress(), true
	}
	var typ byte
	switch a.(type) {
	case *btcutil.AddressPubKeyHash:
		typ = 0
	case *btcutil.AddressScriptHash:
		typ = 1
	default:
		return "", false
	}
	s, err := cashAddrEncode(net.cashPrefix, typ<<3, a.ScriptAddress())
	return s, err == nil
}

// DecodeUTXOAddress decodes addr, a valid address of t, for txscript
// (PayToAddrScript): CashAddr for bch is converted to its legacy form.
func DecodeUTXOAddress(t Ticker, addr string) (btcutil.Address, error) {
	if err := ValidateAddress(t, addr); err != nil {
		return nil, err
	}
	net, _ := utxoNetworkOn(t.Network, t.Net)
	if net.cashAddr && strings.Contains(addr, ":") {
		_, data, reason := cashAddrDecode(addr, net.cashPrefix)
		if reason != "" {
			return nil, &AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
		}
		if data[0]>>3 == 1 {
			return btcutil.NewAddressScriptHashFromHash(data[1:], net.params)
		}
		return btcutil.NewAddressPubKeyHash(data[1:], net.params)
	}
	if net.segwitHRP != "" && strings.HasPrefix(strings.ToLower(addr), net.segwitHRP+"1") {
		hrp, data, _, err := bech32.DecodeGeneric(addr)
		if err != nil || hrp != net.segwitHRP {
			return nil, &AddressError{Ticker: t.Ticker, Address: addr, Reason: "malformed bech32 address"}
		}
		prog, err := bech32.ConvertBits(data[1:], 5, 8, false)
		if err != nil {
			return nil, &AddressError{Ticker: t.Ticker, Address: addr, Reason: "invalid witness program"}
		}
		switch {
		case data[0] == 0 && len(prog) == 20:
			return btcutil.NewAddressWitnessPubKeyHash(prog, net.params)
		case data[0] == 0 && len(prog) == 32:
			return btcutil.NewAddressWitnessScriptHash(prog, net.params)
		case data[0] == 1 && len(prog) == 32:
			return btcutil.NewAddressTaproot(prog, net.params)
		}
		return nil, &AddressError{Ticker: t.Ticker, Address: addr, Reason: "unsupported witness program"}
	}
	version, payload, reason := decodeBase58Check(addr)
	if reason != "" {
		return nil, &AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
	}
	if slices.Contains(net.p2sh, version) {
		return btcutil.NewAddressScriptHashFromHash(payload, net.params)
	}
	return btcutil.NewAddressPubKeyHash(payload, net.params)
}

// UTXOParams returns the chaincfg parameters of t's network on t.Net, as
// btcutil and txscript need them to encode and decode addresses (a private
// value: nothing is registered with chaincfg). ok is false off the UTXO
// family.
func UTXOParams(t Ticker) (*chaincfg.Params, bool) {
	if t.Family != FamilyUTXO {
		return nil, false
	}
	net, ok := utxoNetworkOn(t.Network, t.Net)
	if !ok {
		return nil, false
	}
	return net.params, true
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
// a Ticker whose family or network is not supported.
func DerivationPath(t Ticker, index uint32) string {
	switch t.Family {
	case FamilyUTXO:
		if net, ok := utxoNetworkByName(t.Network); ok {
			return fmt.Sprintf("m/%d'/%d'/0'/0/%d", net.purpose, net.coinType, index)
		}
	case FamilyEVM:
		return fmt.Sprintf("m/44'/%d'/0'/0/%d", coinTypeEVM, index)
	case FamilyTron:
		return fmt.Sprintf("m/44'/%d'/0'/0/%d", coinTypeTron, index)
	case FamilySolana:
		return fmt.Sprintf("m/44'/%d'/%d'/0'", coinTypeSolana, index)
	}
	return ""
}

// String returns a fixed placeholder, so that a Deriver printed by accident
// (logs, %v) leaks nothing.
func (d *Deriver) String() string { return "chains.Deriver{redacted}" }

// GoString returns the same placeholder as String, for %#v.
func (d *Deriver) GoString() string { return d.String() }
