package solana_test

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/addrtest"
	"github.com/payhook/payhook/chains/solana"
)

func TestValidateAddressSolana(t *testing.T) {
	t.Parallel()
	const valid = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
	cases := []addrtest.Case{
		{"derived", valid, ""},
		{"USDC mint", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ""},
		{"token program", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", ""},
		{"leading zero byte", base58.Encode(append([]byte{0}, bytes.Repeat([]byte{9}, 31)...)), ""},

		{"system program", "11111111111111111111111111111111", "System Program"},
		{"31 bytes", base58.Encode(bytes.Repeat([]byte{9}, 31)), "decodes to 31 bytes"},
		{"33 bytes", base58.Encode(bytes.Repeat([]byte{9}, 33)), "decodes to 33 bytes"},
		{"one character changed to 0", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpq0", "invalid character '0'"},
		{"letter O", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqO", "invalid character 'O'"},
		{"evm address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "invalid character '0'"},
		{"tron address", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "decodes to 25 bytes"},
	}
	for _, tk := range []chains.Ticker{sol, usdc} {
		t.Run(tk.Ticker, func(t *testing.T) {
			t.Parallel()
			addrtest.Run(t, tk.WithFamily(solana.Family{}), cases)
		})
	}
}

func TestMinOutput(t *testing.T) {
	t.Parallel()
	const addr = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
	for _, tt := range []struct {
		name string
		tk   chains.Ticker
		want string
	}{
		{"SOL: rent-exempt minimum", sol, "0.00089088"},
		{"SPL token: none", usdc, "0"},
	} {
		got, err := solana.Family{}.MinOutput(tt.tk.WithFamily(solana.Family{}), addr)
		if err != nil || got.String() != tt.want {
			t.Errorf("%s: MinOutput = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}
