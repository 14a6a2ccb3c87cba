package trontest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
)

// usdt is mainnet USDT's contract, which the fake runs in these tests.
const usdt = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"

func newNode(t *testing.T) *Node {
	t.Helper()
	n, err := New(Options{Contracts: []string{usdt}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// call POSTs body to the node and decodes the answer.
func call(t *testing.T, n *Node, path string, body any) any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(n.URL()+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v: %s", path, err, data)
	}
	return v
}

// paths returns v's JSON paths with their leaves' types, arrays as [].
func paths(v any, prefix string, out map[string]bool) map[string]bool {
	if out == nil {
		out = map[string]bool{}
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix+":{}"] = true
		}
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			paths(e, p, out)
		}
	case []any:
		for _, e := range x {
			paths(e, prefix+"[]", out)
		}
	case string:
		out[prefix+":string"] = true
	case float64:
		out[prefix+":number"] = true
	case bool:
		out[prefix+":bool"] = true
	case nil:
		out[prefix+":null"] = true
	}
	return out
}

func documented(t *testing.T, name string) any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "httpapi", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// within reports the fake's paths that the documentation does not show.
func within(got, doc map[string]bool) []string {
	var extra []string
	for p := range got {
		if !doc[p] {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	return extra
}

// TestShapes: every field the fake prints, with its JSON type, is one the
// documented examples of the real API show (java-tron's JsonFormat,
// visible=false); the complete captures (createtransaction,
// triggersmartcontract) are matched both ways.
func TestShapes(t *testing.T) {
	n := newNode(t)
	faucet := n.Faucet()
	to := keyAccount(mustKey(t, 2).PubKey()).String()
	trx, err := n.Pay("", to, big.NewInt(5_000_000), false)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := n.Pay(usdt, to, big.NewInt(7), false)
	if err != nil {
		t.Fatal(err)
	}
	failed, err := n.Pay(usdt, to, big.NewInt(7), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Mine(25); err != nil {
		t.Fatal(err)
	}

	// Documented transactions: a contract call (gettransactionbyid) and a
	// transfer (createtransaction's raw_data).
	txDoc := paths(documented(t, "gettransactionbyid.json"), "", nil)
	paths(documented(t, "createtransaction.json"), "", txDoc)
	delete(txDoc, "visible:bool")
	blockDoc := paths(documented(t, "getnowblock.json"), "", nil)
	for p := range txDoc {
		blockDoc["transactions[]."+p] = true
	}
	// A TransferContract's value in a block, and a call's amounts.
	for _, p := range []string{"amount:number", "owner_address:string", "to_address:string"} {
		blockDoc["transactions[].raw_data.contract[].parameter.value."+p] = true
	}
	limitDoc := map[string]bool{}
	for p := range blockDoc {
		limitDoc["block[]."+p] = true
	}
	infoDoc := paths(documented(t, "gettransactioninfobyid.json"), "", nil)
	paths(documented(t, "gettransactioninfobyblocknum.json").([]any)[0], "", infoDoc)
	failedDoc := maps(infoDoc, "result:string", "resMessage:string") // in the documented field table
	infoListDoc := map[string]bool{}
	for p := range failedDoc {
		infoListDoc["[]."+strings.TrimPrefix(p, "")] = true
	}

	for _, c := range []struct {
		path string
		body any
		doc  map[string]bool
	}{
		{"/wallet/getnowblock", nil, blockDoc},
		{"/walletsolidity/getnowblock", nil, blockDoc},
		{"/wallet/getblockbynum", map[string]any{"num": 1}, blockDoc},
		{"/wallet/getblockbynum", map[string]any{"num": 0}, blockDoc},
		{"/wallet/getblockbylimitnext", map[string]any{"startNum": 0, "endNum": 3}, limitDoc},
		{"/wallet/gettransactionbyid", map[string]any{"value": tok}, txDoc},
		{"/wallet/gettransactionbyid", map[string]any{"value": trx}, txDoc},
		{"/wallet/gettransactioninfobyid", map[string]any{"value": tok}, infoDoc},
		{"/walletsolidity/gettransactioninfobyid", map[string]any{"value": trx}, infoDoc},
		{"/wallet/gettransactioninfobyid", map[string]any{"value": failed}, failedDoc},
		{"/wallet/getaccount", map[string]any{"address": hexOf(t, to)}, paths(documented(t, "getaccount.json"), "", nil)},
		{"/wallet/getchainparameters", nil, paths(documented(t, "getchainparameters.json"), "", nil)},
		{"/wallet/getnodeinfo", nil, paths(documented(t, "getnodeinfo.json"), "", nil)},
	} {
		got := paths(call(t, n, c.path, c.body), "", nil)
		if extra := within(got, c.doc); len(extra) > 0 {
			t.Errorf("%s %v prints undocumented fields: %v", c.path, c.body, extra)
		}
	}
	var list []any
	b, _ := json.Marshal(call(t, n, "/wallet/gettransactioninfobyblocknum", map[string]any{"num": 1}))
	_ = json.Unmarshal(b, &list)
	if len(list) != 3 {
		t.Fatalf("gettransactioninfobyblocknum: %d infos", len(list))
	}
	if extra := within(paths(list, "", nil), infoListDoc); len(extra) > 0 {
		t.Errorf("gettransactioninfobyblocknum prints undocumented fields: %v", extra)
	}

	// Complete captures: the same fields both ways.
	owner := hexOf(t, faucet)
	for _, c := range []struct {
		path, doc string
		body      any
	}{
		{"/wallet/createtransaction", "createtransaction.json", map[string]any{"owner_address": owner, "to_address": hexOf(t, to), "amount": 1000000}},
		{"/wallet/triggersmartcontract", "triggersmartcontract.json", map[string]any{"owner_address": owner, "contract_address": hexOf(t, usdt),
			"function_selector": "transfer(address,uint256)", "parameter": strings.Repeat("0", 62) + "64" + strings.Repeat("0", 62) + "64", "fee_limit": 100000000}},
	} {
		got := paths(call(t, n, c.path, c.body), "", nil)
		doc := paths(documented(t, c.doc), "", nil)
		if extra, missing := within(got, doc), within(doc, got); len(extra)+len(missing) > 0 {
			t.Errorf("%s: fields not in the capture %v, fields of the capture missing %v", c.path, extra, missing)
		}
	}
}

func maps(m map[string]bool, extra ...string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	for _, k := range extra {
		out[k] = true
	}
	return out
}

func mustKey(t *testing.T, seed byte) *btcec.PrivateKey {
	t.Helper()
	k, _ := btcec.PrivKeyFromBytes(bytes.Repeat([]byte{seed}, 32))
	return k
}

func hexOf(t *testing.T, a string) string {
	t.Helper()
	acc, err := parseBase58(a)
	if err != nil {
		t.Fatal(err)
	}
	return acc.hex()
}

// TestBroadcastChecks: the node verifies what it is sent: the signer owns
// the account, the reference block exists, the transaction is not a
// duplicate.
func TestBroadcastChecks(t *testing.T) {
	n := newNode(t)
	key := mustKey(t, 9)
	owner := keyAccount(key.PubKey())
	if err := n.Fund(owner.String(), 50_000_000); err != nil {
		t.Fatal(err)
	}
	to := keyAccount(mustKey(t, 3).PubKey())
	built := call(t, n, "/wallet/createtransaction", map[string]any{"owner_address": owner.hex(), "to_address": to.hex(), "amount": 1_000_000}).(map[string]any)
	raw, _ := hex.DecodeString(built["raw_data_hex"].(string))
	id := sha256.Sum256(raw)
	if hex.EncodeToString(id[:]) != built["txID"] {
		t.Fatal("txID is not the sha256 of raw_data_hex")
	}
	broadcast := func(raw, sig []byte) map[string]any {
		return call(t, n, "/wallet/broadcasthex", map[string]any{"transaction": hex.EncodeToString(encodeSigned(raw, sig))}).(map[string]any)
	}
	if r := broadcast(raw, sign(mustKey(t, 4), id)); r["code"] != "SIGERROR" || r["result"] != false {
		t.Errorf("signed by another key: %v", r)
	}
	r, _ := decodeRaw(raw)
	r.refHash = bytes.Repeat([]byte{1}, 8)
	bad := r.encode()
	if res := broadcast(bad, sign(key, sha256.Sum256(bad))); res["code"] != "TAPOS_ERROR" {
		t.Errorf("unknown reference block: %v", res)
	}
	if res := broadcast(raw, sign(key, id)); res["code"] != "SUCCESS" || res["result"] != true || res["txid"] != built["txID"] {
		t.Errorf("good transaction: %v", res)
	}
	if res := broadcast(raw, sign(key, id)); res["code"] != "DUP_TRANSACTION_ERROR" {
		t.Errorf("again: %v", res)
	}
	if _, err := n.Mine(1); err != nil {
		t.Fatal(err)
	}
	if got := n.Balance(to.String()); got != 1_000_000 {
		t.Errorf("recipient holds %d", got)
	}
	if blocks, _ := n.Included(hex.EncodeToString(id[:])); blocks != 1 {
		t.Errorf("in %d blocks", blocks)
	}
}

// TestReorg: dropped transactions leave for good; balances follow.
func TestReorg(t *testing.T) {
	n := newNode(t)
	to := keyAccount(mustKey(t, 5).PubKey()).String()
	id, err := n.Pay("", to, big.NewInt(3_000_000), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Mine(3); err != nil {
		t.Fatal(err)
	}
	if n.Balance(to) != 3_000_000 {
		t.Fatal("not paid")
	}
	if h, err := n.Reorg(3); err != nil || h != 0 {
		t.Fatalf("reorg: %d, %v", h, err)
	}
	if _, err := n.Mine(3); err != nil {
		t.Fatal(err)
	}
	if blocks, pending := n.Included(id); blocks != 0 || pending || n.Balance(to) != 0 {
		t.Errorf("after the reorganisation: %d blocks, pending %v, balance %d", blocks, pending, n.Balance(to))
	}
	if _, err := n.Reorg(4); err == nil {
		t.Error("reorganised the genesis block away")
	}
}
