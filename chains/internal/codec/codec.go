// Package codec holds the address encodings several chain families share:
// base58check with reasons a merchant can act on, the printable-ASCII rule
// every address obeys, Keccak-256, and the all-zero (burn) check. It is
// internal to chains: each family package states its own rules and uses
// these pieces; nothing here knows a family.
package codec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"
	"golang.org/x/crypto/sha3"
)

// Base58Alphabet is the Bitcoin base58 alphabet (no 0, O, I or l).
const Base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// PrintableProblem returns "" when addr is non-empty printable ASCII without
// spaces, or why it is not: no address of any family contains anything else,
// and saying so early gives a clearer reason than a checksum failure.
func PrintableProblem(addr string) string {
	if addr == "" {
		return "address is empty"
	}
	for _, c := range []byte(addr) {
		if c <= ' ' || c > '~' {
			return "contains a space, a control or a non-ASCII character"
		}
	}
	return ""
}

// Base58AlphabetProblem returns "" when s uses only the base58 alphabet, or
// names the first character that is not in it.
func Base58AlphabetProblem(s string) string {
	for _, c := range []byte(s) {
		if strings.IndexByte(Base58Alphabet, c) < 0 {
			return fmt.Sprintf("invalid character %q for base58 (0, O, I and l are never used)", c)
		}
	}
	return ""
}

// DecodeBase58Check decodes a base58check string (double-SHA256 checksum),
// returning the version byte and payload, or a reason it is invalid.
func DecodeBase58Check(s string) (version byte, payload []byte, reason string) {
	if reason := Base58AlphabetProblem(s); reason != "" {
		return 0, nil, reason
	}
	payload, version, err := base58.CheckDecode(s)
	switch {
	case errors.Is(err, base58.ErrChecksum):
		return 0, nil, "bad checksum"
	case err != nil:
		return 0, nil, "too short for a base58check address"
	}
	return version, payload, ""
}

// Keccak256 is Ethereum's Keccak-256 (the pre-standard padding, not
// SHA3-256).
func Keccak256(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	return h.Sum(nil)
}

// AllZero reports whether every byte of b is zero.
func AllZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// AmountURI returns `scheme:addr`, with a query of `amount=` (in coin
// units, when amount is not nil) and `tokenParam=contract` (when contract
// is not ""), in that order: the shape of TRON's and Solana Pay's URIs.
func AmountURI(scheme, addr string, amount *decimal.Decimal, tokenParam, contract string) string {
	var q []string
	if amount != nil {
		q = append(q, "amount="+amount.String())
	}
	if contract != "" {
		q = append(q, tokenParam+"="+contract)
	}
	uri := scheme + ":" + addr
	if len(q) > 0 {
		uri += "?" + strings.Join(q, "&")
	}
	return uri
}
