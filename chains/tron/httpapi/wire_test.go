package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
)

// load decodes testdata/name into v, failing on fields of the wrong type.
func load(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestDocumentedBlocks decodes the documentation's block examples.
func TestDocumentedBlocks(t *testing.T) {
	var now blockJSON
	load(t, "getnowblock.json", &now)
	b, found, err := parseBlock(now)
	if err != nil || !found {
		t.Fatalf("getnowblock: %v, found %v", err, found)
	}
	if b.Height != 66987627 || b.ID != "0000000003fe266bf6b6d392f654dc2e5011601546ed04623d9fcc4e9d439a25" ||
		b.Parent != "0000000003fe266a65d5194c947f6f7a059d4646c8e9a5293226bc7fdcfc775e" || len(b.Txs) != 0 {
		t.Errorf("getnowblock parsed as %+v", b)
	}

	var list struct {
		Block []blockJSON `json:"block"`
	}
	load(t, "getblockbylimitnext.json", &list)
	if len(list.Block) != 1 {
		t.Fatalf("getblockbylimitnext: %d blocks", len(list.Block))
	}
	if b, _, err := parseBlock(list.Block[0]); err != nil || b.Height != 66987565 {
		t.Errorf("getblockbylimitnext: %+v, %v", b, err)
	}

	var empty blockJSON
	if err := json.Unmarshal([]byte(`{}`), &empty); err != nil {
		t.Fatal(err)
	}
	if _, found, err := parseBlock(empty); found || err != nil {
		t.Errorf("{} (no such block): found %v, %v", found, err)
	}
}

// TestDocumentedTransaction decodes gettransactionbyid's example (a
// contract call) as a block's transaction.
func TestDocumentedTransaction(t *testing.T) {
	var tj txJSON
	load(t, "gettransactionbyid.json", &tj)
	tx, err := parseBlockTx(tj)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parseHexAccount("419ff8fc48fb114ccd5bbdc24a86f0c73082f08825")
	if tx.ID != "01b4cde4197b9d1a1ff09ef5d2b1d939d3ec2401b3f002ebd0802c0f30a6e4ca" || tx.Ret != "SUCCESS" ||
		tx.Type != "TriggerSmartContract" || tx.Contract != want {
		t.Errorf("parsed as %+v", tx)
	}
}

// TestDocumentedInfos decodes the transaction-info examples.
func TestDocumentedInfos(t *testing.T) {
	var in infoJSON
	load(t, "gettransactioninfobyid.json", &in)
	if in.BlockNumber != 66985120 || !in.succeeded(true) || len(in.Log) != 1 {
		t.Errorf("gettransactioninfobyid parsed as %+v", in)
	}
	// Its log is another event of another contract: no token transfer.
	caller, _ := parseHexAccount("419ff8fc48fb114ccd5bbdc24a86f0c73082f08825")
	if ts, err := in.tokenTransfers(caller); err != nil || len(ts) != 0 {
		t.Errorf("transfers of a non-Transfer event: %v, %v", ts, err)
	}

	var list []infoJSON
	load(t, "gettransactioninfobyblocknum.json", &list)
	if len(list) != 2 || list[0].BlockNumber != 66987565 || !list[0].succeeded(false) || list[0].succeeded(true) {
		t.Errorf("gettransactioninfobyblocknum parsed as %+v", list)
	}
}

// TestTokenTransfers reads Transfer logs: only the contract's, only in a
// successful transaction, the log's position as Index, and garbage in a
// Transfer log of the contract is an error.
func TestTokenTransfers(t *testing.T) {
	usdt, _ := parseBase58("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	to, _ := parseBase58("TJRabPrwbZy45sbavfcjinPJC18kjpRTv8")
	from, _ := parseBase58("TGzz8gjYiYRqpfmDwnLxfgPuLVNmpCswVp")
	word := func(a account) string { return hex.EncodeToString(a.word()) }
	value := hex.EncodeToString(big.NewInt(1_500_000).FillBytes(make([]byte, 32)))
	transfer := map[string]any{"address": usdt.evmHex(), "topics": []string{transferTopic, word(from), word(to)}, "data": value}
	other := map[string]any{"address": "9ff8fc48fb114ccd5bbdc24a86f0c73082f08825", "topics": []string{transferTopic, word(from), word(to)}, "data": value}
	approval := map[string]any{"address": usdt.evmHex(), "topics": []string{"8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925", word(from), word(to)}, "data": value}
	info := func(result string, failed bool, logs ...any) infoJSON {
		m := map[string]any{"id": strings.Repeat("ab", 32), "blockNumber": 7, "receipt": map[string]any{"result": result}, "log": logs}
		if failed {
			m["result"] = "FAILED"
		}
		raw, _ := json.Marshal(m)
		var in infoJSON
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	for _, c := range []struct {
		name    string
		in      infoJSON
		indexes []int64
		err     bool
	}{
		{"one transfer", info("SUCCESS", false, transfer), []int64{0}, false},
		{"after other logs", info("SUCCESS", false, approval, other, transfer, transfer), []int64{2, 3}, false},
		{"reverted", info("REVERT", true, transfer), nil, false},
		{"out of energy", info("OUT_OF_ENERGY", true), nil, false},
		{"failed result", info("SUCCESS", true, transfer), nil, false},
		{"41-prefixed address", info("SUCCESS", false, map[string]any{"address": usdt.Hex(), "topics": []string{transferTopic, word(from), word(to)}, "data": value}), []int64{0}, false},
		{"two topics", info("SUCCESS", false, map[string]any{"address": usdt.evmHex(), "topics": []string{transferTopic, word(from)}, "data": value}), nil, true},
		{"recipient not an address", info("SUCCESS", false, map[string]any{"address": usdt.evmHex(), "topics": []string{transferTopic, word(from), strings.Repeat("f", 64)}, "data": value}), nil, true},
		{"value not a word", info("SUCCESS", false, map[string]any{"address": usdt.evmHex(), "topics": []string{transferTopic, word(from), word(to)}, "data": "00"}), nil, true},
		{"value not hex", info("SUCCESS", false, map[string]any{"address": usdt.evmHex(), "topics": []string{transferTopic, word(from), word(to)}, "data": "zz"}), nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := c.in.tokenTransfers(usdt)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error %v", err, c.err)
			}
			var got []int64
			for _, tt := range ts {
				got = append(got, tt.Index)
				if tt.To != to || tt.Value.Int64() != 1_500_000 {
					t.Errorf("transfer %+v", tt)
				}
			}
			if !equalInts(got, c.indexes) {
				t.Errorf("indexes %v, want %v", got, c.indexes)
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDocumentedCreateTransaction checks the documentation's real
// createtransaction capture as Sign checks what a node built, and signs it.
func TestDocumentedCreateTransaction(t *testing.T) {
	var bt builtJSON
	load(t, "createtransaction.json", &bt)
	raw, r, err := built("/wallet/createtransaction", bt, typeTransfer, typeURLTransfer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeTransfer(r.Value)
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := parseHexAccount("41dd791d6b49e190062d650e6a23c575510d35f2f9")
	to, _ := parseHexAccount("4192ad11c1bf16b3b14b0bd6b5c7e2db73a0b5e83a")
	if !bytes.Equal(c.Owner, owner[:]) || !bytes.Equal(c.To, to[:]) || c.Amount != 1_000_000 {
		t.Errorf("transfer %+v", c)
	}
	if r.Expiration != 1777447527000 || r.Timestamp != 1777447470038 || hex.EncodeToString(r.RefBlockBytes) != "2927" ||
		hex.EncodeToString(r.RefBlockHash) != "939ece39d08a7abe" || r.FeeLimit != 0 {
		t.Errorf("raw %+v", r)
	}

	// Signing extends the expiration and nothing else.
	keys, _ := chains.NewKeys(bytes.Repeat([]byte{7}, 32))
	tk, _ := family.DefaultRegistry().Lookup("trx")
	key, _ := keys.Secp256k1(tk, 0)
	addr, _ := chains.PubKeyAddress(tk, key.PubKey())
	b := &Backend{cfg: Config{Ticker: tk, Expiration: DefaultExpiration, Signer: keysign.New(keys)}}
	st, err := b.sign(t.Context(), "test", raw, r, signingKey{ctx: chains.SignContext{Ticker: tk, Key: "test"}, addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := hex.DecodeString(st.Hex)
	signedRaw, id, err := decodeSigned(data)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(id[:]) != st.TxID || st.TxID == bt.TxID {
		t.Errorf("signed txid %s (built %s)", st.TxID, bt.TxID)
	}
	r2, err := decodeRaw(signedRaw)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Timestamp + DefaultExpiration.Milliseconds(); r2.Expiration != want {
		t.Errorf("expiration %d, want %d", r2.Expiration, want)
	}
	r2.Expiration = r.Expiration
	if !equalRaw(r, r2) {
		t.Errorf("signing changed more than the expiration: %+v, was %+v", r2, r)
	}
	if len(signedRaw) != len(raw) {
		t.Errorf("raw data of %d bytes became %d", len(raw), len(signedRaw))
	}
	// The signature is r || s || v and recovers the key.
	var sig []byte
	_ = fields(data, func(num protowire.Number, _ protowire.Type, _ uint64, val []byte) error {
		if num == txSignature {
			sig = val
		}
		return nil
	})
	if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
		t.Fatalf("signature %x", sig)
	}
	pub, _, err := ecdsa.RecoverCompact(append([]byte{sig[64]}, sig[:64]...), id[:])
	if err != nil || !pub.IsEqual(key.PubKey()) {
		t.Errorf("signature does not recover the key: %v", err)
	}
}

func equalRaw(a, b rawTx) bool {
	return bytes.Equal(a.RefBlockBytes, b.RefBlockBytes) && bytes.Equal(a.RefBlockHash, b.RefBlockHash) &&
		a.Expiration == b.Expiration && a.Timestamp == b.Timestamp && a.FeeLimit == b.FeeLimit &&
		a.Type == b.Type && a.TypeURL == b.TypeURL && bytes.Equal(a.Value, b.Value) && a.PermissionID == b.PermissionID
}

// TestDocumentedTrigger checks the documentation's real
// triggersmartcontract capture: its raw_data_hex is a transfer(address,
// uint256) call with the documented parameter.
func TestDocumentedTrigger(t *testing.T) {
	var tr triggerJSON
	load(t, "triggersmartcontract.json", &tr)
	if !tr.Result.Result {
		t.Fatal("result false")
	}
	_, r, err := built("/wallet/triggersmartcontract", tr.Transaction, typeTrigger, typeURLTrigger)
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeTrigger(r.Value)
	if err != nil {
		t.Fatal(err)
	}
	const param = "000000000000000000000000088a2bfcb1c7271029fd69a66859d555608958840000000000000000000000000000000000000000000000000000000000000064"
	contract, _ := parseHexAccount("41eca9bc828a3005b9a3b909f2cc5c2a54794de05f")
	if hex.EncodeToString(c.Data) != transferSelector+param || !bytes.Equal(c.Contract, contract[:]) || r.FeeLimit != 100_000_000 || c.CallValue != 0 {
		t.Errorf("call %+v, fee limit %d", c, r.FeeLimit)
	}
}

// TestBuiltRefusesWhatWasNotAsked: Sign signs nothing whose id or content
// the node got wrong.
func TestBuiltRefusesWhatWasNotAsked(t *testing.T) {
	var good builtJSON
	load(t, "createtransaction.json", &good)
	raw, _ := hex.DecodeString(good.RawDataHex)
	rehash := func(raw []byte) builtJSON {
		id := sha256.Sum256(raw)
		return builtJSON{TxID: hex.EncodeToString(id[:]), RawDataHex: hex.EncodeToString(raw)}
	}
	withField := func(extra ...byte) []byte { return append(bytes.Clone(raw), extra...) }
	for name, bt := range map[string]builtJSON{
		"txID not the hash":   {TxID: strings.Repeat("00", 32), RawDataHex: good.RawDataHex},
		"not hex":             {TxID: good.TxID, RawDataHex: "zz"},
		"empty":               {TxID: good.TxID},
		"memo added":          rehash(withField(0x52, 0x02, 'h', 'i')), // field 10
		"scripts added":       rehash(withField(0x62, 0x01, 0x00)),     // field 12
		"unknown field":       rehash(withField(0xf8, 0x01, 0x01)),     // field 31
		"second contract":     rehash(append(bytes.Clone(raw), raw[bytes.Index(raw, []byte{0x5a}):len(raw)-7]...)),
		"truncated":           rehash(raw[:len(raw)-3]),
		"wrong type for type": rehash(bytes.Replace(raw, []byte{0x5a, 0x67, 0x08, 0x01}, []byte{0x5a, 0x67, 0x08, 0x02}, 1)),
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := built("/wallet/createtransaction", bt, typeTransfer, typeURLTransfer); !errors.Is(err, chains.ErrNode) {
				t.Errorf("built: %v, want an error wrapping chains.ErrNode", err)
			}
		})
	}
}

// TestDocumentedMisc decodes the remaining examples.
func TestDocumentedMisc(t *testing.T) {
	var acc accountJSON
	load(t, "getaccount.json", &acc)
	if acc.Balance != 1793227200 {
		t.Errorf("getaccount balance %d", acc.Balance)
	}
	var p chainParamsJSON
	load(t, "getchainparameters.json", &p)
	if v, ok := p.param("getEnergyFee"); !ok || v != 140 {
		t.Errorf("getEnergyFee %d, %v", v, ok)
	}
	if v, ok := p.param("getTransactionFee"); !ok || v != 10 {
		t.Errorf("getTransactionFee %d, %v", v, ok)
	}
	var ni nodeInfoJSON
	load(t, "getnodeinfo.json", &ni)
	if ni.ConfigNodeInfo.CodeVersion != "4.8.1" {
		t.Errorf("codeVersion %q", ni.ConfigNodeInfo.CodeVersion)
	}
	for name, want := range map[string]bool{"broadcast-success.json": true, "broadcasthex-success.json": true, "broadcast-dup.json": false, "broadcast-sigerror.json": false} {
		var r broadcastJSON
		load(t, name, &r)
		if r.Result != want || r.TxID == "" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	data, _ := os.ReadFile(filepath.Join("testdata", "error.json"))
	if err := nodeError(data); err == nil || !strings.Contains(err.Error(), "balance is not sufficient") {
		t.Errorf("error.json: %v", err)
	}
	if err := nodeError([]byte(`{"blockID": "Error"}`)); err != nil {
		t.Errorf("a block mentioning Error: %v", err)
	}
}
