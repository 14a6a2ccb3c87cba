package chains

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// FamilyName names a chain family in registry files and in the database
// ("utxo", "evm", "tron", "solana"). Code never branches on it: it asks
// the ticker's Family (Ticker.Rules) instead.
type FamilyName string

// The names of the families payhook ships with.
const (
	// FamilyUTXO is Bitcoin and its descendants: btc, ltc, bch, doge.
	FamilyUTXO FamilyName = "utxo"
	// FamilyEVM is Ethereum and EVM-compatible networks: eth, erc20, bep20,
	// polygon.
	FamilyEVM FamilyName = "evm"
	// FamilyTron is TRON: trx and trc20 tokens.
	FamilyTron FamilyName = "tron"
	// FamilySolana is Solana: sol and SPL tokens.
	FamilySolana FamilyName = "solana"
)

// Family is everything that differs between chain families: address
// formats, keys, the payment lifecycle, what a confirmation count means,
// the smallest output the network carries, the fee model and payment URIs.
// Each family implements it once, in its own package (chains/utxo,
// chains/evm, chains/tron, chains/solana); chains/family lists them. A
// Registry binds every Ticker it holds to its family's implementation, so a
// caller asks t.Rules() and never compares family names.
//
// Implementations are immutable, pure (no I/O, no clock) and safe for
// concurrent use. Methods take the Ticker because one family serves several
// networks (btc and ltc are both utxo), and t.Net selects mainnet, testnet
// or regtest forms. Every address argument is a string as a merchant wrote
// it; methods that need a valid one return the *AddressError of
// ValidateAddress otherwise.
type Family interface {
	// Rules is the family's payment lifecycle (Evaluate).
	Rules

	// Name is the family's name in registry files.
	Name() FamilyName
	// Networks are the registry networks (the first ticker segment) this
	// family ships with. A registry may not assign them to another family;
	// an override may add other networks only where CheckTicker accepts
	// them.
	Networks() []string
	// CheckTicker reports whether the family can serve t, a registry entry
	// whose generic fields are already checked: a network it knows, a token
	// only where the family has tokens. The error is a *RegistryError
	// naming the field (its Entry and Ticker are filled in by the caller).
	CheckTicker(t Ticker) error

	// ValidateAddress reports whether addr is an address of t's network
	// (on t.Net) that funds can be sent to: nil, or an *AddressError saying
	// what is wrong.
	ValidateAddress(t Ticker, addr string) error
	// DestinationKey returns a canonical key of what addr, a valid address
	// of t, pays to: the output script (UTXO: whatever the encoding, base58
	// version alias, CashAddr prefix or bech32 case), the 20-byte account
	// (EVM, any case), the 21-byte account (TRON), the public key
	// (Solana). Two spellings of one destination have equal keys, two
	// destinations different ones; keys are compared within one ticker
	// only. Errors are those of ValidateAddress.
	DestinationKey(t Ticker, addr string) (string, error)
	// MinOutput returns the smallest amount, in coin units, that one
	// transaction output to addr (a valid address of t) may carry on t's
	// network: UTXO dust by the output's script type, Solana's rent-exempt
	// minimum of a new account; zero where the network sets none. An output
	// below it is refused by the network (or its nodes' relay policy), so a
	// forward carrying one can never land. Errors are those of
	// ValidateAddress.
	MinOutput(t Ticker, addr string) (decimal.Decimal, error)

	// KeyPaths are the key paths of every network the family serves, on
	// any Net, so that a Deriver can prepare them once.
	KeyPaths() []KeyPath
	// KeyPath says where the keys of t's addresses sit in the operator's
	// seed. The error wraps ErrUnsupportedNetwork for a network the family
	// does not serve.
	KeyPath(t Ticker) (KeyPath, error)
	// Address returns the address of t (on t.Net) that the public key pub
	// controls: a 33-byte compressed secp256k1 key, or a 32-byte ed25519
	// key, as KeyPath(t).Curve says. Deriver and Keys use it, so the
	// address they give always passes ValidateAddress.
	Address(t Ticker, pub []byte) (string, error)

	// FixedConfirmations reports whether the family counts confirmations
	// at all. When fixed is true it does not (Solana accepts a transfer at
	// a commitment level): every address of t requires n, whatever the
	// merchant asked for, and every callback reports n. When fixed is
	// false, n is 0 and confirmations are block depths.
	FixedConfirmations(t Ticker) (n int64, fixed bool)
	// SpendsSeveralAddresses reports whether one transaction of t may
	// spend funds held on several of payhook's addresses, each input
	// signed with its own address's key (UTXO: chains.Forward.Keys).
	// Account chains move one account's balance per transaction: false.
	SpendsSeveralAddresses(t Ticker) bool
	// Relation says whether an address of u can receive t's asset, t and u
	// both of this family: on the same chain (a token sent to a native
	// coin's address: EVM, TRON), on another chain of the family with the
	// same addresses and keys (EVM chains), or not at all (UTXO, Solana,
	// whose token accounts are not the owner's address).
	Relation(t, u Ticker) Relation
	// Priorities are t's forwarding fee levels (the family's `priority`
	// parameter), default among them; [DefaultPriority] where the family
	// documents none for t.
	Priorities(t Ticker) []Priority
	// DistributionDepth returns the depth a credited transfer of t must
	// reach, in a solidified block, before its funds are distributed, when
	// the family gates distribution beyond credit (TRON); 0 when a credited
	// payment is distributable as soon as it is in a block. required is the
	// address's required confirmations.
	DistributionDepth(t Ticker, required int64) int64

	// NetworkFee is what forwarding one payment of t deducts for the
	// network, in coin units: the operator's estimate
	// (t.NetworkFeeEstimate) rounded up to the coin's base unit, as the
	// forwarding plan rounds it, whatever the number of destinations.
	NetworkFee(t Ticker) decimal.Decimal
	// PaymentURI returns the URI a wallet opens to pay amount (nil: no
	// amount) of t to addr, which the caller has validated. The error wraps
	// ErrUnsupportedNetwork when no URI scheme is known for t's network.
	PaymentURI(t Ticker, addr string, amount *decimal.Decimal) (string, error)
}

// Relation is how an address of one ticker relates to another ticker's
// asset (Family.Relation).
type Relation int

// Relations.
const (
	// Unrelated: an address of the one never receives the other's asset.
	Unrelated Relation = iota
	// SameTicker: the two are one ticker.
	SameTicker
	// SameChain: both assets live on one chain and share its addresses
	// (a token and its chain's native coin, two tokens of one chain).
	SameChain
	// OtherChain: the assets live on two chains that share addresses and
	// keys (EVM chains): one address receives on both.
	OtherChain
)

// Curve is the signature scheme of a family's keys.
type Curve int

// Curves.
const (
	// Secp256k1 keys derive by BIP32: m/purpose'/coin'/0'/branch/index.
	Secp256k1 Curve = iota + 1
	// Ed25519 keys derive by SLIP-0010, which has hardened steps only: the
	// index is the account, m/purpose'/coin'/index'/branch'.
	Ed25519
)

// KeyPath says where a network's keys sit in the operator's seed.
type KeyPath struct {
	// Curve is the signature scheme; it fixes the layout of the path.
	Curve Curve
	// Purpose is the first hardened step (BIP43: 44, or 84 for P2WPKH).
	Purpose uint32
	// CoinType is the second hardened step (SLIP-0044).
	CoinType uint32
}

// Path returns the path of the key at branch (0: payment addresses, 1: the
// operator's change chain) and index, in the usual notation with ' for
// hardened steps, e.g. "m/84'/0'/0'/0/7".
func (p KeyPath) Path(branch, index uint32) string {
	if p.Curve == Ed25519 {
		return fmt.Sprintf("m/%d'/%d'/%d'/%d'", p.Purpose, p.CoinType, index, branch)
	}
	return fmt.Sprintf("m/%d'/%d'/0'/%d/%d", p.Purpose, p.CoinType, branch, index)
}

// Rules returns the Family of t's chain family. A Ticker from a Registry
// always has one. A Ticker built by hand has none until WithFamily: Rules
// then returns a Family whose methods fail with ErrUnsupportedNetwork (and
// whose Evaluate changes nothing), so a missing binding is an error, never
// a panic.
func (t Ticker) Rules() Family {
	if t.family == nil {
		return unbound{}
	}
	return t.family
}

// HasRules reports whether t is bound to a Family (see Rules).
func (t Ticker) HasRules() bool { return t.family != nil }

// WithFamily returns t bound to f, with t.Family set to f's name: for
// tickers built by hand (tests, tools). A Registry binds its tickers itself.
func (t Ticker) WithFamily(f Family) Ticker {
	t.family = f
	t.Family = f.Name()
	return t
}

// EstimatedFee is the fee model of a family whose forwarding cost is the
// operator's per-payment estimate (Ticker.NetworkFeeEstimate): a family
// embeds it for its NetworkFee method.
type EstimatedFee struct{}

// NetworkFee returns t.NetworkFeeEstimate rounded up to t's base unit.
func (EstimatedFee) NetworkFee(t Ticker) decimal.Decimal {
	return t.NetworkFeeEstimate.RoundCeil(t.Decimals)
}

// unbound is the Family of a Ticker that has none.
type unbound struct{ EstimatedFee }

func (unbound) fail(t Ticker) error {
	return fmt.Errorf("%w: ticker %q (family %q) has no family implementation bound; take it from a Registry", ErrUnsupportedNetwork, t.Ticker, t.Family)
}

func (unbound) Evaluate(_ Ticker, _ int64, prev PaymentState, _ TxState) Step {
	return Step{Status: prev.Status, Confirmations: prev.Confirmations}
}
func (unbound) Name() FamilyName             { return "" }
func (unbound) Networks() []string           { return nil }
func (u unbound) CheckTicker(t Ticker) error { return u.fail(t) }
func (u unbound) ValidateAddress(t Ticker, _ string) error {
	return u.fail(t)
}
func (u unbound) DestinationKey(t Ticker, _ string) (string, error) {
	return "", u.fail(t)
}
func (u unbound) MinOutput(t Ticker, _ string) (decimal.Decimal, error) {
	return decimal.Zero, u.fail(t)
}
func (unbound) KeyPaths() []KeyPath                 { return nil }
func (u unbound) KeyPath(t Ticker) (KeyPath, error) { return KeyPath{}, u.fail(t) }
func (u unbound) Address(t Ticker, _ []byte) (string, error) {
	return "", u.fail(t)
}
func (unbound) FixedConfirmations(Ticker) (int64, bool) { return 0, false }
func (unbound) SpendsSeveralAddresses(Ticker) bool      { return false }
func (unbound) Relation(Ticker, Ticker) Relation        { return Unrelated }
func (unbound) Priorities(Ticker) []Priority            { return []Priority{DefaultPriority} }
func (unbound) DistributionDepth(Ticker, int64) int64   { return 0 }
func (u unbound) PaymentURI(t Ticker, _ string, _ *decimal.Decimal) (string, error) {
	return "", u.fail(t)
}
