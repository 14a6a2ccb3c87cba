// Package devnet simulates, in process, one chain per ticker that behaves
// like its family, for tests, demos and `payhook serve --devnet-block-time`.
// A Chain implements chains.Backend, so the watcher and forwarding code run
// against it unchanged; Pay, Mine and Reorg drive it.
//
// # Behaviour per family
//
//   - Every family: Pay puts a transaction paying one transfer in the mempool
//     (on Solana: the next slot); the next Mine includes it in its first new
//     block. Confirmations are the depth, Height-included+1. Reorg drops the
//     newest blocks, and their transactions never come back: State reports
//     them not Present, with 0 confirmations.
//   - Mempool (chains.MempoolReader) reports the transactions waiting for
//     the next block, with Height 0; on Solana, none.
//   - Every block has a hash, unique per chain, that commits to its parent's
//     (Blocks, Head.Hash, Transfer.BlockHash); a block mined after a Reorg
//     at a dropped height gets a new hash.
//   - UTXO: each payment is output 0 of its own transaction; execution always
//     succeeds.
//   - EVM and TRON: Pay(..., failExecution=true) includes a transaction whose
//     execution fails; State reports Executed false. Transfers reports it
//     anyway (a token transfer that failed emits no Transfer log, but a
//     watcher that decodes calls sees it), so the payment is recorded and
//     judged reverted rather than silently missed. Index is the block-wide
//     log index of a successful token transfer and 0 otherwise.
//   - TRON: Head.Solidified is Height-TronSolidLag (at least 0), and
//     State.Solidified is true once the including block is at or below it.
//     Elsewhere Head.Solidified equals Height.
//   - Solana: heights are slots. Commitment is processed at depth 1,
//     confirmed from SolanaConfirmedDepth, finalized from
//     SolanaFinalizedDepth; Confirmations is still the depth (the rules, not
//     the backend, report 1 to merchants).
//
// Sign validates a forward and returns a hash in the family's style (a
// function of Forward.ID) with the forward as its "raw transaction"; Send
// records it, idempotently on the ID. It moves no funds and puts nothing in
// a block, since the devnet keeps no balances. NetworkFee is the
// ticker's NetworkFeeEstimate.
//
// # Guarantees
//
//   - A Chain and a Devnet are safe for concurrent use; every method of a
//     Chain is atomic with respect to the others.
//   - Transaction hashes are unique per chain and look like the family's:
//     64 hex digits (UTXO, TRON), 0x and 64 hex digits (EVM), base58 of 64
//     bytes (Solana). With Options.Seed set they are deterministic.
//   - Devnet.Start runs one goroutine, which exits on Stop or when its
//     context ends; Stop waits for it.
//   - Tests wait on Chain.WaitHeight, never on the clock.
//
// # Failure modes
//
// Errors wrap one sentinel of errors.go (ErrInvalidPayment,
// ErrInvalidForward, ErrInvalidCount, ErrInvalidRange, ErrInvalidBlockTime,
// ErrInvalidOptions) or, for a second Start, the house's one
// startstop.ErrStarted; or they are the context's error when a Backend
// method (or Start) is called with a context that has ended. NewChain and New
// panic on Options that fail Validate.
//
// The devnet keeps everything in memory, without limit: it is a simulator,
// not a node. It does not check that a forward's From address holds the
// funds it sends.
package devnet
