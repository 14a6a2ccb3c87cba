// Package solanatest is an in-process fake Solana node for tests: a
// JSON-RPC 2.0 server over HTTP (Server) that answers the documented
// shapes of the methods payhook's backend (chains/solana/rpc) uses, and a
// chaintest.Driver (Driver) over it. Import it only from _test.go files.
//
// # The fake chain
//
// Slot 0 is the genesis block, in which a faucet holds SOL and the fake
// SPL mint's whole supply. Mine produces slots with blocks (the first
// includes the waiting transactions), Skip produces skipped slots, and
// Reorg drops the newest slots: their transactions are forgotten, so
// getSignatureStatuses says null and they are included again only if sent
// again while their blockhash is valid. Commitments follow slot depth:
// processed at 1, confirmed from Options.ConfirmedDepth, finalized from
// Options.FinalizedDepth (2 and 3 by default, as chains/devnet); getSlot,
// getBlock, getBalance and the rest answer at the commitment asked
// (finalized when none is).
//
// sendTransaction decodes the transaction with solana-go, verifies its
// signatures and blockhash, simulates it at the preflight commitment, and
// queues it; a signature sent twice is queued once ("already processed"
// once included). Execution covers System transfers, the Associated Token
// Account program's Create and CreateIdempotent, SPL Token Transfer and
// TransferChecked, and ComputeBudget (ignored); it charges 5000 lamports
// per signature and applies the runtime's rent rule (an account whose
// balance changed ends empty or rent-exempt). Legacy messages only.
//
// # Faults
//
// SetFault makes a method (or every method) answer HTTP 503, bytes that
// are not JSON, a result of the wrong shape, null, a JSON-RPC error, or
// nothing until the client gives up: what a node that is down, slow or
// answering garbage does.
//
// # Guarantees
//
// A Server is safe for concurrent use; Close stops it, and requests held
// by FaultSlow return. Keys, the mint, the genesis hash and blockhashes
// are deterministic for a given Options.Seed.
package solanatest
