package chains

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Limits enforced on every registry entry.
const (
	// MaxDecimals is the largest number of decimals a ticker may declare.
	MaxDecimals = 18
	// MaxConfirmations is the largest confirmation count a ticker may declare.
	MaxConfirmations = 100
)

// Ticker describes one payable asset: a native coin or a token on a network.
//
// Its ticker string has one or two lower-case segments. One segment ("btc")
// is a native coin whose Network and Coin are both that segment. Two
// segments ("trc20/usdt") name the network first and the asset last. Two
// segments usually mean a token, but not always: "polygon/pol" is the native
// POL coin of the Polygon network (Token false, no contract); the registry
// entry's "token" flag, not the number of segments, decides.
type Ticker struct {
	// Ticker is the canonical lower-case id, e.g. "btc" or "trc20/usdt".
	Ticker string
	// Network is the first segment: "btc", "trc20", "erc20", "bep20",
	// "polygon", "sol".
	Network string
	// Coin is the asset symbol, the last segment: "btc", "usdt".
	Coin string
	// Family names the chain family; Rules returns its implementation.
	Family FamilyName
	// Token is true for assets issued by a contract (ERC-20, BEP-20, TRC-20)
	// or an SPL mint, false for a network's native coin.
	Token bool
	// Contract is the token's mainnet contract address or SPL mint, in the
	// network's address format; "" for native coins.
	Contract string
	// Decimals is the number of decimal places of the smallest unit
	// (satoshi, wei, sun, lamport, token base unit).
	Decimals int32
	// DefaultConfirmations is the confirmation depth used when a merchant
	// does not ask for one.
	DefaultConfirmations int32
	// MinConfirmations is the smallest depth a merchant may ask for.
	MinConfirmations int32
	// MinTransaction is the smallest incoming amount, in coin units, that is
	// credited; smaller transfers are ignored.
	MinTransaction decimal.Decimal
	// FeeRate is the service fee as a fraction of the amount, in [0, 1).
	FeeRate decimal.Decimal
	// Net is the network the ticker's node runs on: Mainnet (or "", the
	// registry's default), Testnet or Regtest. It selects the address
	// forms that derivation produces and validation accepts (bech32
	// prefixes, version bytes). Set with Registry.WithNet.
	Net Net
	// NetworkFeeEstimate is the expected network fee of forwarding one
	// payment, in units of Coin (for tokens, the fee paid in the network's
	// native coin expressed in the token, as the operator estimates it).
	NetworkFeeEstimate decimal.Decimal

	// family is the implementation of Family, bound by the Registry.
	family Family
}

// Registry is an immutable set of tickers. It is safe for concurrent use.
type Registry struct {
	byTicker map[string]Ticker
	sorted   []Ticker
	// left are the tickers Only left out, for Get's message.
	left map[string]bool
}

//go:embed registry.json
var defaultRegistryJSON []byte

// DefaultRegistry returns the registry embedded in the binary (registry.json
// in this package), its tickers bound to families (chains/family.All lists
// payhook's). Each call parses the embedded file afresh, so callers own the
// result. It panics only if the embedded file is invalid for families,
// which the package tests rule out for chains/family.All.
func DefaultRegistry(families []Family) *Registry {
	r, err := LoadRegistry(bytes.NewReader(defaultRegistryJSON), families)
	if err != nil {
		panic("chains: embedded registry.json is invalid: " + err.Error())
	}
	return r
}

// Lookup returns the ticker named by ticker ("btc", "trc20/usdt"), compared
// case-insensitively.
func (r *Registry) Lookup(ticker string) (Ticker, bool) {
	t, ok := r.byTicker[strings.ToLower(ticker)]
	return t, ok
}

// Get is Lookup for callers that want an error: it wraps ErrUnknownTicker
// when ticker is not in the registry.
func (r *Registry) Get(ticker string) (Ticker, error) {
	t, ok := r.Lookup(ticker)
	if !ok && r.left[strings.ToLower(ticker)] {
		return Ticker{}, fmt.Errorf("%w: %q is not offered by this server: no chain node is configured for it", ErrUnknownTicker, ticker)
	}
	if !ok {
		return Ticker{}, fmt.Errorf("%w: %q", ErrUnknownTicker, ticker)
	}
	return t, nil
}

// WithNet returns a copy of r in which ticker runs on net (see Ticker.Net).
// It wraps ErrUnknownTicker for a ticker not in r and ErrUnsupportedNetwork
// for a net that is not mainnet, testnet or regtest.
func (r *Registry) WithNet(ticker string, net Net) (*Registry, error) {
	t, err := r.Get(ticker)
	if err != nil {
		return nil, err
	}
	if !net.Valid() {
		return nil, fmt.Errorf("%w: network %q, want mainnet, testnet or regtest", ErrUnsupportedNetwork, net)
	}
	if net == Mainnet {
		net = ""
	}
	t.Net = net
	out := &Registry{byTicker: make(map[string]Ticker, len(r.byTicker)), sorted: slices.Clone(r.sorted)}
	for k, v := range r.byTicker {
		out.byTicker[k] = v
	}
	out.byTicker[t.Ticker] = t
	for i := range out.sorted {
		if out.sorted[i].Ticker == t.Ticker {
			out.sorted[i] = t
		}
	}
	return out, nil
}

// Only returns a copy of r with the tickers keep accepts.
func (r *Registry) Only(keep func(Ticker) bool) *Registry {
	out := &Registry{byTicker: map[string]Ticker{}, left: map[string]bool{}}
	for k := range r.left {
		out.left[k] = true
	}
	for _, t := range r.sorted {
		if keep(t) {
			out.byTicker[t.Ticker] = t
			out.sorted = append(out.sorted, t)
		} else {
			out.left[t.Ticker] = true
		}
	}
	return out
}

// LeftOut reports whether Only left ticker out of r (it is a ticker of the
// registry r was made from, not offered here).
func (r *Registry) LeftOut(ticker string) bool { return r.left[strings.ToLower(ticker)] }

// Net is a network a chain's node runs on.
type Net string

// Networks. A Ticker's zero Net means Mainnet.
const (
	Mainnet Net = "mainnet"
	Testnet Net = "testnet"
	Regtest Net = "regtest"
)

// Valid reports whether n is Mainnet, Testnet, Regtest or "" (mainnet).
func (n Net) Valid() bool { return n == "" || n == Mainnet || n == Testnet || n == Regtest }

// String returns the network's name; "mainnet" for "".
func (n Net) String() string {
	if n == "" {
		return string(Mainnet)
	}
	return string(n)
}

// All returns every ticker sorted by Ticker. The slice is a copy.
func (r *Registry) All() []Ticker {
	return slices.Clone(r.sorted)
}

// registryFile is the JSON layout of a registry file.
type registryFile struct {
	Tickers []json.RawMessage `json:"tickers"`
}

// registryEntry is one JSON entry. Pointers tell a missing field from a zero
// value: every field except contract must be present.
type registryEntry struct {
	Ticker               *string          `json:"ticker"`
	Family               *string          `json:"family"`
	Token                *bool            `json:"token"`
	Contract             string           `json:"contract"`
	Decimals             *int32           `json:"decimals"`
	DefaultConfirmations *int32           `json:"default_confirmations"`
	MinConfirmations     *int32           `json:"min_confirmations"`
	MinTransaction       *decimal.Decimal `json:"min_transaction"`
	FeeRate              *decimal.Decimal `json:"fee_rate"`
	NetworkFeeEstimate   *decimal.Decimal `json:"network_fee_estimate"`
}

// LoadOption adjusts what LoadRegistry accepts.
type LoadOption func(*loadOptions)

type loadOptions struct {
	reserved map[string]bool
}

// Reserved refuses a ticker whose first segment is one of names. The server
// passes the first path segments of its own routes (server/route), so that
// `/checkout/logs/` is never read as the logs of a ticker named checkout;
// chains knows no routes of its own.
func Reserved(names ...string) LoadOption {
	return func(o *loadOptions) {
		if o.reserved == nil {
			o.reserved = map[string]bool{}
		}
		for _, n := range names {
			o.reserved[n] = true
		}
	}
}

// tickerPattern is one or two lower-case alphanumeric segments.
var tickerPattern = regexp.MustCompile(`^[a-z0-9]{1,32}(/[a-z0-9]{1,32})?$`)

// LoadRegistry reads a registry in the JSON format of the embedded
// registry.json:
//
//	{"tickers": [{"ticker": "trc20/usdt", "family": "tron", "token": true,
//	  "contract": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "decimals": 6,
//	  "default_confirmations": 19, "min_confirmations": 1,
//	  "min_transaction": "1", "fee_rate": "0.01", "network_fee_estimate": "1"}]}
//
// Amounts are decimal strings and are never converted through float64.
// Unknown fields are rejected. Every entry is validated: ticker syntax and
// uniqueness, a family among families (an entry whose family has no
// implementation is refused), the right one for a network a family ships
// with (Family.Networks), what the family accepts (Family.CheckTicker: UTXO
// networks limited to btc, ltc, bch and doge, no UTXO tokens), decimals
// 0..18, confirmations 1..100 with min <= default, fee rate in [0, 1),
// non-negative amounts with no more decimal places than the ticker has, and
// a contract, valid for the family, exactly when token is true, and no
// ticker whose first segment an option reserves (Reserved). Every ticker is
// bound to its family (Ticker.Rules). Errors wrap ErrInvalidRegistry and
// name the entry and field (*RegistryError).
func LoadRegistry(r io.Reader, families []Family, opts ...LoadOption) (*Registry, error) {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	fams, err := newFamilySet(families)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f registryFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRegistry, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: unexpected data after the top-level object", ErrInvalidRegistry)
	}
	if len(f.Tickers) == 0 {
		return nil, fmt.Errorf("%w: no tickers", ErrInvalidRegistry)
	}
	reg := &Registry{byTicker: make(map[string]Ticker, len(f.Tickers))}
	for i, raw := range f.Tickers {
		t, err := fams.parseEntry(i+1, raw, o)
		if err != nil {
			return nil, err
		}
		if _, dup := reg.byTicker[t.Ticker]; dup {
			return nil, &RegistryError{Entry: i + 1, Ticker: t.Ticker, Field: "ticker", Reason: "duplicate ticker"}
		}
		reg.byTicker[t.Ticker] = t
		reg.sorted = append(reg.sorted, t)
	}
	slices.SortFunc(reg.sorted, func(a, b Ticker) int { return strings.Compare(a.Ticker, b.Ticker) })
	return reg, nil
}

// familySet is the families a registry is loaded with, by name, and the
// family each of their shipped networks belongs to.
type familySet struct {
	byName    map[FamilyName]Family
	names     []string
	byNetwork map[string]FamilyName
}

func newFamilySet(families []Family) (familySet, error) {
	s := familySet{byName: map[FamilyName]Family{}, byNetwork: map[string]FamilyName{}}
	for _, f := range families {
		name := f.Name()
		if _, dup := s.byName[name]; dup || name == "" {
			return familySet{}, fmt.Errorf("%w: family %q given twice or unnamed", ErrInvalidRegistry, name)
		}
		s.byName[name] = f
		s.names = append(s.names, string(name))
		for _, n := range f.Networks() {
			if other, dup := s.byNetwork[n]; dup {
				return familySet{}, fmt.Errorf("%w: network %q claimed by families %q and %q", ErrInvalidRegistry, n, other, name)
			}
			s.byNetwork[n] = name
		}
	}
	return s, nil
}

// want lists the family names for a message: "utxo, evm, tron or solana".
func (s familySet) want() string {
	switch len(s.names) {
	case 0:
		return "none is implemented"
	case 1:
		return s.names[0]
	}
	return strings.Join(s.names[:len(s.names)-1], ", ") + " or " + s.names[len(s.names)-1]
}

func (s familySet) parseEntry(n int, raw json.RawMessage, o loadOptions) (Ticker, error) {
	fail := func(ticker, field, format string, args ...any) (Ticker, error) {
		return Ticker{}, &RegistryError{Entry: n, Ticker: ticker, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	var e registryEntry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		name := ""
		// Best effort: name the entry even when another field is malformed.
		var probe struct {
			Ticker string `json:"ticker"`
		}
		if json.Unmarshal(raw, &probe) == nil {
			name = probe.Ticker
		}
		return fail(name, "", "%v", err)
	}

	if e.Ticker == nil {
		return fail("", "ticker", "missing")
	}
	name := *e.Ticker
	if !tickerPattern.MatchString(name) {
		return fail(name, "ticker", "must be one or two lower-case alphanumeric segments separated by \"/\", like \"btc\" or \"trc20/usdt\"")
	}
	if first, _, _ := strings.Cut(name, "/"); o.reserved[first] {
		return fail(name, "ticker", "%q is reserved for payhook's own paths", first)
	}
	network, coin, twoSegments := strings.Cut(name, "/")
	if !twoSegments {
		coin = network
	}
	t := Ticker{Ticker: name, Network: network, Coin: coin, Contract: e.Contract}

	if e.Family == nil {
		return fail(name, "family", "missing")
	}
	family, ok := s.byName[FamilyName(*e.Family)]
	if !ok {
		return fail(name, "family", "unknown family %q (want %s)", *e.Family, s.want())
	}
	t = t.WithFamily(family)
	if want, ok := s.byNetwork[network]; ok && want != t.Family {
		return fail(name, "family", "network %q belongs to family %q, not %q", network, want, t.Family)
	}

	if e.Token == nil {
		return fail(name, "token", "missing")
	}
	t.Token = *e.Token
	switch {
	case t.Token && !twoSegments:
		return fail(name, "token", "a token needs a two-segment ticker \"network/coin\"")
	case t.Token && t.Contract == "":
		return fail(name, "contract", "missing: a token needs its contract address or mint")
	case !t.Token && t.Contract != "":
		return fail(name, "contract", "must be empty for a native coin")
	}
	if err := family.CheckTicker(t); err != nil {
		var re *RegistryError
		if errors.As(err, &re) {
			return fail(name, re.Field, "%s", re.Reason)
		}
		return fail(name, "", "%v", err)
	}
	if t.Token {
		if err := family.ValidateAddress(t, t.Contract); err != nil {
			return fail(name, "contract", "%v", err)
		}
	}

	if e.Decimals == nil {
		return fail(name, "decimals", "missing")
	}
	t.Decimals = *e.Decimals
	if t.Decimals < 0 || t.Decimals > MaxDecimals {
		return fail(name, "decimals", "must be between 0 and %d, got %d", MaxDecimals, t.Decimals)
	}

	if e.DefaultConfirmations == nil {
		return fail(name, "default_confirmations", "missing")
	}
	if e.MinConfirmations == nil {
		return fail(name, "min_confirmations", "missing")
	}
	t.DefaultConfirmations, t.MinConfirmations = *e.DefaultConfirmations, *e.MinConfirmations
	if t.MinConfirmations < 1 || t.MinConfirmations > MaxConfirmations {
		return fail(name, "min_confirmations", "must be between 1 and %d, got %d", MaxConfirmations, t.MinConfirmations)
	}
	if t.DefaultConfirmations < 1 || t.DefaultConfirmations > MaxConfirmations {
		return fail(name, "default_confirmations", "must be between 1 and %d, got %d", MaxConfirmations, t.DefaultConfirmations)
	}
	if t.MinConfirmations > t.DefaultConfirmations {
		return fail(name, "min_confirmations", "must not exceed default_confirmations (%d > %d)", t.MinConfirmations, t.DefaultConfirmations)
	}

	amounts := []struct {
		field string
		v     *decimal.Decimal
		dst   *decimal.Decimal
	}{
		{"min_transaction", e.MinTransaction, &t.MinTransaction},
		{"network_fee_estimate", e.NetworkFeeEstimate, &t.NetworkFeeEstimate},
	}
	for _, a := range amounts {
		if a.v == nil {
			return fail(name, a.field, "missing")
		}
		if a.v.Sign() < 0 {
			return fail(name, a.field, "must not be negative, got %s", a.v)
		}
		if !a.v.Shift(t.Decimals).IsInteger() {
			return fail(name, a.field, "%s has more than %d decimal places", a.v, t.Decimals)
		}
		*a.dst = *a.v
	}

	if e.FeeRate == nil {
		return fail(name, "fee_rate", "missing")
	}
	if e.FeeRate.Sign() < 0 || e.FeeRate.GreaterThanOrEqual(decimal.NewFromInt(1)) {
		return fail(name, "fee_rate", "must be at least 0 and below 1, got %s", e.FeeRate)
	}
	t.FeeRate = *e.FeeRate
	return t, nil
}
