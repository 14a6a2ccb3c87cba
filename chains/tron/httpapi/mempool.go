package httpapi

import (
	"context"
	"encoding/hex"
	"math/big"
	"strings"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

var _ chains.MempoolReader = (*Backend)(nil)

// MaxMempoolFetch bounds how many pending transactions one Mempool call
// fetches (one request each); the rest are fetched by the next calls.
const MaxMempoolFetch = 500

// pendingCache is what Mempool remembers of the node's pending pool: each
// transaction it fetched, parsed, so each is fetched once while it waits.
type pendingCache struct {
	mu   sync.Mutex
	seen map[string]pendingTx
}

// pendingTx is one fetched pending transaction; ok is false for one the
// node no longer had or that pays nothing.
type pendingTx struct {
	tx blockTx
	ok bool
}

// Mempool implements chains.MempoolReader: /wallet/gettransactionlistfrompending
// lists the pending transactions and /wallet/gettransactionfrompending
// fetches those not fetched before (at most MaxMempoolFetch per call).
// For trx, a TransferContract to a watched address (not the operator's
// gas top-ups); for a token, a TriggerSmartContract of the contract whose
// call data is transfer(to, amount) to a watched address (Index 0: no log
// exists before execution, so a call that will fail is reported too).
func (b *Backend) Mempool(ctx context.Context, watched func(string) bool) ([]chains.Transfer, error) {
	var list struct {
		TxID []string `json:"txId"`
	}
	if err := b.post(ctx, b.ep.base, "/wallet/gettransactionlistfrompending", struct{}{}, &list); err != nil {
		return nil, err
	}
	c := &b.pending
	c.mu.Lock()
	defer c.mu.Unlock()
	current := make(map[string]pendingTx, len(list.TxID))
	fetched := 0
	var order []string
	for _, raw := range list.TxID {
		id := normHash(raw)
		if !isHex64(id) {
			continue
		}
		order = append(order, id)
		if p, ok := c.seen[id]; ok {
			current[id] = p
			continue
		}
		if fetched >= MaxMempoolFetch {
			continue
		}
		fetched++
		var tj txJSON
		if err := b.post(ctx, b.ep.base, "/wallet/gettransactionfrompending", map[string]string{"value": id}, &tj); err != nil {
			return nil, err
		}
		p := pendingTx{}
		if normHash(tj.TxID) == id {
			if tx, err := parseBlockTx(tj); err == nil {
				p = pendingTx{tx: tx, ok: true}
			}
		}
		current[id] = p
	}
	c.seen = current
	operator := ""
	if b.cfg.Signer != nil {
		operator, _ = b.cfg.Signer.OperatorAddress(ctx, b.cfg.Ticker)
	}
	dec := b.cfg.Ticker.Decimals
	var out []chains.Transfer
	for _, id := range order {
		p := current[id]
		if !p.ok {
			continue
		}
		tx := p.tx
		var to account
		var value *big.Int
		switch {
		case !b.cfg.Ticker.Token && tx.Type == "TransferContract":
			if operator != "" && tx.Owner.String() == operator {
				continue // payhook's gas top-up
			}
			to, value = tx.To, big.NewInt(tx.Amount)
		case b.cfg.Ticker.Token && tx.Type == "TriggerSmartContract" && tx.Contract == b.contract:
			var ok bool
			if to, value, ok = transferCall(tx.Data); !ok {
				continue
			}
		default:
			continue
		}
		if value.Sign() <= 0 || (watched != nil && !watched(to.String())) {
			continue
		}
		out = append(out, chains.Transfer{TxID: tx.ID, To: to.String(), Value: decimal.NewFromBigInt(value, -dec)})
	}
	return out, nil
}

// transferCall decodes TRC-20 transfer(to, amount) call data (hex).
func transferCall(data string) (account, *big.Int, bool) {
	raw, err := hex.DecodeString(strings.TrimPrefix(data, "0x"))
	if err != nil || len(raw) != 4+64 || hex.EncodeToString(raw[:4]) != transferSelector {
		return account{}, nil, false
	}
	to, ok := fromWord(raw[4:36])
	if !ok {
		return account{}, nil, false
	}
	return to, new(big.Int).SetBytes(raw[36:68]), true
}
