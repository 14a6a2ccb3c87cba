package httpapi

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// tronPrefix is the first byte of every TRON account (0x41, base58 T...).
const tronPrefix = 0x41

// account is a TRON address as the node's protobuf carries it: 0x41 and
// the 20-byte account.
type account [21]byte

// parseBase58 decodes a T... address.
func parseBase58(s string) (account, error) {
	payload, version, err := base58.CheckDecode(s)
	if err != nil || version != tronPrefix || len(payload) != 20 {
		return account{}, fmt.Errorf("not a tron address")
	}
	var a account
	a[0] = tronPrefix
	copy(a[1:], payload)
	return a, nil
}

// parseHexAccount decodes the node's hex form (41 and 40 hex digits, as
// the API prints addresses with visible=false).
func parseHexAccount(s string) (account, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 21 || b[0] != tronPrefix {
		return account{}, fmt.Errorf("address %q is not 21 bytes starting 0x41", clip(s))
	}
	return account(b), nil
}

// fromWord reads an address from an ABI word (a log topic or a call
// argument): 12 zero bytes and the 20-byte account.
func fromWord(w []byte) (account, bool) {
	if len(w) != 32 || !bytes.Equal(w[:12], make([]byte, 12)) {
		return account{}, false
	}
	var a account
	a[0] = tronPrefix
	copy(a[1:], w[12:])
	return a, true
}

// word returns a's ABI word.
func (a account) word() []byte {
	w := make([]byte, 32)
	copy(w[12:], a[1:])
	return w
}

// String returns the base58check form, T....
func (a account) String() string { return base58.CheckEncode(a[1:], tronPrefix) }

// Hex returns the node's hex form, 41....
func (a account) Hex() string { return hex.EncodeToString(a[:]) }

// evmHex returns the 20-byte account in hex, as logs name contracts.
func (a account) evmHex() string { return hex.EncodeToString(a[1:]) }

// clip bounds what an error message quotes of a node's answer.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// isHex64 reports a 32-byte hash in lower- or upper-case hex.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// normHash lower-cases a hash for comparison.
func normHash(s string) string { return strings.ToLower(s) }
