package watchonly

import (
	"fmt"
	"strings"
)

// The descriptor checksum of BIP 380: a BCH code over the descriptor's
// characters, written after a '#' as 8 characters of the bech32 alphabet.

const (
	descInputCharset    = "0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "
	descChecksumCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
)

var descGenerator = [5]uint64{0xf5dee51989, 0xa9fdca3312, 0x1bab10e32d, 0x3706b1677a, 0x644d626ffd}

func descPolymod(c uint64, value int) uint64 {
	top := c >> 35
	c = (c&0x7ffffffff)<<5 ^ uint64(value)
	for i, g := range descGenerator {
		if (top>>i)&1 == 1 {
			c ^= g
		}
	}
	return c
}

// Checksum returns the BIP 380 checksum of desc, a descriptor without its
// "#checksum" suffix. The error names the first character outside the
// descriptor character set.
func Checksum(desc string) (string, error) {
	c := uint64(1)
	cls, clsCount := 0, 0
	for i := 0; i < len(desc); i++ {
		pos := strings.IndexByte(descInputCharset, desc[i])
		if pos < 0 || desc[i] >= 0x80 {
			return "", fmt.Errorf("character %q at byte %d is not allowed in a descriptor", rune(desc[i]), i)
		}
		c = descPolymod(c, pos&31)
		cls = cls*3 + pos>>5
		if clsCount++; clsCount == 3 {
			c = descPolymod(c, cls)
			cls, clsCount = 0, 0
		}
	}
	if clsCount > 0 {
		c = descPolymod(c, cls)
	}
	for range 8 {
		c = descPolymod(c, 0)
	}
	c ^= 1
	var out [8]byte
	for i := range out {
		out[i] = descChecksumCharset[(c>>(5*(7-i)))&31]
	}
	return string(out[:]), nil
}

// splitChecksum splits "desc#checksum" and verifies the checksum when there
// is one; it returns the descriptor without it.
func splitChecksum(s string) (string, string) {
	i := strings.IndexByte(s, '#')
	if i < 0 {
		if _, err := Checksum(s); err != nil {
			return "", err.Error()
		}
		return s, ""
	}
	body, sum := s[:i], s[i+1:]
	want, err := Checksum(body)
	switch {
	case err != nil:
		return "", err.Error()
	case sum == "":
		return "", "empty checksum after '#' (write the 8 characters, or leave out the '#')"
	case len(sum) != 8:
		return "", fmt.Sprintf("the checksum after '#' has %d characters, want 8", len(sum))
	case strings.Trim(sum, descChecksumCharset) != "":
		return "", fmt.Sprintf("checksum %q has characters outside the checksum alphabet", sum)
	case sum != want:
		// The expected checksum is not echoed: it would invite "fixing" a
		// mistyped descriptor by pasting it.
		return "", fmt.Sprintf("bad checksum #%s: the descriptor was altered or mistyped", sum)
	}
	return body, ""
}
