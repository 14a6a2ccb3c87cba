package jsonrpc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm/jsonrpc"
)

const testContract = "0x5FbDB2315678afecb367f032d93F642f64180aa3"

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	eth, usdt := ticker(t, "eth"), ticker(t, "erc20/usdt")
	mainEth, mainUSDT := eth, usdt
	mainEth.Net, mainUSDT.Net = "", chains.Mainnet
	other := chains.Ticker{Ticker: "arb/eth", Network: "arb", Coin: "eth", Family: chains.FamilyEVM, Decimals: 18}
	btc := chains.Ticker{Ticker: "btc", Network: "btc", Coin: "btc", Family: chains.FamilyUTXO, Decimals: 8}
	const url = "http://127.0.0.1:8545"
	tests := []struct {
		name     string
		cfg      jsonrpc.Config
		contract string // Contract() of a valid config
		wantErr  string // a word of the error; "" for valid
	}{
		{"native on regtest", jsonrpc.Config{Ticker: eth, URL: url}, "", ""},
		{"native on mainnet", jsonrpc.Config{Ticker: mainEth, URL: "https://user:pw@node.example/v3/key?x=1"}, "", ""},
		{"token on mainnet uses the registry's contract", jsonrpc.Config{Ticker: mainUSDT, URL: url}, usdt.Contract, ""},
		{"token on regtest with a URL contract", jsonrpc.Config{Ticker: usdt, URL: url + "?contract=" + testContract}, testContract, ""},
		{"token on regtest with Contract", jsonrpc.Config{Ticker: usdt, URL: url, Contract: strings.ToLower(testContract)}, testContract, ""},
		{"same contract twice", jsonrpc.Config{Ticker: usdt, URL: url + "?contract=" + testContract, Contract: testContract}, testContract, ""},
		{"another network with its chain id", jsonrpc.Config{Ticker: other, URL: url + "?chain_id=42161"}, "", ""},
		{"regtest with a test chain id", jsonrpc.Config{Ticker: eth, URL: url, ChainID: 1337}, "", ""},

		{"no ticker", jsonrpc.Config{URL: url}, "", "Ticker"},
		{"not evm", jsonrpc.Config{Ticker: btc, URL: url}, "", "Ticker"},
		{"no URL", jsonrpc.Config{Ticker: eth}, "", "URL"},
		{"websocket", jsonrpc.Config{Ticker: eth, URL: "ws://127.0.0.1:8546"}, "", "URL"},
		{"no host", jsonrpc.Config{Ticker: eth, URL: "http:///x"}, "", "URL"},
		{"malformed", jsonrpc.Config{Ticker: eth, URL: "http://a b"}, "", "URL"},
		{"chain id not a number", jsonrpc.Config{Ticker: eth, URL: url + "?chain_id=x"}, "", "URL"},
		{"chain id zero", jsonrpc.Config{Ticker: eth, URL: url + "?chain_id=0"}, "", "URL"},
		{"chain ids disagree", jsonrpc.Config{Ticker: eth, URL: url + "?chain_id=5", ChainID: 6}, "", "URL"},
		{"contracts disagree", jsonrpc.Config{Ticker: usdt, URL: url + "?contract=" + testContract, Contract: usdt.Contract}, "", "URL"},
		{"mainnet with another chain id", jsonrpc.Config{Ticker: mainEth, URL: url, ChainID: 56}, "", "ChainID"},
		{"regtest with a mainnet chain id", jsonrpc.Config{Ticker: eth, URL: url, ChainID: 137}, "", "ChainID"},
		{"unknown network without chain id", jsonrpc.Config{Ticker: other, URL: url}, "", "ChainID"},
		{"token on regtest without contract", jsonrpc.Config{Ticker: usdt, URL: url}, "", "Contract"},
		{"native with a contract", jsonrpc.Config{Ticker: eth, URL: url + "?contract=" + testContract}, "", "Contract"},
		{"contract not an address", jsonrpc.Config{Ticker: usdt, URL: url, Contract: "0x1234"}, "", "Contract"},
		{"contract with a bad checksum", jsonrpc.Config{Ticker: usdt, URL: url, Contract: "0x5fbDB2315678afecb367f032d93F642f64180aa3"}, "", "Contract"},
		{"zero contract", jsonrpc.Config{Ticker: usdt, URL: url, Contract: "0x0000000000000000000000000000000000000000"}, "", "Contract"},
		{"negative timeout", jsonrpc.Config{Ticker: eth, URL: url, Timeout: -1}, "", "Timeout"},
		{"huge batch", jsonrpc.Config{Ticker: eth, URL: url, BatchSize: 5000}, "", "BatchSize"},
		{"negative log range", jsonrpc.Config{Ticker: eth, URL: url, LogRange: -1}, "", "LogRange"},
		{"tiny response limit", jsonrpc.Config{Ticker: eth, URL: url, MaxResponse: 10}, "", "MaxResponse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			b, newErr := jsonrpc.New(tt.cfg)
			if (err == nil) != (newErr == nil) {
				t.Fatalf("Validate %v but New %v", err, newErr)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				defer b.Close()
				if got := b.Contract(); got != tt.contract {
					t.Errorf("Contract() = %q, want %q", got, tt.contract)
				}
				return
			}
			if !errors.Is(err, jsonrpc.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate: %v, want ErrInvalidConfig naming %s", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
}

// TestArguments: ranges and hashes are checked before any I/O.
func TestArguments(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"eth", "erc20/usdt"} {
		b := faultBackend(t, ticker(t, name), "http://127.0.0.1:1")
		ctx := t.Context()
		for _, r := range [][2]int64{{-1, 2}, {3, 2}} {
			if _, err := b.Blocks(ctx, r[0], r[1]); !errors.Is(err, jsonrpc.ErrInvalidRange) {
				t.Errorf("%s: Blocks(%d, %d): %v", name, r[0], r[1], err)
			}
			if _, err := b.Transfers(ctx, r[0], r[1], nil); !errors.Is(err, jsonrpc.ErrInvalidRange) {
				t.Errorf("%s: Transfers(%d, %d): %v", name, r[0], r[1], err)
			}
		}
		if ts, err := b.Transfers(ctx, 5, 5, nil); err != nil || len(ts) != 0 {
			t.Errorf("%s: Transfers(5, 5): %v, %v", name, ts, err)
		}
		if bs, err := b.Blocks(ctx, 5, 5); err != nil || len(bs) != 0 {
			t.Errorf("%s: Blocks(5, 5): %v, %v", name, bs, err)
		}
		for _, id := range []string{"", "0x12", "ab" + strings.Repeat("0", 62), "0x" + strings.Repeat("g", 64)} {
			if _, err := b.State(ctx, chains.Transfer{TxID: id}); !errors.Is(err, jsonrpc.ErrInvalidTxID) {
				t.Errorf("%s: State(%q): %v", name, id, err)
			}
		}
	}
}
