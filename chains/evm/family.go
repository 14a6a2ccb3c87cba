package evm

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/codec"
)

// Family is the EVM family's chains.Family: eth, erc20, bep20, polygon, and
// any EVM network a registry override adds.
//
// Addresses are "0x" and 40 hex digits; mixed case must match the EIP-55
// checksum; the zero address, which burns funds, is refused. Testnets use
// the mainnet format, so their addresses pass too. Keys: m/44'/60', one key
// per index across every EVM ticker; the address is EIP-55. Payment URIs
// are EIP-681. Confirmations are block depths; a credited payment is
// distributable once in a block.
type Family struct {
	// Rules is the family's lifecycle (Evaluate).
	Rules
	chains.EstimatedFee
}

var _ chains.Family = Family{}

// coinType is the SLIP-0044 coin type of every EVM network's keys.
const coinType = 60

// Name implements chains.Family.
func (Family) Name() chains.FamilyName { return chains.FamilyEVM }

// Networks implements chains.Family.
func (Family) Networks() []string { return []string{"eth", "erc20", "bep20", "polygon"} }

// CheckTicker implements chains.Family: an EVM address format does not
// depend on the network, so any network and token is served.
func (Family) CheckTicker(chains.Ticker) error { return nil }

// ValidateAddress implements chains.Family.
func (Family) ValidateAddress(t chains.Ticker, addr string) error {
	reason := codec.PrintableProblem(addr)
	if reason == "" {
		reason = addressProblem(addr)
	}
	if reason != "" {
		return &chains.AddressError{Ticker: t.Ticker, Address: addr, Reason: reason}
	}
	return nil
}

// addressProblem checks "0x" + 40 hex digits; mixed case must be the
// EIP-55 checksummed form.
func addressProblem(addr string) string {
	switch {
	case strings.HasPrefix(addr, "0X"):
		return "must start with a lower-case \"0x\""
	case !strings.HasPrefix(addr, "0x"):
		return "must start with \"0x\""
	}
	digits := addr[2:]
	if len(digits) != 40 {
		return fmt.Sprintf("wrong length: %d hex digits after 0x, want 40", len(digits))
	}
	raw, err := hex.DecodeString(digits)
	if err != nil {
		for _, c := range []byte(digits) {
			if !isHexDigit(c) {
				return fmt.Sprintf("invalid hex character %q", c)
			}
		}
		return "invalid hex"
	}
	if codec.AllZero(raw) {
		return "the zero address burns funds"
	}
	hasLower := strings.ContainsAny(digits, "abcdef")
	hasUpper := strings.ContainsAny(digits, "ABCDEF")
	if hasLower && hasUpper && EIP55(raw) != addr {
		return "bad EIP-55 checksum: mixed case does not match (use the checksummed form or all lower case)"
	}
	return ""
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// EIP55 returns the EIP-55 mixed-case checksummed form of a 20-byte
// account: a hex letter is upper case when the matching nibble of
// keccak256(lower-case hex) is 8 or more.
func EIP55(account []byte) string {
	lower := hex.EncodeToString(account)
	sum := codec.Keccak256([]byte(lower))
	out := []byte("0x" + lower)
	for i := range len(lower) {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c := out[2+i]; c >= 'a' && c <= 'f' && nibble >= 8 {
			out[2+i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// Account returns the 20-byte account a secp256k1 public key (33-byte
// compressed or 65-byte uncompressed) controls: the last 20 bytes of
// keccak256 of the 64-byte uncompressed key without its 0x04 prefix. TRON
// accounts are the same bytes.
func Account(pub []byte) ([]byte, error) {
	k, err := btcec.ParsePubKey(pub)
	if err != nil {
		return nil, fmt.Errorf("secp256k1 public key: %w", err)
	}
	return codec.Keccak256(k.SerializeUncompressed()[1:])[12:], nil
}

// KeyPaths implements chains.Family.
func (Family) KeyPaths() []chains.KeyPath { return []chains.KeyPath{keyPath()} }

// KeyPath implements chains.Family: m/44'/60' for every EVM ticker.
func (Family) KeyPath(chains.Ticker) (chains.KeyPath, error) { return keyPath(), nil }

func keyPath() chains.KeyPath {
	return chains.KeyPath{Curve: chains.Secp256k1, Purpose: 44, CoinType: coinType}
}

// Address implements chains.Family: the EIP-55 form of the key's account.
func (Family) Address(t chains.Ticker, pub []byte) (string, error) {
	account, err := Account(pub)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", chains.ErrUnsupportedNetwork, t.Ticker, err)
	}
	return EIP55(account), nil
}

// FixedConfirmations implements chains.Family: confirmations are depths.
func (Family) FixedConfirmations(chains.Ticker) (int64, bool) { return 0, false }

// SpendsSeveralAddresses implements chains.Family: a transaction moves one account's balance.
func (Family) SpendsSeveralAddresses(chains.Ticker) bool { return false }

// Relation implements chains.Family: every EVM ticker shares addresses and
// keys (m/44'/60'); eth and erc20 tokens live on one chain, bep20 and
// polygon on theirs.
func (Family) Relation(t, u chains.Ticker) chains.Relation {
	switch {
	case t.Ticker == u.Ticker:
		return chains.SameTicker
	case t.Family != u.Family:
		return chains.Unrelated
	case chainOf(t) == chainOf(u):
		return chains.SameChain
	}
	return chains.OtherChain
}

// chainOf names the chain an EVM ticker's network lives on.
func chainOf(t chains.Ticker) string {
	if t.Network == "erc20" {
		return "eth"
	}
	return t.Network
}

// DistributionDepth implements chains.Family: no gate beyond credit.
func (Family) DistributionDepth(chains.Ticker, int64) int64 { return 0 }

// ChainID returns the EIP-155 chain id of the mainnet of a registry network
// this package knows (eth and erc20: 1, bep20: 56, polygon: 137).
func ChainID(network string) (uint64, bool) {
	switch network {
	case "eth", "erc20":
		return 1, true
	case "bep20":
		return 56, true
	case "polygon":
		return 137, true
	}
	return 0, false
}

// PaymentURI implements chains.Family: EIP-681, native
// `ethereum:ADDR[@CHAIN]?value=WEI`, tokens
// `ethereum:CONTRACT[@CHAIN]/transfer?address=ADDR&uint256=BASEUNITS`; the
// chain is named unless it is Ethereum mainnet. A network whose chain id
// this package does not know has no URI.
func (Family) PaymentURI(t chains.Ticker, addr string, amount *decimal.Decimal) (string, error) {
	id, ok := ChainID(t.Network)
	if !ok {
		return "", fmt.Errorf("%w: no EIP-155 chain id known for network %q", chains.ErrUnsupportedNetwork, t.Network)
	}
	chain := ""
	if id != 1 {
		chain = fmt.Sprintf("@%d", id)
	}
	if t.Token {
		uri := "ethereum:" + t.Contract + chain + "/transfer?address=" + addr
		if amount != nil {
			uri += "&uint256=" + amount.Shift(t.Decimals).String()
		}
		return uri, nil
	}
	uri := "ethereum:" + addr + chain
	if amount != nil {
		uri += "?value=" + amount.Shift(t.Decimals).String()
	}
	return uri, nil
}

// DestinationKey implements chains.Family: the account in lower-case hex,
// so that the EIP-55, lower- and upper-case spellings have one key.
func (Family) DestinationKey(t chains.Ticker, addr string) (string, error) {
	if err := (Family{}).ValidateAddress(t, addr); err != nil {
		return "", err
	}
	return strings.ToLower(addr), nil
}

// MinOutput implements chains.Family: zero. An EVM transfer of any value,
// to any account, new or not, is valid (native value and token amounts
// alike); the gas is paid by the sender, not out of the amount.
func (Family) MinOutput(t chains.Ticker, addr string) (decimal.Decimal, error) {
	return decimal.Zero, (Family{}).ValidateAddress(t, addr)
}

// Priorities implements chains.Family: shares of the gas price, as this
// API family documents them for eth and erc20 tokens; the node's own on
// the other EVM networks.
func (Family) Priorities(t chains.Ticker) []chains.Priority {
	switch t.Network {
	case "eth":
		return chains.EtherPriorities
	case "erc20":
		return chains.ERC20Priorities
	}
	return []chains.Priority{chains.DefaultPriority}
}
