package tron_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/addrtest"
	"github.com/payhook/payhook/chains/tron"
)

func TestValidateAddressTron(t *testing.T) {
	t.Parallel()
	const valid = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
	cases := []addrtest.Case{
		{"derived", valid, ""},
		{"USDT contract", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", ""},
		{"index 1", "TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK", ""},

		{"bad checksum", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdJ", "bad checksum"},
		{"bitcoin address", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "first byte 0x00, want 0x41"},
		{"wrong length", addrtest.B58(0x41, append(addrtest.Hash20(), 0)), "wrong length: 22 bytes"},
		{"short", addrtest.B58(0x41, addrtest.Hash20()[:19]), "wrong length: 20 bytes"},
		{"hex form", "41e825d52582eec346c839b4875376117904a76cbc", "invalid character '0'"},
		{"evm address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "invalid character '0'"},
		{"zero address", addrtest.B58(0x41, make([]byte, 20)), "zero address"},
		{"invalid character", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdl", "invalid character 'l'"},
	}
	for _, tk := range []chains.Ticker{trx, usdt} {
		t.Run(tk.Ticker, func(t *testing.T) {
			t.Parallel()
			addrtest.Run(t, tk.WithFamily(tron.Family{}), cases)
		})
	}
}
