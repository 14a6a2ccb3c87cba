package watchonly

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
)

// MaxLen is the longest input Parse reads, in bytes. A descriptor with a
// key origin of a few steps is under 200.
const MaxLen = 1000

// accountDepth is the BIP 44/49/84/86 account level, m/purpose'/coin'/account'.
const accountDepth = 3

// Key is a merchant's watch-only key for one ticker: an account's extended
// public key, the script type of its addresses and, when the merchant gave
// one, its key origin. It holds no private key. A Key is immutable and safe
// for concurrent use.
type Key struct {
	ticker chains.Ticker
	script Script
	evm    bool
	// origin is the key origin of a descriptor; nil for a bare key.
	origin *origin
	// account is the key as given, with the standard version (xpub or
	// tpub) that descriptors use.
	account *hdkeychain.ExtendedKey
	// chain is account/0, the receive chain, derived once.
	chain *hdkeychain.ExtendedKey
	// params encodes UTXO addresses (utxo.Params); nil for EVM.
	params *chaincfg.Params
}

// origin is a descriptor's key origin: the master key's fingerprint and
// the path from it to the key.
type origin struct {
	fingerprint [4]byte
	path        []uint32
}

// Parse reads spec, an extended public key or an output descriptor (see
// the package documentation), as the watch-only wallet of t. Surrounding
// white space is ignored. The error is a *KeyError (wrapping
// ErrInvalidKey) naming what is wrong.
func Parse(t chains.Ticker, spec string) (*Key, error) {
	p := parser{t: t}
	k, reason := p.parse(spec)
	if reason != "" {
		return nil, &KeyError{Ticker: t.Ticker, Reason: reason}
	}
	return k, nil
}

type parser struct{ t chains.Ticker }

func (p parser) parse(spec string) (*Key, string) {
	if len(spec) > MaxLen {
		return nil, fmt.Sprintf("%d bytes is too long (at most %d)", len(spec), MaxLen)
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, "empty: give an extended public key (xpub...) or a descriptor such as wpkh([fingerprint/84h/0h/0h]xpub.../0/*)"
	}
	for i := 0; i < len(spec); i++ {
		if c := spec[i]; c <= ' ' || c >= 0x7f {
			return nil, fmt.Sprintf("character %q at byte %d: a key or descriptor is printable ASCII without spaces", rune(c), i)
		}
	}
	switch p.t.Family {
	case chains.FamilyUTXO:
		return p.utxo(spec)
	case chains.FamilyEVM:
		return p.evm(spec)
	}
	return nil, fmt.Sprintf("%s is a %q coin: watch-only keys are for UTXO coins (btc, ltc, bch, doge) and EVM chains", p.t.Ticker, p.t.Family)
}

func (p parser) isTest() bool { return p.t.Net == chains.Testnet || p.t.Net == chains.Regtest }

func (p parser) utxo(spec string) (*Key, string) {
	params, ok := utxo.Params(p.t)
	if !ok {
		return nil, fmt.Sprintf("utxo network %q on %s is not supported", p.t.Network, p.t.Net)
	}
	if !strings.ContainsAny(spec, "()#[]/") {
		ek, kv, reason := p.decodeKey(spec)
		if reason != "" {
			return nil, reason
		}
		if reason := p.depthWithoutOrigin(ek); reason != "" {
			return nil, reason
		}
		return p.newKey(kv.script, nil, ek, params)
	}
	if !strings.Contains(spec, "(") {
		return nil, "a bare key takes no key origin, path or checksum: give the account key alone (xpub...), or a descriptor such as wpkh([fingerprint/84h/0h/0h]xpub.../0/*)"
	}
	body, reason := splitChecksum(spec)
	if reason != "" {
		return nil, reason
	}
	script, keyExpr, reason := parseScript(body)
	if reason != "" {
		return nil, reason
	}
	org, keyStr, path, reason := splitKeyExpr(keyExpr)
	if reason != "" {
		return nil, reason
	}
	ek, kv, reason := p.decodeKey(keyStr)
	if reason != "" {
		return nil, reason
	}
	if kv.version != versionXpub && kv.version != versionTpub {
		want := "xpub"
		if p.isTest() {
			want = "tpub"
		}
		return nil, fmt.Sprintf("inside a descriptor write the key as %s: the script type is the descriptor's %s(), not the key's %s prefix", want, script, kv.prefix)
	}
	if script.segwit() && !utxo.HasSegwit(p.t) {
		return nil, fmt.Sprintf("%s() gives segwit addresses, and %s has no segwit: write pkh(KEY/0/*)", script, p.t.Ticker)
	}
	if reason := pathProblem(path); reason != "" {
		return nil, reason
	}
	if org == nil {
		reason = p.depthWithoutOrigin(ek)
	} else {
		reason = originProblem(org, ek)
	}
	if reason != "" {
		return nil, reason
	}
	return p.newKey(script, org, ek, params)
}

func (p parser) evm(spec string) (*Key, string) {
	if strings.ContainsAny(spec, "()#[]/") {
		return nil, fmt.Sprintf("%s takes the account's extended public key alone (xpub... at m/44'/60'/0'), not a descriptor or a path", p.t.Ticker)
	}
	ek, kv, reason := p.decodeKey(spec)
	if reason != "" {
		return nil, reason
	}
	if kv.version != versionXpub {
		return nil, fmt.Sprintf("%s is a Bitcoin prefix (%s addresses): an EVM account key is written xpub, on every network", kv.prefix, kv.script)
	}
	if ek.Depth() != accountDepth || ek.ChildIndex() < hdkeychain.HardenedKeyStart {
		return nil, fmt.Sprintf("%s: an EVM key must be the account key at m/44'/60'/0' (depth 3, hardened), whose /0/i are the addresses", depthName(ek))
	}
	k, reason := p.newKey(P2PKH, nil, ek, nil)
	if k != nil {
		k.evm = true
	}
	return k, reason
}

// decodeKey decodes an extended public key and checks that it suits t's
// network.
func (p parser) decodeKey(s string) (*hdkeychain.ExtendedKey, keyVersion, string) {
	if i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune(base58Alphabet, r) }); i >= 0 {
		return nil, keyVersion{}, fmt.Sprintf("character %q at byte %d of the key is not base58: an extended key is xpub... (or tpub..., ypub..., zpub...)", s[i], i)
	}
	raw := base58.Decode(s)
	if len(raw) != 82 {
		return nil, keyVersion{}, fmt.Sprintf("not an extended key: %d characters decode to %d bytes, want 82 (xpub..., 111 characters)", len(s), len(raw))
	}
	payload := raw[:78]
	if !bytes.Equal(raw[78:], chainhash.DoubleHashB(payload)[:4]) {
		return nil, keyVersion{}, "bad checksum in the extended key: a character was mistyped or lost"
	}
	version := binary.BigEndian.Uint32(payload[:4])
	kv, known := lookupVersion(version)
	switch {
	case !known:
		return nil, keyVersion{}, fmt.Sprintf("unknown extended key version 0x%08x (%.4s...): want xpub, ypub or zpub (tpub, upub or vpub off mainnet)", version, s)
	case kv.private || payload[45] == 0x00:
		return nil, keyVersion{}, fmt.Sprintf("this is a private key (%s): never give payhook a private key; export the account's extended public key (%s) from your wallet", kv.prefix, publicPrefix(kv))
	case kv.script == 0:
		return nil, keyVersion{}, fmt.Sprintf("%s is a multisig key prefix: payhook derives single-key addresses only", kv.prefix)
	case kv.coin != "" && kv.coin != p.t.Network:
		return nil, keyVersion{}, fmt.Sprintf("%s is a %s key prefix, not for %s", kv.prefix, kv.coin, p.t.Ticker)
	case p.t.Family == chains.FamilyUTXO && kv.test && !p.isTest():
		return nil, keyVersion{}, fmt.Sprintf("%s is a testnet/regtest key, and %s runs on mainnet here: give the mainnet key (xpub, ypub, zpub)", kv.prefix, p.t.Ticker)
	case p.t.Family == chains.FamilyUTXO && !kv.test && p.isTest():
		return nil, keyVersion{}, fmt.Sprintf("%s is a mainnet key, and %s runs on %s here: give the %s key (tpub, upub, vpub)", kv.prefix, p.t.Ticker, p.t.Net, p.t.Net)
	case p.t.Family == chains.FamilyUTXO && kv.script.segwit() && !utxo.HasSegwit(p.t):
		return nil, keyVersion{}, fmt.Sprintf("%s keys give %s (segwit) addresses, and %s has no segwit: give an xpub for P2PKH addresses", kv.prefix, kv.script, p.t.Ticker)
	}
	ek, err := hdkeychain.NewKeyFromString(s)
	if err != nil {
		return nil, keyVersion{}, "the extended key's public key is not a valid secp256k1 point"
	}
	return ek, kv, ""
}

// base58Alphabet is Bitcoin's base58 alphabet.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// publicPrefix is the public prefix matching a private version.
func publicPrefix(kv keyVersion) string {
	for _, o := range keyVersions {
		if !o.private && o.script == kv.script && o.test == kv.test && o.coin == kv.coin {
			return o.prefix
		}
	}
	return "xpub"
}

func depthName(ek *hdkeychain.ExtendedKey) string {
	if ek.ChildIndex() >= hdkeychain.HardenedKeyStart {
		return fmt.Sprintf("the key has depth %d (child %d')", ek.Depth(), ek.ChildIndex()-hdkeychain.HardenedKeyStart)
	}
	return fmt.Sprintf("the key has depth %d (child %d, not hardened)", ek.Depth(), ek.ChildIndex())
}

// depthWithoutOrigin is the rule for a key whose origin is unknown: it must
// be an account key, depth 3 with a hardened last step.
func (p parser) depthWithoutOrigin(ek *hdkeychain.ExtendedKey) string {
	if ek.Depth() == accountDepth && ek.ChildIndex() >= hdkeychain.HardenedKeyStart {
		return ""
	}
	return fmt.Sprintf("%s: a key without key origin must be an account key (depth 3, m/purpose'/coin'/account'); for a key at another depth write a descriptor with its origin, e.g. wpkh([fingerprint/84h/0h/0h]xpub.../0/*)", depthName(ek))
}

// originProblem checks a key origin against the key: the path has as many
// steps as the key's depth, and ends with the key's child number (a master
// key's fingerprint is its own).
func originProblem(o *origin, ek *hdkeychain.ExtendedKey) string {
	if len(o.path) != int(ek.Depth()) {
		return fmt.Sprintf("the key origin has %d steps but the key has depth %d: the origin path must lead from the master key to this key", len(o.path), ek.Depth())
	}
	if len(o.path) == 0 {
		pub, err := ek.ECPubKey()
		if err != nil {
			return "the extended key's public key is not a valid secp256k1 point"
		}
		if !bytes.Equal(btcutil.Hash160(pub.SerializeCompressed())[:4], o.fingerprint[:]) {
			return "the key origin's fingerprint is not this master key's"
		}
		return ""
	}
	if last := o.path[len(o.path)-1]; last != ek.ChildIndex() {
		return fmt.Sprintf("the key origin ends with step %s but the key is child %s of its parent", stepString(last), stepString(ek.ChildIndex()))
	}
	if len(o.path) == 1 && binary.BigEndian.Uint32(o.fingerprint[:]) != ek.ParentFingerprint() {
		return "the key origin's fingerprint is not the key's parent's"
	}
	return ""
}

// newKey builds a Key from a validated account key.
func (p parser) newKey(s Script, o *origin, ek *hdkeychain.ExtendedKey, params *chaincfg.Params) (*Key, string) {
	if ek.Depth() > 253 {
		return nil, fmt.Sprintf("the key has depth %d: its addresses would be deeper than BIP 32's 255 steps", ek.Depth())
	}
	version := versionXpub
	if p.t.Family == chains.FamilyUTXO && p.isTest() {
		version = versionTpub
	}
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], version)
	account, err := ek.CloneWithVersion(v[:])
	if err != nil {
		return nil, "the extended key cannot be re-encoded: " + err.Error()
	}
	chain, err := account.Derive(0)
	if err != nil {
		// BIP 32 declares /0 invalid with probability below 2^-127.
		return nil, "the key's receive chain /0 is invalid under BIP 32: use another account"
	}
	return &Key{ticker: p.t, script: s, origin: o, account: account, chain: chain, params: params}, ""
}

// parseScript splits a descriptor into its script type and key expression.
func parseScript(body string) (Script, string, string) {
	name, inner, reason := splitFunc(body)
	if reason != "" {
		return 0, "", reason
	}
	var s Script
	switch name {
	case "pkh":
		s = P2PKH
	case "wpkh":
		s = P2WPKH
	case "tr":
		s = P2TR
		if strings.Contains(inner, ",") {
			return 0, "", "tr() with a script tree is not accepted: payhook derives key-path-only taproot addresses (BIP 86), tr(KEY/0/*)"
		}
	case "sh":
		n, in, reason := splitFunc(inner)
		if reason != "" || n != "wpkh" {
			return 0, "", "the only sh() descriptor accepted is sh(wpkh(KEY/0/*)) (P2SH-P2WPKH)"
		}
		s, inner = P2SHP2WPKH, in
	case "multi", "sortedmulti", "multi_a", "sortedmulti_a", "wsh", "combo", "addr", "raw", "pk", "rawtr":
		return 0, "", fmt.Sprintf("%s() descriptors are not accepted: payhook hands out single-key addresses: pkh(), sh(wpkh()), wpkh() or tr() of one KEY/0/*", name)
	default:
		return 0, "", fmt.Sprintf("unknown descriptor function %q: want pkh, sh(wpkh), wpkh or tr", name)
	}
	if strings.ContainsAny(inner, "(),") {
		return 0, "", fmt.Sprintf("%s() takes exactly one key, KEY/0/*", s)
	}
	return s, inner, ""
}

// splitFunc splits "name(inner)". The name is echoed in errors only when it
// looks like a function name.
func splitFunc(s string) (string, string, string) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return "", "", "expected a descriptor function such as wpkh(...)"
	}
	name := s[:open]
	if len(name) == 0 || len(name) > 16 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return "", "", "the descriptor must start with its function: pkh(, sh(wpkh(, wpkh( or tr("
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				if i != len(s)-1 {
					return "", "", fmt.Sprintf("%d characters of unexpected text after the closing parenthesis of %s()", len(s)-1-i, name)
				}
				return name, s[open+1 : i], ""
			}
		}
	}
	return "", "", fmt.Sprintf("unbalanced parentheses: %s( is not closed", name)
}

// splitKeyExpr splits [origin]KEY/path.
func splitKeyExpr(expr string) (*origin, string, string, string) {
	var o *origin
	if strings.HasPrefix(expr, "[") {
		end := strings.IndexByte(expr, ']')
		if end < 0 {
			return nil, "", "", "the key origin's [ is not closed by ]"
		}
		var reason string
		if o, reason = parseOrigin(expr[1:end]); reason != "" {
			return nil, "", "", reason
		}
		expr = expr[end+1:]
	}
	if strings.ContainsAny(expr, "[]") {
		return nil, "", "", "a key origin [fingerprint/path] comes once, before the key"
	}
	key, path, _ := strings.Cut(expr, "/")
	if key == "" {
		return nil, "", "", "no key: write KEY/0/* with KEY an xpub (tpub off mainnet)"
	}
	if path != "" || strings.HasSuffix(expr, "/") {
		path = "/" + path
	}
	return o, key, path, ""
}

// parseOrigin parses "fingerprint/step/step" (BIP 380: 8 hex characters,
// steps NUM, NUM' or NUMh).
func parseOrigin(s string) (*origin, string) {
	parts := strings.Split(s, "/")
	fp, err := hex.DecodeString(parts[0])
	if len(parts[0]) != 8 || err != nil {
		return nil, "the key origin must start with the master key's fingerprint, 8 hex characters, e.g. [d34db33f/84h/0h/0h]"
	}
	o := &origin{}
	copy(o.fingerprint[:], fp)
	for _, step := range parts[1:] {
		n, ok := parseStep(step)
		if !ok {
			return nil, fmt.Sprintf("key origin step %q is not a number below 2^31, optionally followed by h or '", safeQuote(step))
		}
		o.path = append(o.path, n)
	}
	return o, ""
}

func parseStep(step string) (uint32, bool) {
	hardened := strings.HasSuffix(step, "h") || strings.HasSuffix(step, "'")
	if hardened {
		step = step[:len(step)-1]
	}
	if step == "" || strings.Trim(step, "0123456789") != "" || len(step) > 10 {
		return 0, false
	}
	n, err := strconv.ParseUint(step, 10, 32)
	if err != nil || n >= hdkeychain.HardenedKeyStart {
		return 0, false
	}
	if hardened {
		n += hdkeychain.HardenedKeyStart
	}
	return uint32(n), true
}

// pathProblem accepts the one path after the key payhook derives from:
// /0/*, the receive chain.
func pathProblem(path string) string {
	switch {
	case path == "/0/*":
		return ""
	case path == "":
		return "the key needs the path /0/* after it (the account's receive chain), e.g. wpkh(xpub.../0/*)"
	case strings.ContainsAny(path, "<>;"):
		return "multipath descriptors (<0;1>) are not accepted: give the receive chain alone, /0/*"
	case strings.HasSuffix(path, "*'") || strings.HasSuffix(path, "*h"):
		return "hardened children (*h) cannot be derived from a public key: write /0/*"
	case path == "/1/*":
		return "/1/* is the change chain: payhook hands out receive addresses, /0/*"
	case !strings.HasSuffix(path, "/*"):
		return fmt.Sprintf("the path %q names one key, not a chain: write /0/* after the account key", safeQuote(path))
	}
	return fmt.Sprintf("the path %q is not accepted: only /0/* (the account's receive chain) is", safeQuote(path))
}

// safeQuote returns s when it is short or made of path characters only (so
// an error never echoes key material), else a placeholder.
func safeQuote(s string) string {
	if len(s) <= 12 || len(s) <= 40 && strings.Trim(s, "0123456789/*'h") == "" {
		return s
	}
	return "..."
}

func stepString(n uint32) string {
	if n >= hdkeychain.HardenedKeyStart {
		return strconv.FormatUint(uint64(n-hdkeychain.HardenedKeyStart), 10) + "h"
	}
	return strconv.FormatUint(uint64(n), 10)
}

// Ticker is the ticker the key was parsed for.
func (k *Key) Ticker() chains.Ticker { return k.ticker }

// Script is the output script type of the key's addresses (P2PKH for EVM).
func (k *Key) Script() Script { return k.script }

// Address returns address i of the key's receive chain, KEY/0/i, encoded as
// the ticker's network encodes it (CashAddr for bch, bech32m for taproot,
// EIP-55 for EVM). Errors wrap chains.ErrInvalidIndex: i of 2^31 or more,
// or the rare index BIP 32 declares invalid (skip to the next one).
func (k *Key) Address(i uint32) (string, error) {
	c, err := k.Child(ReceiveChain, i)
	if err != nil {
		return "", err
	}
	return c.Address, nil
}

// ChangeAddress returns address c of the key's internal (change) chain,
// KEY/1/c, the chain a payout's change goes to (BIP 44's internal chain,
// which the merchant's wallet scans as its own). EVM keys have no change
// chain. Errors are Address's.
func (k *Key) ChangeAddress(c uint32) (string, error) {
	ch, err := k.Child(ChangeChain, c)
	if err != nil {
		return "", err
	}
	return ch.Address, nil
}

// The chains of an account key.
const (
	// ReceiveChain is /0, the external chain payhook hands out.
	ReceiveChain uint32 = 0
	// ChangeChain is /1, the internal chain of change outputs.
	ChangeChain uint32 = 1
)

// Child is the public key at KEY/chain/i with what a signer needs to
// find its private key (BIP 174's BIP32 derivation).
type Child struct {
	// Address is the child's address, as Address encodes it.
	Address string
	// PubKey is the compressed secp256k1 public key, 33 bytes.
	PubKey []byte
	// Fingerprint is the master key's fingerprint from the descriptor's
	// key origin; without an origin it is the account key's own
	// fingerprint (as Bitcoin Core does for an origin-less xpub).
	Fingerprint [4]byte
	// Path is the full path from that key: the origin's steps then
	// chain, i; without an origin only chain, i.
	Path []uint32
}

// Child derives KEY/chain/i, chain ReceiveChain or ChangeChain (EVM keys:
// ReceiveChain only). Errors wrap chains.ErrInvalidIndex as Address's do.
func (k *Key) Child(chain, i uint32) (Child, error) {
	if i >= hdkeychain.HardenedKeyStart {
		return Child{}, fmt.Errorf("%w: %d: must be below 2^31", chains.ErrInvalidIndex, i)
	}
	base := k.chain
	switch {
	case chain == ChangeChain && !k.evm:
		var err error
		if base, err = k.account.Derive(ChangeChain); err != nil {
			return Child{}, fmt.Errorf("%w: the account's change chain /1 is invalid under BIP 32", chains.ErrInvalidIndex)
		}
	case chain != ReceiveChain:
		return Child{}, fmt.Errorf("%w: chain %d: want /0 (receive) or, for UTXO keys, /1 (change)", chains.ErrInvalidIndex, chain)
	}
	child, err := base.Derive(i)
	if err != nil {
		if errors.Is(err, hdkeychain.ErrInvalidChild) {
			return Child{}, fmt.Errorf("%w: %d: BIP 32 declares this child invalid: skip it", chains.ErrInvalidIndex, i)
		}
		return Child{}, fmt.Errorf("derive address %d: %w", i, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return Child{}, fmt.Errorf("derive address %d: %w", i, err)
	}
	c := Child{PubKey: pub.SerializeCompressed()}
	if k.origin != nil {
		c.Fingerprint = k.origin.fingerprint
		c.Path = append(append([]uint32{}, k.origin.path...), chain, i)
	} else {
		accPub, err := k.account.ECPubKey()
		if err != nil {
			return Child{}, fmt.Errorf("derive address %d: %w", i, err)
		}
		copy(c.Fingerprint[:], btcutil.Hash160(accPub.SerializeCompressed())[:4])
		c.Path = []uint32{chain, i}
	}
	if c.Address, err = k.encode(pub); err != nil {
		return Child{}, fmt.Errorf("derive address %d: %w", i, err)
	}
	return c, nil
}

// encode returns the address of pub for the key's script type.
func (k *Key) encode(pub *btcec.PublicKey) (string, error) {
	if k.evm {
		return crypto.PubkeyToAddress(*pub.ToECDSA()).Hex(), nil
	}
	hash := btcutil.Hash160(pub.SerializeCompressed())
	var a btcutil.Address
	var err error
	switch k.script {
	case P2PKH:
		a, err = btcutil.NewAddressPubKeyHash(hash, k.params)
	case P2SHP2WPKH:
		a, err = btcutil.NewAddressScriptHash(append([]byte{txscript.OP_0, txscript.OP_DATA_20}, hash...), k.params)
	case P2WPKH:
		a, err = btcutil.NewAddressWitnessPubKeyHash(hash, k.params)
	case P2TR:
		a, err = btcutil.NewAddressTaproot(schnorr.SerializePubKey(txscript.ComputeTaprootKeyNoScript(pub)), k.params)
	default:
		return "", fmt.Errorf("unknown script type %d", k.script)
	}
	if err != nil {
		return "", err
	}
	s, ok := utxo.EncodeAddress(k.ticker, a)
	if !ok {
		return "", fmt.Errorf("%w: %s has no %s addresses", chains.ErrUnsupportedNetwork, k.ticker.Ticker, k.script)
	}
	return s, nil
}

// Descriptor returns the canonical descriptor of a UTXO key with its BIP 380
// checksum, e.g. wpkh([d34db33f/84h/0h/0h]xpub.../0/*)#checksum: what the
// merchant imports in a wallet to see the payments. The key is written xpub
// (tpub off mainnet), hardened steps with h. For an EVM key, which has no
// descriptor, it returns the account xpub.
func (k *Key) Descriptor() string {
	if k.evm {
		return k.account.String()
	}
	var b strings.Builder
	if k.origin != nil {
		b.WriteString("[" + hex.EncodeToString(k.origin.fingerprint[:]))
		for _, s := range k.origin.path {
			b.WriteString("/" + stepString(s))
		}
		b.WriteString("]")
	}
	b.WriteString(k.account.String() + "/0/*")
	desc := k.script.wrap(b.String())
	sum, err := Checksum(desc)
	if err != nil { // unreachable: every character written is in the set
		return desc
	}
	return desc + "#" + sum
}

// String returns Descriptor: a public key's descriptor is no secret.
func (k *Key) String() string { return k.Descriptor() }

// HasOrigin reports whether the key came with its key origin (a
// descriptor's [fingerprint/path]): what a hardware wallet needs to find
// its key in a PSBT.
func (k *Key) HasOrigin() bool { return k.origin != nil }

// Space names the key's address space: its script type and account key,
// without the key origin or a checksum (wpkh(tpub.../0/*); an EVM key's
// "evm:" and account xpub). Two spellings of one key (with and without an
// origin, a bare zpub and its wpkh descriptor) have one space, and so hand
// out the same addresses; two keys of one space are one key.
func (k *Key) Space() string {
	if k.evm {
		return "evm:" + k.account.String()
	}
	return k.script.wrap(k.account.String() + "/0/*")
}
