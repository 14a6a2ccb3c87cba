package bitcoind

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/shopspring/decimal"
)

// Unspent returns output vout of txid, its value in base units and its
// scriptPubKey, when the node's UTXO set (with its mempool) still holds
// it; ok is false when it was spent or never existed (gettxout answers
// null): what a merchant's own wallet spent is not a payout's to spend.
func (b *Backend) Unspent(ctx context.Context, txid string, vout uint32) (value int64, script []byte, ok bool, err error) {
	var res *struct {
		Value        json.Number `json:"value"`
		ScriptPubKey struct {
			Hex string `json:"hex"`
		} `json:"scriptPubKey"`
	}
	if err := b.rpc.Call(ctx, &res, "gettxout", txid, vout, true); err != nil {
		return 0, nil, false, nodeErr("gettxout", err)
	}
	if res == nil {
		return 0, nil, false, nil
	}
	v, err := decimal.NewFromString(res.Value.String())
	if err != nil {
		return 0, nil, false, fmt.Errorf("bitcoind gettxout %s:%d: value %q: %w", txid, vout, res.Value, err)
	}
	units := v.Shift(int32(b.cfg.Ticker.Decimals))
	if v.Sign() < 0 || !units.IsInteger() || units.GreaterThan(decimal.NewFromInt(math.MaxInt64)) {
		return 0, nil, false, fmt.Errorf("bitcoind gettxout %s:%d: value %q is not a whole number of base units from 0 to 2^63-1", txid, vout, res.Value)
	}
	if script, err = hex.DecodeString(res.ScriptPubKey.Hex); err != nil {
		return 0, nil, false, fmt.Errorf("bitcoind gettxout %s:%d: script: %w", txid, vout, err)
	}
	return units.IntPart(), script, true, nil
}

// RawTransaction returns transaction txid as serialized (what a PSBT
// carries for a legacy input, whose signer must see the whole previous
// transaction).
func (b *Backend) RawTransaction(ctx context.Context, txid string) ([]byte, error) {
	var h string
	if err := b.rpc.Call(ctx, &h, "getrawtransaction", txid, false); err != nil {
		return nil, nodeErr("getrawtransaction", err)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("bitcoind getrawtransaction %s: %w", txid, err)
	}
	return raw, nil
}

// FeeRate returns the fee rate payouts pay, in base units per virtual
// byte (estimatesmartfee's, or the fallback; at least 1).
func (b *Backend) FeeRate(ctx context.Context) (int64, error) {
	perKvB, err := b.feeRate(ctx)
	if err != nil {
		return 0, err
	}
	r := perKvB.Shift(int32(b.cfg.Ticker.Decimals)).Div(decimal.NewFromInt(1000)).Ceil().IntPart()
	return max(r, 1), nil
}
