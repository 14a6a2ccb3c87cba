// Package rpc is payhook's chains.Backend on a Solana node's JSON-RPC API,
// for native SOL or one SPL token (Token program) per Backend. It watches
// payment addresses, reports their incoming transfers, follows their
// transactions' commitment, and signs and sends forwards with
// github.com/gagliardetto/solana-go. New does no I/O; Probe checks the
// node's cluster.
//
// # What the backend sees
//
// The chain as the backend presents it is the node's confirmed chain:
// Head, Blocks and Transfers read at the confirmed commitment, the lowest
// that getBlocks, getBlock, getSignaturesForAddress and getTransaction
// serve. Heights are slots; slot 0 (the genesis block) is below the chain,
// so a fresh chain has height 0 and no hash. A skipped slot is a Block too
// (the watcher wants one per height), with a hash of its own that names the
// slot and the newest real blockhash below it ("skipped-<slot>-<hash>"),
// so every Block commits to the blocks below as real hashes do.
//
// Transfers asks, per address handed to Watch (chains.AddressWatcher),
// getSignaturesForAddress for the address (SOL) or its associated token
// account for the mint (SPL), then getTransaction for each successful
// transaction in the range, and reports the address's balance increase in
// that transaction (lamports; or the owner's token balances of the mint)
// as one Transfer with Index 0. Transfers(after, upTo, nil) reports every
// watched address; an address Watch never received is never found.
//
// State reads getSignatureStatuses (searching the history): the node's
// confirmationStatus is TxState.Commitment, and the lifecycle rules
// (chains/solana) accept SPL transfers at confirmed and SOL at finalized.
// A signature the node does not know (a fork dropped it) is not Present.
//
// # Forwards
//
// A SOL forward is System transfers from the payment address, which pays
// its own fee, to each output, plus what remains of the inputs (the
// service fee, the unspent fee budget) to the operator's address: a
// payment address must end empty or rent-exempt. An SPL forward is, per
// output, an idempotent creation of the destination's associated token
// account and a TransferChecked; the operator's address pays fees and new
// accounts' rent. Signed.Raw is a JSON envelope of the base64 transaction
// and its last valid block height; Signed.TxID is its signature.
//
// Send is idempotent on the signature, and never re-signs: a recorded
// transaction whose blockhash expired before the network saw it gives
// ErrExpired (then, and only then, signing the forward again is safe), one
// that landed and failed gives ErrFailed.
//
// # Failure modes
//
// A node that is down, slow (each request is bounded by Config.Timeout),
// answers an error, or answers garbage (malformed JSON, wrong shapes,
// missing fields, answers larger than Config.MaxResponse, blocks that do
// not link up) gives an error wrapping chains.ErrNode, never a panic;
// *RPCError carries a JSON-RPC error's code. Errors never quote the URL,
// which may carry credentials. Other errors wrap one sentinel of
// errors.go, chains.ErrInvalidForward or chains.ErrWrongNetwork, or are
// the context's error.
//
// # Limits
//
// Each Transfers call costs one getSignaturesForAddress per watched
// address (more past 1000 signatures in the range) and one getTransaction
// per transaction found; each Blocks call one getBlock per slot with a
// block. Token-2022 mints are refused (Probe and Sign check the mint), as are forwards too
// large for one transaction (1232 bytes, about 20 SOL outputs). Blocks
// below the node's first available block are an error: the watcher must
// start near the tip on a node without full history.
package rpc
