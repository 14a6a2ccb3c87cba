package httpapi

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// JSON shapes of the full node's HTTP API (java-tron's JsonFormat with
// visible=false: addresses as 41... hex, bytes as hex, int64 as JSON
// numbers, fields at their zero value left out, so the genesis block has
// no number). Only the fields payhook reads are declared; the rest are
// ignored.

// blockJSON is protocol.Block as /wallet/getnowblock, getblockbynum and
// getblockbylimitnext print it.
type blockJSON struct {
	BlockID     string `json:"blockID"`
	BlockHeader struct {
		RawData struct {
			Number     int64  `json:"number"`
			ParentHash string `json:"parentHash"`
			Timestamp  int64  `json:"timestamp"`
		} `json:"raw_data"`
	} `json:"block_header"`
	Transactions []txJSON `json:"transactions"`
}

// txJSON is protocol.Transaction with the API's extra txID and
// raw_data_hex.
type txJSON struct {
	TxID string `json:"txID"`
	Ret  []struct {
		ContractRet string `json:"contractRet"`
	} `json:"ret"`
	RawData struct {
		Contract []struct {
			Type      string `json:"type"`
			Parameter struct {
				Value   json.RawMessage `json:"value"`
				TypeURL string          `json:"type_url"`
			} `json:"parameter"`
		} `json:"contract"`
		Expiration int64 `json:"expiration"`
		Timestamp  int64 `json:"timestamp"`
		FeeLimit   int64 `json:"fee_limit"`
	} `json:"raw_data"`
	RawDataHex string `json:"raw_data_hex"`
}

// transferValueJSON is protocol.TransferContract.
type transferValueJSON struct {
	Owner  string `json:"owner_address"`
	To     string `json:"to_address"`
	Amount int64  `json:"amount"`
}

// triggerValueJSON is protocol.TriggerSmartContract.
type triggerValueJSON struct {
	Owner    string `json:"owner_address"`
	Contract string `json:"contract_address"`
	Data     string `json:"data"`
}

// infoJSON is protocol.TransactionInfo (gettransactioninfobyid,
// gettransactioninfobyblocknum).
type infoJSON struct {
	ID          string `json:"id"`
	BlockNumber int64  `json:"blockNumber"`
	Receipt     struct {
		Result string `json:"result"`
	} `json:"receipt"`
	Log []struct {
		Address string   `json:"address"`
		Topics  []string `json:"topics"`
		Data    string   `json:"data"`
	} `json:"log"`
	// Result is "FAILED" for a failed transaction and absent otherwise.
	Result string `json:"result"`
}

// block is a parsed block.
type block struct {
	Height int64
	ID     string
	Parent string
	Txs    []blockTx
}

// blockTx is a transaction of a block, as far as payhook cares.
type blockTx struct {
	ID  string
	Ret string // ret[0].contractRet: SUCCESS, REVERT, OUT_OF_ENERGY...
	// Type is the contract's type: TransferContract, TriggerSmartContract...
	Type string
	// Owner, To and Amount are set for a TransferContract.
	Owner  account
	To     account
	Amount int64
	// Contract and Data are the called contract and the call data (hex)
	// of a TriggerSmartContract.
	Contract account
	Data     string
}

// parseBlock checks and converts a block. found is false for the node's
// {} (no such block).
func parseBlock(bj blockJSON) (b block, found bool, err error) {
	if bj.BlockID == "" {
		return block{}, false, nil
	}
	h := bj.BlockHeader.RawData
	switch {
	case !isHex64(bj.BlockID):
		return block{}, true, fmt.Errorf("block id %q is not 32 bytes of hex", clip(bj.BlockID))
	case h.Number < 0:
		return block{}, true, fmt.Errorf("block %s has number %d", bj.BlockID, h.Number)
	case !strings.EqualFold(bj.BlockID[:16], fmt.Sprintf("%016x", h.Number)):
		// A TRON block id starts with its number (BlockCapsule.BlockId).
		return block{}, true, fmt.Errorf("block id %s does not start with its number %d", bj.BlockID, h.Number)
	case h.Number > 0 && !isHex64(h.ParentHash):
		return block{}, true, fmt.Errorf("block %d: parent hash %q is not 32 bytes of hex", h.Number, clip(h.ParentHash))
	}
	b = block{Height: h.Number, ID: normHash(bj.BlockID), Parent: normHash(h.ParentHash)}
	for i, tj := range bj.Transactions {
		t, err := parseBlockTx(tj)
		if err != nil {
			return block{}, true, fmt.Errorf("block %d transaction %d: %w", h.Number, i, err)
		}
		b.Txs = append(b.Txs, t)
	}
	return b, true, nil
}

func parseBlockTx(tj txJSON) (blockTx, error) {
	if !isHex64(tj.TxID) {
		return blockTx{}, fmt.Errorf("txID %q is not 32 bytes of hex", clip(tj.TxID))
	}
	t := blockTx{ID: normHash(tj.TxID)}
	if len(tj.Ret) > 0 {
		t.Ret = tj.Ret[0].ContractRet
	}
	if len(tj.RawData.Contract) == 0 {
		return t, nil
	}
	c := tj.RawData.Contract[0]
	t.Type = c.Type
	switch c.Type {
	case "TransferContract":
		var v transferValueJSON
		if err := json.Unmarshal(c.Parameter.Value, &v); err != nil {
			return blockTx{}, fmt.Errorf("transfer %s: %w", t.ID, err)
		}
		to, err := parseHexAccount(v.To)
		if err != nil {
			return blockTx{}, fmt.Errorf("transfer %s: to: %w", t.ID, err)
		}
		if v.Amount <= 0 {
			return blockTx{}, fmt.Errorf("transfer %s: amount %d", t.ID, v.Amount)
		}
		t.To, t.Amount = to, v.Amount
		if owner, err := parseHexAccount(v.Owner); err == nil {
			t.Owner = owner
		}
	case "TriggerSmartContract":
		var v triggerValueJSON
		if err := json.Unmarshal(c.Parameter.Value, &v); err != nil {
			return blockTx{}, fmt.Errorf("contract call %s: %w", t.ID, err)
		}
		ca, err := parseHexAccount(v.Contract)
		if err != nil {
			return blockTx{}, fmt.Errorf("contract call %s: contract: %w", t.ID, err)
		}
		t.Contract, t.Data = ca, v.Data
	}
	return t, nil
}

// tokenTransfer is one Transfer log of a token.
type tokenTransfer struct {
	Index int64 // position in the transaction's log list
	To    account
	Value *big.Int
}

// succeeded reports a successful execution: no FAILED result and, for a
// contract call, a SUCCESS receipt (a TRX transfer's receipt has none).
func (in infoJSON) succeeded(contractCall bool) bool {
	if in.Result == "FAILED" {
		return false
	}
	return !contractCall || in.Receipt.Result == "SUCCESS"
}

// tokenTransfers returns the Transfer logs of contract in a successful
// transaction (java-tron's documentation: read logs only of a successful
// one). A Transfer log of the contract that does not decode is an error.
func (in infoJSON) tokenTransfers(contract account) ([]tokenTransfer, error) {
	if !in.succeeded(true) {
		return nil, nil
	}
	var out []tokenTransfer
	for i, l := range in.Log {
		if !sameContract(l.Address, contract) || len(l.Topics) == 0 || !strings.EqualFold(l.Topics[0], transferTopic) {
			continue
		}
		if len(l.Topics) != 3 {
			return nil, fmt.Errorf("transaction %s log %d: Transfer with %d topics, want 3", clip(in.ID), i, len(l.Topics))
		}
		tw, err := hex.DecodeString(l.Topics[2])
		if err != nil {
			return nil, fmt.Errorf("transaction %s log %d: recipient topic is not hex", clip(in.ID), i)
		}
		to, ok := fromWord(tw)
		if !ok {
			return nil, fmt.Errorf("transaction %s log %d: recipient topic is not an address", clip(in.ID), i)
		}
		data, err := hex.DecodeString(l.Data)
		if err != nil || len(data) != 32 {
			return nil, fmt.Errorf("transaction %s log %d: value is not one 32-byte word", clip(in.ID), i)
		}
		out = append(out, tokenTransfer{Index: int64(i), To: to, Value: new(big.Int).SetBytes(data)})
	}
	return out, nil
}

// sameContract compares a log's address (20 bytes of hex; 41-prefixed or
// base58 from nodes that print it so) with contract.
func sameContract(addr string, contract account) bool {
	switch len(addr) {
	case 40:
		return strings.EqualFold(addr, contract.evmHex())
	case 42:
		return strings.EqualFold(addr, contract.Hex())
	}
	return addr == contract.String()
}

// broadcastJSON is the answer of /wallet/broadcasthex.
type broadcastJSON struct {
	Result  bool   `json:"result"`
	Code    string `json:"code"`
	Message string `json:"message"`
	TxID    string `json:"txid"`
}

// text returns the message, decoded when the node sent it as hex.
func (r broadcastJSON) text() string {
	if b, err := hex.DecodeString(r.Message); err == nil && len(b) > 0 {
		return clip(string(b))
	}
	return clip(r.Message)
}

// builtJSON is the unsigned transaction of createtransaction (and of
// triggersmartcontract, inside "transaction").
type builtJSON struct {
	TxID       string `json:"txID"`
	RawDataHex string `json:"raw_data_hex"`
}

// triggerJSON is api.TransactionExtention from triggersmartcontract.
type triggerJSON struct {
	Result struct {
		Result  bool   `json:"result"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"result"`
	Transaction builtJSON `json:"transaction"`
}

// accountJSON is protocol.Account from getaccount; {} for an account
// that does not exist.
type accountJSON struct {
	Address string `json:"address"`
	Balance int64  `json:"balance"`
}

// chainParamsJSON is /wallet/getchainparameters.
type chainParamsJSON struct {
	ChainParameter []struct {
		Key   string `json:"key"`
		Value int64  `json:"value"`
	} `json:"chainParameter"`
}

// param returns the parameter key, false when absent.
func (p chainParamsJSON) param(key string) (int64, bool) {
	for _, kv := range p.ChainParameter {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return 0, false
}

// nodeInfoJSON is the part of /wallet/getnodeinfo that Probe reads.
type nodeInfoJSON struct {
	Block          string `json:"block"`
	SolidityBlock  string `json:"solidityBlock"`
	ConfigNodeInfo struct {
		CodeVersion string `json:"codeVersion"`
	} `json:"configNodeInfo"`
}
