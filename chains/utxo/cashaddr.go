package utxo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/btcutil/bech32"

	"github.com/payhook/payhook/chains/internal/codec"
)

// CashAddr (Bitcoin Cash address format, spec version 1.1,
// https://upgradespecs.bitcoincashnode.org/cashaddr/). No maintained Go
// implementation is reachable from this module's proxy, so the format is
// implemented here from the specification and tested with all of its vectors.

const (
	cashAddrCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	// cashAddrMainPrefix is the Bitcoin Cash mainnet prefix.
	cashAddrMainPrefix = "bitcoincash"
	// cashAddrChecksumLen is the checksum length in 5-bit groups (40 bits).
	cashAddrChecksumLen = 8
)

// cashAddrPolymod is the BCH-code checksum of the specification, over 5-bit
// values. A valid address yields 0.
func cashAddrPolymod(values []byte) uint64 {
	c := uint64(1)
	for _, d := range values {
		c0 := byte(c >> 35)
		c = ((c & 0x07ffffffff) << 5) ^ uint64(d)
		if c0&0x01 != 0 {
			c ^= 0x98f2bc8e61
		}
		if c0&0x02 != 0 {
			c ^= 0x79b76d99e2
		}
		if c0&0x04 != 0 {
			c ^= 0xf33e5fb3c4
		}
		if c0&0x08 != 0 {
			c ^= 0xae2eabe2a8
		}
		if c0&0x10 != 0 {
			c ^= 0x1e4f43e470
		}
	}
	return c ^ 1
}

// cashAddrChecksumInput is the lower 5 bits of each prefix character, a zero
// for the separator, then the payload values.
func cashAddrChecksumInput(prefix string, payload []byte) []byte {
	v := make([]byte, 0, len(prefix)+1+len(payload))
	for _, c := range []byte(prefix) {
		v = append(v, c&0x1f)
	}
	v = append(v, 0)
	return append(v, payload...)
}

// cashAddrEncode encodes a version byte and hash under a lower-case prefix,
// returning "prefix:payload".
func cashAddrEncode(prefix string, version byte, hash []byte) (string, error) {
	data, err := bech32.ConvertBits(append([]byte{version}, hash...), 8, 5, true)
	if err != nil {
		return "", err
	}
	values := cashAddrChecksumInput(prefix, append(data, make([]byte, cashAddrChecksumLen)...))
	mod := cashAddrPolymod(values)
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(data) + cashAddrChecksumLen)
	b.WriteString(prefix)
	b.WriteByte(':')
	for _, d := range data {
		b.WriteByte(cashAddrCharset[d])
	}
	for i := range cashAddrChecksumLen {
		b.WriteByte(cashAddrCharset[(mod>>(5*(cashAddrChecksumLen-1-i)))&0x1f])
	}
	return b.String(), nil
}

// cashAddrDecode splits, case-checks and checksums a CashAddr string. An
// input without a prefix is checked under each of prefixes in turn; the first
// that verifies is returned. The returned data is the payload in bytes
// (version byte first). reason is "" on success.
func cashAddrDecode(s string, prefixes ...string) (prefix string, data []byte, reason string) {
	hasLower := strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0
	hasUpper := strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0
	if hasLower && hasUpper {
		return "", nil, "mixes upper and lower case"
	}
	s = strings.ToLower(s)

	payload := s
	candidates := prefixes
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if strings.Count(s, ":") > 1 {
			return "", nil, "more than one \":\" (the prefix must not be doubled)"
		}
		if i == 0 {
			return "", nil, "empty prefix before \":\""
		}
		candidates = []string{s[:i]}
		payload = s[i+1:]
	}

	values := make([]byte, len(payload))
	for i, c := range []byte(payload) {
		v := strings.IndexByte(cashAddrCharset, c)
		if v < 0 {
			return "", nil, fmt.Sprintf("invalid character %q for CashAddr", c)
		}
		values[i] = byte(v)
	}
	if len(values) <= cashAddrChecksumLen {
		return "", nil, fmt.Sprintf("too short: %d characters after the prefix", len(values))
	}

	prefix = ""
	for _, p := range candidates {
		if cashAddrPolymod(cashAddrChecksumInput(p, values)) == 0 {
			prefix = p
			break
		}
	}
	if prefix == "" {
		return "", nil, "bad checksum"
	}
	data, err := bech32.ConvertBits(values[:len(values)-cashAddrChecksumLen], 5, 8, false)
	if err != nil || len(data) == 0 {
		return prefix, nil, "invalid padding in the payload"
	}
	return prefix, data, ""
}

// cashAddrHashBits maps the 3 size bits of a version byte to the hash size.
func cashAddrHashBits(size byte) int {
	return [8]int{160, 192, 224, 256, 320, 384, 448, 512}[size&0x07]
}

// cashAddrProblem validates addr as a CashAddr for net if it looks like one.
// isCashAddr is false when addr should instead be tried as legacy base58.
func cashAddrProblem(net network, addr string) (reason string, isCashAddr bool) {
	if !strings.Contains(addr, ":") {
		// Mainnet legacy addresses start with 1 or 3, and any valid
		// base58check string (a testnet one, say) is better explained as
		// legacy; anything else spelled in the CashAddr alphabet is treated
		// as a prefix-less CashAddr.
		if addr[0] == '1' || addr[0] == '3' {
			return "", false
		}
		if _, _, reason := codec.DecodeBase58Check(addr); reason == "" {
			return "", false
		}
		for _, c := range []byte(strings.ToLower(addr)) {
			if strings.IndexByte(cashAddrCharset, c) < 0 {
				return "", false
			}
		}
	}
	prefix, data, reason := cashAddrDecode(addr, append([]string{net.cashPrefix}, net.testHRPs...)...)
	switch {
	case reason != "":
		return reason, true
	case prefix != net.cashPrefix && slices.Contains(net.testHRPs, prefix):
		return net.otherNetwork(fmt.Sprintf("prefix %q", prefix+":")), true
	case prefix != net.cashPrefix:
		return fmt.Sprintf("unknown prefix %q, want %q", prefix+":", net.cashPrefix+":"), true
	}
	version, hash := data[0], data[1:]
	typ, size := version>>3, version&0x07
	switch {
	case version&0x80 != 0:
		return "reserved bit set in the version byte", true
	case len(hash)*8 != cashAddrHashBits(size):
		return fmt.Sprintf("wrong length: %d-byte hash, but the version byte says %d bits", len(hash), cashAddrHashBits(size)), true
	case typ != 0 && typ != 1:
		return fmt.Sprintf("unsupported address type %d (only P2PKH and P2SH are accepted)", typ), true
	case size != 0:
		return fmt.Sprintf("unsupported %d-bit hash (only 160-bit P2PKH and P2SH are accepted)", cashAddrHashBits(size)), true
	}
	return "", true
}
