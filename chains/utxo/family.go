package utxo

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/txscript"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// Family is the UTXO family's chains.Family: btc, ltc, bch and doge.
//
// Addresses (ValidateAddress):
//   - btc: base58check P2PKH (1...) and P2SH (3...); segwit v0 P2WPKH/P2WSH
//     (bc1q..., bech32) and v1 taproot (bc1p..., bech32m, 32-byte program).
//   - ltc: base58check L... (0x30), M... (0x32) and legacy 3... (0x05);
//     segwit ltc1q... and ltc1p... as for btc.
//   - bch: CashAddr P2PKH (q...) and P2SH (p...) with a 160-bit hash, with
//     or without the "bitcoincash:" prefix, all lower or all upper case;
//     legacy base58check 1... and 3....
//   - doge: base58check D... (0x1e) and 9.../A... (0x16).
//
// On testnet and regtest (Ticker.Net) the networks' test forms replace
// the mainnet ones. Deliberately rejected although well-formed: addresses
// of another network of the coin where the format tells them apart; segwit
// witness versions 2..16 and v1 programs other than 32 bytes (not yet
// spendable rules on the network: coins sent there can be lost, so this
// follows btcutil rather than BIP 350's advice to accept them); CashAddr
// types other than 160-bit P2PKH/P2SH (P2SH32, token-aware). Legacy base58
// addresses are shared between btc and bch (and 3... P2SH between btc and
// ltc), so such an address passes for both networks.
//
// Keys: BIP84 P2WPKH for btc (m/84'/0') and ltc (m/84'/2'), BIP44 P2PKH for
// bch (m/44'/145', as CashAddr) and doge (m/44'/3'). Payment URIs are
// BIP21. Confirmations are block depths; a credited payment is
// distributable once in a block.
type Family struct {
	// Rules is the family's lifecycle (Evaluate).
	Rules
	chains.EstimatedFee
}

var _ chains.Family = Family{}

// Name implements chains.Family.
func (Family) Name() chains.FamilyName { return chains.FamilyUTXO }

// Networks implements chains.Family: btc, ltc, bch and doge.
func (Family) Networks() []string { return networkNames() }

// CheckTicker implements chains.Family: the network must be one of
// Networks (each has its own address forms), and the family has no tokens.
func (Family) CheckTicker(t chains.Ticker) error {
	if _, ok := networkByName(t.Network); !ok {
		return &chains.RegistryError{Field: "ticker", Reason: fmt.Sprintf("utxo network %q is not supported (want %s)", t.Network, orList(networkNames()))}
	}
	if t.Token {
		return &chains.RegistryError{Field: "token", Reason: "the utxo family has no tokens"}
	}
	return nil
}

// orList renders "btc, ltc, bch or doge".
func orList(s []string) string {
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ValidateAddress implements chains.Family; see Family for the accepted
// forms.
func (Family) ValidateAddress(t chains.Ticker, addr string) error {
	_, reason, err := validate(t, addr)
	if err != nil {
		return fmt.Errorf("validate %s address: %w", t.Ticker, err)
	}
	if reason != "" {
		return &chains.AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
	}
	return nil
}

// KeyPaths implements chains.Family.
func (f Family) KeyPaths() []chains.KeyPath {
	var out []chains.KeyPath
	for _, name := range networkNames() {
		net, _ := networkByName(name)
		if p := keyPath(net); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// KeyPath implements chains.Family: m/84'/0' (btc), m/84'/2' (ltc),
// m/44'/145' (bch), m/44'/3' (doge), whatever t.Net (the paths wallets use
// on every network).
func (Family) KeyPath(t chains.Ticker) (chains.KeyPath, error) {
	net, ok := networkByName(t.Network)
	if !ok {
		return chains.KeyPath{}, fmt.Errorf("%w: utxo network %q", chains.ErrUnsupportedNetwork, t.Network)
	}
	return keyPath(net), nil
}

func keyPath(net network) chains.KeyPath {
	return chains.KeyPath{Curve: chains.Secp256k1, Purpose: net.purpose, CoinType: net.coinType}
}

// Address implements chains.Family: P2WPKH for btc and ltc, P2PKH for doge
// and bch (as CashAddr), on t.Net.
func (Family) Address(t chains.Ticker, pub []byte) (string, error) {
	net, ok := networkOn(t.Network, t.Net)
	if !ok {
		return "", fmt.Errorf("%w: utxo network %q on %q", chains.ErrUnsupportedNetwork, t.Network, t.Net)
	}
	if len(pub) != 33 {
		return "", fmt.Errorf("%w: %s keys are 33-byte compressed secp256k1 keys, got %d bytes", chains.ErrUnsupportedNetwork, t.Ticker, len(pub))
	}
	return pubKeyAddress(net, pub)
}

// FixedConfirmations implements chains.Family: confirmations are depths.
func (Family) FixedConfirmations(chains.Ticker) (int64, bool) { return 0, false }

// Relation implements chains.Family: only a ticker to itself (each coin is its own chain).
func (Family) Relation(t, u chains.Ticker) chains.Relation {
	if t.Ticker == u.Ticker {
		return chains.SameTicker
	}
	return chains.Unrelated
}

// SpendsSeveralAddresses implements chains.Family: a transaction spends outputs of any addresses, each input signed with its own key.
func (Family) SpendsSeveralAddresses(chains.Ticker) bool { return true }

// DistributionDepth implements chains.Family: no gate beyond credit.
func (Family) DistributionDepth(chains.Ticker, int64) int64 { return 0 }

// PaymentURI implements chains.Family: BIP21, `bitcoin:ADDR?amount=0.01`
// (litecoin:, bitcoincash:, dogecoin:), amount in coin units; a CashAddr
// that carries its prefix keeps it as the scheme.
func (Family) PaymentURI(t chains.Ticker, addr string, amount *decimal.Decimal) (string, error) {
	net, ok := networkByName(t.Network)
	if !ok {
		return "", fmt.Errorf("%w: no payment URI scheme for utxo network %q", chains.ErrUnsupportedNetwork, t.Network)
	}
	uri := addr
	if !strings.HasPrefix(strings.ToLower(addr), net.uriScheme+":") {
		uri = net.uriScheme + ":" + addr
	}
	if amount != nil {
		uri += "?amount=" + amount.String()
	}
	return uri, nil
}

// DestinationKey implements chains.Family: the hex of the output script
// addr pays to, so that ltc's 0x05 and 0x32 P2SH forms, a CashAddr with or
// without its prefix and its legacy form, and a bech32 address in either
// case have one key.
func (Family) DestinationKey(t chains.Ticker, addr string) (string, error) {
	script, err := outputScript(t, addr)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(script), nil
}

// outputScript returns the script a transaction output to addr carries.
func outputScript(t chains.Ticker, addr string) ([]byte, error) {
	a, err := DecodeAddress(t, addr)
	if err != nil {
		return nil, err
	}
	script, err := txscript.PayToAddrScript(a)
	if err != nil {
		return nil, &chains.AddressError{Ticker: t.Ticker, Address: addr, Reason: "no output script for this address type"}
	}
	return script, nil
}

// Priorities implements chains.Family: confirmation targets, as this API
// family documents them for btc and ltc; the backend's own elsewhere.
func (Family) Priorities(t chains.Ticker) []chains.Priority {
	switch t.Network {
	case "btc":
		return chains.BitcoinPriorities
	case "ltc":
		return chains.LitecoinPriorities
	}
	return []chains.Priority{chains.DefaultPriority}
}
