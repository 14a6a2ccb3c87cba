package solana

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/codec"
)

// Family is Solana's chains.Family: sol and SPL tokens.
//
// Addresses are base58 of exactly 32 bytes (an ed25519 public key); the
// all-zero key is the System Program and is refused. Devnet and testnet use
// the same format. Keys: SLIP-0010 ed25519 at m/44'/501'/index'/0' (the
// path Phantom and solana-keygen use). Payment URIs are Solana Pay,
// `solana:ADDR?amount=1.5`, plus `&spl-token=MINT`. Confirmations are not
// counted: a transfer is accepted at a commitment level (Commitment), so
// every address requires, and every callback reports, 1.
type Family struct {
	// Rules is the family's lifecycle (Evaluate).
	Rules
	chains.EstimatedFee
}

var _ chains.Family = Family{}

// coinType is Solana's SLIP-0044 coin type.
const coinType = 501

// Name implements chains.Family.
func (Family) Name() chains.FamilyName { return chains.FamilySolana }

// Networks implements chains.Family.
func (Family) Networks() []string { return []string{"sol"} }

// CheckTicker implements chains.Family: Solana's address format does not
// depend on the network, so any network and SPL token is served.
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
	if reason := codec.Base58AlphabetProblem(addr); reason != "" {
		return reason
	}
	key := base58.Decode(addr)
	switch {
	case len(key) != ed25519.PublicKeySize:
		return fmt.Sprintf("wrong length: decodes to %d bytes, want a 32-byte public key", len(key))
	case codec.AllZero(key):
		return "the all-zero key is the System Program, not an account that can hold funds"
	}
	return ""
}

// KeyPaths implements chains.Family.
func (Family) KeyPaths() []chains.KeyPath { return []chains.KeyPath{keyPath()} }

// KeyPath implements chains.Family: ed25519 under m/44'/501'.
func (Family) KeyPath(chains.Ticker) (chains.KeyPath, error) { return keyPath(), nil }

func keyPath() chains.KeyPath {
	return chains.KeyPath{Curve: chains.Ed25519, Purpose: 44, CoinType: coinType}
}

// Address implements chains.Family: the base58 public key.
func (Family) Address(t chains.Ticker, pub []byte) (string, error) {
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("%w: %s keys are 32-byte ed25519 keys, got %d bytes", chains.ErrUnsupportedNetwork, t.Ticker, len(pub))
	}
	return base58.Encode(pub), nil
}

// FixedConfirmations implements chains.Family: Solana accepts by
// commitment, so a payment requires and reports 1 confirmation.
func (Family) FixedConfirmations(chains.Ticker) (int64, bool) { return 1, true }

// Relation implements chains.Family: only a ticker to itself (an SPL token goes to the owner's associated token account, which is not the owner's address).
func (Family) Relation(t, u chains.Ticker) chains.Relation {
	if t.Ticker == u.Ticker {
		return chains.SameTicker
	}
	return chains.Unrelated
}

// SpendsSeveralAddresses implements chains.Family: a transaction moves one account's balance.
func (Family) SpendsSeveralAddresses(chains.Ticker) bool { return false }

// DistributionDepth implements chains.Family: no gate beyond acceptance.
func (Family) DistributionDepth(chains.Ticker, int64) int64 { return 0 }

// PaymentURI implements chains.Family: Solana Pay, `solana:ADDR?amount=1.5`,
// plus `&spl-token=MINT` for a token.
func (Family) PaymentURI(t chains.Ticker, addr string, amount *decimal.Decimal) (string, error) {
	return codec.AmountURI("solana", addr, amount, "spl-token", t.Contract), nil
}

// DestinationKey implements chains.Family: the 32-byte public key in hex.
func (Family) DestinationKey(t chains.Ticker, addr string) (string, error) {
	if err := (Family{}).ValidateAddress(t, addr); err != nil {
		return "", err
	}
	return hex.EncodeToString(base58.Decode(addr)), nil
}

// RentExemptLamports is the rent-exempt minimum balance of a system
// account with no data: (128 bytes of account overhead) x 3,480 lamports
// per byte-year x 2 years = 890,880 lamports (0.00089088 SOL), what
// getMinimumBalanceForRentExemption(0) answers on mainnet. A transfer that
// leaves a new account with less fails (InsufficientFundsForRent).
const RentExemptLamports = 890_880

// MinOutput implements chains.Family: for native SOL, the rent-exempt
// minimum (RentExemptLamports), since a forward cannot tell whether the
// destination account exists yet and one that does not would be refused;
// for an SPL token, zero: tokens go to the owner's associated token
// account, whose rent the sender pays in SOL, not out of the amount.
func (Family) MinOutput(t chains.Ticker, addr string) (decimal.Decimal, error) {
	if err := (Family{}).ValidateAddress(t, addr); err != nil {
		return decimal.Zero, err
	}
	if t.Token {
		return decimal.Zero, nil
	}
	return decimal.New(RentExemptLamports, -9), nil // a lamport is 10^-9 SOL
}

// Priorities implements chains.Family: the node's own fee.
func (Family) Priorities(chains.Ticker) []chains.Priority {
	return []chains.Priority{chains.DefaultPriority}
}
