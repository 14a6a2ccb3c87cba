package utxo

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/codec"
)

// network holds what address validation and derivation need to know
// about one UTXO network.
type network struct {
	name string
	// p2pkh and p2sh are the accepted mainnet base58check version bytes.
	p2pkh, p2sh []byte
	// testBase58 are testnet/regtest version bytes, recognised only to say so.
	testBase58 []byte
	// segwitHRP is the mainnet bech32 human-readable part, "" without segwit.
	segwitHRP string
	// testHRPs are testnet/regtest bech32 or CashAddr prefixes.
	testHRPs []string
	// cashAddr selects CashAddr (bch), with cashPrefix ("bitcoincash").
	cashAddr   bool
	cashPrefix string
	// net is the network (Mainnet when empty).
	net chains.Net
	// params, when not nil, is a chaincfg.Params value used with btcutil
	// (address cross-checks and encoding). It is a private value: nothing
	// is registered with chaincfg.
	params *chaincfg.Params
	// purpose and coinType give the deposit derivation path
	// m/purpose'/coinType'/0'/0/i.
	purpose, coinType uint32
	// uriScheme is the BIP21 URI scheme of payment URIs.
	uriScheme string
	// dustRelayPerKvB is the fee rate (base units per 1000 virtual bytes)
	// the network's nodes define dust with (see dust.go); 0 when dust is
	// the flat dustFlat instead.
	dustRelayPerKvB int64
	// dustFlat is the network's dust limit in base units, whatever the
	// output's script, where it is flat (Dogecoin).
	dustFlat int64
}

// networkNames are the UTXO networks this package knows.
func networkNames() []string { return []string{"btc", "ltc", "bch", "doge"} }

// networkByName returns the mainnet description of a supported UTXO
// network (networkOn(name, Mainnet)).
func networkByName(name string) (network, bool) { return networkOn(name, chains.Mainnet) }

// networkOn returns the description of a supported UTXO network on net.
// It builds a fresh value each call so that no package state can be
// mutated. On a test network the "test" forms it recognises to name are the
// mainnet ones (and the other test network's bech32 prefix), so that an
// address of the wrong network is refused with a clear reason.
func networkOn(name string, net chains.Net) (network, bool) {
	n, ok := mainnetNetwork(name)
	if !ok || net == chains.Mainnet || net == "" {
		return n, ok
	}
	if !net.Valid() {
		return network{}, false
	}
	mainBase58 := append(slices.Clone(n.p2pkh), n.p2sh...)
	n.net = net
	switch name {
	case "btc":
		n.p2pkh, n.p2sh = []byte{0x6f}, []byte{0xc4}
		n.params = &chaincfg.TestNet3Params
		n.segwitHRP, n.testHRPs = "tb", []string{"bc", "bcrt"}
		if net == chains.Regtest {
			n.params = &chaincfg.RegressionNetParams
			n.segwitHRP, n.testHRPs = "bcrt", []string{"bc", "tb"}
		}
	case "ltc":
		n.p2pkh, n.p2sh = []byte{0x6f}, []byte{0x3a, 0xc4}
		n.segwitHRP, n.testHRPs = "tltc", []string{"ltc", "rltc"}
		if net == chains.Regtest {
			n.segwitHRP, n.testHRPs = "rltc", []string{"ltc", "tltc"}
		}
		n.params = &chaincfg.Params{Name: "litecoin-" + string(net), Bech32HRPSegwit: n.segwitHRP,
			PubKeyHashAddrID: 0x6f, ScriptHashAddrID: 0x3a, PrivateKeyID: 0xef, HDCoinType: 2}
	case "bch":
		n.p2pkh, n.p2sh = []byte{0x6f}, []byte{0xc4}
		n.cashPrefix, n.testHRPs = "bchtest", []string{"bitcoincash", "bchreg"}
		if net == chains.Regtest {
			n.cashPrefix, n.testHRPs = "bchreg", []string{"bitcoincash", "bchtest"}
		}
		n.params = &chaincfg.TestNet3Params
	case "doge":
		n.p2pkh, n.p2sh = []byte{0x71}, []byte{0xc4}
		if net == chains.Regtest {
			n.p2pkh = []byte{0x6f}
		}
		n.params = &chaincfg.Params{Name: "dogecoin-" + string(net),
			PubKeyHashAddrID: n.p2pkh[0], ScriptHashAddrID: 0xc4, PrivateKeyID: 0xf1, HDCoinType: 3}
	}
	n.testBase58 = slices.DeleteFunc(mainBase58, func(v byte) bool {
		return slices.Contains(n.p2pkh, v) || slices.Contains(n.p2sh, v)
	})
	return n, true
}

// mainnetNetwork returns the mainnet description of a UTXO network.
func mainnetNetwork(name string) (network, bool) {
	switch name {
	case "btc":
		return network{
			name: "btc", p2pkh: []byte{0x00}, p2sh: []byte{0x05},
			testBase58: []byte{0x6f, 0xc4},
			segwitHRP:  "bc", testHRPs: []string{"tb", "bcrt", "sb"},
			params:  &chaincfg.MainNetParams,
			purpose: 84, coinType: 0, uriScheme: "bitcoin",
			dustRelayPerKvB: 3_000,
		}, true
	case "ltc":
		return network{
			name: "ltc", p2pkh: []byte{0x30}, p2sh: []byte{0x32, 0x05},
			testBase58: []byte{0x6f, 0x3a, 0xc4},
			segwitHRP:  "ltc", testHRPs: []string{"tltc", "rltc"},
			params:  litecoinMainNetParams(),
			purpose: 84, coinType: 2, uriScheme: "litecoin",
			dustRelayPerKvB: 30_000,
		}, true
	case "bch":
		return network{
			name: "bch", p2pkh: []byte{0x00}, p2sh: []byte{0x05},
			testBase58: []byte{0x6f, 0xc4},
			testHRPs:   []string{"bchtest", "bchreg"},
			cashAddr:   true, cashPrefix: cashAddrMainPrefix,
			params:  &chaincfg.MainNetParams,
			purpose: 44, coinType: 145, uriScheme: "bitcoincash",
			dustRelayPerKvB: 3_000,
		}, true
	case "doge":
		return network{
			name: "doge", p2pkh: []byte{0x1e}, p2sh: []byte{0x16},
			testBase58: []byte{0x71, 0xc4, 0x6f},
			params:     dogecoinMainNetParams(),
			purpose:    44, coinType: 3, uriScheme: "dogecoin",
			dustFlat: 1_000_000,
		}, true
	}
	return network{}, false
}

// netName is the network an address of n belongs to, for messages.
func (n network) netName() string {
	if n.net == "" {
		return string(chains.Mainnet)
	}
	return string(n.net)
}

// otherNetwork is the reason given for an address of another network of the
// same coin (a test network's on mainnet, mainnet's on a test network).
func (n network) otherNetwork(form string) string {
	if n.net == "" || n.net == chains.Mainnet {
		return fmt.Sprintf("testnet or regtest address (%s), not mainnet", form)
	}
	return fmt.Sprintf("address of another network (%s), not %s %s", form, n.name, n.net)
}

// litecoinMainNetParams returns the Litecoin mainnet values btcutil needs to
// encode and decode addresses. Litecoin's 0x05 P2SH legacy version is handled
// outside btcutil, which knows one P2SH version per network.
func litecoinMainNetParams() *chaincfg.Params {
	return &chaincfg.Params{
		Name:             "litecoin-mainnet",
		Bech32HRPSegwit:  "ltc",
		PubKeyHashAddrID: 0x30,
		ScriptHashAddrID: 0x32,
		PrivateKeyID:     0xb0,
		HDCoinType:       2,
	}
}

// dogecoinMainNetParams returns the Dogecoin mainnet values btcutil needs.
func dogecoinMainNetParams() *chaincfg.Params {
	return &chaincfg.Params{
		Name:             "dogecoin-mainnet",
		PubKeyHashAddrID: 0x1e,
		ScriptHashAddrID: 0x16,
		PrivateKeyID:     0x9e,
		HDCoinType:       3,
	}
}

func addressProblem(net network, addr string) string {
	lower := strings.ToLower(addr)
	if net.segwitHRP != "" && strings.HasPrefix(lower, net.segwitHRP+"1") {
		if reason := segwitProblem(addr, net.segwitHRP); reason != "" {
			return reason
		}
		return btcutilCrossCheck(net, addr)
	}
	for _, hrp := range net.testHRPs {
		if strings.HasPrefix(lower, hrp+"1") {
			return net.otherNetwork(fmt.Sprintf("prefix %q", hrp+"1"))
		}
	}
	if net.name == "ltc" && strings.HasPrefix(lower, "ltcmweb1") {
		return "MWEB (ltcmweb1...) addresses are not supported"
	}
	if net.cashAddr {
		if reason, isCashAddr := cashAddrProblem(net, addr); isCashAddr {
			return reason
		}
	}
	// A bech32 string of another network (or of a testnet) fails base58
	// decoding with a misleading reason; name it instead.
	if hrp, _, _, err := bech32.DecodeGeneric(addr); err == nil {
		if slices.Contains(net.testHRPs, hrp) {
			return net.otherNetwork(fmt.Sprintf("prefix %q", hrp+"1"))
		}
		if net.segwitHRP == "" {
			return fmt.Sprintf("bech32 address with prefix %q: %s has no segwit addresses", hrp+"1", net.name)
		}
		return fmt.Sprintf("bech32 prefix %q is not %q: not a %s address", hrp+"1", net.segwitHRP+"1", net.name)
	}
	return base58Problem(net, addr)
}

func base58Problem(net network, addr string) string {
	version, payload, reason := codec.DecodeBase58Check(addr)
	if reason != "" {
		return reason
	}
	isMain := slices.Contains(net.p2pkh, version) || slices.Contains(net.p2sh, version)
	switch {
	case isMain && len(payload) != 20:
		return fmt.Sprintf("wrong length: %d-byte hash, want 20", len(payload))
	case isMain:
		return btcutilCrossCheck(net, addr)
	case slices.Contains(net.testBase58, version):
		return net.otherNetwork(fmt.Sprintf("version byte 0x%02x", version))
	}
	want := make([]string, 0, 3)
	for _, v := range append(slices.Clone(net.p2pkh), net.p2sh...) {
		want = append(want, fmt.Sprintf("0x%02x", v))
	}
	return fmt.Sprintf("version byte 0x%02x is not a %s %s address (want %s)", version, net.name, net.netName(), strings.Join(want, ", "))
}

// btcutilCrossCheck runs btcutil's decoder over an address our own decoder
// accepted, for the forms btcutil knows for this network: a second,
// independently maintained opinion. It returns "" when btcutil has no
// opinion (a version byte or HRP btcutil cannot be told about without global
// registration).
func btcutilCrossCheck(net network, addr string) string {
	p := net.params
	if p == nil {
		return ""
	}
	if version, _, reason := codec.DecodeBase58Check(addr); reason == "" {
		if version != p.PubKeyHashAddrID && version != p.ScriptHashAddrID {
			return ""
		}
	} else if p != &chaincfg.MainNetParams && p != &chaincfg.TestNet3Params && p != &chaincfg.RegressionNetParams {
		// Segwit with a non-bitcoin HRP: btcutil only decodes HRPs
		// registered with chaincfg, and we register nothing.
		return ""
	}
	a, err := btcutil.DecodeAddress(addr, p)
	if err != nil {
		// Not echoed: btcutil's messages may carry the expected checksum,
		// which would invite "correcting" a mistyped address.
		return "not a valid address (rejected by the btcutil decoder)"
	}
	if !a.IsForNet(p) {
		return "not a " + net.netName() + " address"
	}
	return ""
}

// segwitProblem decodes a segwit address per BIP 173 and BIP 350 and applies
// the acceptance policy of ValidateAddress.
func segwitProblem(addr, wantHRP string) string {
	hrp, data, enc, err := bech32.DecodeGeneric(addr)
	if err != nil {
		var (
			mixed    bech32.ErrMixedCase
			checksum bech32.ErrInvalidChecksum
			char     bech32.ErrNonCharsetChar
			length   bech32.ErrInvalidLength
		)
		switch {
		case errors.As(err, &mixed):
			return "mixes upper and lower case"
		case errors.As(err, &checksum):
			return "bad checksum"
		case errors.As(err, &char):
			return fmt.Sprintf("invalid character %q for bech32 (1, b, i and o are never used after the separator)", rune(char))
		case errors.As(err, &length):
			return fmt.Sprintf("wrong length: %d characters", len(addr))
		}
		return "malformed bech32 address"
	}
	if hrp != wantHRP {
		return fmt.Sprintf("bech32 prefix %q, want %q", hrp+"1", wantHRP+"1")
	}
	if len(data) == 0 {
		return "no witness version"
	}
	version := data[0]
	if version > 16 {
		return fmt.Sprintf("invalid witness version %d", version)
	}
	program, err := bech32.ConvertBits(data[1:], 5, 8, false)
	if err != nil {
		return "invalid padding in the witness program"
	}
	switch {
	case len(program) < 2 || len(program) > 40:
		return fmt.Sprintf("wrong length: witness program of %d bytes, want 2 to 40", len(program))
	case version == 0 && enc != bech32.Version0:
		return "bad checksum: a witness version 0 address uses bech32, not bech32m"
	case version != 0 && enc != bech32.VersionM:
		return fmt.Sprintf("bad checksum: a witness version %d address uses bech32m, not bech32", version)
	case version == 0 && len(program) != 20 && len(program) != 32:
		return fmt.Sprintf("wrong length: witness version 0 program of %d bytes, want 20 or 32", len(program))
	case version == 1 && len(program) != 32:
		return fmt.Sprintf("witness version 1 program of %d bytes is not a taproot output (want 32); coins sent there could be lost", len(program))
	case version > 1:
		return fmt.Sprintf("witness version %d is not yet defined on the network; coins sent there could be lost", version)
	}
	return ""
}
