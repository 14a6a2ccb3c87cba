// Package psbt prepares and checks the BIP 174 partially signed
// transactions of a watch-only project's payouts: payhook holds only the
// merchant's account-level extended public key (chains/watchonly), so a
// payout is handed to the merchant unsigned, signed on the merchant's own
// device, and checked here before it is broadcast.
//
// Prepare builds the unsigned transaction and its PSBT from the UTXOs to
// spend (each on a receive address KEY/0/i), the payout's outputs, a change
// index c (the change goes to KEY/1/c, the merchant's own internal chain)
// and a fee rate in base units per virtual byte. Every input carries its
// previous output (the witness UTXO; the whole previous transaction for
// P2PKH inputs, which signers need for a non-witness signature) and the
// BIP 32 derivation of its key; the change output carries its derivation
// too, so a hardware wallet shows it as the merchant's own.
//
// Check takes the prepared PSBT and the one the merchant uploads, refuses
// any difference in the transaction (an input, an output, an amount, the
// change) and any input that is not validly signed, finalizes the inputs
// and returns the raw transaction to broadcast.
//
// The format is btcd's btcutil/psbt; amounts are int64 base units. BIP 174
// signers of Bitcoin Cash sign with SIGHASH_FORKID, which this package does
// not verify, and taproot (tr()) keys are not supported yet: Prepare
// refuses both. docs/decisions.md gives the choices.
package psbt
