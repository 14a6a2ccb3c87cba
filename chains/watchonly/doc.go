// Package watchonly parses a merchant's extended public key or output
// descriptor and derives the addresses payhook hands out from it, so that
// payments land in the merchant's own wallet and payhook holds no key that
// can spend them.
//
// Parse accepts, for a UTXO ticker (btc, ltc, bch, doge on their Net):
//
//   - a bare BIP 32 account key (depth 3) whose SLIP-132 prefix says the
//     address type: xpub/tpub P2PKH, ypub/upub P2SH-P2WPKH, zpub/vpub
//     P2WPKH (and Litecoin's Ltub, Mtub and ttub);
//   - a BIP 380 descriptor pkh(KEY/0/*), sh(wpkh(KEY/0/*)), wpkh(KEY/0/*)
//     or tr(KEY/0/*) (BIP 86, key path only), KEY an xpub (tpub off
//     mainnet) with an optional key origin [fingerprint/path], the whole
//     with an optional #checksum, which is verified.
//
// For an EVM ticker it accepts an xpub at the account level (m/44'/60'/0',
// depth 3); addresses are /0/i, EIP-55.
//
// Only the external (receive) chain /0/* is handed out; ChangeAddress and
// Child also derive the internal chain /1/c, where a PSBT payout's change
// goes (chains/utxo/psbt). Private keys, multisig
// and script descriptors, change chains, hardened and multipath wildcards
// are refused with a *KeyError saying why. docs/decisions.md gives the
// rules and their reasons.
package watchonly
