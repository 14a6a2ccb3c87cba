package solanatest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/mr-tron/base58"
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func invalidParams(format string, args ...any) *rpcError {
	return &rpcError{Code: -32602, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

// config is a method's optional configuration object.
type config struct {
	Commitment                     string                        `json:"commitment"`
	Encoding                       string                        `json:"encoding"`
	TransactionDetails             string                        `json:"transactionDetails"`
	Rewards                        *bool                         `json:"rewards"`
	MaxSupportedTransactionVersion *int                          `json:"maxSupportedTransactionVersion"`
	Limit                          *int                          `json:"limit"`
	Before                         string                        `json:"before"`
	Until                          string                        `json:"until"`
	MinContextSlot                 *int64                        `json:"minContextSlot"`
	SearchTransactionHistory       bool                          `json:"searchTransactionHistory"`
	SkipPreflight                  bool                          `json:"skipPreflight"`
	PreflightCommitment            string                        `json:"preflightCommitment"`
	DataSlice                      *struct{ Offset, Length int } `json:"dataSlice"`
	Mint                           string                        `json:"mint"`
	ProgramID                      string                        `json:"programId"`
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	var req struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Method  string            `json:"method"`
		Params  []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{Code: -32700, Message: "Parse error"}})
		return
	}
	s.mu.Lock()
	fault := s.faults[req.Method]
	if f, ok := s.faults[""]; ok && fault == FaultNone {
		fault = f
	}
	s.mu.Unlock()
	switch fault {
	case FaultDown:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "<html><body>503 Service Temporarily Unavailable</body></html>")
		return
	case FaultGarbage:
		_, _ = io.WriteString(w, "\x00\x01garbage{\"jsonrpc\":")
		return
	case FaultWrongShape:
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": []any{map[string]any{"bogus": true}}})
		return
	case FaultNull:
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": nil})
		return
	case FaultError:
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID,
			"error": rpcError{Code: -32005, Message: "Node is behind by 42 slots", Data: map[string]any{"numSlotsBehind": 42}}})
		return
	case FaultSlow:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	result, rerr := s.dispatch(req.Method, req.Params)
	s.mu.Lock()
	s.calls[req.Method]++
	s.mu.Unlock()
	if rerr != nil {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": rerr})
		return
	}
	writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// args decodes the positional params: each of into is a pointer; the
// first `required` must be present. A trailing *config may be absent.
func args(params []json.RawMessage, required int, into ...any) *rpcError {
	if len(params) < required || len(params) > len(into) {
		return invalidParams("expected %d to %d parameters, got %d", required, len(into), len(params))
	}
	for i, p := range params {
		if string(p) == "null" {
			continue
		}
		if err := json.Unmarshal(p, into[i]); err != nil {
			return invalidParams("parameter %d: %v", i+1, err)
		}
	}
	return nil
}

func (s *Server) dispatch(method string, params []json.RawMessage) (any, *rpcError) {
	var cfg config
	switch method {
	case "getGenesisHash":
		return s.genesis, nil
	case "getVersion":
		return map[string]any{"solana-core": "2.2.0", "feature-set": 3294202862}, nil
	case "getHealth":
		return "ok", nil
	case "getFirstAvailableBlock":
		return 0, nil
	case "sendTransaction":
		return s.sendTransaction(params) // submit takes the lock
	case "getMinimumBalanceForRentExemption":
		var size int
		if e := args(params, 1, &size, &cfg); e != nil {
			return nil, e
		}
		return rentExempt(size), nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "getSlot":
		if e := args(params, 0, &cfg); e != nil {
			return nil, e
		}
		return s.at(cfg.Commitment).n, nil
	case "getBlockHeight":
		if e := args(params, 0, &cfg); e != nil {
			return nil, e
		}
		return s.at(cfg.Commitment).height, nil
	case "getBlocks":
		return s.getBlocks(params)
	case "getBlock":
		return s.getBlock(params)
	case "getSignaturesForAddress":
		return s.getSignaturesForAddress(params)
	case "getTransaction":
		return s.getTransaction(params)
	case "getSignatureStatuses":
		return s.getSignatureStatuses(params)
	case "getLatestBlockhash":
		if e := args(params, 0, &cfg); e != nil {
			return nil, e
		}
		b := s.at(cfg.Commitment)
		return s.wrap(cfg, map[string]any{"blockhash": b.hash, "lastValidBlockHeight": b.height + s.opts.MaxAge}), nil
	case "isBlockhashValid":
		var hash string
		if e := args(params, 1, &hash, &cfg); e != nil {
			return nil, e
		}
		b := s.at(cfg.Commitment)
		return s.wrap(cfg, s.validHash(hash, b.height, b.n)), nil
	case "getFeeForMessage":
		return s.getFeeForMessage(params)
	case "getBalance":
		var addr string
		if e := args(params, 1, &addr, &cfg); e != nil {
			return nil, e
		}
		k, err := solana.PublicKeyFromBase58(addr)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		var v uint64
		if a := s.at(cfg.Commitment).st[k]; a != nil {
			v = a.lamports
		}
		return s.wrap(cfg, v), nil
	case "getAccountInfo":
		var addr string
		if e := args(params, 1, &addr, &cfg); e != nil {
			return nil, e
		}
		k, err := solana.PublicKeyFromBase58(addr)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		return s.wrap(cfg, s.accountJSON(s.at(cfg.Commitment).st[k], cfg)), nil
	case "getMultipleAccounts":
		var addrs []string
		if e := args(params, 1, &addrs, &cfg); e != nil {
			return nil, e
		}
		if len(addrs) > 100 {
			return nil, invalidParams("Too many inputs provided; max 100")
		}
		st := s.at(cfg.Commitment).st
		out := make([]any, len(addrs))
		for i, addr := range addrs {
			k, err := solana.PublicKeyFromBase58(addr)
			if err != nil {
				return nil, invalidParams("%v", err)
			}
			out[i] = s.accountJSON(st[k], cfg)
		}
		return s.wrap(cfg, out), nil
	case "getTokenAccountBalance":
		var addr string
		if e := args(params, 1, &addr, &cfg); e != nil {
			return nil, e
		}
		k, err := solana.PublicKeyFromBase58(addr)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		st := s.at(cfg.Commitment).st
		a := st[k]
		if a == nil || a.token == nil {
			return nil, &rpcError{Code: -32602, Message: "Invalid param: could not find account"}
		}
		dec := uint8(0)
		if m := st[a.token.mint]; m != nil && m.mint != nil {
			dec = m.mint.decimals
		}
		return s.wrap(cfg, newUIAmount(a.token.amount, dec)), nil
	case "getTokenAccountsByOwner":
		return s.getTokenAccountsByOwner(params)
	}
	return nil, &rpcError{Code: -32601, Message: "Method not found"}
}

// wrap returns v in the RpcResponse shape at cfg's commitment.
func (s *Server) wrap(cfg config, v any) map[string]any {
	return map[string]any{"context": map[string]any{"apiVersion": "2.2.0", "slot": s.at(cfg.Commitment).n}, "value": v}
}

func belowConfirmed(cfg config) *rpcError {
	if cfg.Commitment == "processed" {
		return invalidParams("Method does not support commitment below `confirmed`")
	}
	return nil
}

func (s *Server) getBlocks(params []json.RawMessage) (any, *rpcError) {
	var (
		start int64
		end   *int64
		cfg   config
	)
	// getBlocks(start, end?, config?): the second may be the config.
	if len(params) == 2 && len(params[1]) > 0 && params[1][0] == '{' {
		params = []json.RawMessage{params[0], json.RawMessage("null"), params[1]}
	}
	if e := args(params, 1, &start, &end, &cfg); e != nil {
		return nil, e
	}
	if e := belowConfirmed(cfg); e != nil {
		return nil, e
	}
	top := s.at(cfg.Commitment).n
	last := top
	if end != nil {
		last = min(*end, top)
		if *end-start > 500_000 {
			return nil, invalidParams("Slot range too large; max 500000")
		}
	}
	out := []int64{}
	for n := max(start, 0); n <= last; n++ {
		if !s.slots[n].skipped {
			out = append(out, n)
		}
	}
	return out, nil
}

func (s *Server) getBlock(params []json.RawMessage) (any, *rpcError) {
	var (
		n   int64
		cfg config
	)
	if e := args(params, 1, &n, &cfg); e != nil {
		return nil, e
	}
	if e := belowConfirmed(cfg); e != nil {
		return nil, e
	}
	if n < 0 || n > s.at(cfg.Commitment).n {
		return nil, &rpcError{Code: -32004, Message: fmt.Sprintf("Block not available for slot %d", n)}
	}
	b := s.slots[n]
	if b.skipped {
		return nil, &rpcError{Code: -32007, Message: fmt.Sprintf("Slot %d was skipped, or missing due to ledger jump to recent snapshot", n)}
	}
	out := map[string]any{
		"blockHeight": b.height, "blockTime": b.time, "blockhash": b.hash,
		"parentSlot": b.parent, "previousBlockhash": b.prevHash,
	}
	if cfg.Rewards == nil || *cfg.Rewards {
		out["rewards"] = []any{}
	}
	switch cfg.TransactionDetails {
	case "none":
	case "signatures":
		sigs := []string{}
		for _, r := range b.txs {
			sigs = append(sigs, r.sig)
		}
		out["signatures"] = sigs
	case "", "full":
		txs := []any{}
		for _, r := range b.txs {
			t, e := s.txJSON(r, cfg)
			if e != nil {
				return nil, e
			}
			delete(t, "slot")
			delete(t, "blockTime")
			txs = append(txs, t)
		}
		out["transactions"] = txs
	default:
		return nil, invalidParams("unknown transactionDetails %q", cfg.TransactionDetails)
	}
	return out, nil
}

// onChain returns the transactions of the chain up to slot top, newest
// first; s.mu held.
func (s *Server) onChain(top int64) []*txRecord {
	var out []*txRecord
	for n := top; n >= 1; n-- {
		txs := s.slots[n].txs
		for i := len(txs) - 1; i >= 0; i-- {
			out = append(out, txs[i])
		}
	}
	return out
}

func (s *Server) getSignaturesForAddress(params []json.RawMessage) (any, *rpcError) {
	var (
		addr string
		cfg  config
	)
	if e := args(params, 1, &addr, &cfg); e != nil {
		return nil, e
	}
	if e := belowConfirmed(cfg); e != nil {
		return nil, e
	}
	k, err := solana.PublicKeyFromBase58(addr)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	limit := 1000
	if cfg.Limit != nil {
		if *cfg.Limit < 1 || *cfg.Limit > 1000 {
			return nil, invalidParams("Invalid limit; max 1000")
		}
		limit = *cfg.Limit
	}
	top := s.at(cfg.Commitment).n
	if cfg.MinContextSlot != nil && top < *cfg.MinContextSlot {
		return nil, &rpcError{Code: -32016, Message: "Minimum context slot has not been reached", Data: map[string]any{"contextSlot": top}}
	}
	out := []any{}
	started := cfg.Before == ""
	for _, r := range s.onChain(top) {
		if !started {
			started = r.sig == cfg.Before
			continue
		}
		if r.sig == cfg.Until || len(out) == limit {
			break
		}
		if !slices.Contains(r.tx.Message.AccountKeys, k) {
			continue
		}
		out = append(out, map[string]any{
			"signature": r.sig, "slot": r.slot, "err": r.meta.Err, "memo": nil,
			"blockTime": s.slots[r.slot].time, "confirmationStatus": s.status(r.slot),
		})
	}
	return out, nil
}

func (s *Server) getTransaction(params []json.RawMessage) (any, *rpcError) {
	var (
		sig string
		cfg config
	)
	if len(params) == 2 && len(params[1]) > 0 && params[1][0] == '"' { // legacy: (sig, encoding)
		var enc string
		_ = json.Unmarshal(params[1], &enc)
		params = []json.RawMessage{params[0], json.RawMessage(fmt.Sprintf(`{"encoding":%q}`, enc))}
	}
	if e := args(params, 1, &sig, &cfg); e != nil {
		return nil, e
	}
	if e := belowConfirmed(cfg); e != nil {
		return nil, e
	}
	r := s.bySig[sig]
	if r == nil || r.slot == 0 || r.slot > s.at(cfg.Commitment).n {
		return nil, nil
	}
	t, e := s.txJSON(r, cfg)
	if e != nil {
		return nil, e
	}
	return t, nil
}

// txJSON is the documented transaction-with-meta object.
func (s *Server) txJSON(r *txRecord, cfg config) (map[string]any, *rpcError) {
	m := r.tx.Message
	out := map[string]any{"slot": r.slot, "blockTime": s.slots[r.slot].time}
	if cfg.MaxSupportedTransactionVersion != nil {
		out["version"] = "legacy"
	}
	status := map[string]any{"Ok": nil}
	if string(r.meta.Err) != "null" {
		status = map[string]any{"Err": r.meta.Err}
	}
	out["meta"] = map[string]any{
		"err": r.meta.Err, "status": status, "fee": r.meta.Fee,
		"preBalances": r.meta.PreBalances, "postBalances": r.meta.PostBalances,
		"preTokenBalances": r.meta.PreTokenBalances, "postTokenBalances": r.meta.PostTokenBalances,
		"innerInstructions": []any{}, "logMessages": []string{}, "rewards": []any{},
		"loadedAddresses":      map[string]any{"writable": []string{}, "readonly": []string{}},
		"computeUnitsConsumed": 150 * len(m.Instructions),
	}
	switch cfg.Encoding {
	case "base64":
		out["transaction"] = []string{base64.StdEncoding.EncodeToString(r.wire), "base64"}
	case "", "json", "jsonParsed":
		sigs := make([]string, len(r.tx.Signatures))
		for i, g := range r.tx.Signatures {
			sigs[i] = g.String()
		}
		keys := make([]string, len(m.AccountKeys))
		for i, k := range m.AccountKeys {
			keys[i] = k.String()
		}
		ixs := make([]any, len(m.Instructions))
		for i, ci := range m.Instructions {
			accts := make([]int, len(ci.Accounts))
			for j, a := range ci.Accounts {
				accts[j] = int(a)
			}
			ixs[i] = map[string]any{"programIdIndex": ci.ProgramIDIndex, "accounts": accts, "data": ci.Data.String(), "stackHeight": nil}
		}
		out["transaction"] = map[string]any{
			"signatures": sigs,
			"message": map[string]any{
				"accountKeys": keys,
				"header": map[string]any{
					"numRequiredSignatures":       m.Header.NumRequiredSignatures,
					"numReadonlySignedAccounts":   m.Header.NumReadonlySignedAccounts,
					"numReadonlyUnsignedAccounts": m.Header.NumReadonlyUnsignedAccounts,
				},
				"instructions":    ixs,
				"recentBlockhash": m.RecentBlockhash.String(),
			},
		}
	default:
		return nil, invalidParams("unsupported encoding %q", cfg.Encoding)
	}
	return out, nil
}

func (s *Server) getSignatureStatuses(params []json.RawMessage) (any, *rpcError) {
	var (
		sigs []string
		cfg  config
	)
	if e := args(params, 1, &sigs, &cfg); e != nil {
		return nil, e
	}
	if len(sigs) > 256 {
		return nil, invalidParams("Too many inputs provided; max 256")
	}
	out := make([]any, len(sigs))
	for i, sig := range sigs {
		r := s.bySig[sig]
		if r == nil || r.slot == 0 {
			continue // null: unknown, or waiting for a slot
		}
		c := s.status(r.slot)
		var conf any = s.tip() - r.slot
		if c == "finalized" {
			conf = nil
		}
		status := map[string]any{"Ok": nil}
		if string(r.meta.Err) != "null" {
			status = map[string]any{"Err": r.meta.Err}
		}
		out[i] = map[string]any{"slot": r.slot, "confirmations": conf, "err": r.meta.Err, "status": status, "confirmationStatus": c}
	}
	return s.wrap(config{Commitment: "processed"}, out), nil
}

func (s *Server) getFeeForMessage(params []json.RawMessage) (any, *rpcError) {
	var (
		msg string
		cfg config
	)
	if e := args(params, 1, &msg, &cfg); e != nil {
		return nil, e
	}
	raw, err := base64.StdEncoding.DecodeString(msg)
	if err != nil {
		return nil, invalidParams("invalid base64: %v", err)
	}
	var m solana.Message
	if err := m.UnmarshalWithDecoder(bin.NewBinDecoder(raw)); err != nil {
		return nil, invalidParams("invalid message: %v", err)
	}
	b := s.at(cfg.Commitment)
	if !s.validHash(m.RecentBlockhash.String(), b.height, b.n) {
		return s.wrap(cfg, nil), nil
	}
	return s.wrap(cfg, uint64(m.Header.NumRequiredSignatures)*s.opts.LamportsPerSignature), nil
}

// accountJSON is the documented account object (base64 data, or
// jsonParsed for token accounts), or nil for a missing account.
func (s *Server) accountJSON(a *account, cfg config) any {
	if a == nil {
		return nil
	}
	out := map[string]any{"lamports": a.lamports, "owner": a.owner.String(), "executable": false,
		"rentEpoch": uint64(18446744073709551615), "space": a.size()}
	if cfg.Encoding == "jsonParsed" && a.token != nil {
		st := s.lastBlock(s.tip()).st
		dec := uint8(0)
		if m := st[a.token.mint]; m != nil && m.mint != nil {
			dec = m.mint.decimals
		}
		out["data"] = map[string]any{"program": "spl-token", "space": tokenAccountSz, "parsed": map[string]any{
			"type": "account",
			"info": map[string]any{"isNative": false, "mint": a.token.mint.String(), "owner": a.token.owner.String(),
				"state": "initialized", "tokenAmount": newUIAmount(a.token.amount, dec)},
		}}
		return out
	}
	data := a.data()
	if cfg.DataSlice != nil {
		lo := min(max(cfg.DataSlice.Offset, 0), len(data))
		hi := min(lo+max(cfg.DataSlice.Length, 0), len(data))
		data = data[lo:hi]
	}
	out["data"] = []string{base64.StdEncoding.EncodeToString(data), "base64"}
	return out
}

func (s *Server) getTokenAccountsByOwner(params []json.RawMessage) (any, *rpcError) {
	var (
		owner  string
		filter config
		cfg    config
	)
	if e := args(params, 2, &owner, &filter, &cfg); e != nil {
		return nil, e
	}
	k, err := solana.PublicKeyFromBase58(owner)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	if (filter.Mint == "") == (filter.ProgramID == "") {
		return nil, invalidParams("expected exactly one of mint and programId")
	}
	if filter.ProgramID != "" && filter.ProgramID != tokenProgram.String() {
		return nil, invalidParams("unrecognized Token program id")
	}
	st := s.at(cfg.Commitment).st
	var keys []solana.PublicKey
	for key, a := range st {
		if a.token != nil && a.token.owner == k && (filter.Mint == "" || a.token.mint.String() == filter.Mint) {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(a, b solana.PublicKey) int { return bytes.Compare(a[:], b[:]) })
	out := []any{}
	for _, key := range keys {
		out = append(out, map[string]any{"pubkey": key.String(), "account": s.accountJSON(st[key], cfg)})
	}
	return s.wrap(cfg, out), nil
}

func (s *Server) sendTransaction(params []json.RawMessage) (any, *rpcError) {
	var (
		data string
		cfg  config
	)
	if e := args(params, 1, &data, &cfg); e != nil {
		return nil, e
	}
	var (
		wire []byte
		err  error
	)
	switch cfg.Encoding {
	case "base64":
		wire, err = base64.StdEncoding.DecodeString(data)
	case "", "base58":
		wire, err = base58.Decode(data)
	default:
		return nil, invalidParams("unsupported encoding %q", cfg.Encoding)
	}
	if err != nil {
		return nil, invalidParams("invalid transaction encoding: %v", err)
	}
	c := cfg.PreflightCommitment
	if c == "" {
		c = "finalized"
	}
	if cfg.SkipPreflight {
		c = ""
	}
	sig, err := s.submit(wire, c)
	var rej *rejected
	if errors.As(err, &rej) {
		e := &rpcError{Code: rej.code, Message: rej.msg}
		if rej.reason != nil {
			e.Data = map[string]any{"accounts": nil, "err": rej.reason, "innerInstructions": nil, "logs": []string{},
				"replacementBlockhash": nil, "returnData": nil, "unitsConsumed": 0}
		}
		return nil, e
	}
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	return sig, nil
}
