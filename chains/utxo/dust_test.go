package utxo

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/internal/addrtest"
)

// TestMinOutput pins the dust threshold of every script type payhook can
// pay to, per network, against Bitcoin Core's GetDustThreshold (btc),
// Litecoin Core 0.21's dust relay fee (ltc), Bitcoin Cash Node's formula
// (bch) and Dogecoin's documented limit (doge).
func TestMinOutput(t *testing.T) {
	t.Parallel()
	h20, h32 := addrtest.Hash20(), bytes.Repeat([]byte{0x7a}, 32)
	tests := []struct {
		name    string
		network string
		addr    string
		units   int64
	}{
		{"btc P2PKH", "btc", base58.CheckEncode(h20, 0x00), 546},
		{"btc P2SH", "btc", base58.CheckEncode(h20, 0x05), 540},
		{"btc P2WPKH", "btc", addrtest.Segwit(t, "bc", 0, h20, false), 294},
		{"btc P2WSH", "btc", addrtest.Segwit(t, "bc", 0, h32, false), 330},
		{"btc P2TR", "btc", addrtest.Segwit(t, "bc", 1, h32, true), 330},
		{"ltc P2PKH", "ltc", base58.CheckEncode(h20, 0x30), 5460},
		{"ltc P2SH (M)", "ltc", base58.CheckEncode(h20, 0x32), 5400},
		{"ltc P2SH (3)", "ltc", base58.CheckEncode(h20, 0x05), 5400},
		{"ltc P2WPKH", "ltc", addrtest.Segwit(t, "ltc", 0, h20, false), 2940},
		{"ltc P2WSH", "ltc", addrtest.Segwit(t, "ltc", 0, h32, false), 3300},
		{"ltc P2TR", "ltc", addrtest.Segwit(t, "ltc", 1, h32, true), 3300},
		{"bch P2PKH CashAddr", "bch", mustCashAddr(t, "bitcoincash", 0x00, h20), 546},
		{"bch P2PKH legacy", "bch", base58.CheckEncode(h20, 0x00), 546},
		{"bch P2SH CashAddr", "bch", mustCashAddr(t, "bitcoincash", 0x08, h20), 540},
		{"doge P2PKH", "doge", base58.CheckEncode(h20, 0x1e), 1_000_000},
		{"doge P2SH", "doge", base58.CheckEncode(h20, 0x16), 1_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Family{}.MinOutput(ticker(tt.network), tt.addr)
			if want := decimal.New(tt.units, -8); err != nil || !got.Equal(want) {
				t.Errorf("MinOutput(%s, %s) = %s, %v; want %s", tt.network, tt.addr, got, err, want)
			}
		})
	}
	if _, err := (Family{}).MinOutput(ticker("btc"), "nope"); err == nil {
		t.Error("MinOutput of an invalid address: no error")
	}
}
