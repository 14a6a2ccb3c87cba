// Package httpapi is payhook's backend for a TRON full node's HTTP API
// (java-tron, or a provider such as TronGrid that serves the same paths):
// one Backend per ticker, trx or one TRC20 token. It implements
// chains.Backend, chains.Prober and chains.MempoolReader. New does no I/O; every method is one
// or a few POSTs of JSON with visible=false (addresses as 41... hex).
//
// # Node calls
//
//   - Head: /wallet/getnowblock and /walletsolidity/getnowblock (the
//     solidified head). Height 0, the genesis block, has no Hash: it is
//     "before the first block", and Blocks reports block 1's Parent as "".
//   - Blocks, Transfers: /wallet/getblockbylimitnext in batches of
//     Config.BatchBlocks, checked to form one chain (block ids start with
//     their number; each block's parentHash is the previous block's id).
//     trx transfers are the blocks' TransferContract transactions, Index
//     0, failed ones included so that they are recorded as reverted. A
//     token's are the Transfer logs of its contract in successful
//     transactions, from /wallet/gettransactioninfobyblocknum (asked only
//     for blocks with a contract call, and checked to belong to the block
//     read); Index is the log's position in its transaction's log list,
//     which a transaction keeps if a reorganisation puts it in another
//     block. Transfers of 0 are left out.
//   - State: /wallet/gettransactioninfobyid gives the block number; the
//     block at that number (/wallet/getblockbynum) must still contain the
//     transaction, else it is not Present. Without info the transaction is
//     Present (0 confirmations) only while /wallet/gettransactionfrompending
//     has it. Executed: contractRet SUCCESS for trx; for a token a SUCCESS
//     receipt and, at the transfer's Index, a Transfer log of the contract
//     to its address. Solidified: the block is at or below the solidified
//     head and /walletsolidity/gettransactioninfobyid has the receipt,
//     which then decides Executed.
//   - NetworkFee: /wallet/getchainparameters (getTransactionFee) for trx;
//     the ticker's estimate for tokens (the TRX cost has no price here).
//   - Sign: /wallet/getchainparameters, /wallet/getaccount (the payment
//     address's TRX), /wallet/createtransaction and
//     /wallet/triggersmartcontract to build; nothing is sent.
//   - Send: /wallet/broadcasthex, then /wallet/gettransactionbyid and
//     /wallet/gettransactionfrompending when the node refuses.
//   - Probe: /wallet/getblockbynum 0 (the genesis id names the network:
//     mainnet's is Mainnet, Nile's and Shasta's are Testnet, any other is
//     a private network, which is what Regtest means for TRON),
//     /wallet/getnodeinfo (version, when the provider serves it), Head.
//   - Mempool (chains.MempoolReader): /wallet/gettransactionlistfrompending,
//     then /wallet/gettransactionfrompending for each transaction not
//     fetched before (at most MaxMempoolFetch per call): trx
//     TransferContracts, or a token's transfer calls decoded from their
//     call data (Index 0). Only the hosted pages show them.
//
// # Forwards
//
// Sign makes one transaction per output, all from the payment address
// and signed with its key (by the chains.Signer, secp256k1, 65-byte r || s || v
// over the sha256 of raw_data). The node builds each; Sign decodes its
// raw_data_hex (protobuf) and signs only what it asked for: the txID must
// be the raw data's sha256, the contract the asked transfer or
// transfer(address,uint256) call with the asked fee limit, and no field
// beyond those a plain transfer has. It then extends the expiration to
// Config.Expiration after construction (the node's is 60 seconds), so
// that bytes recorded before a crash can still be sent hours later.
//
// A token forward's energy and bandwidth are burnt in TRX from the
// payment address. When it holds less than the outputs may burn (fee
// limit = Config.TokenEnergy at the chain's energy price, plus
// bandwidth, per output), the forward starts with a TRX transfer from the
// operator's address topping it up to that; the operator's address must
// hold TRX. Send broadcasts the transactions in order and stops at the
// first refused, so a token transfer is never sent without its top-up.
// The node executes the top-up first in its pending state; a block
// producer that received them in another order would fail the token
// transfer (OUT_OF_ENERGY: nothing moves, State reports it not executed).
//
// # Guarantees
//
//   - A Backend keeps no state between calls and is safe for concurrent
//     use.
//   - Nothing from the node is trusted for its shape: a wrong type, a
//     missing block, an id that does not match its number, infos of
//     another block, a Transfer log that does not decode, a built
//     transaction other than asked, are errors, never panics.
//   - Send is idempotent: a transaction the node already has (pending or
//     in a block, even expired) counts as sent.
//   - No error or log message carries the URL's credentials or key
//     material; node errors name the API path only.
//
// # Failure modes
//
// Errors wrap chains.ErrNode when the node is unreachable, slower than
// Config.Timeout, answers with an HTTP error, java-tron's {"Error": ...},
// JSON of another shape, or data that contradicts itself (including a
// reorganisation noticed while reading): all transient. They wrap
// ErrInvalidRange for a block range beyond the tip, chains.ErrInvalidForward
// for a forward Sign refuses as it is (and for bytes Send did not get from
// Sign), ErrRejected for a transaction the node refuses (bad signature,
// expired before it was ever sent, failed validation such as an operator
// address short of the top-up),
// ErrWatchOnly for Sign without keys, chains.ErrWrongNetwork from Probe,
// and ErrInvalidConfig from New.
//
// # URL
//
// http(s)://[apikey:KEY@ | user:password@]host[:port][/prefix][?contract=T...][&solidity=URL]:
// apikey sends TronGrid's TRON-PRO-API-KEY header, other userinfo is
// basic authentication; contract overrides the ticker's mainnet contract
// (testnets); solidity is where /walletsolidity is served when not on the
// same base (a java-tron full node serves it on its solidity HTTP port,
// 8091 by default; TronGrid serves both).
package httpapi
