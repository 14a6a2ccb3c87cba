package watchonly

// Script is the output script a Key's addresses pay to.
type Script int

// Scripts.
const (
	// P2PKH is pay-to-public-key-hash: pkh(KEY), xpub/tpub (and EVM
	// accounts, whose Script is P2PKH for want of another).
	P2PKH Script = iota + 1
	// P2SHP2WPKH is P2WPKH nested in P2SH: sh(wpkh(KEY)), ypub/upub.
	P2SHP2WPKH
	// P2WPKH is native segwit v0: wpkh(KEY), zpub/vpub.
	P2WPKH
	// P2TR is taproot, key path only (BIP 86): tr(KEY).
	P2TR
)

// String returns the descriptor function of s, e.g. "sh(wpkh)".
func (s Script) String() string {
	switch s {
	case P2PKH:
		return "pkh"
	case P2SHP2WPKH:
		return "sh(wpkh)"
	case P2WPKH:
		return "wpkh"
	case P2TR:
		return "tr"
	}
	return "unknown"
}

// segwit reports whether s needs a network with segwit.
func (s Script) segwit() bool { return s == P2SHP2WPKH || s == P2WPKH || s == P2TR }

// wrap returns the descriptor of s around key.
func (s Script) wrap(key string) string {
	if s == P2SHP2WPKH {
		return "sh(wpkh(" + key + "))"
	}
	return s.String() + "(" + key + ")"
}

// keyVersion is one SLIP-132 extended key version.
type keyVersion struct {
	prefix  string // the first four characters it encodes to
	version uint32
	private bool
	test    bool // a testnet/regtest key
	// script is the address type the prefix implies for a bare key; 0 for
	// multisig prefixes, which payhook refuses.
	script Script
	// coin, when not "", is the only network that uses this prefix.
	coin string
}

// Standard BIP 32 versions, which descriptors use.
const (
	versionXpub uint32 = 0x0488b21e
	versionTpub uint32 = 0x043587cf
)

// keyVersions are the extended key versions of SLIP-132 payhook knows:
// those it accepts (public, single-key) and those it recognises to refuse
// with a reason (private keys, multisig prefixes).
var keyVersions = []keyVersion{
	{"xpub", versionXpub, false, false, P2PKH, ""},
	{"xprv", 0x0488ade4, true, false, P2PKH, ""},
	{"ypub", 0x049d7cb2, false, false, P2SHP2WPKH, ""},
	{"yprv", 0x049d7878, true, false, P2SHP2WPKH, ""},
	{"zpub", 0x04b24746, false, false, P2WPKH, ""},
	{"zprv", 0x04b2430c, true, false, P2WPKH, ""},
	{"Ypub", 0x0295b43f, false, false, 0, ""},
	{"Yprv", 0x0295b005, true, false, 0, ""},
	{"Zpub", 0x02aa7ed3, false, false, 0, ""},
	{"Zprv", 0x02aa7a99, true, false, 0, ""},
	{"tpub", versionTpub, false, true, P2PKH, ""},
	{"tprv", 0x04358394, true, true, P2PKH, ""},
	{"upub", 0x044a5262, false, true, P2SHP2WPKH, ""},
	{"uprv", 0x044a4e28, true, true, P2SHP2WPKH, ""},
	{"vpub", 0x045f1cf6, false, true, P2WPKH, ""},
	{"vprv", 0x045f18bc, true, true, P2WPKH, ""},
	{"Upub", 0x024289ef, false, true, 0, ""},
	{"Uprv", 0x024285b5, true, true, 0, ""},
	{"Vpub", 0x02575483, false, true, 0, ""},
	{"Vprv", 0x02575048, true, true, 0, ""},
	{"Ltub", 0x019da462, false, false, P2PKH, "ltc"},
	{"Ltpv", 0x019d9cfe, true, false, P2PKH, "ltc"},
	{"Mtub", 0x01b26ef6, false, false, P2SHP2WPKH, "ltc"},
	{"Mtpv", 0x01b26792, true, false, P2SHP2WPKH, "ltc"},
	{"ttub", 0x0436f6e1, false, true, P2PKH, "ltc"},
	{"ttpv", 0x0436ef7d, true, true, P2PKH, "ltc"},
}

func lookupVersion(v uint32) (keyVersion, bool) {
	for _, k := range keyVersions {
		if k.version == v {
			return k, true
		}
	}
	return keyVersion{}, false
}
