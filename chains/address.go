package chains

// ValidateAddress reports whether addr is an address of t's network (on
// t.Net) that funds can be sent to: t.Rules().ValidateAddress. It returns
// nil, an *AddressError wrapping ErrInvalidAddress that says what is wrong,
// or an error wrapping ErrUnsupportedNetwork for a Ticker without a family
// (one not taken from a Registry) or a network its family does not serve.
//
// Each family's doc comment lists the forms it accepts and the ones it
// refuses on purpose (testnet addresses where the format tells them apart,
// witness versions not yet defined, burn addresses). Limits inherent to the
// formats: EVM, TRON and Solana testnets use the mainnet format, so their
// addresses pass; legacy base58 addresses are shared between btc and bch
// (and 3... P2SH between btc and ltc), so such an address passes for both.
func ValidateAddress(t Ticker, addr string) error {
	return t.Rules().ValidateAddress(t, addr)
}
