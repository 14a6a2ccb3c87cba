// Package keysign is the chains.Signer over the operator's own seed
// (chains.Keys): Local signs in the process, exactly as the node backends
// signed before the Signer seam existed, and is what `payhook signer` runs
// behind its policy on another machine.
//
// # Guarantees
//
//   - Local computes every digest itself from the whole transaction it is
//     given (BIP143 for P2WPKH, the legacy digest for P2PKH, BIP143 with
//     SIGHASH_FORKID for bch, EIP-155/1559 for EVM, sha256 of raw_data for
//     TRON, the message for Solana); it never signs a digest handed to it.
//   - A UTXO input is signed only when the key its request names controls
//     the output it spends (the key's address locks that script), and
//     every signature is verified (txscript's engine; the FORKID digest for
//     bch) before the transaction is returned.
//   - An output a request calls the seed's own (chains.UTXOOwnOutput) is
//     checked to pay the key it names: CheckUTXO tells a policy which
//     outputs leave the seed's keys.
//
// # Failure modes
//
// A request that is malformed or names a key that does not control what
// it spends wraps chains.ErrInvalidForward; a key that cannot be derived
// wraps chains.ErrInvalidIndex as well. Local holds the seed: never log it
// (its String prints nothing of it).
package keysign
