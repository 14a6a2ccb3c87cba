// Package jsonrpc is payhook's EVM node backend: a chains.Backend and
// chains.Prober over a node's Ethereum JSON-RPC (geth, erigon, reth, bsc,
// bor, anvil, or a provider), for one ticker: a native coin (eth,
// polygon/pol) or an ERC-20 token (erc20/usdt, bep20/usdt). It signs
// forwards with go-ethereum.
//
// # Node calls
//
//   - Head: eth_getBlockByNumber("latest"). Blocks: eth_getBlockByNumber
//     per height, batched.
//   - Transfers, native: eth_getBlockByNumber with transactions, batched;
//     every transaction with value to a watched address, Index 0.
//   - Transfers, token: eth_getLogs of the contract's Transfer events;
//     Index is the log index.
//   - State: eth_getTransactionReceipt and eth_blockNumber (batched), then
//     eth_getBlockByNumber at the receipt's height to check that its block
//     is still canonical; eth_getTransactionByHash when there is no
//     receipt.
//   - NetworkFee: eth_getBlockByNumber("latest"), eth_gasPrice,
//     eth_maxPriorityFeePerGas (native only).
//   - Sign: eth_chainId (once), the fees, eth_getBalance,
//     eth_getTransactionCount("pending"), eth_estimateGas, eth_call
//     balanceOf (token).
//   - Send: eth_sendRawTransaction, eth_getTransactionByHash.
//   - Probe: eth_chainId, web3_clientVersion, eth_blockNumber.
//   - Mempool (chains.MempoolReader): eth_getBlockByNumber("pending",
//     true); native value to a watched address, or a token's transfer and
//     transferFrom calls decoded from their call data (Index 0). Only the
//     hosted pages show them ("payment detected").
//
// # Guarantees
//
//   - A transaction whose receipt shows failure is reported not Executed,
//     so it is never credited; a token transfer counts as executed only
//     with a Transfer log of the contract to the address in its receipt.
//     A receipt the node has not indexed yet reads as waiting (0
//     confirmations), never as a failure.
//   - A transaction that left the canonical chain is not Present, even if
//     a lagging node still has its receipt.
//   - A forward pays each output exactly the amount asked, in base units
//     (wei, token units); amounts finer than a base unit are refused. It
//     is signed for the chain id the node reports, which must match the
//     ticker's network (Config.ChainID).
//   - Send is idempotent: bytes the node already has succeed.
//   - A node that is down, slow, or answers errors or garbage (malformed
//     JSON, missing fields, wrong heights, oversized bodies) yields errors
//     wrapping chains.ErrNode, never a panic. Messages name the node by
//     scheme and host only: never its credentials, path or query.
//
// # Limits
//
// Native transfers are seen only as a transaction's own value (to and
// value); value a contract moves in an internal call (a smart-contract
// wallet paying out, a batch payment) is not seen: that needs trace APIs
// not every node serves. Tokens are standard ERC-20 Transfer events; a
// fee-on-transfer token reports what its event says.
//
// A token forward's gas is topped up from the operator's gas address in a
// transaction of its own, and a node accepts the token transfers only once
// the top-up is in a block: Send fails (chains.ErrNode) until then and is
// simply called again. See docs/decisions.md ("EVM forwards").
//
// # Failure modes
//
// Errors wrap chains.ErrNode (transient: retry with backoff),
// chains.ErrWrongNetwork (Probe or Sign on a node of another chain),
// chains.ErrInvalidForward, ErrInvalidConfig, ErrInvalidRange,
// ErrInvalidTxID, ErrWatchOnly or ErrOperatorFunds; a cancelled context is
// returned as such.
package jsonrpc
