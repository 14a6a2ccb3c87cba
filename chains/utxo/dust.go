package utxo

import (
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// Dust: the smallest output a network's nodes relay, in base units.
//
// Bitcoin Core (policy/policy.cpp, GetDustThreshold) calls an output dust
// when it is worth less than the fee, at the dust relay fee rate, of the
// output itself plus the input that will spend it: 148 bytes for a
// non-witness output (32 + 4 + 1 + 107 + 4), 67 virtual bytes for a witness
// program (32 + 4 + 1 + 107/4 + 4). IsDust is value < threshold, so an
// output at the threshold is standard. With btc's 3,000 base units per
// 1000 vbytes: P2PKH 546, P2SH 540, P2WPKH 294, P2WSH and P2TR 330.
//
//   - Litecoin Core 0.21 uses the same formula with DUST_RELAY_TX_FEE
//     30,000 (policy/policy.h): P2PKH 5,460, P2SH 5,400, P2WPKH 2,940,
//     P2WSH and P2TR 3,300 litoshi.
//   - Bitcoin Cash nodes (Bitcoin Cash Node, Bitcoin ABC) compute
//     3 x fee(size + 148) at a dust relay fee of 1,000: the same values as
//     btc for the non-witness outputs bch has (P2PKH 546, P2SH 540).
//   - Dogecoin Core 1.14 has a flat limit instead (doc/fee-recommendation.md):
//     outputs below the hard limit of 0.001 DOGE are rejected, and each
//     output below the soft limit of 0.01 DOGE must add 0.01 DOGE to the
//     fee, which a forward's planned fee does not carry; so 0.01 DOGE
//     (1,000,000 koinu) is the smallest output a forward can pay.
const (
	// spendNonWitness is the size of the input that spends a non-witness
	// output.
	spendNonWitness = 32 + 4 + 1 + 107 + 4
	// spendWitness is the virtual size of the input that spends a witness
	// program.
	spendWitness = 32 + 4 + 1 + 107/4 + 4
)

// dustThreshold returns the smallest value, in base units, of an output
// carrying script on net.
func dustThreshold(net network, script []byte) int64 {
	if net.dustFlat > 0 {
		return net.dustFlat
	}
	size := int64(wire.NewTxOut(0, script).SerializeSize())
	if txscript.IsWitnessProgram(script) {
		size += spendWitness
	} else {
		size += spendNonWitness
	}
	// CFeeRate::GetFee, rounded up as Bitcoin Core 0.21+ does (every
	// supported size gives a whole number here anyway).
	return (size*net.dustRelayPerKvB + 999) / 1000
}

// MinOutput implements chains.Family: the network's dust threshold for the
// script addr pays to (see dustThreshold), in coin units.
func (Family) MinOutput(t chains.Ticker, addr string) (decimal.Decimal, error) {
	net, ok := networkOn(t.Network, t.Net)
	if !ok {
		return decimal.Zero, (Family{}).ValidateAddress(t, addr)
	}
	script, err := outputScript(t, addr)
	if err != nil {
		return decimal.Zero, err
	}
	return decimal.New(dustThreshold(net, script), -t.Decimals), nil
}
