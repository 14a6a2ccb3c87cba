package chains

import "context"

// MempoolReader is implemented by backends whose node shows the
// transactions it holds that are not yet in a block: a UTXO node's mempool,
// an EVM node's pending transactions, a TRON node's pending pool. Solana
// has no such stage.
//
// Mempool returns the transfers those transactions make to the addresses
// watched reports true for (all, when nil), each with Height 0 and no
// BlockHash. It is what the hosted pages show a payer before the first
// block ("payment detected"), and nothing more: a transaction in a mempool
// may never be mined, so a sighting is never a payment, is never credited
// and sends no callback (the spec reports payments from their first block).
//
// A sighting is best effort: a backend may bound what one call reads (a
// busy mainnet mempool holds hundreds of thousands of transactions) and
// report the rest at a later call, and a token transfer is read from the
// call's input (no log exists before execution), so a sighting whose
// execution later fails is possible. Errors wrap ErrNode.
type MempoolReader interface {
	Mempool(ctx context.Context, watched func(address string) bool) ([]Transfer, error)
}
