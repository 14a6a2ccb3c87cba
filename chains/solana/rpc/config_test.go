package rpc_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/solana/solanatest"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	sol := ticker(t, "sol")
	usdc := ticker(t, "sol/usdc")
	btc, err := family.DefaultRegistry().Get("btc")
	if err != nil {
		t.Fatal(err)
	}
	const mint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	tests := []struct {
		name  string
		cfg   rpc.Config
		field string // "" when valid
	}{
		{"sol", rpc.Config{Ticker: sol, URL: "http://127.0.0.1:8899"}, ""},
		{"token with its contract", rpc.Config{Ticker: usdc, URL: "https://node.example/"}, ""},
		{"token with a mint", rpc.Config{Ticker: usdc, URL: "https://node.example/", Mint: mint}, ""},
		{"token with the URL's mint", rpc.Config{Ticker: usdc, URL: "https://node.example/?api-key=k&mint=" + mint}, ""},
		{"both mints agree", rpc.Config{Ticker: usdc, URL: "https://node.example/?mint=" + mint, Mint: mint}, ""},
		{"mints disagree", rpc.Config{Ticker: usdc, URL: "https://node.example/?mint=" + mint, Mint: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"}, "Mint"},
		{"bad mint", rpc.Config{Ticker: usdc, URL: "https://node.example/", Mint: "0xdead"}, "Mint"},
		{"mint for sol", rpc.Config{Ticker: sol, URL: "https://node.example/?mint=" + mint}, "Mint"},
		{"another family", rpc.Config{Ticker: btc, URL: "http://127.0.0.1:8332"}, "Ticker"},
		{"no URL", rpc.Config{Ticker: sol}, "URL"},
		{"not http", rpc.Config{Ticker: sol, URL: "ws://127.0.0.1:8900"}, "URL"},
		{"no host", rpc.Config{Ticker: sol, URL: "http:///x"}, "URL"},
		{"fragment", rpc.Config{Ticker: sol, URL: "http://h/#x"}, "URL"},
		{"negative timeout", rpc.Config{Ticker: sol, URL: "http://h", Timeout: -1}, "Timeout"},
		{"negative concurrency", rpc.Config{Ticker: sol, URL: "http://h", Concurrency: -1}, "Concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			_, newErr := rpc.New(tt.cfg)
			if (err == nil) != (newErr == nil) {
				t.Errorf("Validate %v but New %v", err, newErr)
			}
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.field != "" && (!errors.Is(err, rpc.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.field+":")):
				t.Errorf("Validate: %v, want ErrInvalidConfig naming %s", err, tt.field)
			}
		})
	}
	secret := rpc.Config{Ticker: sol, URL: "ftp://user:s3cret@h/"}
	if err := secret.Validate(); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Validate quotes the URL's password: %v", err)
	}
}

// TestRequests: requests go to the URL without the mint parameter but with
// the others (providers' keys), with the userinfo as basic authentication.
func TestRequests(t *testing.T) {
	t.Parallel()
	type seen struct {
		query, user, pass, method string
	}
	got := make(chan seen, 10)
	url := newHandlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		var req struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		got <- seen{r.URL.RawQuery, u, p, req.Method}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": 0})
	})
	url = strings.Replace(url, "http://", "http://alice:pw@", 1) + "/?api-key=k1&mint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	b, err := rpc.New(rpc.Config{Ticker: ticker(t, "sol/usdc"), URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if b.Mint() != "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" {
		t.Errorf("mint %s", b.Mint())
	}
	if _, err := b.Head(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s != (seen{"api-key=k1", "alice", "pw", "getSlot"}) {
		t.Errorf("request %+v", s)
	}
}

func TestNetOf(t *testing.T) {
	t.Parallel()
	for genesis, want := range map[string]chains.Net{
		"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d": chains.Mainnet,
		"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG": chains.Testnet,
		"4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY": chains.Testnet,
		"GH7ome3EiwEr7tu9JuTh2dpYWBJK3z69Xm1ZE3MEE6JC": chains.Regtest,
	} {
		if got := rpc.NetOf(genesis); got != want {
			t.Errorf("NetOf(%s) = %s, want %s", genesis, got, want)
		}
	}
}

// TestProbe: the fake's genesis is no public cluster's, so it is regtest;
// a ticker configured for mainnet or testnet is refused, and so is a mint
// the node does not have or whose decimals differ.
func TestProbe(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "sol")
	fake, b, _ := newFake(t, tk, solanatest.Options{})
	info, err := b.Probe(t.Context())
	if err != nil || info.Network != "genesis "+fake.Genesis() || !strings.HasPrefix(info.Version, "solana-core ") {
		t.Errorf("Probe = %+v, %v", info, err)
	}
	for _, net := range []chains.Net{chains.Mainnet, chains.Testnet} {
		reg, err := family.DefaultRegistry().WithNet("sol", net)
		if err != nil {
			t.Fatal(err)
		}
		other, _ := reg.Get("sol")
		ob, err := rpc.New(rpc.Config{Ticker: other, URL: fake.URL()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ob.Probe(t.Context()); !errors.Is(err, chains.ErrWrongNetwork) {
			t.Errorf("Probe for %s: %v, want ErrWrongNetwork", net, err)
		}
	}

	usdc := ticker(t, "sol/usdc")
	fake, _, _ = newFake(t, usdc, solanatest.Options{})
	for name, cfg := range map[string]rpc.Config{
		"the registry's mint, absent here": {Ticker: usdc, URL: fake.URL()},
		"not a mint":                       {Ticker: usdc, URL: fake.URL(), Mint: fake.Faucet()},
	} {
		ub, err := rpc.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ub.Probe(t.Context()); !errors.Is(err, chains.ErrWrongNetwork) {
			t.Errorf("%s: %v, want ErrWrongNetwork", name, err)
		}
	}
	nine := usdc
	nine.Decimals = 9 // the fake's mint has 6
	ub, err := rpc.New(rpc.Config{Ticker: nine, URL: fake.URL(), Mint: fake.Mint()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ub.Probe(t.Context()); !errors.Is(err, chains.ErrWrongNetwork) || !strings.Contains(err.Error(), "decimals") {
		t.Errorf("decimals differ: %v", err)
	}
	good, err := rpc.New(rpc.Config{Ticker: usdc, URL: fake.URL(), Mint: fake.Mint()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := good.Probe(t.Context()); err != nil {
		t.Errorf("Probe with the fake's mint: %v", err)
	}
}
