package rpc

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

// documented returns the result of testdata/name.json (see its README).
func documented(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Result json.RawMessage }
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(r.Result, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func testBackend(t *testing.T, ticker, mint string) *Backend {
	t.Helper()
	tk, err := family.DefaultRegistry().Get(ticker)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Ticker: tk, URL: "http://127.0.0.1:1", Mint: mint})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// usdcMint is USDC's mint on mainnet-beta.
const usdcMint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

// TestDocumentedTransactions: the parser reads getTransaction's documented
// shapes and the balance arithmetic gives what each address received.
func TestDocumentedTransactions(t *testing.T) {
	t.Parallel()
	sol := testBackend(t, "sol", "")
	usdc := testBackend(t, "sol/usdc", usdcMint)
	tests := []struct {
		file    string
		b       *Backend
		sig     string
		slot    uint64
		keys    int
		address string
		want    int64
	}{
		{"getTransaction", sol, "2nBhEBYYvfaAe16UMNqRHre4YNSskvuYgx3M6E4JP1oDYvZEJHvoPzyUidNgNX5r9sTyN1J9UxtbCXy2rqYcuyuv", 430, 5,
			"3UVYmECPPMZSCqWKfENfuoTv51fTDTWicX9xmBD2euKe", -5000}, // the vote's fee payer: no transfer to it
		{"getTransaction", sol, "2nBhEBYYvfaAe16UMNqRHre4YNSskvuYgx3M6E4JP1oDYvZEJHvoPzyUidNgNX5r9sTyN1J9UxtbCXy2rqYcuyuv", 430, 5,
			"AjozzgE83A3x1sHNUR64hfH7zaEBWeMaFuAN9kQgujrc", 0},
		{"getTransaction-spl", usdc, "", 305000123, 8, "GAbEt4yo2TDmHrDYRXwHCJgfMJYrQcJejmfXwhP6fhHw", 1_500_000}, // the new account's owner
		{"getTransaction-spl", usdc, "", 305000123, 8, "GnfJDPjJzugZ7c2F9hGiMRBUB5KDtnrDZqZTJV6dG4k9", -1_500_000},
		{"getTransaction-spl", sol, "", 305000123, 8, "GnfJDPjJzugZ7c2F9hGiMRBUB5KDtnrDZqZTJV6dG4k9", -2_044_280}, // SOL: fee and rent
		{"getTransaction-v0", sol, "", 305000200, 3, "Dsc2Y7HDrpxBnSvFGuspUjWPL5KTp8wR1Y6sVyY8RaSZ", 999_000},     // loaded from a lookup table
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.address[:6], func(t *testing.T) {
			t.Parallel()
			var tx *txResult
			documented(t, tt.file, &tx)
			sig := tt.sig
			if sig == "" {
				sig = tx.Transaction.Signatures[0]
			}
			if err := tx.check(sig); err != nil {
				t.Fatal(err)
			}
			if *tx.Slot != tt.slot || len(tx.accountKeys()) != tt.keys || failed(tx.Meta.Err) {
				t.Errorf("slot %d, %d keys, err %s", *tx.Slot, len(tx.accountKeys()), tx.Meta.Err)
			}
			if got := tt.b.received(tx, tt.address); got.Int64() != tt.want {
				t.Errorf("received(%s) = %s, want %d", tt.address, got, tt.want)
			}
		})
	}
}

// TestDocumentedAnswers: the other documented answers decode into what
// the backend reads.
func TestDocumentedAnswers(t *testing.T) {
	t.Parallel()
	var sigs []signatureInfo
	documented(t, "getSignaturesForAddress", &sigs)
	if len(sigs) != 1 || *sigs[0].Slot != 114 || failed(sigs[0].Err) || checkSignature(sigs[0].Signature) != nil {
		t.Errorf("getSignaturesForAddress: %+v", sigs)
	}

	var statuses contextValue[[]*signatureStatus]
	documented(t, "getSignatureStatuses", &statuses)
	if len(statuses.Value) != 2 || statuses.Value[1] != nil || *statuses.Value[0].Slot != 48 {
		t.Fatalf("getSignatureStatuses: %+v", statuses)
	}
	if c, err := statuses.Value[0].commitment(); err != nil || c != chains.CommitmentFinalized {
		t.Errorf("commitment %v, %v", c, err)
	}

	var block *blockHeader
	documented(t, "getBlock", &block)
	if err := block.check(430); err != nil || *block.BlockHeight != 428 || *block.ParentSlot != 429 {
		t.Errorf("getBlock: %+v, %v", block, err)
	}

	var latest contextValue[*latestBlockhash]
	documented(t, "getLatestBlockhash", &latest)
	if checkHash(latest.Value.Blockhash) != nil || *latest.Value.LastValidBlockHeight != 3090 {
		t.Errorf("getLatestBlockhash: %+v", latest.Value)
	}

	var accounts contextValue[[]*accountInfo]
	documented(t, "getMultipleAccounts", &accounts)
	if len(accounts.Value) != 2 || accounts.Value[0].lamports() != 88849814690250 || accounts.Value[1].Owner != "2WRuhE4GJFoE23DYzp2ij6ZnuQ8p9mJeU6gDgfsjR4or" {
		t.Errorf("getMultipleAccounts: %+v", accounts.Value)
	}
}

// cannedNode answers each method with its documented answer (the
// request's id put in).
func cannedNode(t *testing.T, files map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		name, ok := files[req.Method]
		if !ok {
			name = req.Method
		}
		raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			http.Error(w, "no such method", http.StatusNotFound)
			return
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		m["id"] = req.ID
		_ = json.NewEncoder(w).Encode(m)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDocumentedOverHTTP: the backend's calls read the documented answers
// through its JSON-RPC client.
func TestDocumentedOverHTTP(t *testing.T) {
	t.Parallel()
	tk, err := family.DefaultRegistry().WithNet("sol", chains.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	sol, _ := tk.Get("sol")
	b, err := New(Config{Ticker: sol, URL: cannedNode(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	info, err := b.Probe(ctx) // the documented genesis hash is no public cluster's
	if err != nil || info.Network != "genesis GH7ome3EiwEr7tu9JuTh2dpYWBJK3z69Xm1ZE3MEE6JC" || info.Version != "solana-core 1.16.7" || info.Height != 1234 {
		t.Errorf("Probe = %+v, %v", info, err)
	}
	if slots, err := b.getBlocks(ctx, 5, 10); err != nil || len(slots) != 6 {
		t.Errorf("getBlocks = %v, %v", slots, err)
	}
	if h, err := b.getBlock(ctx, 430); err != nil || h.Blockhash != "3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA" {
		t.Errorf("getBlock = %+v, %v", h, err)
	}
	if r, err := b.latestBlockhash(ctx); err != nil || r.lastValid != 3090 {
		t.Errorf("getLatestBlockhash = %+v, %v", r, err)
	}
	if v, err := b.tokenBalance(ctx, b.mint); err != nil || v != 9864 {
		t.Errorf("getTokenAccountBalance = %d, %v", v, err)
	}
	if v, err := b.rentExempt(ctx, 0); err != nil || v != 500 {
		t.Errorf("getMinimumBalanceForRentExemption = %d, %v", v, err)
	}
	if fee, err := b.NetworkFee(ctx); err != nil || fee.String() != "0.000005" {
		t.Errorf("NetworkFee = %s, %v", fee, err)
	}

	refused, err := New(Config{Ticker: sol, URL: cannedNode(t, map[string]string{"sendTransaction": "sendTransaction-blockhash-not-found"})})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	err = refused.rpc.call(ctx, "sendTransaction", []any{"AQ==", map[string]any{"encoding": "base64"}}, &got)
	var re *RPCError
	if !errors.As(err, &re) || re.Code != -32002 || re.Reason != "BlockhashNotFound" || !errors.Is(err, chains.ErrNode) {
		t.Errorf("refused sendTransaction: %v", err)
	}
	if !strings.Contains(err.Error(), "Blockhash not found") {
		t.Errorf("message %q does not say why", err)
	}
}
