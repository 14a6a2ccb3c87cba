package evm

import (
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/addrtest"
)

func TestValidateAddressEVM(t *testing.T) {
	t.Parallel()
	cases := []addrtest.Case{
		// EIP-55 test cases: all caps, all lower, normal.
		{"EIP-55 all caps 1", "0x52908400098527886E0F7030069857D2E4169EE7", ""},
		{"EIP-55 all caps 2", "0x8617E340B3D01FA5F11F306F4090FD50E238070D", ""},
		{"EIP-55 all lower 1", "0xde709f2102306220921060314715629080e2fb77", ""},
		{"EIP-55 all lower 2", "0x27b1fdb04752bbc536007a920d24acb045561c26", ""},
		{"EIP-55 normal 1", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", ""},
		{"EIP-55 normal 2", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", ""},
		{"EIP-55 normal 3", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", ""},
		{"EIP-55 normal 4", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", ""},
		{"lower-cased checksummed", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ""},
		{"upper-cased checksummed", "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", ""},

		{"mixed case wrong checksum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "bad EIP-55 checksum"},
		{"mixed case one letter flipped", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5D359", "bad EIP-55 checksum"},
		{"no 0x", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "must start with \"0x\""},
		{"upper-case 0X", "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "lower-case \"0x\""},
		{"39 digits", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", "wrong length: 39"},
		{"41 digits", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed0", "wrong length: 41"},
		{"32-byte hash", "0x" + strings.Repeat("ab", 32), "wrong length: 64"},
		{"non-hex", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", "invalid hex character 'g'"},
		{"zero address", "0x0000000000000000000000000000000000000000", "zero address"},
		{"tron address", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "must start with \"0x\""},
	}
	for _, tk := range []chains.Ticker{
		{Ticker: "eth", Network: "eth", Coin: "eth", Decimals: 18},
		{Ticker: "erc20/usdt", Network: "erc20", Coin: "usdt", Decimals: 6, Token: true, Contract: "0xdAC17F958D2ee523a2206206994597C13D831ec7"},
		{Ticker: "bep20/usdt", Network: "bep20", Coin: "usdt", Decimals: 18, Token: true, Contract: "0x55d398326f99059fF775485246999027B3197955"},
	} {
		t.Run(tk.Ticker, func(t *testing.T) {
			t.Parallel()
			addrtest.Run(t, tk.WithFamily(Family{}), cases)
		})
	}
}

func TestEIP55(t *testing.T) {
	t.Parallel()
	// The EIP-55 "normal" test cases: checksumming the lower-case form must
	// reproduce them.
	for _, want := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
		"0x52908400098527886E0F7030069857D2E4169EE7",
		"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77",
		"0x27b1fdb04752bbc536007a920d24acb045561c26",
	} {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			raw := addrtest.Hex(t, strings.ToLower(want[2:]))
			if got := EIP55(raw); got != want {
				t.Errorf("EIP55(%x) = %s, want %s", raw, got, want)
			}
		})
	}
}
