package rpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/solana/solanatest"
)

// TestSkippedSlots: slots without a block are Blocks of their own, linked
// like the others; their hashes change when a reorganisation replaces the
// block below them or fills the slot; Head is the newest block; transfers
// around them keep their slots.
func TestSkippedSlots(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "sol")
	fake, b, keys := newFake(t, tk, solanatest.Options{ConfirmedDepth: 1})
	d := solanatest.NewDriver(fake, b, tk, keys)
	ctx := t.Context()
	a := addr(t, tk, 0)

	fake.Skip(2) // slots 1, 2: skipped before any block
	first, err := d.Pay(a, tk.MinTransaction, false)
	if err != nil {
		t.Fatal(err)
	}
	fake.Mine(1) // 3: the payment
	fake.Skip(3) // 4..6
	fake.Mine(1) // 7
	if head, err := b.Head(ctx); err != nil || head.Height != 7 {
		t.Fatalf("Head = %+v, %v; want slot 7", head, err)
	}
	fake.Skip(1) // 8: no block yet, which only a block above makes a skipped slot
	head, err := b.Head(ctx)
	if err != nil || head.Height != 7 {
		t.Fatalf("Head over a slot without a block = %+v, %v; want the newest block, slot 7", head, err)
	}
	if bs, err := b.Blocks(ctx, 0, 8); !errors.Is(err, rpc.ErrInvalidRange) {
		t.Fatalf("Blocks(0, 8) above the newest block: %v, %v; want ErrInvalidRange", bs, err)
	}
	fake.Mine(1) // 9, whose parent is 7: slot 8 was skipped
	bs, err := b.Blocks(ctx, 0, 9)
	if err != nil || len(bs) != 9 {
		t.Fatalf("Blocks(0, 9) = %v, %v", bs, err)
	}
	parent := ""
	seen := map[string]bool{}
	for i, blk := range bs {
		skipped := strings.HasPrefix(blk.Hash, "skipped-")
		if blk.Height != int64(i+1) || blk.Parent != parent || seen[blk.Hash] || skipped != (blk.Height != 3 && blk.Height != 7 && blk.Height != 9) {
			t.Errorf("block %d: %+v after parent %q", i+1, blk, parent)
		}
		seen[blk.Hash] = true
		parent = blk.Hash
	}
	if head.Hash != bs[6].Hash {
		t.Errorf("head hash %s, block 7's %s", head.Hash, bs[6].Hash)
	}
	if part, err := b.Blocks(ctx, 4, 6); err != nil || len(part) != 2 || part[0] != bs[4] || part[1] != bs[5] {
		t.Errorf("Blocks(4, 6) = %+v, %v; want slots 5 and 6 as Blocks(0, 8) gave them", part, err)
	}
	trs, err := b.Transfers(ctx, 0, 9, nil)
	if err != nil || len(trs) != 1 || trs[0].TxID != first || trs[0].Height != 3 || trs[0].BlockHash != bs[2].Hash {
		t.Fatalf("Transfers = %+v, %v", trs, err)
	}

	// Replace slot 7's block and fill slots 8 and 9: 1..6 keep their
	// hashes.
	if _, err := fake.Reorg(3); err != nil {
		t.Fatal(err)
	}
	fake.Mine(3) // 7, 8 and 9 get (new) blocks
	now, err := b.Blocks(ctx, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if now[i] != bs[i] {
			t.Errorf("slot %d changed: %+v, was %+v", i+1, now[i], bs[i])
		}
	}
	if now[6].Hash == bs[6].Hash || now[7].Hash == bs[7].Hash || now[8].Hash == bs[8].Hash || now[7].Parent != now[6].Hash || strings.HasPrefix(now[7].Hash, "skipped-") {
		t.Errorf("slots 7, 8 after the reorganisation: %+v, were %+v", now[6:], bs[6:])
	}

	// A reorganisation that drops the payment's block changes the hashes
	// of the skipped slots above it.
	if _, err := fake.Reorg(7); err != nil { // back to slot 2
		t.Fatal(err)
	}
	fake.Mine(1)
	fake.Skip(1)
	fake.Mine(1)
	again, err := b.Blocks(ctx, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if again[0] != bs[0] || again[1] != bs[1] || again[2].Hash == bs[2].Hash || again[3].Hash == bs[3].Hash {
		t.Errorf("after dropping slot 3: %+v, was %+v", again, bs[:4])
	}
	if trs, err := b.Transfers(ctx, 0, 4, nil); err != nil || len(trs) != 0 {
		t.Errorf("Transfers after the payment's block left: %+v, %v", trs, err)
	}
	if st, err := b.State(ctx, chains.Transfer{TxID: first}); err != nil || st.Present || st.Confirmations != 0 {
		t.Errorf("dropped payment: %+v, %v; want not present", st, err)
	}
}

// TestCommitments: State follows the node's confirmationStatus through
// processed, confirmed and finalized; Head, Blocks and Transfers see the
// confirmed chain only.
func TestCommitments(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "sol")
	fake, b, keys := newFake(t, tk, solanatest.Options{ConfirmedDepth: 2, FinalizedDepth: 4})
	d := solanatest.NewDriver(fake, b, tk, keys)
	ctx := t.Context()
	a := addr(t, tk, 0)
	txid, err := d.Pay(a, tk.MinTransaction, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		commitment chains.Commitment
		head       int64
		conf       int64
		found      bool
	}{
		{chains.CommitmentNone, 0, 0, false},      // waiting for a slot
		{chains.CommitmentProcessed, 0, 0, false}, // slot 1, depth 1
		{chains.CommitmentConfirmed, 1, 1, true},  // depth 2
		{chains.CommitmentConfirmed, 2, 2, true},  // depth 3
		{chains.CommitmentFinalized, 3, 3, true},  // depth 4
		{chains.CommitmentFinalized, 4, 4, true},
	} {
		if i > 0 {
			mine(t, d, 1)
		}
		st, err := b.State(ctx, chains.Transfer{TxID: txid})
		if err != nil {
			t.Fatal(err)
		}
		if st.Commitment != want.commitment || st.Confirmations != want.conf || st.Present != (i > 0) {
			t.Errorf("after %d slots: %+v, want %s at %d confirmations", i, st, want.commitment, want.conf)
		}
		head, err := b.Head(ctx)
		if err != nil || head.Height != want.head {
			t.Errorf("after %d slots: head %+v, %v; want %d", i, head, err, want.head)
		}
		trs, err := b.Transfers(ctx, 0, head.Height, nil)
		if err != nil || (len(trs) == 1) != want.found {
			t.Errorf("after %d slots: transfers %+v, %v", i, trs, err)
		}
	}
}

// TestTransfersWatching: only addresses handed to Watch are asked about;
// the watched function filters them; a transaction that takes from a
// watched address (its forward) is no transfer to it; Transfers pages
// through getSignaturesForAddress.
func TestTransfersWatching(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol", nil)
	ctx := t.Context()
	other := addr(t, fx.tk, 3)
	if _, err := fx.fake.PaySOL(other, 5_000_000); err != nil { // not through the Driver: not watched
		t.Fatal(err)
	}
	if err := fx.b.Send(ctx, fx.signed); err != nil {
		t.Fatal(err)
	}
	top := fx.d.Server().Mine(1)
	all, err := fx.b.Transfers(ctx, 0, top, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, tr := range all {
		got[tr.To]++
	}
	if got[other] != 0 || got[fx.forward.From] != 1 || got[fx.forward.Outputs[0].Address] != 1 || len(all) != 2 {
		t.Errorf("Transfers(nil) = %+v; want the payment to the address and the forward's output", all)
	}
	fx.b.Watch(other)
	only, err := fx.b.Transfers(ctx, 0, top, func(a string) bool { return a == other })
	if err != nil || len(only) != 1 || only[0].To != other || only[0].Value.Shift(9).IntPart() != 5_000_000 {
		t.Errorf("Transfers watching %s: %+v, %v", other, only, err)
	}
}

// proxy is a node in front of the fake that rewrites one method's
// results.
func proxy(t *testing.T, fake *solanatest.Server, method string, rewrite func(result json.RawMessage) json.RawMessage) string {
	t.Helper()
	return newHandlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct{ Method string }
		_ = json.Unmarshal(body, &req)
		resp, err := http.Post(fake.URL(), "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var m map[string]json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if req.Method == method && m["result"] != nil {
			m["result"] = rewrite(m["result"])
		}
		_ = json.NewEncoder(w).Encode(m)
	})
}

// edit decodes a JSON value, lets f change it, and encodes it again.
func edit(raw json.RawMessage, f func(v any) any) json.RawMessage {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	_ = d.Decode(&v)
	out, _ := json.Marshal(f(v))
	return out
}

func obj(v any) map[string]any { return v.(map[string]any) }

// TestGarbageAnswers: answers that are well-formed JSON-RPC but wrong in
// ways a broken or malicious node could be are node errors, not panics
// and not made-up transfers or blocks.
func TestGarbageAnswers(t *testing.T) {
	t.Parallel()
	type op func(b *rpc.Backend, fx *fixture) error
	blocks := func(b *rpc.Backend, fx *fixture) error { _, err := b.Blocks(t.Context(), 0, 5); return err }
	head := func(b *rpc.Backend, fx *fixture) error { _, err := b.Head(t.Context()); return err }
	transfers := func(b *rpc.Backend, fx *fixture) error { _, err := b.Transfers(t.Context(), 0, 5, nil); return err }
	state := func(b *rpc.Backend, fx *fixture) error { _, err := b.State(t.Context(), fx.payment); return err }
	sign := func(b *rpc.Backend, fx *fixture) error { _, err := b.Sign(t.Context(), fx.forward); return err }
	tests := []struct {
		name    string
		ticker  string
		method  string
		rewrite func(v any) any
		op      op
	}{
		{"slot negative", "sol", "getSlot", func(v any) any { return -1 }, head},
		{"slot huge", "sol", "getSlot", func(v any) any { return json.Number("18446744073709551615") }, head},
		{"blocks out of order", "sol", "getBlocks", func(v any) any {
			s := v.([]any)
			if len(s) > 1 {
				s[0], s[1] = s[1], s[0]
			}
			return s
		}, blocks},
		{"blocks beyond the range", "sol", "getBlocks", func(v any) any { return append(v.([]any), 10_000) }, blocks},
		{"blockhash not base58", "sol", "getBlock", func(v any) any { obj(v)["blockhash"] = "not a hash!"; return v }, head},
		{"parent that does not link", "sol", "getBlock", func(v any) any {
			obj(v)["previousBlockhash"] = "11111111111111111111111111111111"
			return v
		}, blocks},
		{"parent slot above", "sol", "getBlock", func(v any) any { obj(v)["parentSlot"] = 1 << 40; return v }, blocks},
		{"first available block above", "sol", "getFirstAvailableBlock", func(v any) any { return 3 }, blocks},
		{"signatures ascending", "sol", "getSignaturesForAddress", func(v any) any {
			s := v.([]any)
			return append(s, map[string]any{"signature": obj(s[0])["signature"], "slot": 1 << 30, "err": nil})
		}, transfers},
		{"signature not base58", "sol", "getSignaturesForAddress", func(v any) any { obj(v.([]any)[0])["signature"] = "0OIl"; return v }, transfers},
		{"signature without slot", "sol", "getSignaturesForAddress", func(v any) any { delete(obj(v.([]any)[0]), "slot"); return v }, transfers},
		{"balances shorter than keys", "sol", "getTransaction", func(v any) any {
			m := obj(obj(v)["meta"])
			m["postBalances"] = m["postBalances"].([]any)[:1]
			return v
		}, transfers},
		{"another transaction", "sol", "getTransaction", func(v any) any {
			obj(obj(v)["transaction"])["signatures"] = []any{"1111111111111111111111111111111111111111111111111111111111111111"}
			return v
		}, transfers},
		{"transaction in another slot", "sol", "getTransaction", func(v any) any { obj(v)["slot"] = 4; return v }, transfers},
		{"transaction without meta", "sol", "getTransaction", func(v any) any { obj(v)["meta"] = nil; return v }, transfers},
		{"token balance of no account", "sol/usdc", "getTransaction", func(v any) any {
			for _, tb := range obj(obj(v)["meta"])["postTokenBalances"].([]any) {
				obj(tb)["accountIndex"] = 99
			}
			return v
		}, transfers},
		{"token amount not a number", "sol/usdc", "getTransaction", func(v any) any {
			for _, tb := range obj(obj(v)["meta"])["postTokenBalances"].([]any) {
				obj(obj(tb)["uiTokenAmount"])["amount"] = "1e6"
			}
			return v
		}, transfers},
		{"unknown commitment", "sol", "getSignatureStatuses", func(v any) any {
			obj(obj(v)["value"].([]any)[0])["confirmationStatus"] = "rooted"
			return v
		}, state},
		{"two statuses for one", "sol", "getSignatureStatuses", func(v any) any {
			obj(v)["value"] = append(obj(v)["value"].([]any), nil)
			return v
		}, state},
		{"blockhash without expiry", "sol", "getLatestBlockhash", func(v any) any {
			delete(obj(obj(v)["value"]), "lastValidBlockHeight")
			return v
		}, sign},
		{"accounts missing", "sol", "getMultipleAccounts", func(v any) any { obj(v)["value"] = []any{}; return v }, sign},
		{"mint data not a mint", "sol/usdc", "getAccountInfo", func(v any) any {
			obj(obj(v)["value"])["data"] = []any{"AAAA", "base64"}
			return v
		}, sign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t, tt.ticker, nil)
			url := proxy(t, fx.fake, tt.method, func(r json.RawMessage) json.RawMessage { return edit(r, tt.rewrite) })
			keys, err := chains.NewKeys(seed())
			if err != nil {
				t.Fatal(err)
			}
			cfg := rpc.Config{Ticker: fx.tk, URL: url, Keys: keys}
			if fx.tk.Token {
				cfg.Mint = fx.fake.Mint()
			}
			b, err := rpc.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b.Watch(fx.forward.From)
			err = tt.op(b, fx)
			want := chains.ErrNode
			if tt.method == "getAccountInfo" {
				want = chains.ErrWrongNetwork // a mint that is not one
			}
			if !errors.Is(err, want) {
				t.Fatalf("%v, want an error wrapping %v", err, want)
			}
			t.Log(err)
		})
	}
}

// TestAnswerTooLarge: an answer beyond Config.MaxResponse is a node error.
func TestAnswerTooLarge(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol", nil)
	b, err := rpc.New(rpc.Config{Ticker: fx.tk, URL: fx.fake.URL(), MaxResponse: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Blocks(t.Context(), 0, 5); !errors.Is(err, chains.ErrNode) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Blocks with a 100-byte limit: %v", err)
	}
}

// mine mines n slots on the devnet behind d, failing the test when it
// refuses: a refused Mine would leave the test checking the chain as it was.
func mine(t *testing.T, d *solanatest.Driver, n int) {
	t.Helper()
	if _, err := d.Mine(n); err != nil {
		t.Fatalf("mine %d: %v", n, err)
	}
}
