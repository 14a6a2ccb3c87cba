package chaintest

import (
	"crypto/ed25519"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// Families is the conformance suite of chains.Family: every ticker of reg,
// on mainnet, testnet and regtest, is checked against the contract its
// family implements.
//
//   - Binding: the ticker has a Family whose Name is its Family field, and
//     CheckTicker accepts it.
//   - Keys and addresses: addresses derived from Seed (chains.NewDeriver
//     over the families of reg) validate, both through the Family and
//     chains.ValidateAddress, differ by index and are the same on every
//     call; the ticker's KeyPath is among its family's KeyPaths; the key
//     chains.NewKeys(Seed) gives for an index controls the derived address;
//     the operator's address validates and is no payment address.
//   - Destinations: DestinationKey differs between the derived addresses,
//     and, for the embedded registry's tickers on mainnet, is the same for
//     every spelling of one destination (bech32 in either case, ltc's 0x05
//     and 0x32 P2SH, CashAddr with and without prefix, in either case and
//     in legacy form, EIP-55 and either case) and differs between
//     destinations.
//   - Minimum outputs: MinOutput is a whole number of base units, the same
//     for every spelling of a destination, positive where the network has
//     dust or a rent minimum (the UTXO coins and native SOL of the embedded
//     registry) and zero elsewhere.
//   - Confirmations: an observation that satisfies every family (in a
//     block at the required depth, executed, solidified, finalized)
//     credits, and reports FixedConfirmations' n when the family fixes it,
//     the required depth otherwise; a mempool sighting reports nothing.
//     DistributionDepth is 0 or at least the required depth, and a credited
//     payment is forwardable at credit exactly when it is 0.
//   - Fees and URIs: NetworkFee is the estimate rounded up to the base
//     unit; PaymentURI names a lower-case scheme, carries the address, and
//     changes with an amount.
func Families(t *testing.T, reg *chains.Registry) {
	var families []chains.Family
	for _, tk := range reg.All() {
		if f := tk.Rules(); !slices.ContainsFunc(families, func(g chains.Family) bool { return g.Name() == f.Name() }) {
			families = append(families, f)
		}
	}
	d, err := chains.NewDeriver(Seed, families)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := chains.NewKeys(Seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range reg.All() {
		for _, net := range []chains.Net{chains.Mainnet, chains.Testnet, chains.Regtest} {
			r, err := reg.WithNet(tk.Ticker, net)
			if err != nil {
				t.Fatal(err)
			}
			tk, _ := r.Lookup(tk.Ticker)
			t.Run(string(tk.Family)+"/"+tk.Ticker+"/"+net.String(), func(t *testing.T) {
				t.Parallel()
				f := familyCase{t: t, tk: tk, f: tk.Rules(), d: d, keys: keys}
				f.binding()
				addrs := f.addresses()
				f.destinationKeys(addrs)
				f.confirmations()
				f.fees(addrs[0])
			})
		}
	}
}

// familyCase checks one ticker on one network.
type familyCase struct {
	t    *testing.T
	tk   chains.Ticker
	f    chains.Family
	d    *chains.Deriver
	keys *chains.Keys
}

func (c familyCase) binding() {
	t, tk, f := c.t, c.tk, c.f
	if !tk.HasRules() || f.Name() != tk.Family {
		t.Fatalf("ticker bound to family %q, its Family field says %q", f.Name(), tk.Family)
	}
	if err := f.CheckTicker(tk); err != nil {
		t.Errorf("CheckTicker: %v", err)
	}
}

// addresses derives and checks the suite's first three addresses, and
// returns them.
func (c familyCase) addresses() []string {
	t, tk, f := c.t, c.tk, c.f
	p, err := f.KeyPath(tk)
	if err != nil {
		t.Fatalf("KeyPath: %v", err)
	}
	if !slices.Contains(f.KeyPaths(), p) {
		t.Errorf("KeyPath %+v is not among KeyPaths %+v", p, f.KeyPaths())
	}
	var addrs []string
	for i := range uint32(3) {
		a, err := c.d.Address(tk, i)
		if err != nil {
			t.Fatalf("Address(%d): %v", i, err)
		}
		if again, _ := c.d.Address(tk, i); again != a {
			t.Errorf("Address(%d) = %s, then %s", i, a, again)
		}
		if slices.Contains(addrs, a) {
			t.Errorf("Address(%d) = %s, the address of a lower index", i, a)
		}
		for _, err := range []error{f.ValidateAddress(tk, a), chains.ValidateAddress(tk, a)} {
			if err != nil {
				t.Errorf("derived address %s does not validate: %v", a, err)
			}
		}
		if got, want := chains.DerivationPath(tk, i), p.Path(0, i); got != want {
			t.Errorf("DerivationPath(%d) = %q, want %q", i, got, want)
		}
		if owner := c.keyAddress(p, i); owner != a {
			t.Errorf("the key of index %d controls %s, not the derived %s", i, owner, a)
		}
		addrs = append(addrs, a)
	}
	op, err := c.keys.OperatorAddress(tk)
	if err != nil {
		t.Fatalf("OperatorAddress: %v", err)
	}
	if err := f.ValidateAddress(tk, op); err != nil || slices.Contains(addrs, op) {
		t.Errorf("operator address %s: %v (payment addresses %v)", op, err, addrs)
	}
	var ae *chains.AddressError
	if err := f.ValidateAddress(tk, addrs[0]+"x"); !errors.As(err, &ae) {
		t.Errorf("ValidateAddress(%q) = %v, want an *AddressError", addrs[0]+"x", err)
	}
	return addrs
}

// keyAddress returns the address the Keys' private key of index controls.
func (c familyCase) keyAddress(p chains.KeyPath, index uint32) string {
	c.t.Helper()
	var pub []byte
	if p.Curve == chains.Ed25519 {
		priv, err := c.keys.Ed25519(c.tk, index)
		if err != nil {
			c.t.Fatal(err)
		}
		pub = priv.Public().(ed25519.PublicKey)
	} else {
		priv, err := c.keys.Secp256k1(c.tk, index)
		if err != nil {
			c.t.Fatal(err)
		}
		pub = priv.PubKey().SerializeCompressed()
	}
	a, err := c.f.Address(c.tk, pub)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

func (c familyCase) confirmations() {
	t, tk, f := c.t, c.tk, c.f
	n, fixed := f.FixedConfirmations(tk)
	if fixed != (n > 0) {
		t.Errorf("FixedConfirmations = %d, %v: a fixed count is positive, an unfixed one 0", n, fixed)
	}
	// At least 2, so that a fixed count (1) cannot pass for the required one.
	required := int64(max(tk.DefaultConfirmations, 2))
	accepted := chains.TxState{Present: true, Confirmations: required, Executed: true, Solidified: true, Commitment: chains.CommitmentFinalized}
	step := f.Evaluate(tk, required, chains.PaymentState{}, accepted)
	want := required
	if fixed {
		want = n
	}
	if step.Status != chains.StatusConfirmed || !step.Credit || step.Confirmations != want {
		t.Errorf("Evaluate(required %d, %+v) = %+v, want confirmed and credited reporting %d", required, accepted, step, want)
	}
	gate := f.DistributionDepth(tk, required)
	if gate != 0 && gate < required {
		t.Errorf("DistributionDepth(%d) = %d, below the required depth", required, gate)
	}
	if step.Forwardable != (gate == 0 || gate <= required) {
		t.Errorf("forwardable at credit = %v with DistributionDepth %d and required %d", step.Forwardable, gate, required)
	}
	mempool := f.Evaluate(tk, required, chains.PaymentState{}, chains.TxState{Present: true})
	if mempool.Notify || mempool.Credit || mempool.Status != chains.StatusNone {
		t.Errorf("a mempool sighting gave %+v, want nothing", mempool)
	}
}

// uriScheme is a URI scheme as RFC 3986 allows it, lower case.
var uriScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)

func (c familyCase) fees(addr string) {
	t, tk, f := c.t, c.tk, c.f
	if got, want := f.NetworkFee(tk), tk.NetworkFeeEstimate.RoundCeil(tk.Decimals); !got.Equal(want) {
		t.Errorf("NetworkFee = %s, want %s", got, want)
	}
	plain, err := f.PaymentURI(tk, addr, nil)
	if err != nil {
		t.Fatalf("PaymentURI: %v", err)
	}
	amount := decimal.RequireFromString("1.5")
	priced, err := f.PaymentURI(tk, addr, &amount)
	if err != nil {
		t.Fatalf("PaymentURI with an amount: %v", err)
	}
	if !uriScheme.MatchString(plain) || !strings.Contains(plain, addr) || priced == plain || !strings.HasPrefix(priced, plain[:strings.IndexByte(plain, ':')+1]) {
		t.Errorf("PaymentURI = %q, with 1.5 %q: want a scheme, the address, and an amount that changes it", plain, priced)
	}
}

// spellings are, per ticker of the embedded registry, groups of mainnet
// spellings of one destination; different groups are different
// destinations.
func spellings(ticker string) [][]string {
	p2sh := "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
	hash, _, _ := base58.CheckDecode(p2sh)
	const eth = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
	evm := [][]string{{eth, strings.ToLower(eth), "0x" + strings.ToUpper(eth[2:])}, {"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"}}
	switch ticker {
	case "btc":
		return [][]string{
			{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"},
			{"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"}, {p2sh},
		}
	case "ltc":
		return [][]string{
			{p2sh, base58.CheckEncode(hash, 0x32)},
			{"ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", "LTC1QJMXNZ78NMC8NQ77WUXH25N2ES7RZM5C2RKK4WH"},
			{base58.CheckEncode(hash, 0x30)},
		}
	case "bch":
		const cash = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
		return [][]string{
			{cash, strings.TrimPrefix(cash, "bitcoincash:"), strings.ToUpper(cash), "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu"},
			{"bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq", "3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC"},
		}
	case "eth", "erc20/usdt", "erc20/usdc", "bep20/usdt", "polygon/pol":
		return evm
	}
	return nil
}

func (c familyCase) destinationKeys(addrs []string) {
	t, tk, f := c.t, c.tk, c.f
	// Case is not a spelling in general: a base58 address with its case
	// changed may be another valid destination.
	groups := [][]string{}
	for _, a := range addrs {
		groups = append(groups, []string{a})
	}
	if tk.Net == "" {
		groups = append(groups, spellings(tk.Ticker)...)
	}
	owner := map[string]int{}
	for i, group := range groups {
		c.minOutput(group)
		var first string
		for j, a := range group {
			k, err := f.DestinationKey(tk, a)
			if err != nil || k == "" {
				t.Errorf("DestinationKey(%q) = %q, %v", a, k, err)
				continue
			}
			if j == 0 {
				first = k
				if other, dup := owner[k]; dup {
					t.Errorf("DestinationKey(%q) = %q, also the key of %q", a, k, groups[other][0])
				}
				owner[k] = i
			} else if k != first {
				t.Errorf("DestinationKey(%q) = %q, but %q, the same destination, has %q", a, k, group[0], first)
			}
		}
	}
	var ae *chains.AddressError
	if _, err := f.DestinationKey(tk, addrs[0]+"x"); !errors.As(err, &ae) {
		t.Errorf("DestinationKey(%q) error = %v, want an *AddressError", addrs[0]+"x", err)
	}
}

// hasMinimum reports the embedded registry's tickers whose networks refuse
// small outputs.
func hasMinimum(ticker string) bool {
	return slices.Contains([]string{"btc", "ltc", "bch", "doge", "sol"}, ticker)
}

// minOutput checks MinOutput over the spellings of one destination.
func (c familyCase) minOutput(group []string) {
	t, tk, f := c.t, c.tk, c.f
	var first decimal.Decimal
	for j, a := range group {
		m, err := f.MinOutput(tk, a)
		switch {
		case err != nil:
			t.Errorf("MinOutput(%q): %v", a, err)
			continue
		case m.Sign() < 0 || !m.Shift(tk.Decimals).IsInteger():
			t.Errorf("MinOutput(%q) = %s: not a whole number of base units", a, m)
		case j > 0 && !m.Equal(first):
			t.Errorf("MinOutput(%q) = %s, but %q, the same destination, has %s", a, m, group[0], first)
		}
		if j == 0 {
			first = m
		}
	}
	if tk.Net == "" && len(group) > 0 && hasMinimum(tk.Ticker) != first.IsPositive() {
		t.Errorf("MinOutput(%q) = %s, want it positive exactly where the network has a minimum", group[0], first)
	}
}
