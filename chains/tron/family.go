package tron

import (
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
	"github.com/payhook/payhook/chains/internal/codec"
)

// Family is TRON's chains.Family: trx and trc20 tokens.
//
// Addresses are base58check of 21 bytes starting 0x41 (T...); the zero
// account, which burns funds, is refused. The public testnets use the same
// format, so their addresses pass too. Keys: m/44'/195'; an address is the
// EVM account of the key behind 0x41. Payment URIs are
// `tron:ADDR?amount=1.5`, plus `&token=CONTRACT` for TRC-20. Confirmations
// are block depths; a credited payment is distributed only from
// DistributionDepth, in a solidified block.
type Family struct {
	// Rules is the family's lifecycle (Evaluate).
	Rules
	chains.EstimatedFee
}

var _ chains.Family = Family{}

// version is the first byte of every TRON address (mainnet and the public
// testnets alike), which makes their base58 form start with T.
const version = 0x41

// coinType is TRON's SLIP-0044 coin type.
const coinType = 195

// Name implements chains.Family.
func (Family) Name() chains.FamilyName { return chains.FamilyTron }

// Networks implements chains.Family.
func (Family) Networks() []string { return []string{"trx", "trc20"} }

// CheckTicker implements chains.Family: TRON's address format does not
// depend on the network, so any network and token is served.
func (Family) CheckTicker(chains.Ticker) error { return nil }

// ValidateAddress implements chains.Family.
func (Family) ValidateAddress(t chains.Ticker, addr string) error {
	if reason := addressProblem(addr); reason != "" {
		return &chains.AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
	}
	return nil
}

func addressProblem(addr string) string {
	if reason := codec.PrintableProblem(addr); reason != "" {
		return reason
	}
	v, payload, reason := codec.DecodeBase58Check(addr)
	switch {
	case reason != "":
		return reason
	case len(payload) != 20:
		return fmt.Sprintf("wrong length: %d bytes, want 21 (0x41 and a 20-byte account)", len(payload)+1)
	case v != version:
		return fmt.Sprintf("first byte 0x%02x, want 0x41 (TRON addresses start with T)", v)
	case codec.AllZero(payload):
		return "the zero address burns funds"
	}
	return ""
}

// KeyPaths implements chains.Family.
func (Family) KeyPaths() []chains.KeyPath { return []chains.KeyPath{keyPath()} }

// KeyPath implements chains.Family: m/44'/195' for every TRON ticker.
func (Family) KeyPath(chains.Ticker) (chains.KeyPath, error) { return keyPath(), nil }

func keyPath() chains.KeyPath {
	return chains.KeyPath{Curve: chains.Secp256k1, Purpose: 44, CoinType: coinType}
}

// Address implements chains.Family: base58check of 0x41 and the key's
// account.
func (Family) Address(t chains.Ticker, pub []byte) (string, error) {
	account, err := evm.Account(pub)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", chains.ErrUnsupportedNetwork, t.Ticker, err)
	}
	return base58.CheckEncode(account, version), nil
}

// FixedConfirmations implements chains.Family: confirmations are depths.
func (Family) FixedConfirmations(chains.Ticker) (int64, bool) { return 0, false }

// SpendsSeveralAddresses implements chains.Family: a transaction moves one account's balance.
func (Family) SpendsSeveralAddresses(chains.Ticker) bool { return false }

// Relation implements chains.Family: trx and trc20 tokens live on one chain
// and share its addresses.
func (Family) Relation(t, u chains.Ticker) chains.Relation {
	switch {
	case t.Ticker == u.Ticker:
		return chains.SameTicker
	case t.Family != u.Family:
		return chains.Unrelated
	}
	return chains.SameChain
}

// DistributionDepth implements chains.Family: required, but at least
// TRXDistributionDepth for native TRX (TRC20DistributionDepth for a token).
func (Family) DistributionDepth(t chains.Ticker, required int64) int64 {
	return DistributionDepth(t, required)
}

// PaymentURI implements chains.Family: `tron:ADDR?amount=1.5`, plus
// `&token=CONTRACT` for TRC-20.
func (Family) PaymentURI(t chains.Ticker, addr string, amount *decimal.Decimal) (string, error) {
	return codec.AmountURI("tron", addr, amount, "token", t.Contract), nil
}

// DestinationKey implements chains.Family: the decoded 21-byte account in
// hex (41...), TRON's hex address form.
func (Family) DestinationKey(t chains.Ticker, addr string) (string, error) {
	if err := (Family{}).ValidateAddress(t, addr); err != nil {
		return "", err
	}
	payload, v, _ := base58.CheckDecode(addr)
	return hex.EncodeToString(append([]byte{v}, payload...)), nil
}

// MinOutput implements chains.Family: zero. TRON has no dust rule: a TRX
// or TRC-20 transfer of one base unit is valid. Activating a new account
// costs the sender a fee (and TRC-20 transfers cost energy), which the
// network fee estimate covers; neither is taken from the amount.
func (Family) MinOutput(t chains.Ticker, addr string) (decimal.Decimal, error) {
	return decimal.Zero, (Family{}).ValidateAddress(t, addr)
}

// Priorities implements chains.Family: TRON's fees are not bid for.
func (Family) Priorities(chains.Ticker) []chains.Priority {
	return []chains.Priority{chains.DefaultPriority}
}
