package trontest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Fault makes the node misbehave on a path, for failure tests.
type Fault int

// Faults.
const (
	// FaultNone serves normally.
	FaultNone Fault = iota
	// FaultStatus answers HTTP 500.
	FaultStatus
	// FaultGarbage answers 200 with bytes that are not JSON.
	FaultGarbage
	// FaultWrongShape answers 200 with JSON of another shape (strings
	// where numbers belong).
	FaultWrongShape
	// FaultError answers java-tron's {"Error": "..."}.
	FaultError
	// FaultHang never answers: the request waits until the client gives
	// up or the node closes.
	FaultHang
)

// SetFault makes path (e.g. "/wallet/getnowblock"; "" for every path)
// misbehave; FaultNone restores it.
func (n *Node) SetFault(path string, f Fault) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if f == FaultNone {
		delete(n.faults, path)
		return
	}
	n.faults[path] = f
}

// request is a request's parameters, from a POST body or the query.
type request map[string]json.RawMessage

func (q request) int(key string) (int64, bool) {
	var v int64
	if raw, ok := q[key]; ok && json.Unmarshal(raw, &v) == nil {
		return v, true
	}
	var s string
	if raw, ok := q[key]; ok && json.Unmarshal(raw, &s) == nil {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v, true
		}
	}
	return 0, false
}

func (q request) str(key string) string {
	var s string
	if raw, ok := q[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

type handlerFunc func(q request) (any, error)

// javaError is an exception java-tron turns into {"Error": "..."}.
type javaError struct{ class, msg string }

func (e javaError) Error() string { return "class " + e.class + " : " + e.msg }

func validateErr(msg string) error {
	return javaError{"org.tron.core.exception.ContractValidateException", msg}
}

func (n *Node) handler() http.Handler {
	mux := http.NewServeMux()
	routes := map[string]handlerFunc{
		"/wallet/getnowblock":                    n.getNowBlock,
		"/walletsolidity/getnowblock":            n.getSolidNowBlock,
		"/wallet/getblockbynum":                  n.getBlockByNum(false),
		"/walletsolidity/getblockbynum":          n.getBlockByNum(true),
		"/wallet/getblockbylimitnext":            n.getBlockByLimitNext,
		"/wallet/gettransactionbyid":             n.getTransactionByID,
		"/wallet/gettransactionfrompending":      n.getTransactionFromPending,
		"/wallet/gettransactionlistfrompending":  n.getTransactionListFromPending,
		"/wallet/gettransactioninfobyid":         n.getTransactionInfoByID(false),
		"/walletsolidity/gettransactioninfobyid": n.getTransactionInfoByID(true),
		"/wallet/gettransactioninfobyblocknum":   n.getTransactionInfoByBlockNum,
		"/wallet/getaccount":                     n.getAccount,
		"/wallet/getchainparameters":             n.getChainParameters,
		"/wallet/getnodeinfo":                    n.getNodeInfo,
		"/wallet/createtransaction":              n.createTransaction,
		"/wallet/triggersmartcontract":           n.triggerSmartContract,
		"/wallet/broadcasthex":                   n.broadcastHex,
	}
	for path, h := range routes {
		mux.HandleFunc(path, n.serve(path, h))
	}
	return mux
}

// serve wraps a handler: faults, parameters, JSON, java-tron's errors.
func (n *Node) serve(path string, h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		f, ok := n.faults[path]
		if !ok {
			f = n.faults[""]
		}
		n.mu.Unlock()
		switch f {
		case FaultStatus:
			http.Error(w, "Internal Server Error", http.StatusInternalServerError)
			return
		case FaultGarbage:
			_, _ = io.WriteString(w, "<html>502 Bad Gateway</html>\x00\xff{")
			return
		case FaultWrongShape:
			_, _ = io.WriteString(w, `{"blockID": 7, "block_header": "x", "block": "y", "id": [], "blockNumber": "z", "txID": {}, "raw_data_hex": 1, "result": "maybe", "chainParameter": 3, "balance": "lots"}`)
			return
		case FaultError:
			writeJSON(w, map[string]string{"Error": "class java.lang.NullPointerException : null"})
			return
		case FaultHang:
			select {
			case <-r.Context().Done():
			case <-n.quit:
			}
			return
		}
		q := request{}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			if len(strings.TrimSpace(string(body))) > 0 && json.Unmarshal(body, &q) != nil {
				writeJSON(w, map[string]string{"Error": "class org.tron.json.JSONException : invalid JSON"})
				return
			}
		} else {
			for k, v := range r.URL.Query() {
				raw, _ := json.Marshal(v[0])
				q[k] = raw
			}
		}
		if v, ok := q["visible"]; ok && string(v) == "true" {
			writeJSON(w, map[string]string{"Error": "trontest serves visible=false (hex addresses) only"})
			return
		}
		out, err := h(q)
		if err != nil {
			writeJSON(w, map[string]string{"Error": err.Error()})
			return
		}
		writeJSON(w, out)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// JSON shapes, as java-tron's JsonFormat prints them with visible=false:
// fields in protobuf order, zero values left out, bytes in hex.

type jBlock struct {
	BlockID      string  `json:"blockID"`
	BlockHeader  jHeader `json:"block_header"`
	Transactions []jTx   `json:"transactions,omitempty"`
}

type jHeader struct {
	RawData          jHeaderRaw `json:"raw_data"`
	WitnessSignature string     `json:"witness_signature,omitempty"`
}

type jHeaderRaw struct {
	Number         int64  `json:"number,omitempty"`
	TxTrieRoot     string `json:"txTrieRoot,omitempty"`
	WitnessAddress string `json:"witness_address,omitempty"`
	ParentHash     string `json:"parentHash"`
	Version        int    `json:"version,omitempty"`
	Timestamp      int64  `json:"timestamp,omitempty"`
}

type jTx struct {
	Visible    *bool    `json:"visible,omitempty"`
	Ret        []jRet   `json:"ret,omitempty"`
	Signature  []string `json:"signature,omitempty"`
	TxID       string   `json:"txID"`
	RawData    jRaw     `json:"raw_data"`
	RawDataHex string   `json:"raw_data_hex"`
}

type jRet struct {
	ContractRet string `json:"contractRet"`
}

type jRaw struct {
	Contract      []jContract `json:"contract"`
	RefBlockBytes string      `json:"ref_block_bytes"`
	RefBlockHash  string      `json:"ref_block_hash"`
	Expiration    int64       `json:"expiration"`
	FeeLimit      int64       `json:"fee_limit,omitempty"`
	Timestamp     int64       `json:"timestamp"`
}

type jContract struct {
	Parameter jParam `json:"parameter"`
	Type      string `json:"type"`
}

type jParam struct {
	Value   any    `json:"value"`
	TypeURL string `json:"type_url"`
}

type jTransfer struct {
	Amount int64  `json:"amount"`
	Owner  string `json:"owner_address"`
	To     string `json:"to_address"`
}

type jTrigger struct {
	Data      string `json:"data"`
	Owner     string `json:"owner_address"`
	Contract  string `json:"contract_address"`
	CallValue int64  `json:"call_value,omitempty"`
}

type jInfo struct {
	ID              string   `json:"id"`
	Fee             int64    `json:"fee,omitempty"`
	BlockNumber     int64    `json:"blockNumber"`
	BlockTimeStamp  int64    `json:"blockTimeStamp"`
	ContractResult  []string `json:"contractResult"`
	ContractAddress string   `json:"contract_address,omitempty"`
	Receipt         jReceipt `json:"receipt"`
	Log             []jLog   `json:"log,omitempty"`
	Result          string   `json:"result,omitempty"`
	ResMessage      string   `json:"resMessage,omitempty"`
}

type jReceipt struct {
	EnergyFee        int64  `json:"energy_fee,omitempty"`
	EnergyUsageTotal int64  `json:"energy_usage_total,omitempty"`
	NetFee           int64  `json:"net_fee,omitempty"`
	Result           string `json:"result,omitempty"`
}

type jLog struct {
	Address string   `json:"address"`
	Topics  []string `json:"topics"`
	Data    string   `json:"data"`
}

func (n *Node) blockJSON(b *block) jBlock {
	roots := sha([]byte(b.id + "txTrieRoot"))
	sig := append(sha([]byte(b.id+"witness r")), sha([]byte(b.id+"witness s"))...)
	j := jBlock{BlockID: b.id, BlockHeader: jHeader{
		RawData: jHeaderRaw{Number: b.number, TxTrieRoot: hex.EncodeToString(roots), ParentHash: b.parent,
			WitnessAddress: "41b2f713d57dbcec679d93a8849fa0cd0e4db594ba", Version: 34, Timestamp: b.time},
	}}
	if b.number > 0 {
		j.BlockHeader.WitnessSignature = hex.EncodeToString(append(sig, 0))
	} else {
		// The genesis block prints no number, timestamp or signature.
		j.BlockHeader.RawData.Version, j.BlockHeader.RawData.WitnessAddress = 0, ""
	}
	for _, t := range b.txs {
		j.Transactions = append(j.Transactions, txJSON(t, true))
	}
	return j
}

func txJSON(t *tx, withRet bool) jTx {
	r := t.r
	j := jTx{TxID: t.id, RawDataHex: hex.EncodeToString(t.raw), Signature: []string{hex.EncodeToString(t.sig)},
		RawData: jRaw{RefBlockBytes: hex.EncodeToString(r.refBytes), RefBlockHash: hex.EncodeToString(r.refHash),
			Expiration: r.expiration, FeeLimit: r.feeLimit, Timestamp: r.timestamp}}
	if withRet {
		j.Ret = []jRet{{t.res.ret}}
	}
	if r.typ == typeTransfer {
		j.RawData.Contract = []jContract{{Type: "TransferContract", Parameter: jParam{TypeURL: typeURLTransfer,
			Value: jTransfer{Amount: r.amount, Owner: r.owner.hex(), To: r.to.hex()}}}}
	} else {
		j.RawData.Contract = []jContract{{Type: "TriggerSmartContract", Parameter: jParam{TypeURL: typeURLTrigger,
			Value: jTrigger{Data: hex.EncodeToString(r.data), Owner: r.owner.hex(), Contract: r.contract.hex(), CallValue: r.callValue}}}}
	}
	return j
}

func infoJSON(t *tx) jInfo {
	res := t.res
	j := jInfo{ID: t.id, Fee: res.netFee + res.energyFee, BlockNumber: t.block.number, BlockTimeStamp: t.block.time,
		ContractResult: []string{""},
		Receipt:        jReceipt{EnergyFee: res.energyFee, EnergyUsageTotal: res.energyUsage, NetFee: res.netFee, Result: res.receipt}}
	if t.r.typ == typeTrigger {
		j.ContractAddress = t.r.contract.hex()
	}
	if res.failed {
		j.Result = "FAILED"
		j.ResMessage = hex.EncodeToString([]byte(res.message))
	}
	for _, l := range res.logs {
		j.Log = append(j.Log, jLog{Address: l.contract.evmHex(), Topics: []string{transferTopic,
			hex.EncodeToString(append(make([]byte, 12), l.from[1:]...)), hex.EncodeToString(append(make([]byte, 12), l.to[1:]...))},
			Data: hex.EncodeToString(l.value.FillBytes(make([]byte, 32)))})
	}
	return j
}

// empty is java-tron's answer for "not found".
var empty = struct{}{}

func (n *Node) getNowBlock(request) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.blockJSON(n.head()), nil
}

func (n *Node) getSolidNowBlock(request) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.blockJSON(n.solid()), nil
}

func (n *Node) getBlockByNum(solidity bool) handlerFunc {
	return func(q request) (any, error) {
		num, _ := q.int("num")
		n.mu.Lock()
		defer n.mu.Unlock()
		top := n.head().number
		if solidity {
			top = n.solid().number
		}
		if num < 0 || num > top {
			return empty, nil
		}
		return n.blockJSON(n.blocks[num]), nil
	}
}

func (n *Node) getBlockByLimitNext(q request) (any, error) {
	start, ok1 := q.int("startNum")
	end, ok2 := q.int("endNum")
	if !ok1 || !ok2 || start < 0 || end <= start || end-start > 100 {
		return empty, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []jBlock
	for num := start; num < end && num <= n.head().number; num++ {
		out = append(out, n.blockJSON(n.blocks[num]))
	}
	if len(out) == 0 {
		return empty, nil
	}
	return map[string]any{"block": out}, nil
}

// lookup returns the transaction of q's "value" in the current chain; n.mu
// must be held.
func (n *Node) lookup(q request) (*tx, bool) {
	t, ok := n.byID[strings.ToLower(q.str("value"))]
	if !ok || t.gone {
		return nil, false
	}
	return t, true
}

func (n *Node) getTransactionByID(q request) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t, ok := n.lookup(q); ok && t.block != nil {
		return txJSON(t, true), nil
	}
	return empty, nil
}

func (n *Node) getTransactionFromPending(q request) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t, ok := n.lookup(q); ok && t.block == nil {
		return txJSON(t, false), nil
	}
	return empty, nil
}

// getTransactionListFromPending lists the pending pool's transaction ids,
// as java-tron does ({"txId": [...]}).
func (n *Node) getTransactionListFromPending(request) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := []string{}
	for _, t := range n.pending {
		ids = append(ids, t.id)
	}
	return map[string][]string{"txId": ids}, nil
}

func (n *Node) getTransactionInfoByID(solidity bool) handlerFunc {
	return func(q request) (any, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		t, ok := n.lookup(q)
		if !ok || t.block == nil || (solidity && t.block.number > n.solid().number) {
			return empty, nil
		}
		return infoJSON(t), nil
	}
}

func (n *Node) getTransactionInfoByBlockNum(q request) (any, error) {
	num, _ := q.int("num")
	if num <= 0 {
		return empty, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	out := []jInfo{}
	if num <= n.head().number {
		for _, t := range n.blocks[num].txs {
			out = append(out, infoJSON(t))
		}
	}
	return out, nil
}

func (n *Node) getAccount(q request) (any, error) {
	a, err := parseHex(q.str("address"))
	if err != nil {
		return nil, javaError{"org.tron.core.services.http.JsonFormat$ParseException", "INVALID hex String"}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.exists[a] {
		return empty, nil
	}
	type jAccount struct {
		Address    string `json:"address"`
		Balance    int64  `json:"balance,omitempty"`
		CreateTime int64  `json:"create_time"`
	}
	return jAccount{Address: a.hex(), Balance: n.trx[a], CreateTime: n.opts.GenesisTime.UnixMilli()}, nil
}

func (n *Node) getChainParameters(request) (any, error) {
	type kv struct {
		Key   string `json:"key"`
		Value int64  `json:"value,omitempty"`
	}
	return map[string][]kv{"chainParameter": {
		{"getMaintenanceTimeInterval", 21600000},
		{"getTransactionFee", n.opts.TransactionFee},
		{"getEnergyFee", n.opts.EnergyFee},
		{"getAllowCreationOfContracts", 1},
		{"getAllowMultiSign", 1},
	}}, nil
}

func (n *Node) getNodeInfo(request) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h, s := n.head(), n.solid()
	return map[string]any{
		"activeConnectCount":  0,
		"beginSyncNum":        h.number,
		"block":               fmt.Sprintf("Num:%d,ID:%s", h.number, h.id),
		"solidityBlock":       fmt.Sprintf("Num:%d,ID:%s", s.number, s.id),
		"currentConnectCount": 0,
		"passiveConnectCount": 0,
		"totalFlow":           0,
		"configNodeInfo": map[string]any{
			"codeVersion": n.opts.Version, "versionNum": "18636", "p2pVersion": "201910292",
			"listenPort": 18888, "discoverEnable": false, "maxConnectCount": 30, "supportConstant": true, "dbVersion": 2,
		},
		"machineInfo": map[string]any{"cpuCount": 1, "javaVersion": "trontest", "osName": "go"},
	}, nil
}

// builtTx is an unsigned transaction as the build endpoints print it.
func (n *Node) builtTx(r rawTx) jTx {
	raw := r.encode()
	visible := false
	t := &tx{id: txID(raw), raw: raw, r: r}
	j := txJSON(t, false)
	j.Signature, j.Visible = nil, &visible
	return j
}

func (n *Node) createTransaction(q request) (any, error) {
	owner, err := parseHex(q.str("owner_address"))
	if err != nil {
		return nil, validateErr("Invalid ownerAddress!")
	}
	to, err := parseHex(q.str("to_address"))
	if err != nil {
		return nil, validateErr("Invalid toAddress!")
	}
	amount, _ := q.int("amount")
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case owner == to:
		return nil, validateErr("Cannot transfer TRX to yourself.")
	case !n.exists[owner]:
		return nil, validateErr("Validate TransferContract error, no OwnerAccount.")
	case amount <= 0:
		return nil, validateErr("Amount must be greater than 0.")
	case n.trx[owner] < amount:
		return nil, validateErr("Validate TransferContract error, balance is not sufficient.")
	}
	return n.builtTx(n.build(rawTx{typ: typeTransfer, owner: owner, to: to, amount: amount})), nil
}

func (n *Node) triggerSmartContract(q request) (any, error) {
	type jReturn struct {
		Result  bool   `json:"result,omitempty"`
		Code    string `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}
	fail := func(code, msg string) (any, error) {
		return map[string]any{"result": jReturn{Code: code, Message: hex.EncodeToString([]byte(msg))}}, nil
	}
	owner, err1 := parseHex(q.str("owner_address"))
	contract, err2 := parseHex(q.str("contract_address"))
	if err1 != nil || err2 != nil {
		return fail("OTHER_ERROR", "class java.security.InvalidParameterException : owner_address or contract_address is invalid")
	}
	var data []byte
	if d := q.str("data"); d != "" {
		data, err1 = hex.DecodeString(d)
	} else {
		var param []byte
		param, err1 = hex.DecodeString(q.str("parameter"))
		data = append(selector(q.str("function_selector")), param...)
	}
	if err1 != nil {
		return fail("OTHER_ERROR", "class org.bouncycastle.util.encoders.DecoderException : invalid hex")
	}
	feeLimit, _ := q.int("fee_limit")
	callValue, _ := q.int("call_value")
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.contracts[contract] {
		return fail("CONTRACT_VALIDATE_ERROR", "No contract or not a valid smart contract")
	}
	r := n.build(rawTx{typ: typeTrigger, owner: owner, contract: contract, data: data, feeLimit: feeLimit, callValue: callValue})
	return map[string]any{"result": jReturn{Result: true}, "transaction": n.builtTx(r)}, nil
}

func (n *Node) broadcastHex(q request) (any, error) {
	b, err := hex.DecodeString(q.str("transaction"))
	if err != nil {
		return nil, javaError{"org.bouncycastle.util.encoders.DecoderException", "exception decoding Hex string"}
	}
	raw, r, sigs, err := decodeTransaction(b)
	if err != nil && err != errNoContract {
		return nil, javaError{"com.google.protobuf.InvalidProtocolBufferException", err.Error()}
	}
	id := txID(raw)
	answer := func(code, msg string) (any, error) {
		return map[string]any{"result": code == "SUCCESS", "code": code, "message": msg, "transaction": "{}", "txid": id}, nil
	}
	if err == errNoContract {
		return answer("CONTRACT_VALIDATE_ERROR", "Contract validate error : No contract!")
	}
	t := &tx{id: id, raw: raw, r: r}
	if len(sigs) == 1 {
		t.sig = sigs[0]
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.submit(t); err != nil {
		if e, ok := err.(*errInvalid); ok {
			return answer(e.code, e.msg)
		}
		return answer("OTHER_ERROR", err.Error())
	}
	printed, _ := json.Marshal(txJSON(t, false))
	return map[string]any{"result": true, "code": "SUCCESS", "message": "", "transaction": string(printed), "txid": id}, nil
}
