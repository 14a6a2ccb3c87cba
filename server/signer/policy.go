package signer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/txscript"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
	"github.com/payhook/payhook/chains/solana"
	"github.com/payhook/payhook/chains/tron"
	"github.com/payhook/payhook/chains/utxo"
)

// PolicyFile is the policy file's JSON:
//
//	{
//	  "networks": {"ltc": "regtest", "eth": "regtest", "erc20/usdt": "regtest"},
//	  "chain_ids": {"eth": 31337, "erc20/usdt": 31337},
//	  "contracts": {"erc20/usdt": "0x5FbDB2315678afecb367f032d93F642f64180aa3"},
//	  "projects": [
//	    {"project": 1, "ticker": "ltc",
//	     "destinations": ["rltc1q..."], "daily_cap": "1.5"}
//	  ]
//	}
//
// networks gives a ticker's network (mainnet when absent). chain_ids gives
// an EVM ticker's EIP-155 chain id, required off mainnet (on mainnet it
// is the network's: 1, 56, 137); the signer signs for no other chain, so
// that a transaction of one chain cannot pass as another's where the same
// key holds funds on both. contracts gives a token's contract (or SPL
// mint) off mainnet, where the registry's is the mainnet one. Each project
// entry lists the addresses its transactions of the ticker may pay
// (forwards, payouts, sweeps and refunds alike: the purpose a server
// claims is not proof) and the most that may leave in a UTC day, a decimal
// string in coin units. A project and ticker without an entry signs
// nothing. Change to the seed's own keys is always allowed and never
// counted.
type PolicyFile struct {
	// Networks maps tickers to mainnet, testnet or regtest.
	Networks map[string]string `json:"networks"`
	// ChainIDs maps EVM tickers to their chain id (required off mainnet).
	ChainIDs map[string]uint64 `json:"chain_ids"`
	// Contracts maps tokens to their contract or mint (required off
	// mainnet).
	Contracts map[string]string `json:"contracts"`
	// Projects are the rules, one per project and ticker.
	Projects []ProjectRule `json:"projects"`
}

// ProjectRule is what one project may send of one ticker.
type ProjectRule struct {
	// Project is the project's id (payhook project list).
	Project int64 `json:"project"`
	// Ticker is the coin.
	Ticker string `json:"ticker"`
	// Destinations are the addresses its transactions may pay.
	Destinations []string `json:"destinations"`
	// DailyCap is the most that may leave a day, in coin units.
	DailyCap string `json:"daily_cap"`
	// MaxFee, when set, is the most one transaction may pay the network,
	// in the chain's native coin (ETH for an ERC-20 token, TRX for a
	// TRC-20, SOL for an SPL token): the signer refuses a transaction that
	// may pay more. Absent, fees are not bounded.
	MaxFee string `json:"max_fee,omitempty"`
}

// Policy is a loaded policy file: what the signer signs.
type Policy struct {
	nets      map[string]chains.Net
	chainIDs  map[string]uint64
	contracts map[string]string
	rules     map[ruleKey]*rule
}

type ruleKey struct {
	project int64
	ticker  string
}

type rule struct {
	cap    decimal.Decimal
	maxFee *decimal.Decimal // nil: fees not bounded
	dests  []string         // destKey of each address
	addrs  []string
}

// LoadPolicy reads a policy file (PolicyFile) and checks it against
// registry: known tickers, destinations valid on the ticker's network,
// positive caps, a chain id for each EVM ticker and a contract for each
// token off mainnet. Errors name the entry at fault.
func LoadPolicy(r io.Reader, registry *chains.Registry) (*Policy, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f PolicyFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if dec.More() {
		return nil, errors.New("policy: more than one JSON value")
	}
	p := &Policy{nets: map[string]chains.Net{}, chainIDs: map[string]uint64{}, contracts: map[string]string{}, rules: map[ruleKey]*rule{}}
	for name, n := range f.Networks {
		net := chains.Net(n)
		if _, ok := registry.Lookup(name); !ok {
			return nil, fmt.Errorf("policy: networks: unknown ticker %q", name)
		}
		if !net.Valid() || net == "" {
			return nil, fmt.Errorf("policy: networks: %s: %q, want mainnet, testnet or regtest", name, n)
		}
		p.nets[name] = net
	}
	for name, id := range f.ChainIDs {
		t, err := p.ticker(registry, name)
		if err != nil {
			return nil, fmt.Errorf("policy: chain_ids: %w", err)
		}
		if familyOf(t) != familyEVM || id == 0 {
			return nil, fmt.Errorf("policy: chain_ids: %s: want a positive chain id of an EVM ticker", name)
		}
		p.chainIDs[t.Ticker] = id
	}
	for name, c := range f.Contracts {
		t, err := p.ticker(registry, name)
		if err != nil {
			return nil, fmt.Errorf("policy: contracts: %w", err)
		}
		if !t.Token {
			return nil, fmt.Errorf("policy: contracts: %s is not a token", name)
		}
		if err := chains.ValidateAddress(t, c); err != nil {
			return nil, fmt.Errorf("policy: contracts: %s: %q: %w", name, c, err)
		}
		p.contracts[t.Ticker] = c
	}
	for i, e := range f.Projects {
		where := fmt.Sprintf("policy: projects[%d] (project %d, %s)", i, e.Project, e.Ticker)
		t, err := p.ticker(registry, e.Ticker)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if e.Project < 0 {
			return nil, fmt.Errorf("%s: project must not be negative", where)
		}
		k := ruleKey{e.Project, t.Ticker}
		if p.rules[k] != nil {
			return nil, fmt.Errorf("%s: a second entry for the project and ticker", where)
		}
		c, err := decimal.NewFromString(e.DailyCap)
		if err != nil || c.Sign() <= 0 || !c.Shift(t.Decimals).IsInteger() {
			return nil, fmt.Errorf("%s: daily_cap %q: want a positive amount of %s in at most %d decimals", where, e.DailyCap, t.Ticker, t.Decimals)
		}
		r := &rule{cap: c}
		if e.MaxFee != "" {
			m, err := decimal.NewFromString(e.MaxFee)
			if err != nil || m.Sign() < 0 {
				return nil, fmt.Errorf("%s: max_fee %q: want a non-negative amount of the chain's native coin", where, e.MaxFee)
			}
			r.maxFee = &m
		}
		for _, a := range e.Destinations {
			d, err := destKey(t, a)
			if err != nil {
				return nil, fmt.Errorf("%s: destination %q: %w", where, a, err)
			}
			r.dests, r.addrs = append(r.dests, d), append(r.addrs, a)
		}
		if _, err := p.chainID(t); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if _, err := p.contract(t); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		p.rules[k] = r
	}
	return p, nil
}

// ticker returns name from registry on the policy's network for it.
func (p *Policy) ticker(registry *chains.Registry, name string) (chains.Ticker, error) {
	t, ok := registry.Lookup(name)
	if !ok {
		return chains.Ticker{}, fmt.Errorf("unknown ticker %q", name)
	}
	if familyOf(t) == familyNone {
		return chains.Ticker{}, fmt.Errorf("%w: %s: the remote signer does not sign its family", chains.ErrSignerUnsupported, name)
	}
	net := p.nets[t.Ticker]
	if net == "" {
		net = chains.Mainnet
	}
	r, err := registry.WithNet(t.Ticker, net)
	if err != nil {
		return chains.Ticker{}, err
	}
	t, _ = r.Lookup(t.Ticker)
	return t, nil
}

// destKey returns the form in which the policy compares a destination
// addr of t with a transaction's recipients: the locking script paying it
// (UTXO), the lower-case hex address (EVM), the address itself (TRON and
// Solana, whose base58 spelling is unique). addr must be valid on t's
// network.
func destKey(t chains.Ticker, addr string) (string, error) {
	if err := chains.ValidateAddress(t, addr); err != nil {
		return "", err
	}
	switch familyOf(t) {
	case familyUTXO:
		a, err := utxo.DecodeAddress(t, addr)
		if err != nil {
			return "", err
		}
		s, err := txscript.PayToAddrScript(a)
		return string(s), err
	case familyEVM:
		return strings.ToLower(addr), nil
	}
	return addr, nil
}

// chainID returns the EVM chain id the policy signs t for: chain_ids'
// entry, or on mainnet the network's. 0 for another family.
func (p *Policy) chainID(t chains.Ticker) (uint64, error) {
	if familyOf(t) != familyEVM {
		return 0, nil
	}
	if id, ok := p.chainIDs[t.Ticker]; ok && id > 0 {
		return id, nil
	}
	if id, ok := evm.ChainID(t.Network); ok && netName(t.Net) == chains.Mainnet {
		return id, nil
	}
	return 0, fmt.Errorf("chain_ids: %s on %s needs its chain id (the signer signs for one chain only)", t.Ticker, netName(t.Net))
}

// contract returns the token contract (or SPL mint) of t on the policy's
// network: contracts' entry, or on mainnet the registry's. "" for a
// native coin.
func (p *Policy) contract(t chains.Ticker) (string, error) {
	if !t.Token {
		return "", nil
	}
	if c, ok := p.contracts[t.Ticker]; ok {
		return c, nil
	}
	if netName(t.Net) == chains.Mainnet && t.Contract != "" {
		return t.Contract, nil
	}
	return "", fmt.Errorf("contracts: %s on %s needs its contract (the registry's is mainnet's)", t.Ticker, netName(t.Net))
}

// destinations returns the addresses project's policy of t allows (nil
// when it has none).
func (p *Policy) destinations(t chains.Ticker, project int64) []string {
	if r := p.rules[ruleKey{project, t.Ticker}]; r != nil {
		return r.addrs
	}
	return nil
}

// leaving checks the outputs of tx that do not pay the seed's own keys
// (own) against the rule of (project, t) and returns their sum in coin
// units. Errors wrap chains.ErrSignerRefused.
func (p *Policy) leaving(t chains.Ticker, project int64, outs []output) (decimal.Decimal, *rule, error) {
	r := p.rules[ruleKey{project, t.Ticker}]
	if r == nil {
		return decimal.Zero, nil, fmt.Errorf("%w: project %d has no %s policy: the signer signs nothing of it", chains.ErrSignerRefused, project, t.Ticker)
	}
	sum := decimal.Zero
	for i, o := range outs {
		if o.own {
			continue
		}
		if !slices.Contains(r.dests, o.dest) {
			return decimal.Zero, nil, fmt.Errorf("%w: output %d pays %s, which project %d's %s policy does not allow (allowed: %s)",
				chains.ErrSignerRefused, i, o.name, project, t.Ticker, quoteAll(r.addrs))
		}
		sum = sum.Add(o.value)
	}
	return sum, r, nil
}

// output is one recipient of a transaction to sign, as the policy sees
// it: an output (UTXO), or the recipient of a transfer (account
// families).
type output struct {
	// dest is the recipient as destKey spells it; name as people read it.
	dest, name string
	// value is what it receives, in t's coin units.
	value decimal.Decimal
	// own is set for the seed's own keys: not a destination, not counted.
	own bool
}

// scriptName is the address script pays on t's network, or the script
// in hex.
func scriptName(t chains.Ticker, script []byte) string {
	if params, ok := utxo.Params(t); ok {
		if _, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params); err == nil && len(addrs) == 1 {
			if a, ok := utxo.EncodeAddress(t, addrs[0]); ok {
				return a
			}
		}
	}
	return fmt.Sprintf("script %x", script)
}

func quoteAll(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := ""
	for i, a := range s {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(a)
	}
	return out
}

// family is a family the signer signs, by its rules (server/ never
// compares family names).
type family string

const (
	familyNone   family = "unsupported"
	familyUTXO   family = "utxo"
	familyEVM    family = "evm"
	familyTron   family = "tron"
	familySolana family = "solana"
)

// familyOf returns t's family by its rules.
func familyOf(t chains.Ticker) family {
	switch t.Rules().(type) {
	case utxo.Family:
		return familyUTXO
	case evm.Family:
		return familyEVM
	case tron.Family:
		return familyTron
	case solana.Family:
		return familySolana
	}
	return familyNone
}

// nativeDecimals are the decimals of the coin t's network fees are paid
// in: t's own for a UTXO coin, 18 for EVM chains, 6 for TRON (sun), 9 for
// Solana (lamports).
func nativeDecimals(t chains.Ticker) int32 {
	switch familyOf(t) {
	case familyEVM:
		return 18
	case familyTron:
		return 6
	case familySolana:
		return 9
	}
	return t.Decimals
}
