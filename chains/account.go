package chains

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
	"golang.org/x/crypto/sha3"
)

// Account-based families: EVM, TRON, Solana.

// evmAddressProblem checks "0x" + 40 hex digits; mixed case must be the
// EIP-55 checksummed form.
func evmAddressProblem(addr string) string {
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
	if allZero(raw) {
		return "the zero address burns funds"
	}
	hasLower := strings.ContainsAny(digits, "abcdef")
	hasUpper := strings.ContainsAny(digits, "ABCDEF")
	if hasLower && hasUpper && eip55(raw) != addr {
		return "bad EIP-55 checksum: mixed case does not match (use the checksummed form or all lower case)"
	}
	return ""
}

// eip55 returns the EIP-55 mixed-case checksummed form of a 20-byte address:
// a hex letter is upper case when the matching nibble of
// keccak256(lower-case hex) is 8 or more.
func eip55(addr []byte) string {
	lower := hex.EncodeToString(addr)
	sum := keccak256([]byte(lower))
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

// keccak256 is Ethereum's Keccak-256 (the pre-standard padding, not SHA3-256).
func keccak256(b []byte) []byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	return h.Sum(nil)
}

// tronVersion is the first byte of every TRON address (mainnet and the public
// testnets alike), which makes their base58 form start with T.
const tronVersion = 0x41

func tronAddressProblem(addr string) string {
	version, payload, reason := decodeBase58Check(addr)
	switch {
	case reason != "":
		return reason
	case len(payload) != 20:
		return fmt.Sprintf("wrong length: %d bytes, want 21 (0x41 and a 20-byte account)", len(payload)+1)
	case version != tronVersion:
		return fmt.Sprintf("first byte 0x%02x, want 0x41 (TRON addresses start with T)", version)
	case allZero(payload):
		return "the zero address burns funds"
	}
	return ""
}

func solanaAddressProblem(addr string) string {
	if reason := base58AlphabetProblem(addr); reason != "" {
		return reason
	}
	key := base58.Decode(addr)
	switch {
	case len(key) != 32:
		return fmt.Sprintf("wrong length: decodes to %d bytes, want a 32-byte public key", len(key))
	case allZero(key):
		return "the all-zero key is the System Program, not an account that can hold funds"
	}
	return ""
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
