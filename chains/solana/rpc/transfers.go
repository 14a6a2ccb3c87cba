package rpc

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"strconv"

	solana "github.com/gagliardetto/solana-go"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// signaturePage is the most signatures one getSignaturesForAddress returns.
const signaturePage = 1000

// Transfers implements chains.Backend. It asks the node, for each address
// given to Watch that watched accepts (every one when watched is nil), for
// the signatures that touch it (native SOL: the address; SPL: its
// associated token account for the mint) in slots after+1..upTo at the
// confirmed commitment, then for each successful transaction, and reports
// what it added to the address: the lamport balance change (SOL) or the
// change of the owner's balances of the mint (SPL), when positive. Index is
// 0: one transfer per transaction and address, as the balances give it.
// Failed transactions are left out (they move nothing). BlockHash is the
// including block's blockhash.
//
// An address that watched accepts but Watch never received is not seen:
// the node cannot be asked about every address.
func (b *Backend) Transfers(ctx context.Context, after, upTo int64, watched func(address string) bool) ([]chains.Transfer, error) {
	if after < 0 || upTo < after {
		return nil, fmt.Errorf("%w: %s transfers after %d up to %d", ErrInvalidRange, b.ticker.Ticker, after, upTo)
	}
	if upTo == after {
		return nil, nil
	}
	out, err := b.transfers(ctx, after, upTo, b.addresses(watched))
	if err != nil {
		return nil, fmt.Errorf("%s transfers after %d up to %d: %w", b.ticker.Ticker, after, upTo, err)
	}
	return out, nil
}

// hit is one transaction that touches watched addresses.
type hit struct {
	sig   string
	slot  int64
	addrs []string
}

func (b *Backend) transfers(ctx context.Context, after, upTo int64, addrs []string) ([]chains.Transfer, error) {
	var hits []*hit
	bySig := make(map[string]*hit)
	for _, a := range addrs {
		query := a
		if b.ticker.Token {
			owner, err := solana.PublicKeyFromBase58(a)
			if err != nil {
				continue // not an address of this chain: nothing to find
			}
			ata, _, err := solana.FindAssociatedTokenAddress(owner, b.mint)
			if err != nil {
				continue
			}
			query = ata.String()
		} else if _, err := solana.PublicKeyFromBase58(a); err != nil {
			continue
		}
		sigs, err := b.signatures(ctx, query, after, upTo)
		if err != nil {
			return nil, err
		}
		for _, s := range sigs {
			h := bySig[s.Signature]
			if h == nil {
				h = &hit{sig: s.Signature, slot: int64(*s.Slot)}
				bySig[s.Signature] = h
				hits = append(hits, h)
			}
			h.addrs = append(h.addrs, a)
		}
	}

	txs := make([]*txResult, len(hits))
	err := parallel(ctx, len(hits), b.concurrency, func(ctx context.Context, i int) error {
		tx, err := b.getTransaction(ctx, hits[i].sig)
		if err != nil {
			return err
		}
		if int64(*tx.Slot) != hits[i].slot {
			return nodeError("getTransaction", "%s is in slot %d, listed in slot %d: the chain moved", hits[i].sig, *tx.Slot, hits[i].slot)
		}
		txs[i] = tx
		return nil
	})
	if err != nil {
		return nil, err
	}

	var out []chains.Transfer
	for i, h := range hits {
		if failed(txs[i].Meta.Err) {
			continue
		}
		for _, a := range h.addrs {
			units := b.received(txs[i], a)
			if units.Sign() <= 0 {
				continue
			}
			out = append(out, chains.Transfer{
				TxID: h.sig, To: a, Height: h.slot,
				Value: decimal.NewFromBigInt(units, -b.ticker.Decimals),
			})
		}
	}
	sortTransfers(out)

	// The including blocks' hashes.
	var slots []int64
	seen := map[int64]bool{}
	for _, t := range out {
		if !seen[t.Height] {
			seen[t.Height] = true
			slots = append(slots, t.Height)
		}
	}
	headers, err := b.getBlocksConcurrently(ctx, slots)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].BlockHash = headers[out[i].Height].Blockhash
	}
	return out, nil
}

// signatures returns the successful transactions touching address in
// slots after+1..upTo, oldest first, paging back from the newest.
func (b *Backend) signatures(ctx context.Context, address string, after, upTo int64) ([]signatureInfo, error) {
	var (
		out    []signatureInfo
		before string
		prev   = int64(1 << 62)
	)
	seen := map[string]bool{}
	for {
		cfg := commitment(confirmed, "limit", b.page, "minContextSlot", upTo)
		if before != "" {
			cfg["before"] = before
		}
		var res *[]signatureInfo
		if err := b.rpc.call(ctx, "getSignaturesForAddress", []any{address, cfg}, &res); err != nil {
			return nil, err
		}
		if res == nil {
			return nil, nodeError("getSignaturesForAddress", "null result")
		}
		page := *res
		done := len(page) < b.page
		for _, s := range page {
			if err := checkSignature(s.Signature); err != nil {
				return nil, nodeError("getSignaturesForAddress", "%v", err)
			}
			if s.Slot == nil || int64(*s.Slot) > prev || *s.Slot > 1<<62 || seen[s.Signature] {
				return nil, nodeError("getSignaturesForAddress", "signature %s: slot missing, out of order or repeated", s.Signature)
			}
			seen[s.Signature] = true
			prev = int64(*s.Slot)
			if prev <= after {
				done = true
				break
			}
			if prev <= upTo && !failed(s.Err) {
				out = append(out, s)
			}
			before = s.Signature
		}
		if done || len(page) == 0 {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// getTransaction returns the transaction sig at the confirmed commitment.
func (b *Backend) getTransaction(ctx context.Context, sig string) (*txResult, error) {
	cfg := commitment(confirmed, "encoding", "json", "maxSupportedTransactionVersion", 0)
	var tx *txResult
	if err := b.rpc.call(ctx, "getTransaction", []any{sig, cfg}, &tx); err != nil {
		return nil, err
	}
	if tx == nil {
		return nil, nodeError("getTransaction", "%s: listed by getSignaturesForAddress but not found", sig)
	}
	if err := tx.check(sig); err != nil {
		return nil, nodeError("getTransaction", "%v", err)
	}
	return tx, nil
}

// received returns what tx added to address, in base units (negative when
// it took more than it gave).
func (b *Backend) received(tx *txResult, address string) *big.Int {
	keys := tx.accountKeys()
	if !b.ticker.Token {
		sum := new(big.Int)
		for i, k := range keys {
			if k == address {
				sum.Add(sum, new(big.Int).SetUint64(tx.Meta.PostBalances[i]))
				sum.Sub(sum, new(big.Int).SetUint64(tx.Meta.PreBalances[i]))
			}
		}
		return sum
	}
	mint := b.mint.String()
	var ata string
	if owner, err := solana.PublicKeyFromBase58(address); err == nil {
		if a, _, err := solana.FindAssociatedTokenAddress(owner, b.mint); err == nil {
			ata = a.String()
		}
	}
	ours := func(tb tokenBalance) bool {
		// Token balances recorded before owners were (2021) lack the
		// owner: the associated token account is then recognised by key.
		return tb.Mint == mint && (tb.Owner == address || tb.Owner == "" && keys[tb.AccountIndex] == ata)
	}
	sum := new(big.Int)
	for _, tb := range tx.Meta.PostTokenBalances {
		if ours(tb) {
			v, _ := strconv.ParseUint(tb.UITokenAmount.Amount, 10, 64) // checked by txResult.check
			sum.Add(sum, new(big.Int).SetUint64(v))
		}
	}
	for _, tb := range tx.Meta.PreTokenBalances {
		if ours(tb) {
			v, _ := strconv.ParseUint(tb.UITokenAmount.Amount, 10, 64)
			sum.Sub(sum, new(big.Int).SetUint64(v))
		}
	}
	return sum
}

// State implements chains.Backend. It asks getSignatureStatuses (searching
// the transaction history): an unknown signature (never sent, still
// waiting for a slot, or in a slot a fork dropped) is not Present;
// otherwise Commitment is the node's confirmationStatus, Executed is true
// unless the transaction failed, and Confirmations is the slot depth below
// the confirmed slot (1 in that slot, 0 above it).
func (b *Backend) State(ctx context.Context, t chains.Transfer) (chains.TxState, error) {
	if checkSignature(t.TxID) != nil {
		return chains.TxState{}, nil // no transaction has this id
	}
	st, err := b.status(ctx, t.TxID)
	if err != nil {
		return chains.TxState{}, fmt.Errorf("%s state of %s: %w", b.ticker.Ticker, t.TxID, err)
	}
	if st == nil {
		return chains.TxState{}, nil
	}
	c, err := st.commitment()
	if err != nil {
		return chains.TxState{}, fmt.Errorf("%s state of %s: %w", b.ticker.Ticker, t.TxID, nodeError("getSignatureStatuses", "%v", err))
	}
	tip, err := b.getSlot(ctx, confirmed)
	if err != nil {
		return chains.TxState{}, fmt.Errorf("%s state of %s: %w", b.ticker.Ticker, t.TxID, err)
	}
	return chains.TxState{
		Present:       true,
		Confirmations: max(0, tip-int64(*st.Slot)+1),
		Executed:      !failed(st.Err),
		Solidified:    true,
		Commitment:    c,
	}, nil
}

// commitment returns the status's confirmation level. Nodes older than
// confirmationStatus (1.5) say only confirmations, null once rooted.
func (s *signatureStatus) commitment() (chains.Commitment, error) {
	if s.ConfirmationStatus == nil {
		if s.Confirmations == nil {
			return chains.CommitmentFinalized, nil
		}
		return chains.CommitmentConfirmed, nil
	}
	switch *s.ConfirmationStatus {
	case processed:
		return chains.CommitmentProcessed, nil
	case confirmed:
		return chains.CommitmentConfirmed, nil
	case finalized:
		return chains.CommitmentFinalized, nil
	}
	return chains.CommitmentNone, fmt.Errorf("unknown confirmationStatus %q", cut(*s.ConfirmationStatus))
}

// feeProbe is the fee payer of the message NetworkFee prices: any key
// does, the fee depends on the signatures only.
func feeProbe() solana.PublicKey {
	return solana.PublicKeyFromBytes(func() []byte { h := sha256.Sum256([]byte("payhook network fee probe")); return h[:] }())
}

// NetworkFee implements chains.Backend. For SOL it is the node's fee for a
// forward's message (one signature; getFeeForMessage with a recent
// blockhash); for an SPL token it is Ticker.NetworkFeeEstimate, the
// operator's estimate in token units, since the fee is paid in SOL by the
// operator's address.
func (b *Backend) NetworkFee(ctx context.Context) (decimal.Decimal, error) {
	if b.ticker.Token {
		return b.ticker.NetworkFeeEstimate, nil
	}
	bh, err := b.latestBlockhash(ctx)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%s network fee: %w", b.ticker.Ticker, err)
	}
	payer := feeProbe()
	tx, err := solana.NewTransaction([]solana.Instruction{transferIx(1, payer, payer)}, bh.hash, solana.TransactionPayer(payer))
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%s network fee: %w", b.ticker.Ticker, err)
	}
	fee, err := b.feeFor(ctx, tx)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%s network fee: %w", b.ticker.Ticker, err)
	}
	return decimal.NewFromBigInt(new(big.Int).SetUint64(fee), -b.ticker.Decimals), nil
}
