// Package addrtest runs tables of address validation cases against a
// chains.Family, for the families' own tests (import it only from _test.go
// files). It imports no family, so a family's internal tests may use it.
package addrtest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"

	"github.com/payhook/payhook/chains"
)

// Case is one ValidateAddress row: a name, an address, and a reason. An
// empty reason means the address must be accepted; otherwise the
// *chains.AddressError's Reason must contain it. (An array, so that tables
// of cases stay one short line each.)
type Case [3]string

// Run checks every case with tk.Rules().ValidateAddress and with
// chains.ValidateAddress, plus the rejections every family shares (empty,
// spaces, control and non-ASCII characters) around the first accepted case.
func Run(t *testing.T, tk chains.Ticker, cases []Case) {
	t.Helper()
	for _, c := range cases {
		if valid := c[1]; c[2] == "" {
			cases = append(cases,
				Case{"empty", "", "empty"},
				Case{"leading space", " " + valid, "space"},
				Case{"trailing newline", valid + "\n", "control"},
				Case{"non-ASCII", valid + "é", "non-ASCII"},
			)
			break
		}
	}
	for _, c := range cases {
		tt := struct{ Name, Addr, Reason string }{c[0], c[1], c[2]}
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			for _, err := range []error{tk.Rules().ValidateAddress(tk, tt.Addr), chains.ValidateAddress(tk, tt.Addr)} {
				if tt.Reason == "" {
					if err != nil {
						t.Fatalf("ValidateAddress(%s, %q) = %v, want nil", tk.Ticker, tt.Addr, err)
					}
					continue
				}
				if !errors.Is(err, chains.ErrInvalidAddress) {
					t.Fatalf("ValidateAddress(%s, %q) = %v, want ErrInvalidAddress", tk.Ticker, tt.Addr, err)
				}
				var ae *chains.AddressError
				if !errors.As(err, &ae) {
					t.Fatalf("error %v is not an *AddressError", err)
				}
				if ae.Ticker != tk.Ticker || ae.Address != tt.Addr || !strings.Contains(ae.Reason, tt.Reason) {
					t.Errorf("got %+v, want ticker %q, address %q, reason containing %q", ae, tk.Ticker, tt.Addr, tt.Reason)
				}
			}
		})
	}
}

// B58 encodes a base58check string with the given version and payload.
func B58(version byte, payload []byte) string { return base58.CheckEncode(payload, version) }

// Hash20 is an arbitrary non-zero 20-byte hash.
func Hash20() []byte { return bytes.Repeat([]byte{0x5a}, 20) }

// Segwit encodes a segwit address with an explicit checksum variant (m:
// bech32m), for cases the specification vectors do not cover.
func Segwit(t *testing.T, hrp string, version byte, program []byte, m bool) string {
	t.Helper()
	data, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	data = append([]byte{version}, data...)
	var s string
	if m {
		s, err = bech32.EncodeM(hrp, data)
	} else {
		s, err = bech32.Encode(hrp, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FlipLast replaces the last character with another of the same alphabet.
func FlipLast(s, alphabet string) string {
	last := s[len(s)-1]
	i := strings.IndexByte(alphabet, last)
	return s[:len(s)-1] + string(alphabet[(i+1)%len(alphabet)])
}

// Hex decodes hex or fails t.
func Hex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
