// Package trontest is an in-memory TRON full node for tests: a Node serves
// the HTTP API paths payhook's tron/httpapi backend uses, over httptest,
// with the JSON shapes of java-tron's documented examples (visible=false:
// addresses as 41... hex, bytes as hex, int64 as numbers, zero values
// left out; TestShapes checks every printed field against the examples
// in chains/tron/httpapi/testdata). Driver makes a backend on a Node a
// chaintest.Driver and chaintest.OnChain. Import it only from _test.go
// files.
//
// # What the node does
//
//   - A chain from a genesis block 0 (Options.Genesis: a private
//     network's by default, or mainnet's, Nile's or Shasta's to test
//     Probe). Block ids start with the block number, as TRON's do; block
//     n is at GenesisTime + 3 s * n, so the node reads no clock. The
//     solidified head lags the tip by Options.SolidLag (19, as the
//     devnet's).
//   - TRX balances and TRC20 tokens (Options.Contracts) whose transfers
//     emit Transfer logs. A faucet pays (Node.Pay), Node.Fund gives TRX
//     outside blocks.
//   - /wallet/createtransaction and /wallet/triggersmartcontract build
//     real protobuf raw data (encoded here, independently of the backend's
//     decoder), referring to the solidified head, expiring after 60 s.
//   - /wallet/broadcasthex checks what java-tron checks, in its order:
//     the reference block (TaPoS), the expiration (after the head's time,
//     at most 24 h beyond), duplicates (DUP_TRANSACTION_ERROR), the
//     signature (the recovered signer must own the account, SIGERROR),
//     then executes the transaction against the pending state (balance,
//     bandwidth).
//   - Execution: bandwidth is paid in TRX (Options.TransactionFee per
//     byte, no free bandwidth); a TRC20 transfer burns
//     Options.TransferEnergy at Options.EnergyFee and fails OUT_OF_ENERGY
//     when its fee limit or the owner's TRX do not cover that, REVERT when
//     the owner lacks the tokens; Pay(..., fail) makes a REVERT. A failed
//     execution is included (contractRet, receipt result, info result
//     FAILED, no log). A failed TRX transfer exists only as Pay's stand-in
//     for the conformance suite: a real chain includes none.
//   - Node.Mine includes the pending transactions in the first new block;
//     Node.Reorg drops blocks, whose transactions are never included
//     again (a broadcast of one answers DUP_TRANSACTION_ERROR).
//   - Node.SetFault makes a path answer HTTP 500, garbage, JSON of another
//     shape, java-tron's {"Error": ...}, or hang until the client gives up.
//
// Not served: visible=true (answered with an error), account creation
// fees, free bandwidth, energy staking, multi-signature, other contract
// types.
package trontest
