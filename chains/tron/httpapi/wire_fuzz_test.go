package httpapi

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzNodeAnswer feeds one body to the parsers of what a TRON full node
// answers: a block (getnowblock, getblockbynum) and a block list
// (getblockbylimitnext) through parseBlock, transaction infos
// (gettransactioninfobyblocknum) through tokenTransfers, and, as protobuf,
// DecodeRawData. None may panic, and what they accept keeps the invariants
// the code states: a block found has a 32-byte id starting with its
// non-negative number and (past genesis) a 32-byte parent; a transaction a
// 32-byte id; a TRX transfer a positive amount to a 0x41 account; a token
// transfer a 0x41 recipient and a value of one 32-byte word; raw data one
// of the two contracts with base58check accounts.
func FuzzNodeAnswer(f *testing.F) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		// The raw_data_hex a node built, as DecodeRawData reads it.
		var built struct {
			RawDataHex  string `json:"raw_data_hex"`
			Transaction struct {
				RawDataHex string `json:"raw_data_hex"`
			} `json:"transaction"`
		}
		if json.Unmarshal(b, &built) == nil {
			for _, h := range []string{built.RawDataHex, built.Transaction.RawDataHex} {
				if raw, err := hex.DecodeString(h); err == nil && len(raw) > 0 {
					f.Add(raw)
				}
			}
		}
	}
	usdt, err := parseBase58("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var bj blockJSON
		if json.Unmarshal(body, &bj) == nil {
			checkBlock(t, bj)
		}
		var list struct {
			Block []blockJSON `json:"block"`
		}
		if json.Unmarshal(body, &list) == nil {
			for _, bj := range list.Block {
				checkBlock(t, bj)
			}
		}
		var infos []infoJSON
		if json.Unmarshal(body, &infos) == nil {
			for _, in := range infos {
				checkInfo(t, in, usdt)
			}
		}
		var in infoJSON
		if json.Unmarshal(body, &in) == nil {
			checkInfo(t, in, usdt)
		}
		if rd, err := DecodeRawData(body); err == nil {
			switch rd.Type {
			case ContractTransfer:
				if _, err := parseBase58(rd.To); err != nil {
					t.Fatalf("DecodeRawData: transfer to %q: %v", rd.To, err)
				}
			case ContractTrigger:
				if _, err := parseBase58(rd.Contract); err != nil {
					t.Fatalf("DecodeRawData: call of %q: %v", rd.Contract, err)
				}
				if to, v, ok := rd.TokenTransfer(); ok {
					if _, err := parseBase58(to); err != nil || v.Sign() < 0 || v.BitLen() > 256 {
						t.Fatalf("TokenTransfer: %q, %s", to, v)
					}
				}
			default:
				t.Fatalf("DecodeRawData accepted contract type %d", rd.Type)
			}
			if _, err := parseBase58(rd.Owner); err != nil {
				t.Fatalf("DecodeRawData: owner %q: %v", rd.Owner, err)
			}
		}
	})
}

// checkBlock fails t when parseBlock accepts bj but breaks an invariant.
func checkBlock(t *testing.T, bj blockJSON) {
	t.Helper()
	b, found, err := parseBlock(bj)
	if err != nil || !found {
		return
	}
	if b.Height < 0 || !isHex64(b.ID) || b.ID != strings.ToLower(b.ID) || !strings.EqualFold(b.ID[:16], hex.EncodeToString([]byte{
		byte(b.Height >> 56), byte(b.Height >> 48), byte(b.Height >> 40), byte(b.Height >> 32),
		byte(b.Height >> 24), byte(b.Height >> 16), byte(b.Height >> 8), byte(b.Height),
	})) {
		t.Fatalf("parseBlock accepted block %d with id %q", b.Height, b.ID)
	}
	if b.Height > 0 && !isHex64(b.Parent) {
		t.Fatalf("parseBlock accepted block %d with parent %q", b.Height, b.Parent)
	}
	if len(b.Txs) != len(bj.Transactions) {
		t.Fatalf("parseBlock: %d transactions of %d", len(b.Txs), len(bj.Transactions))
	}
	for _, tx := range b.Txs {
		if !isHex64(tx.ID) {
			t.Fatalf("parseBlock accepted transaction id %q", tx.ID)
		}
		if tx.Type == "TransferContract" && (tx.Amount <= 0 || tx.To[0] != tronPrefix) {
			t.Fatalf("parseBlock accepted a transfer of %d to %x", tx.Amount, tx.To)
		}
		if tx.Type == "TriggerSmartContract" && tx.Contract[0] != tronPrefix {
			t.Fatalf("parseBlock accepted a call of %x", tx.Contract)
		}
	}
}

// checkInfo fails t when tokenTransfers accepts in but breaks an
// invariant.
func checkInfo(t *testing.T, in infoJSON, contract account) {
	t.Helper()
	ts, err := in.tokenTransfers(contract)
	if err != nil {
		return
	}
	if len(ts) > 0 && !in.succeeded(true) {
		t.Fatalf("tokenTransfers of a failed transaction: %+v", ts)
	}
	for _, tt := range ts {
		if tt.To[0] != tronPrefix || tt.Value == nil || tt.Value.Sign() < 0 || tt.Value.BitLen() > 256 ||
			tt.Index < 0 || tt.Index >= int64(len(in.Log)) || !sameContract(in.Log[tt.Index].Address, contract) {
			t.Fatalf("tokenTransfers accepted %+v", tt)
		}
	}
}
