// Package bitcoind is the chains.Backend of the UTXO family (btc, ltc,
// bch, doge) over a bitcoind-compatible node's JSON-RPC: Bitcoin Core,
// Litecoin Core, Bitcoin Cash Node, Dogecoin Core.
//
// # Calls
//
//   - Head: getblockchaininfo (blocks, bestblockhash).
//   - Transfers: getblockhash and getblock with verbosity 2, batched (20
//     blocks per request); every output whose script pays one standard
//     address (decoded with txscript, encoded for the ticker's network) is
//     a transfer, Index its vout; coinbase outputs are not payments.
//     Transfers never reports a mempool transaction (the spec reports
//     payments from their first block).
//   - Mempool (chains.MempoolReader): getrawmempool, then getrawtransaction
//     (verbose, batched) for the transactions not decoded before, at most
//     MaxMempoolDecode per call; outputs are read as a block's, with
//     Height 0. Only the hosted pages show them ("payment detected").
//   - Blocks: getblockhash and getblockheader (previousblockhash), batched.
//   - State: getrawtransaction (the node must run with -txindex=1) for the
//     block, then getblockheader for its depth: confirmations < 1 means the
//     block left the best chain, and the transaction is not Present.
//   - NetworkFee: estimatesmartfee (target 6) times the virtual size of a
//     one-input, three-output forward; the ticker's fallback rate
//     (DefaultFallbackFee, --fallback-fee) when the node has no estimate,
//     which is always so on regtest.
//   - Sign: builds a version-2 transaction spending exactly the forward's
//     inputs with btcd's wire and txscript (P2WPKH witness for btc and ltc,
//     P2PKH for doge, P2PKH with SIGHASH_FORKID for bch), each input signed
//     with the key of its own address (From's, or the one chains.Forward.Keys
//     names) by the backend's chains.Signer, which gets the whole unsigned
//     transaction, each input's spent output and key, and the outputs that
//     pay the seed's own keys (keysign.Local in the process, or a remote
//     payhook signer), pays each output exactly, pays the forward's fee budget (at
//     least the relay minimum), and returns the rest to the operator's
//     change address (the signer's OperatorAddress) unless it is dust; each
//     signature is verified (txscript's engine; the FORKID digest for bch)
//     before the bytes are returned.
//   - FeeFor (chains.FeeQuoter): NetworkFee's rate times the virtual size
//     of a transaction of any number of inputs and outputs, at least the
//     relay minimum for it.
//   - Send: sendrawtransaction; "already in block chain" or "already in the
//     mempool" answers are success, so sending recorded bytes again after a
//     crash is safe.
//   - Probe: getblockchaininfo's chain against the ticker's Net, getindexinfo
//     for -txindex, getnetworkinfo for the version.
//
// # Failure modes
//
// A node that is down, slow (Config.Timeout per request), refuses the
// credentials or answers garbage gives errors wrapping chains.ErrNode; the
// watcher backs off and resumes from its durable cursor. A forward the
// backend will not sign (bad addresses, amounts not in whole base units,
// below dust, inputs not covering outputs and fee, an input on an address
// that is neither From nor in Keys, a key index that does not control its
// address) wraps chains.ErrInvalidForward. Errors never quote the
// URL's password.
package bitcoind
