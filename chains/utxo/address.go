package utxo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/codec"
)

// validate returns "" for a valid address of t's network, or why it is
// not; the error wraps chains.ErrUnsupportedNetwork for a network this
// package does not know.
func validate(t chains.Ticker, addr string) (network, string, error) {
	net, ok := networkOn(t.Network, t.Net)
	if !ok {
		return network{}, "", fmt.Errorf("%w: utxo network %q on %q", chains.ErrUnsupportedNetwork, t.Network, t.Net)
	}
	if reason := codec.PrintableProblem(addr); reason != "" {
		return net, reason, nil
	}
	return net, addressProblem(net, addr), nil
}

// EncodeAddress returns a btcutil address (decoded with Params(t)) in t's
// own encoding: CashAddr for bch, the btcutil encoding elsewhere. ok is
// false for an address type t does not use (bch has no segwit).
func EncodeAddress(t chains.Ticker, a btcutil.Address) (string, bool) {
	net, ok := networkOn(t.Network, t.Net)
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

// DecodeAddress decodes addr, which must be a valid address of t, for
// txscript (PayToAddrScript): CashAddr for bch is converted to its legacy
// form, and every base58 version of a network (ltc's 0x05 and 0x32 P2SH)
// decodes to the one script it pays. Errors are the *chains.AddressError of
// validation.
func DecodeAddress(t chains.Ticker, addr string) (btcutil.Address, error) {
	net, reason, err := validate(t, addr)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		return nil, &chains.AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
	}
	bad := func(reason string) (btcutil.Address, error) {
		return nil, &chains.AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
	}
	if net.cashAddr && !looksLegacy(addr) {
		_, data, reason := cashAddrDecode(addr, net.cashPrefix)
		if reason != "" {
			return bad(reason)
		}
		if data[0]>>3 == 1 {
			return btcutil.NewAddressScriptHashFromHash(data[1:], net.params)
		}
		return btcutil.NewAddressPubKeyHash(data[1:], net.params)
	}
	if net.segwitHRP != "" && strings.HasPrefix(strings.ToLower(addr), net.segwitHRP+"1") {
		hrp, data, _, err := bech32.DecodeGeneric(addr)
		if err != nil || hrp != net.segwitHRP {
			return bad("malformed bech32 address")
		}
		prog, err := bech32.ConvertBits(data[1:], 5, 8, false)
		if err != nil {
			return bad("invalid witness program")
		}
		switch {
		case data[0] == 0 && len(prog) == 20:
			return btcutil.NewAddressWitnessPubKeyHash(prog, net.params)
		case data[0] == 0 && len(prog) == 32:
			return btcutil.NewAddressWitnessScriptHash(prog, net.params)
		case data[0] == 1 && len(prog) == 32:
			return btcutil.NewAddressTaproot(prog, net.params)
		}
		return bad("unsupported witness program")
	}
	version, payload, reason := codec.DecodeBase58Check(addr)
	if reason != "" {
		return bad(reason)
	}
	if slices.Contains(net.p2sh, version) {
		return btcutil.NewAddressScriptHashFromHash(payload, net.params)
	}
	return btcutil.NewAddressPubKeyHash(payload, net.params)
}

// looksLegacy reports a bch address validation accepted as legacy base58
// rather than CashAddr (see cashAddrProblem).
func looksLegacy(addr string) bool {
	if strings.Contains(addr, ":") {
		return false
	}
	_, _, reason := codec.DecodeBase58Check(addr)
	return reason == ""
}

// Params returns the chaincfg parameters of t's network on t.Net, as
// btcutil and txscript need them to encode and decode addresses (a private
// value: nothing is registered with chaincfg). ok is false for a network
// this package does not know.
func Params(t chains.Ticker) (*chaincfg.Params, bool) {
	net, ok := networkOn(t.Network, t.Net)
	if !ok {
		return nil, false
	}
	return net.params, true
}

// HasSegwit reports whether t's network (on t.Net) has segwit addresses
// (btc and ltc: bech32 and bech32m); false for bch, doge and a network this
// package does not know.
func HasSegwit(t chains.Ticker) bool {
	net, ok := networkOn(t.Network, t.Net)
	return ok && net.segwitHRP != ""
}

// pubKeyAddress returns the address a compressed secp256k1 key controls, in
// the form deposit addresses use: P2WPKH for btc and ltc, P2PKH (as
// CashAddr for bch) for bch and doge.
func pubKeyAddress(net network, pub []byte) (string, error) {
	hash := btcutil.Hash160(pub)
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
}
