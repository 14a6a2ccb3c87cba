package jsonrpc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// TestMempool reads a node's pending block: a native payment to a watched
// address is reported with its value and Height 0, and one to another
// address is not; for a token, a call of the contract's transfer (or
// transferFrom) to a watched address is read from its call data, and a
// call of another contract, or another function, is not. (The anvil
// conformance suite's mempool scenario checks the same on a node.)
func TestMempool(t *testing.T) {
	t.Parallel()
	const contract = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
	eth, usdt := ticker(t, "eth"), ticker(t, "erc20/usdt")
	watchedAddr := validAddress(t, eth)
	other := "0x1111111111111111111111111111111111111111"
	word := func(s string) string { return strings.Repeat("0", 64-len(s)) + s }
	addrWord := func(a string) string { return word(strings.ToLower(strings.TrimPrefix(a, "0x"))) }
	transfer := "0xa9059cbb" + addrWord(watchedAddr) + word("f4240")                        // 1,000,000 units
	transferFrom := "0x23b872dd" + addrWord(other) + addrWord(watchedAddr) + word("1e8480") // 2,000,000
	approve := "0x095ea7b3" + addrWord(watchedAddr) + word("f4240")                         // not a transfer
	tx := func(hash, to, value, input string) string {
		return fmt.Sprintf(`{"hash":"0x%s","from":"%s","to":"%s","value":"%s","input":"%s"}`, strings.Repeat(hash, 64), other, to, value, input)
	}
	pending := `{"number":"0x10","transactions":[` + strings.Join([]string{
		tx("a", watchedAddr, "0xde0b6b3a7640000", "0x"), // 1 ether to the watched address
		tx("b", other, "0xde0b6b3a7640000", "0x"),
		tx("c", contract, "0x0", transfer),
		tx("d", contract, "0x0", transferFrom),
		tx("e", contract, "0x0", approve),
		tx("f", "0x2222222222222222222222222222222222222222", "0x0", transfer),
	}, ",") + `]}`
	url := serve(t, fakeNode{"eth_getBlockByNumber": pending})
	watched := func(a string) bool { return strings.EqualFold(a, watchedAddr) }
	read := func(tk chains.Ticker) []chains.Transfer {
		t.Helper()
		ts, err := faultBackend(t, tk, url).Mempool(t.Context(), watched)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	got := read(eth)
	if len(got) != 1 || got[0].TxID != "0x"+strings.Repeat("a", 64) || !got[0].Value.Equal(decimal.NewFromInt(1)) || got[0].Height != 0 {
		t.Errorf("eth mempool: %+v", got)
	}
	got = read(usdt)
	if len(got) != 2 {
		t.Fatalf("token mempool: %+v", got)
	}
	for i, want := range []struct{ hash, value string }{{"c", "1"}, {"d", "2"}} {
		if got[i].TxID != "0x"+strings.Repeat(want.hash, 64) || !got[i].Value.Equal(decimal.RequireFromString(want.value)) || !strings.EqualFold(got[i].To, watchedAddr) {
			t.Errorf("token mempool %d: %+v, want %s of %s", i, got[i], want.hash, want.value)
		}
	}
}
